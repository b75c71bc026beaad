// The reductions' entry points, written once for both devices: `Loops` is
// CpuReduce (cpu_reduce.h) or CudaReduce (cuda_reduce.cuh).
// GX_OPS_DEFINE_REDUCE_ONE expands to the entry point ops.h declares.
#pragma once
#include "../common/dispatch.h"
#include "../ops.h"
#include "reducers.h"

namespace gx::ops {

// Reduces x over `dims` into out; `dtype` picks the compute type (ops.h).
template <typename Loops, template <typename> class Red, unsigned Set>
void reduce_op(const Tensor& x, IntArrayRef dims, ScalarType dtype, const Tensor& out) {
  const ReduceIter it = make_reduce(x, dims, out);
  with_compute<Set>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    // The CPU accumulates float sums and products in double (one thread, long runs).
    using A = std::conditional_t<Loops::kWideFloatAcc && Red<float>::kWiden && std::is_same_v<C, float>, double, C>;
    if (it.out_numel == 0) return;
    Red<A> r;
    r.count = static_cast<double>(it.red_numel);
    Loops::run(r, it);
  });
}

}  // namespace gx::ops

#define GX_OPS_DEFINE_REDUCE_ONE(Loops, dev, name, R, S)                                 \
  void name##_##dev(const Tensor& self, IntArrayRef dims, ScalarType dtype, const Tensor& out) { \
    reduce_op<Loops, R, S>(self, dims, dtype, out);                                      \
  }
