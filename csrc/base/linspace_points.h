// The points of linspace, written once for the CPU kernel (cpu_kernels.cpp) and
// the CUDA one (cuda/core_kernels.cu), so both give torch's values bit for bit.
//
// NOTE [ Linspace as torch computes it ]
// torch's CPU linspace kernel (aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp)
// converts start and end to the result's scalar type, steps in that type (in
// double for an integer dtype), and counts the first half up from start, the
// second half down from end: i < n / 2 gives start + step * i, the rest
// end - step * (n - 1 - i). Its build contracts each of those into one fused
// multiply-add (the kernel file is compiled for AVX2 / AVX512 with FMA): so
// float64 and the integer dtypes take fma(step, i, start) in double, float32
// fmaf(step, (float)i, start) with step = (end - start) / (float)(n - 1) in float.
// float16 and bfloat16 compute with c10::Half / c10::BFloat16 arithmetic: every
// operation in float, rounded to the 16-bit type, the index converted to it too
// (so a bfloat16 linspace of 300 steps takes 257 as 256, as torch's does). The
// fused operations are explicit here (fma / fmaf), so neither compiler's own
// contraction choices change a point. One step gives start.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define GX_LINSPACE_HD __host__ __device__
#else
#define GX_LINSPACE_HD
#endif

namespace gx::core::linspace {

// float64 and the integer dtypes (whose bounds come already converted and truncated).
struct DoublePoints {
  double start, end, step;
  int64_t n, half;
  GX_LINSPACE_HD DoublePoints(double s, double e, int64_t count)
      : start(s), end(e), step(count > 1 ? (e - s) / static_cast<double>(count - 1) : 0.0), n(count), half(count / 2) {}
  GX_LINSPACE_HD double operator()(int64_t i) const {
    if (n == 1) return start;
    return i < half ? ::fma(step, static_cast<double>(i), start) : ::fma(-step, static_cast<double>(n - 1 - i), end);
  }
};

// float32.
struct FloatPoints {
  float start, end, step;
  int64_t n, half;
  GX_LINSPACE_HD FloatPoints(double s, double e, int64_t count)
      : start(static_cast<float>(s)), end(static_cast<float>(e)),
        step(count > 1 ? (end - start) / static_cast<float>(count - 1) : 0.f), n(count), half(count / 2) {}
  GX_LINSPACE_HD float operator()(int64_t i) const {
    if (n == 1) return start;
    return i < half ? ::fmaf(step, static_cast<float>(i), start) : ::fmaf(-step, static_cast<float>(n - 1 - i), end);
  }
};

// float16 and bfloat16: Round rounds a float to the 16-bit type and gives it back as a float
// (start and end come from double by way of float, as every conversion to them here).
template <typename Round>
struct SixteenBitPoints {
  float start, end, step;
  int64_t n, half;
  GX_LINSPACE_HD SixteenBitPoints(double s, double e, int64_t count)
      : start(Round{}(static_cast<float>(s))), end(Round{}(static_cast<float>(e))), step(0.f), n(count), half(count / 2) {
    const Round r{};
    if (count > 1) step = r(r(end - start) / r(static_cast<float>(count - 1)));
  }
  GX_LINSPACE_HD float operator()(int64_t i) const {
    const Round r{};
    if (n == 1) return start;
    return i < half ? r(start + r(step * r(static_cast<float>(i)))) : r(end - r(step * r(static_cast<float>(n - 1 - i))));
  }
};

}  // namespace gx::core::linspace
