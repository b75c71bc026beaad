// CUDA cholesky and eigh (decomp.h's contracts) through cuSOLVER's potrf and
// syevd, matrix by matrix on the current stream. A symmetric row-major A is,
// column-major, A^T = A with its triangles' names swapped: the upper triangle
// of A is the lower one of the column-major matrix. Nothing here
// synchronizes; the caller reads info, as torch does.
#include "decomp_cuda.h"
#include "matrix_layout_cuda.h"

namespace gx::ops {

void cholesky_cuda(const Tensor& a, bool upper, const Tensor& info) {
  constexpr const char* kWhat = "cholesky";
  const linalg::Square sq = linalg::check_cholesky(a, info);
  if (sq.batch == 0) return;
  linalg::on_solver(kWhat, a, {sq.n}, sq.n == 0, &info, [&](const auto& s) {
    using T = typename std::decay_t<decltype(s)>::Scalar;
    const int n = static_cast<int>(sq.n);
    const int uplo = upper ? cusolver::kFillLower : cusolver::kFillUpper;
    T* A = static_cast<T*>(a.data_ptr());
    int lwork = 0;
    cusolver::check(s.api.potrf_buffer_size(s.handle, uplo, n, A, n, &lwork), kWhat, "potrf_bufferSize");
    Tensor work = linalg::workspace(lwork, a);
    int* codes = static_cast<int*>(info.data_ptr());
    for (int64_t m = 0; m < sq.batch; ++m) {
      cusolver::check(s.api.potrf(s.handle, uplo, n, A + m * sq.n * sq.n, n, static_cast<T*>(work.data_ptr()), lwork,
                                  codes + m),
                      kWhat, "potrf");
    }
    // The other triangle still holds A's entries: zero it.
    linalg::keep_triangle_cuda<T>(A, sq.n, sq.batch, upper ? linalg::Keep::kUpper : linalg::Keep::kLower, s.stream);
  });
}

void eigh_cuda(const Tensor& a, bool upper, const Tensor& w, const Tensor& v, const Tensor& info) {
  constexpr const char* kWhat = "eigh";
  const linalg::Square sq = linalg::check_eigh(a, w, v, info);
  if (sq.batch == 0) return;
  linalg::on_solver(kWhat, a, {sq.n}, sq.n == 0, &info, [&](const auto& s) {
    using T = typename std::decay_t<decltype(s)>::Scalar;
    const int n = static_cast<int>(sq.n);
    const int uplo = upper ? cusolver::kFillLower : cusolver::kFillUpper;
    T* A = static_cast<T*>(a.data_ptr());
    T* W = static_cast<T*>(w.data_ptr());
    int lwork = 0;
    cusolver::check(s.api.syevd_buffer_size(s.handle, cusolver::kEigModeVector, uplo, n, A, n, W, &lwork), kWhat,
                    "syevd_bufferSize");
    Tensor work = linalg::workspace(lwork, a);
    int* codes = static_cast<int*>(info.data_ptr());
    for (int64_t m = 0; m < sq.batch; ++m) {
      cusolver::check(s.api.syevd(s.handle, cusolver::kEigModeVector, uplo, n, A + m * sq.n * sq.n, n, W + m * sq.n,
                                  static_cast<T*>(work.data_ptr()), lwork, codes + m),
                      kWhat, "syevd");
    }
    // The eigenvectors are A's columns now (column-major): V row-major is their transpose.
    linalg::transpose_into_cuda<T>(A, sq.n, sq.n * sq.n, static_cast<T*>(v.data_ptr()), sq.n, sq.n, sq.batch,
                                   linalg::Keep::kAll, s.stream);
  });
}

}  // namespace gx::ops
