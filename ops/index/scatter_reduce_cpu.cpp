// CPU scatter_reduce: scatter_cpu.h's pass with the reduction's operator.
#include "reductions.h"
#include "scatter_cpu.h"

namespace gx::ops {

void scatter_reduce_cpu(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src, int64_t reduce) {
  const IndexIter it = make_index_iter(index, axis, src, self, false);
  const ScalarType dtype = self.dtype();
  with_reduction(reduce, [&](auto op) { scatter_combine_cpu(it, dtype, op); });
}

}  // namespace gx::ops
