// CUDA cumsum and cumprod (scan.h), computing in float, double or int64_t,
// through the scan kernels of scan_cuda.cuh.
#include "scan_cuda.cuh"

namespace gx::ops {
namespace {

template <template <typename, typename> class Op>
void running_cuda(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  const DimIter it = make_dim_iter(self, dim, out);
  with_compute<kCNumeric>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    scan_cuda_run(Op<C, C>{}, it, it);
  });
}

}  // namespace

void cumsum_cuda(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  running_cuda<SumScan>(self, dim, dtype, out);
}
void cumprod_cuda(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  running_cuda<ProdScan>(self, dim, dtype, out);
}

}  // namespace gx::ops
