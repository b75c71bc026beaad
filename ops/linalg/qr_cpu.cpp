// CPU QR (decomp.h's contract): ?geqrf then ?orgqr through dense_cpu.h
// (LAPACK when loaded, else the built-in Householder QR), matrix by matrix.
#include <algorithm>
#include <vector>

#include "decomp.h"
#include "dense_cpu.h"
#include "matrix_layout.h"

namespace gx::ops {
namespace {

template <typename T>
void qr_matrices(const linalg::QrShape& s, const Tensor& a, const std::optional<Tensor>& q, const Tensor& r) {
  const int64_t m = s.m, n = s.n, k = s.k;
  std::vector<T> tau(static_cast<size_t>(k));
  // The column-major workspace: m x n, or m x m for the complete Q of a tall matrix (m columns built from n).
  std::vector<T> work(static_cast<size_t>(m * std::max(n, s.want_q ? s.kq : 0)));
  T* A = work.data();
  for (int64_t b = 0; b < s.batch; ++b) {
    if (k == 0) {  // an empty matrix: R is empty too, Q the identity (the complete Q of m x 0) or empty
      if (s.want_q && s.kq == m) linalg::set_identity(q->data_ptr<T>() + b * m * m, m);
      continue;
    }
    // Row-major A is column-major A^T (n x m, ld n); its transpose is the column-major A LAPACK factors.
    linalg::transpose_into(a.data_ptr<T>() + b * m * n, n, A, n, m, linalg::Keep::kAll);
    dense::geqrf<T>(m, n, A, m, tau.data());
    linalg::transpose_into(A, m, r.data_ptr<T>() + b * s.rk * n, s.rk, n, linalg::Keep::kUpper);  // R's rows beyond n (complete R): zero
    if (!s.want_q) continue;
    dense::orgqr<T>(m, s.kq, k, A, m, tau.data());  // columns beyond n (complete Q, m > n) start as the identity's
    linalg::transpose_into(A, m, q->data_ptr<T>() + b * m * s.kq, m, s.kq, linalg::Keep::kAll);
  }
}

}  // namespace

void qr_cpu(const Tensor& a, const std::optional<Tensor>& q, const Tensor& r) {
  const linalg::QrShape s = linalg::check_qr(a, q, r);
  linalg::with_float(a, [&](auto tag) { qr_matrices<typename decltype(tag)::type>(s, a, q, r); });
}

}  // namespace gx::ops
