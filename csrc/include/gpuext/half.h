// gx::Half and gx::BFloat16: the 16-bit float element types. In CUDA
// translation units they are CUDA's own __half and __nv_bfloat16; in host-only
// ones, small structs with float conversions (round to nearest even).
// Not part of gpuext/extension.h (cuda_fp16.h and cuda_bf16.h cost most of a
// second per compile): include it, or gpuext/dispatch.h, where needed.
#pragma once
#include <cstdint>
#include <cstring>

#include "gpuext/tensor.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
namespace gx {
using Half = __half;
using BFloat16 = __nv_bfloat16;
}  // namespace gx
#else
namespace gx {
namespace detail {
inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
}  // namespace detail

struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) {  // NOLINT: implicit, like __half
    const uint32_t u = detail::f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) { x = static_cast<uint16_t>(sign | 0x7e00u); return; }
    if (a >= 0x477ff000u) { x = static_cast<uint16_t>(sign | 0x7c00u); return; }
    if (a < 0x38800000u) {
      const float s = detail::bits_f32(a) * 16777216.0f;
      uint32_t m = static_cast<uint32_t>(s);
      const float fr = s - static_cast<float>(m);
      if (fr > 0.5f || (fr == 0.5f && (m & 1u))) ++m;
      x = static_cast<uint16_t>(sign | m);
      return;
    }
    uint32_t h = (a >> 13) - (112u << 10);
    const uint32_t rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    x = static_cast<uint16_t>(sign | h);
  }
  operator float() const {  // NOLINT
    const uint32_t sign = static_cast<uint32_t>(x & 0x8000u) << 16, e = (x >> 10) & 0x1fu, m = x & 0x3ffu;
    if (e == 0) { const float v = static_cast<float>(m) / 16777216.0f; return sign ? -v : v; }
    if (e == 31) return detail::bits_f32(sign | 0x7f800000u | (m << 13));
    return detail::bits_f32(sign | ((e + 112u) << 23) | (m << 13));
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) {  // NOLINT
    const uint32_t u = detail::f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { x = static_cast<uint16_t>((u >> 16) | 0x40u); return; }
    x = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  operator float() const { return detail::bits_f32(static_cast<uint32_t>(x) << 16); }  // NOLINT
};
}  // namespace gx
#endif

namespace gx {
template <> struct dtype_of<Half> { static constexpr ScalarType value = kFloat16; };
template <> struct dtype_of<BFloat16> { static constexpr ScalarType value = kBFloat16; };
}  // namespace gx
