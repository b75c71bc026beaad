// CUDA QR (decomp.h's contract) through cuSOLVER: each matrix transposed
// into a column-major workspace, geqrf, R read out of its upper triangle,
// orgqr in place, Q read out. All on the current stream with the workspace from
// the caching allocator, and no synchronization: geqrf's and orgqr's info can
// only flag an invalid argument, which these calls never pass, so it is not
// read (a tall-skinny QR of row blocks stays asynchronous).
#include "decomp_cuda.h"
#include "matrix_layout_cuda.h"

namespace gx::ops {
namespace {

constexpr const char* kWhat = "qr";

template <typename T>
void qr_matrices(const linalg::QrShape& s, const Tensor& a, const std::optional<Tensor>& q, const Tensor& r,
                 int device) {
  cudaStream_t stream = current_stream(device);
  T* R0 = static_cast<T*>(r.data_ptr());
  T* Q0 = s.want_q ? static_cast<T*>(q->data_ptr()) : nullptr;
  if (s.k == 0) {  // an empty matrix: R is empty too, Q the identity (the complete Q of m x 0) or empty
    if (s.want_q && s.kq == s.m) linalg::set_identity_cuda<T>(Q0, s.m, s.batch, stream);
    return;
  }
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k),
            kq = static_cast<int>(s.kq);
  const linalg::Solver<T> solver(kWhat, device);  // on `stream`
  const cusolver::Handle h = solver.handle;
  const cusolver::Dense<T>& api = solver.api;
  // The column-major workspace: m x n, or m x m for the complete Q of a tall matrix (m columns built from n).
  const int64_t cols = s.want_q && s.kq > s.n ? s.kq : s.n;
  Tensor cm = linalg::workspace(s.m * cols, a);
  Tensor tau = linalg::workspace(s.k, a);
  T* A = static_cast<T*>(cm.data_ptr());
  T* tau_p = static_cast<T*>(tau.data_ptr());
  int lwork = 0, lq = 0;
  cusolver::check(api.geqrf_buffer_size(h, m, n, A, m, &lwork), kWhat, "geqrf_bufferSize");
  if (s.want_q) {
    cusolver::check(api.orgqr_buffer_size(h, m, kq, k, A, m, tau_p, &lq), kWhat, "orgqr_bufferSize");
    lwork = lwork > lq ? lwork : lq;
  }
  Tensor work = linalg::workspace(lwork, a);
  Tensor info = linalg::ints(1, a);  // written by cuSOLVER, never read (see above)
  T* work_p = static_cast<T*>(work.data_ptr());
  int* info_p = static_cast<int*>(info.data_ptr());
  const T* A0 = static_cast<const T*>(a.data_ptr());
  for (int64_t b = 0; b < s.batch; ++b) {
    // Row-major A is column-major A^T (n x m, ld n); its transpose is the column-major A cuSOLVER factors.
    linalg::transpose_into_cuda<T>(A0 + b * s.m * s.n, s.n, 0, A, s.n, s.m, 1, linalg::Keep::kAll, stream);
    cusolver::check(api.geqrf(h, m, n, A, m, tau_p, work_p, lwork, info_p), kWhat, "geqrf");
    // R's rows beyond n (complete R): zero.
    linalg::transpose_into_cuda<T>(A, s.m, 0, R0 + b * s.rk * s.n, s.rk, s.n, 1, linalg::Keep::kUpper, stream);
    if (!s.want_q) continue;
    // Columns beyond n (complete Q, m > n) start as the identity's.
    cusolver::check(api.orgqr(h, m, kq, k, A, m, tau_p, work_p, lwork, info_p), kWhat, "orgqr");
    linalg::transpose_into_cuda<T>(A, s.m, 0, Q0 + b * s.m * s.kq, s.m, s.kq, 1, linalg::Keep::kAll, stream);
  }
}

}  // namespace

void qr_cuda(const Tensor& a, const std::optional<Tensor>& q, const Tensor& r) {
  const linalg::QrShape s = linalg::check_qr(a, q, r);
  if (s.batch == 0) return;
  linalg::check_int_sizes(kWhat, {s.m, s.n});
  const int device = a.device().index;
  DeviceGuard guard(device);  // cuSOLVER and the kernels work on the current device: the tensors'
  linalg::with_float(a, [&](auto tag) { qr_matrices<typename decltype(tag)::type>(s, a, q, r, device); });
}

}  // namespace gx::ops
