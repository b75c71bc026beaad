// Host-side gx::Half and gx::BFloat16: 16-bit float storage with float
// conversions (round to nearest even, NaN kept, overflow to infinity). No
// dependencies, so the core's CPU kernels use the same code as extensions.
#pragma once
#include <cstdint>
#include <cstring>

namespace gx {
namespace half_detail {
inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
}  // namespace half_detail

struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) {  // NOLINT: implicit, like __half
    const uint32_t u = half_detail::f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) { x = static_cast<uint16_t>(sign | 0x7e00u); return; }
    if (a >= 0x477ff000u) { x = static_cast<uint16_t>(sign | 0x7c00u); return; }
    if (a < 0x38800000u) {
      const float s = half_detail::bits_f32(a) * 16777216.0f;
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
    if (e == 31) return half_detail::bits_f32(sign | 0x7f800000u | (m << 13));
    return half_detail::bits_f32(sign | ((e + 112u) << 23) | (m << 13));
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) {  // NOLINT
    const uint32_t u = half_detail::f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { x = static_cast<uint16_t>((u >> 16) | 0x40u); return; }
    x = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  operator float() const { return half_detail::bits_f32(static_cast<uint32_t>(x) << 16); }  // NOLINT
};
}  // namespace gx
