// SHA-256 (FIPS 180-4), incremental. The kernel cache's keys and image
// checksums are SHA-256; computing them here rather than through Node's
// crypto spares a process's first cache lookup the OpenSSL start-up (about
// half a millisecond; NOTE [ First lookup ] in lib/rtc/cache-io.ts).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gx::cache {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // The digest as 64 lowercase hex digits. Ends the hash: update() after it is not allowed.
  std::string hex();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;  // bytes hashed so far
};

std::string sha256_hex(const void* data, size_t size);

}  // namespace gx::cache
