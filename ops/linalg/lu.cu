// CUDA solve, inv and det (decomp.h's contracts) through cuSOLVER's getrf
// and getrs, matrix by matrix on the current stream. The row-major A each op
// gets is, column-major, A^T: what gets factored. Nothing here synchronizes;
// the caller reads info (singular matrices) for solve and inv, as torch does.
#include "decomp_cuda.h"
#include "matrix_layout_cuda.h"

namespace gx::ops {
namespace {

// getrf of the batch n x n matrices a (column-major, contiguous) in place: pivots into ipiv [batch, n], each
// matrix's info into info[b] (info_stride 1) or all into info[0] (info_stride 0: not read).
template <typename T>
void getrf_all(const char* what, const linalg::Solver<T>& s, const Tensor& a, int64_t batch, int n, int* ipiv, int* info,
               int64_t info_stride) {
  T* A = static_cast<T*>(a.data_ptr());
  int lwork = 0;
  cusolver::check(s.api.getrf_buffer_size(s.handle, n, n, A, n, &lwork), what, "getrf_bufferSize");
  Tensor work = linalg::workspace(lwork, a);
  for (int64_t b = 0; b < batch; ++b) {
    cusolver::check(s.api.getrf(s.handle, n, n, A + b * n * n, n, static_cast<T*>(work.data_ptr()), ipiv + b * n,
                                info + b * info_stride),
                    what, "getrf");
  }
}

}  // namespace

void solve_cuda(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& info) {
  constexpr const char* kWhat = "solve";
  const linalg::SolveShape sh = linalg::check_solve(a, b, out, info);
  if (sh.batch == 0) return;
  // Nothing to solve for when n or k is 0 (the caller skips these).
  linalg::on_solver(kWhat, a, {sh.n, sh.k}, sh.n == 0 || sh.k == 0, &info, [&](const auto& s) {
    using T = typename std::decay_t<decltype(s)>::Scalar;
    const int n = static_cast<int>(sh.n), k = static_cast<int>(sh.k);
    Tensor ipiv = linalg::ints(sh.batch * sh.n, a);
    Tensor x = linalg::workspace(sh.batch * sh.n * sh.k, a);  // B, then X, column-major n x k
    Tensor scratch = linalg::ints(1, a);
    int* piv = static_cast<int*>(ipiv.data_ptr());
    getrf_all<T>(kWhat, s, a, sh.batch, n, piv, static_cast<int*>(info.data_ptr()), 1);
    T* X = static_cast<T*>(x.data_ptr());
    linalg::transpose_into_cuda<T>(static_cast<const T*>(b.data_ptr()), sh.k, sh.n * sh.k, X, sh.k, sh.n, sh.batch,
                                   linalg::Keep::kAll, s.stream);
    const T* A = static_cast<const T*>(a.data_ptr());
    for (int64_t m = 0; m < sh.batch; ++m) {  // (A^T)^T X = B
      cusolver::check(s.api.getrs(s.handle, cusolver::kOpT, n, k, A + m * sh.n * sh.n, n, piv + m * sh.n,
                                  X + m * sh.n * sh.k, n, static_cast<int*>(scratch.data_ptr())),
                      kWhat, "getrs");
    }
    linalg::transpose_into_cuda<T>(X, sh.n, sh.n * sh.k, static_cast<T*>(out.data_ptr()), sh.n, sh.k, sh.batch,
                                   linalg::Keep::kAll, s.stream);
  });
}

void inv_cuda(const Tensor& a, const Tensor& out, const Tensor& info) {
  constexpr const char* kWhat = "inv";
  const linalg::Square sq = linalg::check_inv(a, out, info);
  if (sq.batch == 0) return;
  linalg::on_solver(kWhat, a, {sq.n}, sq.n == 0, &info, [&](const auto& s) {
    using T = typename std::decay_t<decltype(s)>::Scalar;
    const int n = static_cast<int>(sq.n);
    Tensor ipiv = linalg::ints(sq.batch * sq.n, a);
    Tensor scratch = linalg::ints(1, a);
    int* piv = static_cast<int*>(ipiv.data_ptr());
    getrf_all<T>(kWhat, s, a, sq.batch, n, piv, static_cast<int*>(info.data_ptr()), 1);
    T* X = static_cast<T*>(out.data_ptr());
    linalg::set_identity_cuda<T>(X, sq.n, sq.batch, s.stream);
    const T* A = static_cast<const T*>(a.data_ptr());
    for (int64_t m = 0; m < sq.batch; ++m) {
      // A^T X = I: X = (A^T)^-1 = (A^-1)^T column-major, which is A^-1 row-major.
      cusolver::check(s.api.getrs(s.handle, cusolver::kOpN, n, n, A + m * sq.n * sq.n, n, piv + m * sq.n,
                                  X + m * sq.n * sq.n, n, static_cast<int*>(scratch.data_ptr())),
                      kWhat, "getrs");
    }
  });
}

void det_cuda(const Tensor& a, const Tensor& out) {
  constexpr const char* kWhat = "det";
  const linalg::Square sq = linalg::check_det(a, out);
  if (sq.batch == 0) return;
  linalg::on_solver(kWhat, a, {sq.n}, false, nullptr, [&](const auto& s) {  // 0 x 0: det 1, from the kernel
    using T = typename std::decay_t<decltype(s)>::Scalar;
    Tensor ipiv = linalg::ints(sq.batch * sq.n, a);
    int* piv = static_cast<int*>(ipiv.data_ptr());
    if (sq.n > 0) {
      // A singular matrix factors too (a zero on U's diagonal, det 0): info is not read.
      Tensor scratch = linalg::ints(1, a);
      getrf_all<T>(kWhat, s, a, sq.batch, static_cast<int>(sq.n), piv, static_cast<int*>(scratch.data_ptr()), 0);
    }
    linalg::lu_det_cuda<T>(static_cast<const T*>(a.data_ptr()), piv, sq.n, sq.batch, static_cast<T*>(out.data_ptr()),
                           s.stream);
  });
}

}  // namespace gx::ops
