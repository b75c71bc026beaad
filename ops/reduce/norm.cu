// CUDA vector_norm: the norm reducers (norm.h, NOTE [ Vector norms as
// reductions ]) over the CUDA reduction kernels (cuda_reduce.cuh; a
// contiguous float32, float16 or bfloat16 input reduced to one value takes
// the vectorized full-reduction kernel, as gx.sum does).
#include "cuda_reduce.cuh"
#include "norm.h"

namespace gx::ops {

void vector_norm_cuda(const Tensor& self, IntArrayRef axis, double ord, ScalarType dtype, const Tensor& out) {
  vector_norm_impl<CudaReduce>(self, axis, ord, dtype, out);
}

}  // namespace gx::ops
