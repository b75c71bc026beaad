// CPU gather and scatter (index_iter.h): one pass in C order over the index,
// so a scatter with repeated indices writes (or adds) in that order, the same
// on every run.
#include "../common/dispatch.h"
#include "index_iter.h"
#include "reductions.h"
#include "scatter_cpu.h"

namespace gx::ops {

void gather_cpu(const Tensor& self, int64_t axis, const Tensor& index, bool wrap, const Tensor& out) {
  const IndexIter it = make_index_iter(index, axis, out, self, wrap);
  const int64_t item = itemsize(self.dtype());
  for (int64_t l = 0; l < it.numel; ++l) {
    int64_t i, w, x;
    it.offsets(l, i, w, x);
    const int64_t k = it.value(i);
    if (!it.in_range(k)) throw_out_of_range(it, k);
    copy_element(it.walked + w, it.indexed + x + k * it.axis_stride, item);
  }
}

void scatter_cpu(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src, int64_t reduce) {
  const IndexIter it = make_index_iter(index, axis, src, self, false);
  const ScalarType dtype = self.dtype();
  if (reduce == kScatterAssign) {
    const int64_t item = itemsize(dtype);
    for (int64_t l = 0; l < it.numel; ++l) {
      int64_t i, w, x;
      it.offsets(l, i, w, x);
      const int64_t k = it.value(i);
      if (!it.in_range(k)) throw_out_of_range(it, k);
      copy_element(it.indexed + x + k * it.axis_stride, it.walked + w, item);
    }
    return;
  }
  GX_CHECK(reduce == kScatterAdd, "unknown reduction ", reduce);
  scatter_combine_cpu(it, dtype, ReduceSum{});  // integers add in int64 and wrap on store, as torch's do
}

}  // namespace gx::ops
