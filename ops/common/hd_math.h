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
#undef GX_OPS_MATH1
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
