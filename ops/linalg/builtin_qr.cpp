// Built-in Householder QR (builtin.h): ?geqrf's and ?org2r's algorithms,
// unblocked, column by column (every inner loop runs down a column, which is
// contiguous in column-major storage).
#include <algorithm>
#include <cmath>

#include "builtin.h"

namespace gx::ops::builtin {
namespace {

// The 2-norm of x [n], scaled by its largest entry so squaring neither
// overflows nor underflows (as ?nrm2 does).
double norm2(const double* x, int64_t n) {
  double big = 0;
  for (int64_t i = 0; i < n; ++i) big = std::max(big, std::fabs(x[i]));
  if (big == 0 || !std::isfinite(big)) return big;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double y = x[i] / big;
    sum += y * y;
  }
  return big * std::sqrt(sum);
}

// c[0 .. rows) -= tau (v^T c) v, with v[0] taken as 1 (the reflector's implied leading entry).
void reflect(const double* v, double tau, double* c, int64_t rows) {
  double w = c[0];
  for (int64_t i = 1; i < rows; ++i) w += v[i] * c[i];
  w *= tau;
  c[0] -= w;
  for (int64_t i = 1; i < rows; ++i) c[i] -= w * v[i];
}

}  // namespace

void geqrf(int64_t m, int64_t n, double* a, int64_t lda, double* tau) {
  const int64_t k = std::min(m, n);
  for (int64_t j = 0; j < k; ++j) {
    double* col = a + j * lda + j;  // A(j:m, j)
    const int64_t rows = m - j;
    const double alpha = col[0];
    const double xnorm = norm2(col + 1, rows - 1);
    if (xnorm == 0) {  // nothing below the diagonal: H = I, as ?larfg
      tau[j] = 0;
      continue;
    }
    const double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
    tau[j] = (beta - alpha) / beta;
    const double scale = 1 / (alpha - beta);
    for (int64_t i = 1; i < rows; ++i) col[i] *= scale;
    col[0] = beta;
    for (int64_t c = j + 1; c < n; ++c) reflect(col, tau[j], a + c * lda + j, rows);
  }
}

void orgqr(int64_t m, int64_t n, int64_t k, double* a, int64_t lda, const double* tau) {
  // Columns beyond the reflectors start as the identity's.
  for (int64_t j = k; j < n; ++j) {
    double* col = a + j * lda;
    std::fill(col, col + m, 0.0);
    if (j < m) col[j] = 1;
  }
  // Backwards, so each reflector is applied to the columns the later ones made (?org2r).
  for (int64_t i = k - 1; i >= 0; --i) {
    double* v = a + i * lda + i;  // A(i:m, i)
    const int64_t rows = m - i;
    v[0] = 1;
    for (int64_t c = i + 1; c < n; ++c) reflect(v, tau[i], a + c * lda + i, rows);
    for (int64_t r = 1; r < rows; ++r) v[r] *= -tau[i];
    v[0] = 1 - tau[i];
    std::fill(a + i * lda, v, 0.0);  // A(0:i, i)
  }
}

}  // namespace gx::ops::builtin
