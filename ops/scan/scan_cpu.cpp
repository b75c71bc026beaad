// CPU scans (scan.h): each line in order, one running accumulator
// (NOTE [ One scan, three operations ]); lines split over the thread pool.
#include "../common/cpu_loops.h"
#include "scan.h"

namespace gx::ops {
namespace {

// Runs policy p along every line of `it`; `ix` walks the indices output the same way (p.kIndices).
template <typename P> void scan_lines_cpu(const P& p, const DimIter& it, const DimIter& ix) {
  if (it.numel() == 0) return;
  const int64_t n = it.len, is = it.in_step, os = it.out_step, xs = ix.out_step;
  const int64_t grain = std::max<int64_t>(1, kDefaultGrain / std::max<int64_t>(1, n));
  parallel_for(0, it.lines, grain, [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) {
      int64_t in_off, out_off, unused, idx_off = 0;
      line_offsets(it, l, in_off, out_off);
      if constexpr (P::kIndices) line_offsets(ix, l, unused, idx_off);
      const char* in = it.in + in_off;
      char* out = it.out + out_off;
      char* idx = ix.out + idx_off;
      typename P::Acc acc = p.init();
      for (int64_t i = 0; i < n; ++i) {
        acc = p.combine(acc, p.load(in + i * is, it.in_dtype, i));
        p.store(out + i * os, it.out_dtype, idx + i * xs, acc);
      }
    }
  });
}

// cumsum / cumprod: floats accumulate in double, as torch's CPU kernels do.
template <template <typename, typename> class Op>
void running_cpu(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  const DimIter it = make_dim_iter(self, dim, out);
  with_compute<kCNumeric>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_same_v<C, float>, double, C>;
    scan_lines_cpu(Op<A, C>{}, it, it);
  });
}

template <bool Largest>
void extremum_cpu(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices) {
  GX_CHECK(values.dtype() == self.dtype(), "values must have self's dtype ", self.dtype(), ", got ", values.dtype());
  GX_CHECK(indices.dtype() == kInt64, "indices must be int64, got ", indices.dtype());
  const DimIter it = make_dim_iter(self, dim, values), ix = make_dim_iter(self, dim, indices);
  with_compute<kCNumeric>(self.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    scan_lines_cpu(ExtremumScan<C, Largest>{}, it, ix);
  });
}

}  // namespace

void cumsum_cpu(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  running_cpu<SumScan>(self, dim, dtype, out);
}
void cumprod_cpu(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  running_cpu<ProdScan>(self, dim, dtype, out);
}
void cummax_cpu(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices) {
  extremum_cpu<true>(self, dim, values, indices);
}
void cummin_cpu(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices) {
  extremum_cpu<false>(self, dim, values, indices);
}

}  // namespace gx::ops
