// vector_norm (ops/op-list.js has its schema; lib/ops/linalg/norms.ts calls
// it for gx.linalg.vectorNorm, matrixNorm's 'fro' and Tensor.norm): the
// vector p-norm over `axis` as one reduction, written once for both devices
// (`Loops` is CpuReduce or CudaReduce).
//
// NOTE [ Vector norms as reductions ]
// Composed from ops, the 2-norm is abs/mul (a full-size temporary), sum and
// sqrt: three passes and, for float16 and bfloat16, squares that overflow
// their 16-bit range. As a reduction each element is read once and folded in
// the compute type (float for the 16-bit floats, as torch's opmath does), so
// a float16 vector of 60000s has the norm torch gives. Like torch, nothing is
// scaled: the 2-norm is sqrt(sum(x^2)) in the compute type, so float32 values
// near 1e20 give inf on both devices, as torch.linalg.vector_norm does (the
// CPU does not widen float to double here, unlike gx.sum, so that both devices
// and torch agree). ord picks the reducer: 2, 1, inf (max |x|), -inf
// (min |x|), 0 (the count of nonzero elements; NaN counts), any other p:
// (sum |x|^p)^(1/p). The max and min propagate NaN. Empty reductions give the
// identity (0; JS refuses inf and negative orders over empty dims, as torch).
#pragma once
#include <cmath>

#include "../common/dispatch.h"
#include "../ops.h"
#include "reducers.h"

namespace gx::ops {

template <typename A> struct NormReducerBase : ReducerBase {
  using Value = A;
  using Acc = A;
  static constexpr bool kWiden = false;
  GX_HD Acc init() const { return A(0); }
  GX_HD Acc combine(Acc a, Acc b) const { return a + b; }
};

template <typename A> struct NormTwoReducer : NormReducerBase<A> {
  GX_HD A step(A acc, A x, int64_t) const { return acc + x * x; }
  GX_HD A project(A a) const { return m_sqrt(a); }
};

template <typename A> struct NormOneReducer : NormReducerBase<A> {
  GX_HD A step(A acc, A x, int64_t) const { return acc + m_fabs(x); }
  GX_HD A project(A a) const { return a; }
};

template <typename A> struct NormZeroReducer : NormReducerBase<A> {
  GX_HD A step(A acc, A x, int64_t) const { return acc + (x != A(0) ? A(1) : A(0)); }
  GX_HD A project(A a) const { return a; }
};

template <typename A> struct NormPReducer : NormReducerBase<A> {
  A p = A(2);
  GX_HD A step(A acc, A x, int64_t) const { return acc + m_pow(m_fabs(x), p); }
  GX_HD A project(A a) const { return m_pow(a, A(1) / p); }
};

// max |x| (Max) or min |x|; NaN propagates.
template <typename A, bool Max> struct NormExtremumReducer : ReducerBase {
  using Value = A;
  using Acc = A;
  static constexpr bool kWiden = false;
  GX_HD Acc init() const { return Max ? A(0) : highest<A>(); }
  GX_HD Acc combine(Acc a, Acc b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return (Max ? a > b : a < b) ? a : b;
  }
  GX_HD Acc step(Acc acc, A x, int64_t) const { return combine(acc, m_fabs(x)); }
  GX_HD A project(Acc a) const { return a; }
};

// The norm of order `ord` of x over `dims` into out, computing in dtype's compute type (floating only).
template <typename Loops> void vector_norm_impl(const Tensor& self, IntArrayRef dims, double ord, ScalarType dtype,
                                                const Tensor& out) {
  GX_CHECK(is_floating(dtype), "dtype ", dtype, " is not supported (vector norms compute in a floating dtype)");
  GX_CHECK(!std::isnan(ord), "the order of a vector norm must not be NaN");
  const ReduceIter it = make_reduce(self, dims, out);
  if (it.out_numel == 0) return;
  with_compute<kCFloating>(dtype, [&](auto tag) {
    using A = typename decltype(tag)::type;
    if (ord == 2) {
      Loops::run(NormTwoReducer<A>{}, it);
    } else if (ord == 1) {
      Loops::run(NormOneReducer<A>{}, it);
    } else if (ord == 0) {
      Loops::run(NormZeroReducer<A>{}, it);
    } else if (std::isinf(ord)) {
      if (ord > 0) Loops::run(NormExtremumReducer<A, true>{}, it);
      else Loops::run(NormExtremumReducer<A, false>{}, it);
    } else {
      NormPReducer<A> r;
      r.p = static_cast<A>(ord);
      Loops::run(r, it);
    }
  });
}

}  // namespace gx::ops
