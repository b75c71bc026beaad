// Built-in triangular factorizations (builtin.h): LU with partial pivoting
// and its solve, and Cholesky; ?getf2's, ?getrs's and ?potf2's algorithms, unblocked.
#include <cmath>
#include <utility>

#include "builtin.h"

namespace gx::ops::builtin {

int64_t getrf(int64_t n, double* a, int64_t lda, int* ipiv) {
  int64_t info = 0;
  for (int64_t j = 0; j < n; ++j) {
    double* cj = a + j * lda;
    int64_t p = j;  // the first largest |A(i, j)|, i >= j, as i?amax picks it
    double best = std::fabs(cj[j]);
    for (int64_t i = j + 1; i < n; ++i) {
      if (std::fabs(cj[i]) > best) {
        best = std::fabs(cj[i]);
        p = i;
      }
    }
    ipiv[j] = static_cast<int>(p + 1);
    if (cj[p] != 0) {
      if (p != j) {
        for (int64_t c = 0; c < n; ++c) std::swap(a[c * lda + j], a[c * lda + p]);
      }
      for (int64_t i = j + 1; i < n; ++i) cj[i] /= cj[j];
    } else if (info == 0) {
      info = j + 1;  // singular: U(j, j) is exactly zero; the column below is zero too, so go on as LAPACK does
    }
    for (int64_t c = j + 1; c < n; ++c) {  // the trailing rank-1 update, column by column
      double* cc = a + c * lda;
      const double f = cc[j];
      if (f != 0) {
        for (int64_t i = j + 1; i < n; ++i) cc[i] -= cj[i] * f;
      }
    }
  }
  return info;
}

void getrs(bool trans, int64_t n, int64_t nrhs, const double* a, int64_t lda, const int* ipiv, double* b,
           int64_t ldb) {
  for (int64_t r = 0; r < nrhs; ++r) {
    double* x = b + r * ldb;
    if (!trans) {  // A = P^T L U: x = U^-1 L^-1 P b
      for (int64_t i = 0; i < n; ++i) {
        const int64_t p = ipiv[i] - 1;
        if (p != i) std::swap(x[i], x[p]);
      }
      for (int64_t j = 0; j < n; ++j) {
        const double* l = a + j * lda;
        for (int64_t i = j + 1; i < n; ++i) x[i] -= l[i] * x[j];
      }
      for (int64_t j = n - 1; j >= 0; --j) {
        const double* u = a + j * lda;
        x[j] /= u[j];
        for (int64_t i = 0; i < j; ++i) x[i] -= u[i] * x[j];
      }
    } else {  // A^T = U^T L^T P: x = P^T L^-T U^-T b, each triangle read down its columns
      for (int64_t j = 0; j < n; ++j) {
        const double* u = a + j * lda;
        double s = x[j];
        for (int64_t i = 0; i < j; ++i) s -= u[i] * x[i];
        x[j] = s / u[j];
      }
      for (int64_t j = n - 1; j >= 0; --j) {
        const double* l = a + j * lda;
        double s = x[j];
        for (int64_t i = j + 1; i < n; ++i) s -= l[i] * x[i];
        x[j] = s;
      }
      for (int64_t i = n - 1; i >= 0; --i) {
        const int64_t p = ipiv[i] - 1;
        if (p != i) std::swap(x[i], x[p]);
      }
    }
  }
}

int64_t potrf(bool upper, int64_t n, double* a, int64_t lda) {
  // U(r, c) (r <= c) of A = U^T U: the upper triangle itself, or for the lower one the transpose of L (A = L L^T),
  // L(c, r) = U(r, c); one algorithm for both through the strides.
  const int64_t rs = upper ? 1 : lda, cs = upper ? lda : 1;
  auto u = [&](int64_t r, int64_t c) -> double& { return a[r * rs + c * cs]; };
  for (int64_t j = 0; j < n; ++j) {
    double d = u(j, j);
    for (int64_t k = 0; k < j; ++k) d -= u(k, j) * u(k, j);
    if (!(d > 0)) {  // not positive, or NaN: this leading minor is not positive-definite
      u(j, j) = d;
      return j + 1;
    }
    d = std::sqrt(d);
    u(j, j) = d;
    for (int64_t c = j + 1; c < n; ++c) {
      double s = u(j, c);
      for (int64_t k = 0; k < j; ++k) s -= u(k, j) * u(k, c);
      u(j, c) = s / d;
    }
  }
  return 0;
}

}  // namespace gx::ops::builtin
