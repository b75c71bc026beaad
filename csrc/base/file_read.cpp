// NOTE [ File reads ]
// Loading a tensor from a file read it into a JS buffer a chunk at a time and
// copied each chunk into the tensor (and, for a GPU, through the driver's own
// pageable staging): 1.36 GB/s for a 4 GiB safetensors file loaded to the
// H100, where torch + safetensors (mmap, then .to('cuda')) took 7.6 GB/s. One
// thread's pread of page-cached data is a memcpy bound by the core it runs
// on, so the range is read by the CPU thread pool in pieces of kPiece bytes,
// each a loop of pread (which may return short) into its own part of the
// destination: the tensor's memory on the CPU, a pinned staging slot for a
// GPU (NOTE [ Staged file reads ] in csrc/cuda/staged_copy.cpp).
#include "base/file_read.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "gpuext/parallel.h"

namespace gx::core {
namespace {

constexpr int64_t kPiece = int64_t{2} << 20;  // bytes per thread at least

void read_piece(int fd, int64_t offset, char* dst, size_t nbytes) {
  size_t done = 0;
  while (done < nbytes) {
    const ssize_t got = ::pread(fd, dst + done, nbytes - done, static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(ErrorKind::Value, "reading ", nbytes - done, " bytes at offset ", offset + static_cast<int64_t>(done),
           " failed: ", std::strerror(errno));
    }
    if (got == 0) {
      fail(ErrorKind::Value, "the file ended at offset ", offset + static_cast<int64_t>(done), ", ",
           nbytes - done, " bytes short of what was to be read (was it truncated while loading?)");
    }
    done += static_cast<size_t>(got);
  }
}

}  // namespace

void read_file_range(int fd, int64_t offset, void* dst, size_t nbytes) {
  char* out = static_cast<char*>(dst);
  gx::parallel_for(0, static_cast<int64_t>(nbytes), kPiece, [&](int64_t b, int64_t e) {
    read_piece(fd, offset + b, out + b, static_cast<size_t>(e - b));
  });
}

}  // namespace gx::core
