// CPU solve, inv and det (decomp.h's contracts) from the LU factorization
// through dense_cpu.h (LAPACK's getrf/getrs when loaded, else the built-in
// ones), matrix by matrix. The row-major A each op gets is, column-major, A^T:
// what gets factored.
#include <vector>

#include "decomp.h"
#include "dense_cpu.h"
#include "matrix_layout.h"

namespace gx::ops {

void solve_cpu(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& info) {
  const linalg::SolveShape s = linalg::check_solve(a, b, out, info);
  const int64_t n = s.n, k = s.k;
  int32_t* codes = info.data_ptr<int32_t>();
  linalg::with_float(a, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<int> ipiv(static_cast<size_t>(n));
    std::vector<T> x(static_cast<size_t>(n * k));  // B, then X, column-major (ld n)
    for (int64_t m = 0; m < s.batch; ++m) {
      T* A = a.data_ptr<T>() + m * n * n;
      codes[m] = static_cast<int32_t>(dense::getrf<T>(n, A, n, ipiv.data()));
      if (codes[m] != 0 || n == 0 || k == 0) continue;  // singular: the caller raises the error
      linalg::transpose_into(b.data_ptr<T>() + m * n * k, k, x.data(), k, n, linalg::Keep::kAll);
      dense::getrs<T>(true, n, k, A, n, ipiv.data(), x.data(), n);  // (A^T)^T X = B
      linalg::transpose_into(x.data(), n, out.data_ptr<T>() + m * n * k, n, k, linalg::Keep::kAll);
    }
  });
}

void inv_cpu(const Tensor& a, const Tensor& out, const Tensor& info) {
  const linalg::Square s = linalg::check_inv(a, out, info);
  const int64_t n = s.n;
  int32_t* codes = info.data_ptr<int32_t>();
  linalg::with_float(a, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<int> ipiv(static_cast<size_t>(n));
    for (int64_t m = 0; m < s.batch; ++m) {
      T* A = a.data_ptr<T>() + m * n * n;
      T* X = out.data_ptr<T>() + m * n * n;
      codes[m] = static_cast<int32_t>(dense::getrf<T>(n, A, n, ipiv.data()));
      linalg::set_identity(X, n);
      // A^T X = I: X = (A^T)^-1 = (A^-1)^T column-major, which is A^-1 row-major.
      if (codes[m] == 0) dense::getrs<T>(false, n, n, A, n, ipiv.data(), X, n);
    }
  });
}

void det_cpu(const Tensor& a, const Tensor& out) {
  const linalg::Square s = linalg::check_det(a, out);
  const int64_t n = s.n;
  linalg::with_float(a, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<int> ipiv(static_cast<size_t>(n));
    for (int64_t m = 0; m < s.batch; ++m) {
      T* A = a.data_ptr<T>() + m * n * n;
      dense::getrf<T>(n, A, n, ipiv.data());  // a singular A still factors (a zero on U's diagonal): det 0
      out.data_ptr<T>()[m] = static_cast<T>(linalg::lu_det(A, n, ipiv.data()));
    }
  });
}

}  // namespace gx::ops
