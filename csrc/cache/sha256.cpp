#include "cache/sha256.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace gx::core::cache {
namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

}  // namespace

Sha256::Sha256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const uint8_t* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{p[4 * i]} << 24) | (uint32_t{p[4 * i + 1]} << 16) | (uint32_t{p[4 * i + 2]} << 8) | p[4 * i + 3];
  }
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d;
  h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
}

void Sha256::update(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  total_ += size;
  if (buffered_ > 0) {
    const size_t take = size < 64 - buffered_ ? size : 64 - buffered_;
    std::memcpy(buf_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    size -= take;
    if (buffered_ < 64) return;
    block(buf_);
    buffered_ = 0;
  }
  for (; size >= 64; p += 64, size -= 64) block(p);
  std::memcpy(buf_, p, size);
  buffered_ = size;
}

void Sha256::digest(uint8_t out[32]) {
  const uint64_t bits = total_ * 8;
  const uint8_t one = 0x80;
  update(&one, 1);
  const uint8_t zero = 0;
  while (buffered_ != 56) update(&zero, 1);
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  update(len, 8);
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < 4; ++k) out[4 * i + k] = static_cast<uint8_t>(h_[i] >> (24 - 8 * k));
  }
}

namespace {

// OpenSSL's SHA256_Init/Update/Final, which the node executable exports (or
// the libcrypto a shared-OpenSSL build of Node loaded): they use the CPU's SHA
// instructions (about 6x the portable code here). Not the one-shot SHA256():
// in OpenSSL 3 that goes through EVP_Q_digest, which fetches a provider on
// every call and starts the default provider on the first (about 50 us, paid
// by a process's first cache lookup). Looked up, not linked, so a Node
// without them still loads the addon; checked on a known digest before they
// are trusted. GPUEXT_SHA256_PORTABLE=1 keeps to the portable code (the tests
// compare both).
struct OpenSsl {
  // SHA256_CTX is 112 bytes (h[8], Nl, Nh, data[16], num, md_len: 32-bit
  // words) in OpenSSL 1.1 and 3; the buffer leaves room.
  struct alignas(16) Ctx {
    unsigned char bytes[256];
  };
  int (*init)(Ctx*) = nullptr;
  int (*update)(Ctx*, const void*, size_t) = nullptr;
  int (*final)(unsigned char*, Ctx*) = nullptr;

  bool digest(const void* data, size_t size, unsigned char md[32]) const {
    Ctx c;
    return init(&c) == 1 && update(&c, data, size) == 1 && final(md, &c) == 1;
  }
};

const OpenSsl* openssl_sha256() {
  static const OpenSsl api = [] {
    OpenSsl o;
    if (const char* e = std::getenv("GPUEXT_SHA256_PORTABLE"); e != nullptr && *e != '\0' && *e != '0') return o;
    o.init = reinterpret_cast<decltype(o.init)>(dlsym(RTLD_DEFAULT, "SHA256_Init"));
    o.update = reinterpret_cast<decltype(o.update)>(dlsym(RTLD_DEFAULT, "SHA256_Update"));
    o.final = reinterpret_cast<decltype(o.final)>(dlsym(RTLD_DEFAULT, "SHA256_Final"));
    if (o.init == nullptr || o.update == nullptr || o.final == nullptr) return OpenSsl{};
    static constexpr uint8_t kAbc[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
                                         0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
                                         0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    unsigned char md[32];
    if (!o.digest("abc", 3, md) || std::memcmp(md, kAbc, 32) != 0) return OpenSsl{};
    return o;
  }();
  return api.init != nullptr ? &api : nullptr;
}

std::string to_hex(const uint8_t* md) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (int i = 0; i < 32; ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string sha256_hex(const void* data, size_t size) {
  unsigned char md[32];
  const OpenSsl* o = openssl_sha256();
  if (o == nullptr || !o->digest(data, size, md)) {
    Sha256 h;
    h.update(data, size);
    h.digest(md);
  }
  return to_hex(md);
}

}  // namespace gx::core::cache
