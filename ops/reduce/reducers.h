// Reductions as reducer functors: sum, prod, mean, amax, amin, argmax,
// argmin. One definition each for the CPU loop and the CUDA kernels.
//
// A reducer over values of type A (the compute type, NOTE [ Compute types ]):
//   Acc init()                          the identity (what an empty reduction gives)
//   Acc step(Acc acc, A x, int64_t i)   folds in element i (C order over the reduced dims)
//   Acc combine(Acc a, Acc b)           merges partial results in any order
//   project(Acc)                        the output value
// `count` is the number of reduced elements (mean divides by it).
#pragma once
#include <type_traits>

#include "../common/hd.h"

namespace gx::ops {

struct ReducerBase {
  double count = 0;
};

template <typename A> struct SumReducer : ReducerBase {
  using Value = A;
  using Acc = A;
  static constexpr bool kWiden = true;  // the CPU sums float in double
  GX_HD Acc init() const { return A(0); }
  GX_HD Acc combine(Acc a, Acc b) const {
    if constexpr (std::is_integral_v<A>) return wrap_add(a, b);
    else return a + b;
  }
  GX_HD Acc step(Acc acc, A x, int64_t) const { return combine(acc, x); }
  GX_HD A project(Acc a) const { return a; }
};

template <typename A> struct MeanReducer : SumReducer<A> {
  GX_HD A project(A a) const { return a / static_cast<A>(this->count); }
};

template <typename A> struct ProdReducer : ReducerBase {
  using Value = A;
  using Acc = A;
  static constexpr bool kWiden = true;
  GX_HD Acc init() const { return A(1); }
  GX_HD Acc combine(Acc a, Acc b) const {
    if constexpr (std::is_integral_v<A>) return wrap_mul(a, b);
    else return a * b;
  }
  GX_HD Acc step(Acc acc, A x, int64_t) const { return combine(acc, x); }
  GX_HD A project(Acc a) const { return a; }
};

// NaN propagates, as torch.amax / torch.amin.
template <typename A, bool Max> struct ExtremumReducer : ReducerBase {
  using Value = A;
  using Acc = A;
  static constexpr bool kWiden = false;
  GX_HD Acc init() const { return Max ? lowest<A>() : highest<A>(); }
  GX_HD Acc combine(Acc a, Acc b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return (Max ? a > b : a < b) ? a : b;
  }
  GX_HD Acc step(Acc acc, A x, int64_t) const { return combine(acc, x); }
  GX_HD A project(Acc a) const { return a; }
};
template <typename A> struct MaxReducer : ExtremumReducer<A, true> {};
template <typename A> struct MinReducer : ExtremumReducer<A, false> {};

template <typename A> struct ArgAcc {
  A v;
  int64_t i;
};

// The first extreme element wins; NaN counts as the extreme (torch.argmax).
template <typename A, bool Max> struct ArgReducer : ReducerBase {
  using Value = A;
  using Acc = ArgAcc<A>;
  static constexpr bool kWiden = false;
  GX_HD Acc init() const { return Acc{Max ? lowest<A>() : highest<A>(), highest<int64_t>()}; }
  GX_HD static bool better(const Acc& a, const Acc& b) {
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) return an && (!bn || a.i < b.i);
    if (a.v != b.v) return Max ? a.v > b.v : a.v < b.v;
    return a.i < b.i;
  }
  GX_HD Acc combine(Acc a, Acc b) const { return better(a, b) ? a : b; }
  GX_HD Acc step(Acc acc, A x, int64_t i) const { return combine(acc, Acc{x, i}); }
  GX_HD int64_t project(Acc a) const { return a.i; }
};
template <typename A> struct ArgMaxReducer : ArgReducer<A, true> {};
template <typename A> struct ArgMinReducer : ArgReducer<A, false> {};

}  // namespace gx::ops
