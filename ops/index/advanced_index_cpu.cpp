// CPU index and index_put (NOTE [ Advanced indexing ] in advanced_index.h):
// one pass in C order over the result's shape, so index_put with repeated
// positions writes (or adds) in that order, the same on every run.
#include "../common/dispatch.h"
#include "advanced_index.h"
#include "index_iter.h"
#include "reductions.h"

namespace gx::ops {

void index_cpu(const Tensor& self, const std::vector<Tensor>& indices, IntArrayRef sizes, IntArrayRef strides,
               IntArrayRef dims, const Tensor& out) {
  const AdvIter it = make_adv_iter(out, self, indices, sizes, strides, dims);
  const int64_t item = itemsize(self.dtype());
  for (int64_t l = 0; l < it.numel; ++l) {
    int64_t o, s, v;
    int k;
    if (!it.offsets<int64_t>(l, o, s, k, v)) throw_adv_out_of_range(sizes, dims, k, v);
    copy_element(it.data[0] + o, it.data[1] + s, item);
  }
}

void index_put_cpu(const Tensor& self, const std::vector<Tensor>& indices, IntArrayRef sizes, IntArrayRef strides,
                   IntArrayRef dims, const Tensor& values, bool accumulate) {
  const AdvIter it = make_adv_iter(values, self, indices, sizes, strides, dims);
  const ScalarType dtype = self.dtype();
  // Every value is checked first: an error leaves self as it was.
  for (int64_t l = 0; l < it.numel; ++l) {
    int64_t o, s, v;
    int k;
    if (!it.offsets<int64_t>(l, o, s, k, v)) throw_adv_out_of_range(sizes, dims, k, v);
  }
  if (!accumulate) {
    const int64_t item = itemsize(dtype);
    for (int64_t l = 0; l < it.numel; ++l) {
      int64_t o, s, v;
      int k;
      it.offsets<int64_t>(l, o, s, k, v);
      copy_element(it.data[1] + s, it.data[0] + o, item);
    }
    return;
  }
  with_compute<kCNumeric>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    for (int64_t l = 0; l < it.numel; ++l) {
      int64_t o, s, v;
      int k;
      it.offsets<int64_t>(l, o, s, k, v);
      char* dst = it.data[1] + s;
      store_as(dst, dtype, ReduceSum{}(load_as<C>(dst, dtype), load_as<C>(it.data[0] + o, dtype)));
    }
  });
}

}  // namespace gx::ops
