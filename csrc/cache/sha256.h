// SHA-256 (FIPS 180-4). The kernel cache's keys and image checksums are
// SHA-256; computing them here rather than through Node's crypto spares a
// process's first cache lookup the start of OpenSSL's EVP providers (about
// half a millisecond; NOTE [ First lookup ] in lib/rtc/cache-io.ts).
// sha256_hex uses OpenSSL's SHA256_Init/Update/Final from the process when it
// has them (sha256.cpp), else the portable Sha256 below.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gx::core::cache {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // The 32-byte digest. Ends the hash: update() after it is not allowed.
  void digest(uint8_t out[32]);

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;  // bytes hashed so far
};

// The digest of `size` bytes as 64 lowercase hex digits.
std::string sha256_hex(const void* data, size_t size);

}  // namespace gx::core::cache
