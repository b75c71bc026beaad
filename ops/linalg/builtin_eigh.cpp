// Built-in symmetric eigensolver (builtin.h): cyclic Jacobi rotations, each
// zeroing one off-diagonal pair of S = J^T S J and accumulated in V, until a
// sweep finds nothing above the threshold. Slower than LAPACK's divide and
// conquer (a few O(n^3) sweeps) but short, and as accurate: eigenvalues to
// about eps * ||A||, eigenvectors orthonormal to working precision.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "builtin.h"

namespace gx::ops::builtin {

int64_t syevd(bool upper, int64_t n, double* a, int64_t lda, double* w) {
  if (n == 0) return 0;
  const size_t nn = static_cast<size_t>(n);
  // The full symmetric matrix from the one triangle given (column-major, ld n).
  std::vector<double> s(nn * nn);
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t r = 0; r < n; ++r) {
      const bool stored = upper ? r <= c : r >= c;
      s[static_cast<size_t>(r + c * n)] = stored ? a[r + c * lda] : a[c + r * lda];
    }
  }
  // Scaled by a power of two so the largest entry is about 1 (exact; undone on w): the rotations square entries.
  double big = 0;
  for (double x : s) big = std::max(big, std::fabs(x));
  const int scale = big > 0 && std::isfinite(big) ? std::ilogb(big) : 0;
  if (scale != 0) for (double& x : s) x = std::ldexp(x, -scale);
  double frob = 0;
  for (double x : s) frob += x * x;
  // Rotations keep ||S||_F: an off-diagonal entry below eps * ||S||_F changes no eigenvalue beyond rounding.
  const double threshold = 1e-17 * std::sqrt(frob);
  std::vector<double> v(nn * nn, 0.0);
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * n + i)] = 1;
  auto at = [&](std::vector<double>& m, int64_t r, int64_t c) -> double& { return m[static_cast<size_t>(r + c * n)]; };
  bool converged = false;
  for (int sweep = 0; sweep < 100 && !converged; ++sweep) {
    converged = true;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = at(s, p, q);
        if (!(std::fabs(apq) > threshold)) continue;  // NaN too: nothing a rotation could fix
        converged = false;
        const double theta = (at(s, q, q) - at(s, p, p)) / (2 * apq);
        // The smaller root of t^2 + 2 theta t - 1 = 0 (|t| <= 1: the stable rotation).
        const double t = std::fabs(theta) > 1e150 ? 1 / (2 * theta)
                                                  : std::copysign(1.0, theta) / (std::fabs(theta) + std::hypot(theta, 1.0));
        const double c = 1 / std::sqrt(1 + t * t), sn = t * c;
        for (int64_t k = 0; k < n; ++k) {  // columns p and q: S J
          const double x = at(s, k, p), y = at(s, k, q);
          at(s, k, p) = c * x - sn * y;
          at(s, k, q) = sn * x + c * y;
        }
        for (int64_t k = 0; k < n; ++k) {  // rows p and q: J^T (S J)
          const double x = at(s, p, k), y = at(s, q, k);
          at(s, p, k) = c * x - sn * y;
          at(s, q, k) = sn * x + c * y;
        }
        at(s, p, q) = 0;  // exactly, rather than its rounding
        at(s, q, p) = 0;
        for (int64_t k = 0; k < n; ++k) {  // V J
          const double x = at(v, k, p), y = at(v, k, q);
          at(v, k, p) = c * x - sn * y;
          at(v, k, q) = sn * x + c * y;
        }
      }
    }
  }
  std::vector<int64_t> order(nn);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return at(s, x, x) < at(s, y, y); });
  for (int64_t j = 0; j < n; ++j) {
    const int64_t from = order[static_cast<size_t>(j)];
    w[j] = std::ldexp(at(s, from, from), scale);
    for (int64_t i = 0; i < n; ++i) a[i + j * lda] = at(v, i, from);
  }
  return converged ? 0 : 1;
}

}  // namespace gx::ops::builtin
