// CPU cross (cross.h, NOTE [ The cross product in one pass ]): the positions
// split over threads.
#include <gpuext/parallel.h>

#include "cross.h"

namespace gx::ops {

void cross_cpu(const Tensor& self, const Tensor& other, int64_t axis, const Tensor& out) {
  const CrossIter it = make_cross(self, other, axis, out);
  if (it.numel == 0) return;
  with_compute<kCNumeric | kCNoBool>(it.dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    parallel_for(0, it.numel, kDefaultGrain / 4, [&](int64_t b, int64_t e) {
      for (int64_t l = b; l < e; ++l) it.apply<C>(l);
    });
  });
}

}  // namespace gx::ops
