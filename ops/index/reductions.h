// The reductions scatterReduce, scatterAdd, indexAdd and index_put with
// accumulate combine an element with (ops/op-list.js: scatter_reduce's
// codes), one definition for the CPU loops and the CUDA atomics
// (atomics.cuh). Each takes the element's old value and the new one in the
// compute type (NOTE [ Compute types ] in common/hd.h) and gives the result;
// integers wrap, as the elementwise ops do; the max and min of floats
// propagate NaN, as torch's scatter_reduce does on the CPU.
#pragma once
#include <type_traits>

#include "../common/hd.h"

namespace gx::ops {

constexpr int64_t kReduceSum = 0;
constexpr int64_t kReduceProd = 1;
constexpr int64_t kReduceMax = 2;
constexpr int64_t kReduceMin = 3;

struct ReduceSum {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, int64_t>) return wrap_add(a, b);
    else return a + b;
  }
};
struct ReduceProd {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, int64_t>) return wrap_mul(a, b);
    else return a * b;
  }
};
struct ReduceMax {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return b > a ? b : a;
  }
};
struct ReduceMin {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return b < a ? b : a;
  }
};

// Calls f(op) with the functor of a reduce code; an unknown code is an error.
template <typename F> void with_reduction(int64_t reduce, F&& f) {
  switch (reduce) {
    case kReduceSum: return f(ReduceSum{});
    case kReduceProd: return f(ReduceProd{});
    case kReduceMax: return f(ReduceMax{});
    case kReduceMin: return f(ReduceMin{});
  }
  GX_CHECK(false, "unknown reduction ", reduce, " (0 sum, 1 prod, 2 amax, 3 amin)");
}

}  // namespace gx::ops
