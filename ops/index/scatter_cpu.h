// The CPU pass of scatter's add and of scatter_reduce (index_iter.h): one
// pass in C order over the index, so repeated indices combine in that order,
// the same on every run.
#pragma once

#include "../common/dispatch.h"
#include "index_iter.h"

namespace gx::ops {

// self[..., index, ...] = op(self[..., index, ...], src[...]) for every index position, in C order.
template <typename Op>
void scatter_combine_cpu(const IndexIter& it, ScalarType dtype, Op op) {
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
}

}  // namespace gx::ops
