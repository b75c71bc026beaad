// CPU vector_norm: the norm reducers (norm.h, NOTE [ Vector norms as
// reductions ]) over the CPU reduction loop, in float (float32, float16,
// bfloat16) or double.
#include "cpu_reduce.h"
#include "norm.h"

namespace gx::ops {

void vector_norm_cpu(const Tensor& self, IntArrayRef axis, double ord, ScalarType dtype, const Tensor& out) {
  vector_norm_impl<CpuReduce>(self, axis, ord, dtype, out);
}

}  // namespace gx::ops
