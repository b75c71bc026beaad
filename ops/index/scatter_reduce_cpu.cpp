// CPU scatter_reduce (index_iter.h): one pass in C order over the index, so
// repeated indices combine in that order, the same on every run.
#include "../common/dispatch.h"
#include "index_iter.h"
#include "reductions.h"

namespace gx::ops {

void scatter_reduce_cpu(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src, int64_t reduce) {
  const IndexIter it = make_index_iter(index, axis, src, self, false);
  const ScalarType dtype = self.dtype();
  with_reduction(reduce, [&](auto op) {
    with_compute<kCNumeric>(dtype, [&](auto tag) {
      using C = typename decltype(tag)::type;
      for (int64_t l = 0; l < it.numel; ++l) {
        int64_t i, w, x;
        it.offsets(l, i, w, x);
        const int64_t k = it.value(i);
        if (!it.in_range(k)) throw_out_of_range(it, k);
        char* dst = it.indexed + x + k * it.axis_stride;
        store_as(dst, dtype, op(load_as<C>(dst, dtype), load_as<C>(it.walked + w, dtype)));
      }
    });
  });
}

}  // namespace gx::ops
