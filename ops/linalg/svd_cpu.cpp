// CPU SVD: LAPACK's gesdd when a LAPACK is loaded (svd_lapack.cpp, blas.h),
// else one-sided Jacobi (Hestenes) in double precision, the reference the
// cuSOLVER one is tested against. Rotations orthogonalize the columns of A;
// their norms are the singular values, the normalized columns U, and the
// accumulated rotations V. Accurate to about machine precision in the
// relative sense; O(n^2 m) per sweep, meant for modest sizes.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "../common/dispatch.h"
#include "svd.h"
#include "svd_lapack.h"

namespace gx::ops {
namespace {

// Columns j of u (column-major, m rows) beyond `have` completed to an
// orthonormal basis by Gram-Schmidt against the unit vectors.
void complete_basis(std::vector<double>& u, int64_t m, int64_t have, int64_t want) {
  int64_t next = have;
  for (int64_t e = 0; e < m && next < want; ++e) {
    std::vector<double> v(static_cast<size_t>(m), 0.0);
    v[static_cast<size_t>(e)] = 1.0;
    for (int pass = 0; pass < 2; ++pass) {  // twice: classical Gram-Schmidt loses orthogonality once
      for (int64_t j = 0; j < next; ++j) {
        double d = 0;
        for (int64_t i = 0; i < m; ++i) d += u[static_cast<size_t>(j * m + i)] * v[static_cast<size_t>(i)];
        for (int64_t i = 0; i < m; ++i) v[static_cast<size_t>(i)] -= d * u[static_cast<size_t>(j * m + i)];
      }
    }
    double norm = 0;
    for (double x : v) norm += x * x;
    norm = std::sqrt(norm);
    if (norm < 1e-6) continue;
    for (int64_t i = 0; i < m; ++i) u[static_cast<size_t>(next * m + i)] = v[static_cast<size_t>(i)] / norm;
    ++next;
  }
}

}  // namespace

void svd_cpu(const Tensor& a, bool full, const Tensor& s_out, const Tensor& u_out, const Tensor& v_out) {
  const linalg::SvdShape sh = linalg::check_svd(a, full, s_out, u_out, v_out);
  if (svd_lapack(a, full, s_out, u_out, v_out)) return;
  const int64_t m = sh.m, n = sh.n;
  with_storage_type(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* ap = static_cast<const T*>(a.data_ptr());
      std::vector<double> w(ap, ap + m * n);  // column j: w[j * m .. j * m + m)
      // Scaled by a power of two so the largest entry is about 1: the rotations square entries, which
      // overflowed beyond ~1e154 and underflowed below ~1e-154 (found by the fuzz suite). Exact; undone on S.
      double maxabs = 0;
      for (double x : w) maxabs = std::max(maxabs, std::fabs(x));
      const int scale = maxabs > 0 && std::isfinite(maxabs) ? std::ilogb(maxabs) : 0;
      if (scale != 0) for (double& x : w) x = std::ldexp(x, -scale);
      std::vector<double> v(static_cast<size_t>(n * n), 0.0);
      for (int64_t j = 0; j < n; ++j) v[static_cast<size_t>(j * n + j)] = 1.0;
      const double eps = 1e-15;
      for (int sweep = 0; sweep < 80; ++sweep) {
        bool rotated = false;
        for (int64_t p = 0; p < n; ++p) {
          for (int64_t q = p + 1; q < n; ++q) {
            double alpha = 0, beta = 0, gamma = 0;
            double* cp = &w[static_cast<size_t>(p * m)];
            double* cq = &w[static_cast<size_t>(q * m)];
            for (int64_t i = 0; i < m; ++i) {
              alpha += cp[i] * cp[i];
              beta += cq[i] * cq[i];
              gamma += cp[i] * cq[i];
            }
            if (std::fabs(gamma) <= eps * std::sqrt(alpha * beta) || gamma == 0) continue;
            rotated = true;
            const double zeta = (beta - alpha) / (2 * gamma);
            const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
            const double c = 1 / std::sqrt(1 + t * t), s = c * t;
            for (int64_t i = 0; i < m; ++i) {
              const double x = cp[i], y = cq[i];
              cp[i] = c * x - s * y;
              cq[i] = s * x + c * y;
            }
            double* vp = &v[static_cast<size_t>(p * n)];
            double* vq = &v[static_cast<size_t>(q * n)];
            for (int64_t i = 0; i < n; ++i) {
              const double x = vp[i], y = vq[i];
              vp[i] = c * x - s * y;
              vq[i] = s * x + c * y;
            }
          }
        }
        if (!rotated) break;
      }
      // Singular values, sorted descending, with their columns.
      std::vector<double> sv(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        double norm = 0;
        for (int64_t i = 0; i < m; ++i) norm += w[static_cast<size_t>(j * m + i)] * w[static_cast<size_t>(j * m + i)];
        sv[static_cast<size_t>(j)] = std::sqrt(norm);
      }
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return sv[static_cast<size_t>(x)] > sv[static_cast<size_t>(y)]; });
      const int64_t ucols = full ? m : n;
      std::vector<double> u(static_cast<size_t>(m * ucols), 0.0);
      int64_t have = 0;
      const double tiny = (sv.empty() ? 0 : sv[static_cast<size_t>(order[0])]) * 1e-13;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t j = order[static_cast<size_t>(k)];
        const double sj = sv[static_cast<size_t>(j)];
        if (sj <= tiny) break;  // zero singular values: their columns come from the completion below
        for (int64_t i = 0; i < m; ++i) u[static_cast<size_t>(k * m + i)] = w[static_cast<size_t>(j * m + i)] / sj;
        have = k + 1;
      }
      complete_basis(u, m, have, ucols);
      T* s_p = static_cast<T*>(s_out.data_ptr());
      T* u_p = static_cast<T*>(u_out.data_ptr());
      T* v_p = static_cast<T*>(v_out.data_ptr());
      for (int64_t k = 0; k < n; ++k) s_p[k] = static_cast<T>(std::ldexp(sv[static_cast<size_t>(order[static_cast<size_t>(k)])], scale));
      for (int64_t x = 0; x < m * ucols; ++x) u_p[x] = static_cast<T>(u[static_cast<size_t>(x)]);
      // V column-major: column k is the rotation column of the k-th largest singular value.
      for (int64_t k = 0; k < n; ++k) {
        const int64_t j = order[static_cast<size_t>(k)];
        for (int64_t i = 0; i < n; ++i) v_p[i + k * n] = static_cast<T>(v[static_cast<size_t>(j * n + i)]);
      }
    }
  });
}

}  // namespace gx::ops
