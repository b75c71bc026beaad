// CUDA logsumexp: LogSumExpReducer (softmax.h) over the CUDA reduction
// kernels (reduce/cuda_reduce.cuh), computing in float (float32, float16,
// bfloat16 and integer inputs) or double.
#include "../reduce/cuda_reduce.cuh"
#include "softmax.h"

namespace gx::ops {

void logsumexp_cuda(const Tensor& self, IntArrayRef dims, ScalarType dtype, const Tensor& out) {
  const ReduceIter it = make_reduce(self, dims, out);
  with_compute<kCFloating>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if (it.out_numel == 0) return;
    CudaReduce::run(LogSumExpReducer<C>{}, it);
  });
}

}  // namespace gx::ops
