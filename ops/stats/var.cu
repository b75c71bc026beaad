// CUDA var and std: VarReducer (var.h, NOTE [ Shifted Welford ]) over the
// CUDA reduction kernels (reduce/cuda_reduce.cuh), in float (float32,
// float16, bfloat16) or double; std is the same instantiation with a flag.
#include "../reduce/cuda_reduce.cuh"
#include "var.h"

namespace gx::ops {
namespace {

void var_cuda_impl(const Tensor& self, IntArrayRef dims, double correction, ScalarType dtype, const Tensor& out,
                   bool take_sqrt) {
  check_var_dtype(dtype);
  const ReduceIter it = make_reduce(self, dims, out);
  with_compute<kCFloating>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if (it.out_numel == 0) return;
    VarReducer<C> r;
    r.correction = static_cast<C>(correction);
    r.take_sqrt = take_sqrt;
    CudaReduce::run(r, it);
  });
}

}  // namespace

void var_cuda(const Tensor& self, IntArrayRef dims, double correction, ScalarType dtype, const Tensor& out) {
  var_cuda_impl(self, dims, correction, dtype, out, false);
}

void std_cuda(const Tensor& self, IntArrayRef dims, double correction, ScalarType dtype, const Tensor& out) {
  var_cuda_impl(self, dims, correction, dtype, out, true);
}

}  // namespace gx::ops
