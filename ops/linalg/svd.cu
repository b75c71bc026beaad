// CUDA SVD through cuSOLVER's gesvd (cusolver.h), column-major as svd.h
// describes; it needs m >= n, which lib/ops/linalg.ts arranges by
// transposing. The workspace comes from the caching allocator, ordered on the
// current stream; the convergence flag is read back (a synchronization, as in
// torch.linalg.svd) so a failure is an error, not silent garbage.
#include <climits>

#include <gpuext/cuda.h>

#include "cusolver.h"
#include "svd.h"

namespace gx::ops {

void svd_colmajor_cuda(const Tensor& a, bool full, const Tensor& s, const Tensor& u, const Tensor& vt) {
  constexpr const char* kWhat = "svd";
  const linalg::SvdShape sh = linalg::check_svd(a, full, s, u, vt);
  if (sh.n == 0) return;
  GX_CHECK(sh.m <= INT_MAX && sh.n <= INT_MAX, "svd: dimensions beyond 2^31 - 1 are not supported by cuSOLVER");
  const int m = static_cast<int>(sh.m), n = static_cast<int>(sh.n);
  cudaStream_t stream = current_stream();
  cusolver::Handle h = cusolver::handle(kWhat, stream);
  const cusolver::Api& api = cusolver::api(kWhat);
  const bool dbl = a.dtype() == kFloat64;
  int lwork = 0;
  cusolver::check(dbl ? api.DgesvdBufferSize(h, m, n, &lwork) : api.SgesvdBufferSize(h, m, n, &lwork), kWhat,
                  "gesvd_bufferSize");
  Tensor work = empty({lwork > 0 ? lwork : 1}, a.dtype(), a.device());
  Tensor info = empty({1}, kInt32, a.device());
  const signed char jobu = full ? 'A' : 'S';
  if (dbl) {
    cusolver::check(api.Dgesvd(h, jobu, 'A', m, n, static_cast<double*>(a.data_ptr()), m,
                               static_cast<double*>(s.data_ptr()), static_cast<double*>(u.data_ptr()), m,
                               static_cast<double*>(vt.data_ptr()), n, static_cast<double*>(work.data_ptr()), lwork,
                               nullptr, static_cast<int*>(info.data_ptr())),
                    kWhat, "cusolverDnDgesvd");
  } else {
    cusolver::check(api.Sgesvd(h, jobu, 'A', m, n, static_cast<float*>(a.data_ptr()), m,
                               static_cast<float*>(s.data_ptr()), static_cast<float*>(u.data_ptr()), m,
                               static_cast<float*>(vt.data_ptr()), n, static_cast<float*>(work.data_ptr()), lwork,
                               nullptr, static_cast<int*>(info.data_ptr())),
                    kWhat, "cusolverDnSgesvd");
  }
  int host_info = 0;
  GX_CHECK(cudaMemcpyAsync(&host_info, info.data_ptr(), sizeof(int), cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
               cudaStreamSynchronize(stream) == cudaSuccess,
           "svd: reading cuSOLVER's info failed");
  GX_CHECK(host_info == 0, "svd: cuSOLVER gesvd ", host_info > 0 ? "did not converge" : "rejected an argument",
           " (info = ", host_info, ")");
}

}  // namespace gx::ops
