// CUDA cummax and cummin (scan.h, NOTE [ Running extremum keys ]): the
// (value, index) pairs scanned by the kernels of scan_cuda.cuh; a file of its
// own so that it compiles beside scan.cu.
#include "scan_cuda.cuh"

namespace gx::ops {
namespace {

template <bool Largest>
void extremum_cuda(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices) {
  GX_CHECK(values.dtype() == self.dtype(), "values must have self's dtype ", self.dtype(), ", got ", values.dtype());
  GX_CHECK(indices.dtype() == kInt64, "indices must be int64, got ", indices.dtype());
  const DimIter it = make_dim_iter(self, dim, values), ix = make_dim_iter(self, dim, indices);
  with_compute<kCNumeric>(self.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    scan_cuda_run(ExtremumScan<C, Largest>{}, it, ix);
  });
}

}  // namespace

void cummax_cuda(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices) {
  extremum_cuda<true>(self, dim, values, indices);
}
void cummin_cuda(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices) {
  extremum_cuda<false>(self, dim, values, indices);
}

}  // namespace gx::ops
