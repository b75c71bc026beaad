// The binary ops' entry points, written once for both devices: `Loops` is
// CpuLoops (common/cpu_loops.h) or CudaLoops (common/cuda_loops.cuh).
// GX_OPS_DEFINE_BINARY(Loops, dev) expands to the two entry points per op
// (tensor-tensor and tensor-scalar) that ops.h declares.
#pragma once
#include "../common/dispatch.h"
#include "../ops.h"
#include "functors.h"

namespace gx::ops {

// out = f(a, b); a null a or b is the scalar `s`.
template <typename Loops, unsigned Set, typename F>
void binary_op(const F& f, const Tensor* a, const Tensor* b, ScalarArg s, ScalarType common, const Tensor& out) {
  const Tensor* ins[2] = {a, b};
  const ElementwiseIter it = make_elementwise(out, ins, 2);
  with_compute<Set>(common, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if (it.numel == 0) return;
    C scalars[2] = {C(0), C(0)};
    if (a == nullptr) scalars[0] = scalar_as<C>(s);
    if (b == nullptr) scalars[1] = scalar_as<C>(s);
    Loops::template run<C, 2>(f, it, scalars, common);
  });
}

}  // namespace gx::ops

#define GX_OPS_DEFINE_BINARY_ONE(Loops, dev, name, F, S)                                                   \
  void name##_##dev(const Tensor& self, const Tensor& other, ScalarType dtype, const Tensor& out) {        \
    binary_op<Loops, S>(F{}, &self, &other, ScalarArg{}, dtype, out);                                     \
  }                                                                                                       \
  void name##_scalar_##dev(const Tensor& self, double other, int64_t other_int, bool reverse, ScalarType dtype, \
                           const Tensor& out) {                                                          \
    binary_op<Loops, S>(F{}, reverse ? nullptr : &self, reverse ? &self : nullptr, ScalarArg{other, other_int}, \
                        dtype, out);                                                                      \
  }
