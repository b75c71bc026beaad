// The math the elementwise functors (unary/functors.h, binary/functors.h) are
// written in: the GX_HD qualifier, math wrappers with one name on host and
// device, integer arithmetic that wraps, and the three type traits they test.
// Besides the host compiler and nvcc, NVRTC compiles this file: gx.fuse's
// kernels include the functors themselves (NOTE [ Fused ops are the ops'
// functors ] in lib/jit/fuse-ops.ts), so a fused op computes what the eager op does.
//
// NOTE [ Functor headers under NVRTC ]
// NVRTC has no C++ standard library and no system headers: under it
// (__CUDACC_RTC__) this file includes nothing, spells the 64-bit integers
// itself and defines the traits below instead of taking <type_traits>'s.
// Functors use these names (gx::ops::is_integral_v, not std::...) and include
// only this file, so they stay NVRTC-compatible. GX_OPS_NO_STDLIB picks the
// same branch under nvcc: test/fuse-ops.test.ts compiles gx.fuse's sources
// that way where there is no NVRTC.
#pragma once
#if defined(__CUDACC_RTC__) || defined(GX_OPS_NO_STDLIB)
namespace gx::ops {
typedef long long int64_t;
typedef unsigned long long uint64_t;
template <typename A, typename B> inline constexpr bool is_same_v = false;
template <typename A> inline constexpr bool is_same_v<A, A> = true;
template <typename T> inline constexpr bool is_integral_v =
    is_same_v<T, bool> || is_same_v<T, char> || is_same_v<T, signed char> || is_same_v<T, unsigned char> ||
    is_same_v<T, short> || is_same_v<T, unsigned short> || is_same_v<T, int> || is_same_v<T, unsigned> ||
    is_same_v<T, long> || is_same_v<T, unsigned long> || is_same_v<T, long long> || is_same_v<T, unsigned long long>;
template <typename T> inline constexpr bool is_floating_point_v = is_same_v<T, float> || is_same_v<T, double>;
}  // namespace gx::ops
#else
#include <math.h>

#include <cstdint>
#include <type_traits>

#include "cpu_math.h"
namespace gx::ops {
template <typename A, typename B> inline constexpr bool is_same_v = std::is_same_v<A, B>;
template <typename T> inline constexpr bool is_integral_v = std::is_integral_v<T>;
template <typename T> inline constexpr bool is_floating_point_v = std::is_floating_point_v<T>;
}  // namespace gx::ops
#endif

// Device math (CUDA's) where this is compiled for a GPU, or with no C++ library.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__) || defined(GX_OPS_NO_STDLIB)
#define GX_OPS_DEVICE_MATH 1
#endif

#if defined(__CUDACC__)
#define GX_HD __host__ __device__ __forceinline__
#else
#define GX_HD inline
#endif

namespace gx::ops {

// --- math with one spelling on host and device ------------------------------
// NOTE [ Accuracy of the math functions ]
// The CPU calls glibc (correctly rounded or within 1 ulp for these functions
// in practice; erfinv: host_erfinv below), CUDA its Math API, whose documented
// maximum errors for the functions here are 1 to 4 ulp in single precision and
// 1 to 5 ulp in double (CUDA C++ Programming Guide, "Mathematical Functions");
// torch's kernels call the same functions (or Sleef's, within 1 ulp on the
// CPU). test/ops-unary.test.ts allows 2e-6 relative in float32 (about 16 ulp)
// and 1e-12 in float64; gx.fuse calls these same functors, so a fused result
// equals the eager one bit for bit on each device.
#define GX_OPS_MATH1(name, ffn, dfn)                          \
  GX_HD float name(float x) { return ::ffn(x); }              \
  GX_HD double name(double x) { return ::dfn(x); }
GX_OPS_MATH1(m_log, logf, log)
GX_OPS_MATH1(m_log1p, log1pf, log1p)
GX_OPS_MATH1(m_sqrt, sqrtf, sqrt)
GX_OPS_MATH1(m_sin, sinf, sin)
GX_OPS_MATH1(m_cos, cosf, cos)
GX_OPS_MATH1(m_tanh, tanhf, tanh)
GX_OPS_MATH1(m_floor, floorf, floor)
GX_OPS_MATH1(m_ceil, ceilf, ceil)
GX_OPS_MATH1(m_rint, rintf, rint)  // round half to even, as torch.round
GX_OPS_MATH1(m_fabs, fabsf, fabs)
GX_OPS_MATH1(m_erf, erff, erf)
GX_OPS_MATH1(m_erfc, erfcf, erfc)
GX_OPS_MATH1(m_tan, tanf, tan)
GX_OPS_MATH1(m_asin, asinf, asin)
GX_OPS_MATH1(m_acos, acosf, acos)
GX_OPS_MATH1(m_atan, atanf, atan)
GX_OPS_MATH1(m_sinh, sinhf, sinh)
GX_OPS_MATH1(m_cosh, coshf, cosh)
GX_OPS_MATH1(m_asinh, asinhf, asinh)
GX_OPS_MATH1(m_acosh, acoshf, acosh)
GX_OPS_MATH1(m_atanh, atanhf, atanh)
GX_OPS_MATH1(m_expm1, expm1f, expm1)
GX_OPS_MATH1(m_exp2, exp2f, exp2)
GX_OPS_MATH1(m_log2, log2f, log2)
GX_OPS_MATH1(m_log10, log10f, log10)
GX_OPS_MATH1(m_trunc, truncf, trunc)
#undef GX_OPS_MATH1
#define GX_OPS_MATH2(name, ffn, dfn)                                    \
  GX_HD float name(float a, float b) { return ::ffn(a, b); }            \
  GX_HD double name(double a, double b) { return ::dfn(a, b); }
GX_OPS_MATH2(m_atan2, atan2f, atan2)
GX_OPS_MATH2(m_hypot, hypotf, hypot)
GX_OPS_MATH2(m_copysign, copysignf, copysign)
#undef GX_OPS_MATH2
GX_HD float m_exp(float x) {
#if defined(GX_OPS_DEVICE_MATH)
  return ::expf(x);
#else
  return cpu_expf(x);  // vectorizable: NOTE [ CPU expf ] in cpu_math.h
#endif
}
GX_HD double m_exp(double x) { return ::exp(x); }
GX_HD float m_pow(float a, float b) { return ::powf(a, b); }
GX_HD double m_pow(double a, double b) { return ::pow(a, b); }
GX_HD float m_fmod(float a, float b) { return ::fmodf(a, b); }
GX_HD double m_fmod(double a, double b) { return ::fmod(a, b); }
GX_HD float m_rsqrt(float x) {
#if defined(GX_OPS_DEVICE_MATH)
  return ::rsqrtf(x);
#else
  return 1.0f / ::sqrtf(x);
#endif
}
GX_HD double m_rsqrt(double x) {
#if defined(GX_OPS_DEVICE_MATH)
  return ::rsqrt(x);
#else
  return 1.0 / ::sqrt(x);
#endif
}

// NOTE [ erfinv on the host ]
// CUDA has erfinvf / erfinv; C's library has none. The host computes in
// double: Giles' single-precision approximation ("Approximating the erfinv
// function", GPU Computing Gems, 2011; relative error about 1e-7) as the
// start, then two Newton steps on erf(x) - y (each squares the error: 1e-7,
// 1e-14, then below double's rounding), as torch's calc_erfinv refines its
// rational approximation with Newton steps.
// |y| = 1 gives +-inf, |y| > 1 and NaN give NaN, as CUDA's and torch's.
#if !defined(GX_OPS_DEVICE_MATH)
inline double host_erfinv(double y) {
  if (!(y >= -1.0 && y <= 1.0)) return NAN;
  if (y == 1.0) return INFINITY;
  if (y == -1.0) return -INFINITY;
  if (y == 0.0) return y;  // keeps -0
  double w = -::log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w; p = 1.50140941 + p * w;
  } else {
    w = ::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w; p = 2.83297682 + p * w;
  }
  double x = p * y;
  for (int i = 0; i < 2; ++i) {  // Newton: d erf / dx = 2 / sqrt(pi) e^(-x^2)
    const double d = 1.1283791670955126 * ::exp(-x * x);
    if (d == 0.0) break;  // |x| beyond ~27: erf is 1 to double precision, nothing to refine
    x -= (::erf(x) - y) / d;
  }
  return x;
}
#endif
GX_HD float m_erfinv(float x) {
#if defined(GX_OPS_DEVICE_MATH)
  return ::erfinvf(x);
#else
  return static_cast<float>(host_erfinv(x));
#endif
}
GX_HD double m_erfinv(double x) {
#if defined(GX_OPS_DEVICE_MATH)
  return ::erfinv(x);
#else
  return host_erfinv(x);
#endif
}

// The largest finite value of a floating compute type (nanToNum's defaults):
// no <limits> under NVRTC (NOTE [ Functor headers under NVRTC ]).
template <typename C> GX_HD C max_finite() {
  if constexpr (is_same_v<C, float>) return 3.40282346638528859812e+38f;
  else return 1.79769313486231570815e+308;
}

template <typename C> GX_HD bool is_nan(C x) {
  if constexpr (is_floating_point_v<C>) return x != x;
  else return false;
}

// Integer +, -, * with two's-complement wraparound (signed overflow is
// undefined behaviour in C++; through uint64_t it is not).
GX_HD int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
GX_HD int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
GX_HD int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace gx::ops
