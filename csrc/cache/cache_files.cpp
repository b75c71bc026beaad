#include "cache/cache_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace gx::core::cache {
namespace {

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

bool stat_file(const std::string& path, FileStat* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  out->dev = static_cast<uint64_t>(st.st_dev);
  out->ino = static_cast<uint64_t>(st.st_ino);
  out->size = static_cast<int64_t>(st.st_size);
  out->mtime_sec = static_cast<int64_t>(st.st_mtim.tv_sec);
  out->mtime_nsec = static_cast<int64_t>(st.st_mtim.tv_nsec);
  return true;
}

bool read_file(const std::string& path, const std::function<uint8_t*(size_t)>& alloc, size_t* size) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return false;
  struct stat st;
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const size_t n = static_cast<size_t>(st.st_size);
  uint8_t* dst = alloc(n);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(f.fd, dst + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;  // an I/O error, or shorter than fstat said: a miss (the entry gets rewritten)
    got += static_cast<size_t>(r);
  }
  *size = n;
  return true;
}

bool touch_file(const std::string& path) { return ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) == 0; }

}  // namespace gx::core::cache
