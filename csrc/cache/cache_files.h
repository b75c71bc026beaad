// File access for the kernel cache's first lookup in a process (NOTE [ First
// lookup ] in lib/rtc/cache-io.ts): plain POSIX calls, no Node.js fs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace gx::core::cache {

struct FileStat {
  int64_t size = 0;
  int64_t mtime_sec = 0;
  int64_t mtime_nsec = 0;
  uint64_t dev = 0;
  uint64_t ino = 0;
};

// Follows links. False when `path` does not exist or is not a regular file.
bool stat_file(const std::string& path, FileStat* out);

// Reads a whole file into memory from `alloc(size)`. False when it cannot be
// opened or read whole: for a cache, a miss.
bool read_file(const std::string& path, const std::function<uint8_t*(size_t)>& alloc, size_t* size);

// Sets a file's access and modification times to now; false when that fails.
bool touch_file(const std::string& path);

}  // namespace gx::core::cache
