// CUDA SVD through cuSOLVER's gesvdj (Jacobi; cusolver.h), column-major as
// svd.h describes, the driver torch.linalg.svd uses by default. The
// workspace comes from the caching allocator, ordered on the current stream;
// the convergence flag is read back (a synchronization, as in torch) so a
// failure is an error, not silent garbage.
#include <climits>

#include <gpuext/cuda.h>

#include "cusolver.h"
#include "svd.h"

namespace gx::ops {
namespace {

// A gesvdjInfo_t for one call (default tolerance and sweeps).
struct JacobiParams {
  const cusolver::Api& api;
  cusolver::GesvdjInfo p = nullptr;
  explicit JacobiParams(const cusolver::Api& a) : api(a) {
    cusolver::check(api.CreateGesvdjInfo(&p), "svd", "cusolverDnCreateGesvdjInfo");
  }
  ~JacobiParams() {
    if (p != nullptr) api.DestroyGesvdjInfo(p);
  }
  JacobiParams(const JacobiParams&) = delete;
  JacobiParams& operator=(const JacobiParams&) = delete;
};

template <typename T, typename BufferSize, typename Solve>
void gesvdj(cusolver::Handle h, const JacobiParams& params, bool full, int m, int n, const Tensor& a, const Tensor& s,
            const Tensor& u, const Tensor& v, BufferSize buffer_size, Solve solve) {
  const int econ = full ? 0 : 1;
  T* A = static_cast<T*>(a.data_ptr());
  T* S = static_cast<T*>(s.data_ptr());
  T* U = static_cast<T*>(u.data_ptr());
  T* V = static_cast<T*>(v.data_ptr());
  int lwork = 0;
  cusolver::check(buffer_size(h, cusolver::kEigModeVector, econ, m, n, A, m, S, U, m, V, n, &lwork, params.p), "svd",
                  "gesvdj_bufferSize");
  Tensor work = empty({lwork > 0 ? lwork : 1}, a.dtype(), a.device());
  Tensor info = empty({1}, kInt32, a.device());
  cusolver::check(solve(h, cusolver::kEigModeVector, econ, m, n, A, m, S, U, m, V, n, static_cast<T*>(work.data_ptr()),
                        lwork, static_cast<int*>(info.data_ptr()), params.p),
                  "svd", "gesvdj");
  int host_info = 0;
  cudaStream_t stream = current_stream(a.device().index);
  GX_CHECK(cudaMemcpyAsync(&host_info, info.data_ptr(), sizeof(int), cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
               cudaStreamSynchronize(stream) == cudaSuccess,
           "svd: reading cuSOLVER's info failed");
  GX_CHECK(host_info == 0, "svd: cuSOLVER gesvdj ", host_info > 0 ? "did not converge" : "rejected an argument",
           " (info = ", host_info, ")");
}

}  // namespace

void svd_cuda(const Tensor& a, bool full, const Tensor& s, const Tensor& u, const Tensor& v) {
  constexpr const char* kWhat = "svd";
  const linalg::SvdShape sh = linalg::check_svd(a, full, s, u, v);
  if (sh.n == 0) return;
  GX_CHECK(sh.m <= INT_MAX && sh.n <= INT_MAX, "svd: dimensions beyond 2^31 - 1 are not supported by cuSOLVER");
  const int m = static_cast<int>(sh.m), n = static_cast<int>(sh.n);
  const int device = a.device().index;
  DeviceGuard guard(device);  // cuSOLVER works on the current device: the tensors'
  cusolver::Handle h = cusolver::handle(kWhat, device, current_stream(device));
  const cusolver::Api& api = cusolver::api(kWhat);
  const JacobiParams params(api);
  if (a.dtype() == kFloat64) {
    gesvdj<double>(h, params, full, m, n, a, s, u, v, api.DgesvdjBufferSize, api.Dgesvdj);
  } else {
    gesvdj<float>(h, params, full, m, n, a, s, u, v, api.SgesvdjBufferSize, api.Sgesvdj);
  }
}

}  // namespace gx::ops
