// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11), the counter-based generator cuRAND and PyTorch use, written once
// for the CPU and CUDA sides of the random ops. A (key, counter) pair maps to
// four independent 32-bit words with no state between elements, so element j
// of a fill is a pure function of (seed, offset, j): the same on every
// thread, run to run, and bit for bit between devices for uniform and integer
// draws (normals go through log/sin/cos, whose last bits differ between libm
// and CUDA's math).
//
// NOTE [ Random streams ]
// A fill of n elements with V values per counter (4 for 32-bit draws, 2 for
// 64-bit ones) uses counters offset .. offset + ceil(n / V) - 1; element j
// takes word j % V of counter offset + j / V (for 64-bit draws, words
// 2(j % 2) and 2(j % 2) + 1). The generator (lib/ops/random/random.ts) advances its
// offset by ceil(n / 2) after each fill, which covers both, so no two fills
// of one seed share a counter.
#pragma once
#include <math.h>

#include <cstdint>

#include "../common/hd.h"
#include "../common/rn.h"

namespace gx::ops::random {

struct Words {
  uint32_t w[4];
};

GX_HD void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

// Ten rounds of Philox4x32 on counter c with key k.
GX_HD Words philox(uint64_t seed, uint64_t counter) {
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  for (int r = 0; r < 10; ++r) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(0xD2511F53u, c0, hi0, lo0);
    mulhilo(0xCD9E8D57u, c2, hi1, lo1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Words{{c0, c1, c2, c3}};
}

// A uniform in [0, 1) with `bits` bits of randomness (24 for float, 11 for
// float16, 8 for bfloat16: each value k * 2^-bits is exact in the type, so
// none rounds up to 1).
GX_HD float uniform_float(uint32_t x, int bits) {
  return static_cast<float>(x >> (32 - bits)) * (1.0f / static_cast<float>(1u << bits));
}

// A uniform in [0, 1) with 53 bits, from two words.
GX_HD double uniform_double(uint32_t hi, uint32_t lo) {
  const uint64_t x = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(x & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

// Box-Muller: two uniforms in [0, 1) to two standard normals (u1 kept away
// from 0, where the logarithm is infinite).
template <typename T> GX_HD void box_muller(T u1, T u2, T& z0, T& z1) {
  const T r = sqrt(T(-2) * log(T(1) - u1));
  const T theta = T(6.283185307179586) * u2;
  z0 = r * cos(theta);
  z1 = r * sin(theta);
}

// Which draw a fill makes (each of rand, randn, randint picks one: random.h).
enum Kind { kUniform, kNormal, kInteger };

// Parameters of one fill (NOTE [ Random streams ]).
struct Fill {
  uint64_t seed;
  uint64_t offset;
  Kind kind;
  double a, b;         // uniform: [a, b); normal: mean a, std b
  int64_t lo, hi;      // integer: [lo, hi)
};

// Bits of randomness a uniform of storage type T gets.
template <typename T> struct UniformBits { static constexpr int value = 24; };
template <> struct UniformBits<Half> { static constexpr int value = 11; };
template <> struct UniformBits<BFloat16> { static constexpr int value = 8; };

// Element j of a fill, as storage type T.
template <typename T> GX_HD T draw(const Fill& f, int64_t j) {
  if (f.kind == kInteger) {
    const uint64_t range = static_cast<uint64_t>(f.hi) - static_cast<uint64_t>(f.lo);  // no signed overflow
    uint64_t r;
    if (range <= 0xFFFFFFFFull) {
      r = philox(f.seed, f.offset + j / 4).w[j % 4] % range;
    } else {
      const Words w = philox(f.seed, f.offset + j / 2);
      const int k = 2 * static_cast<int>(j % 2);
      r = ((static_cast<uint64_t>(w.w[k]) << 32) | w.w[k + 1]) % range;
    }
    return to<T>(static_cast<int64_t>(static_cast<uint64_t>(f.lo) + r));
  }
  if constexpr (std::is_same_v<T, double>) {
    const Words w = philox(f.seed, f.offset + j / 2);
    if (f.kind == kUniform) {
      const int k = 2 * static_cast<int>(j % 2);
      // The product rounded apart on both devices, so the uniform bits match (NOTE [ Rounded arithmetic ]).
      const double v = rn_mul_add(f.a, f.b - f.a, uniform_double(w.w[k], w.w[k + 1]));
      return v < f.b ? v : f.a;  // rounding can reach b for wide ranges
    }
    double z0, z1;
    box_muller(uniform_double(w.w[0], w.w[1]), uniform_double(w.w[2], w.w[3]), z0, z1);
    return f.a + f.b * (j % 2 == 0 ? z0 : z1);
  } else {
    const Words w = philox(f.seed, f.offset + j / 4);
    constexpr int bits = UniformBits<T>::value;
    if (f.kind == kUniform) {
      const float v = rn_mul_add(static_cast<float>(f.a), static_cast<float>(f.b - f.a), uniform_float(w.w[j % 4], bits));
      const T t = to<T>(v);
      return to<double>(t) < f.b ? t : to<T>(f.a);  // rounding (in float or T) can reach b
    }
    const int pair = static_cast<int>(j % 4) / 2;
    float z0, z1;
    box_muller(uniform_float(w.w[2 * pair], 24), uniform_float(w.w[2 * pair + 1], 24), z0, z1);
    return to<T>(static_cast<float>(f.a) + static_cast<float>(f.b) * (j % 2 == 0 ? z0 : z1));
  }
}

}  // namespace gx::ops::random
