// CPU cumsum (scan.h): each line in order, one running sum.
#include "../common/cpu_loops.h"
#include "scan.h"

namespace gx::ops {

void cumsum_cpu(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  const DimIter it = make_dim_iter(self, dim, out);
  with_compute<kCNumeric>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_same_v<C, float>, double, C>;
    if (it.numel() == 0) return;
    const int64_t n = it.len, is = it.in_step, os = it.out_step;
    for_lines_parallel(it, [&](const char* in, char* out) {
      A acc = A(0);
      for (int64_t i = 0; i < n; ++i) {
        acc = scan_add(acc, load_as<A>(in + i * is, it.in_dtype));
        store_as(out + i * os, it.out_dtype, acc);
      }
    });
  });
}

}  // namespace gx::ops
