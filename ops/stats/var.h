// var and std (ops/op-list.js has their schemas; lib/ops/reduce/statistics.ts calls
// them): the reducer both devices run.
//
//   var(Tensor self, int[] axis, float correction, ScalarType dtype, Tensor out) -> ()
//   std(Tensor self, int[] axis, float correction, ScalarType dtype, Tensor out) -> ()
//     a reduction (NOTE [ Reductions ]): sum((x - mean)^2) / max(0, N - correction)
//     over axis (torch's `correction`: 1 is the unbiased estimate), and its
//     square root; `dtype` (floating) picks the compute type.
//
// NOTE [ Shifted Welford ]
// One pass, accurate for data with a large mean: each partial result keeps
// the first element it saw as a shift K and runs Welford's update on x - K.
// Near K, x - K is exact (Sterbenz), so the running mean is of deviations of
// the data's own scale (1e6 + noise in float32 keeps the noise's precision,
// where plain Welford would round the running mean to 1e6's ulp, 0.06, every
// step). Partials merge with Chan et al.'s formula, the difference of their
// means taken as (K_b - K_a) + (mean_b - mean_a). The CPU runs it in double,
// CUDA in the compute type.
#pragma once
#include <gpuext/extension.h>

#include "../common/dispatch.h"
#include "../ops.h"

namespace gx::ops {


template <typename A> struct WelfordAcc {
  A shift;  // K: the first element folded in
  A mean;   // mean of x - K
  A m2;     // sum of squared deviations from the mean
  int64_t n;
};

template <typename A> struct VarReducer {
  using Value = A;
  using Acc = WelfordAcc<A>;
  A correction = A(1);
  bool take_sqrt = false;  // std

  GX_HD Acc init() const { return Acc{A(0), A(0), A(0), 0}; }
  GX_HD Acc step(Acc a, A x, int64_t) const {
    // m2 starts as x - x: 0, but NaN for an infinite or NaN x (torch: var([inf]) is NaN; found by the fuzz suite).
    if (a.n == 0) return Acc{x, A(0), x - x, 1};
    const A y = x - a.shift;
    const int64_t n = a.n + 1;
    const A d = y - a.mean;
    const A mean = a.mean + d / static_cast<A>(n);
    return Acc{a.shift, mean, a.m2 + d * (y - mean), n};
  }
  GX_HD Acc combine(Acc a, Acc b) const {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const int64_t n = a.n + b.n;
    const A d = (b.shift - a.shift) + (b.mean - a.mean);
    const A fb = static_cast<A>(b.n) / static_cast<A>(n);
    return Acc{a.shift, a.mean + d * fb, a.m2 + b.m2 + d * d * static_cast<A>(a.n) * fb, n};
  }
  GX_HD A project(Acc a) const {
    A dof = static_cast<A>(a.n) - correction;
    if (dof < A(0)) dof = A(0);
    const A v = a.m2 / dof;  // 0 / 0 = NaN for no degrees of freedom, as torch
    return take_sqrt ? m_sqrt(v) : v;
  }
};

inline void check_var_dtype(ScalarType dtype) {
  GX_CHECK(is_floating(dtype), "dtype ", dtype, " is not supported (var and std compute in a floating dtype)");
}

}  // namespace gx::ops
