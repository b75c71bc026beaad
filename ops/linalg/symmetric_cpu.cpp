// CPU cholesky and eigh (decomp.h's contracts) through dense_cpu.h (LAPACK's
// potrf / syevd when loaded, else the built-in ones), matrix by matrix. A
// symmetric row-major A is, column-major, A^T = A with its triangles' names
// swapped: the upper triangle of A is the lower one of the column-major
// matrix, hence the `!upper` passed down.
#include "decomp.h"
#include "dense_cpu.h"
#include "matrix_layout.h"

namespace gx::ops {

void cholesky_cpu(const Tensor& a, bool upper, const Tensor& info) {
  const linalg::Square s = linalg::check_cholesky(a, info);
  const int64_t n = s.n;
  int32_t* codes = info.data_ptr<int32_t>();
  linalg::with_float(a, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t m = 0; m < s.batch; ++m) {
      T* A = a.data_ptr<T>() + m * n * n;
      codes[m] = n == 0 ? 0 : static_cast<int32_t>(dense::potrf<T>(!upper, n, A, n));
      // The other triangle still holds A's entries: zero it (a failed factor is the caller's error anyway).
      linalg::keep_triangle(A, n, upper ? linalg::Keep::kUpper : linalg::Keep::kLower);
    }
  });
}

void eigh_cpu(const Tensor& a, bool upper, const Tensor& w, const Tensor& v, const Tensor& info) {
  const linalg::Square s = linalg::check_eigh(a, w, v, info);
  const int64_t n = s.n;
  int32_t* codes = info.data_ptr<int32_t>();
  linalg::with_float(a, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t m = 0; m < s.batch; ++m) {
      T* A = a.data_ptr<T>() + m * n * n;
      codes[m] = n == 0 ? 0 : static_cast<int32_t>(dense::syevd<T>(!upper, n, A, n, w.data_ptr<T>() + m * n));
      // The eigenvectors are A's columns now (column-major): V row-major is their transpose.
      linalg::transpose_into(A, n, v.data_ptr<T>() + m * n * n, n, n, linalg::Keep::kAll);
    }
  });
}

}  // namespace gx::ops
