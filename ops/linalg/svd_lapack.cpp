// CPU SVD through LAPACK's ?gesdd (divide and conquer, the driver NumPy and
// torch use on the CPU) when a LAPACK is loaded (blas.h), in svd.h's
// column-major terms. Returns false, having written nothing, when there is no
// LAPACK or gesdd fails; svd_cpu.cpp then runs its Jacobi SVD.
#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

#include "blas.h"
#include "svd.h"
#include "svd_lapack.h"

namespace gx::ops {
namespace {

template <typename T, typename Fn>
bool gesdd(Fn fn, bool full, int64_t m64, int64_t n64, const Tensor& a, const Tensor& s_out, const Tensor& u_out,
           const Tensor& v_out) {
  const int m = static_cast<int>(m64), n = static_cast<int>(n64);
  const T* ap = static_cast<const T*>(a.data_ptr());
  // A copy, so a failure leaves `a` for the Jacobi fallback. Scaled by a power of two so the largest entry is
  // about 1 (exact; undone on S), as the Jacobi SVD does: LAPACK's own scaling only starts near the overflow and
  // underflow thresholds, and entries far from 1 cost accuracy before that.
  std::vector<T> w(ap, ap + m64 * n64);
  T maxabs = 0;
  for (T x : w) maxabs = std::max(maxabs, std::fabs(x));
  const int scale = maxabs > 0 && std::isfinite(maxabs) ? std::ilogb(maxabs) : 0;
  if (scale != 0) for (T& x : w) x = std::ldexp(x, -scale);
  const char jobz = full ? 'A' : 'S';
  const int ldu = m, ldvt = n;
  T* s = static_cast<T*>(s_out.data_ptr());
  T* u = static_cast<T*>(u_out.data_ptr());  // column-major m x (m or n), ld m: u_out's [cols, m] layout
  std::vector<T> vt(static_cast<size_t>(n64 * n64));
  std::vector<int> iwork(static_cast<size_t>(8 * n64));
  int info = 0, lwork = -1;
  T query = 0;
  fn(&jobz, &m, &n, w.data(), &m, s, u, &ldu, vt.data(), &ldvt, &query, &lwork, iwork.data(), &info, 1);
  if (info != 0) return false;
  // The size comes back as a floating-point number; float32 rounds large ones down.
  const double want = std::ceil(static_cast<double>(query) * (1 + 1e-6)) + 1;
  if (!(want <= INT_MAX)) return false;
  lwork = static_cast<int>(want);
  std::vector<T> work(static_cast<size_t>(lwork));
  fn(&jobz, &m, &n, w.data(), &m, s, u, &ldu, vt.data(), &ldvt, work.data(), &lwork, iwork.data(), &info, 1);
  if (info != 0) return false;  // did not converge (> 0) or rejected an argument (< 0)
  if (scale != 0) for (int64_t i = 0; i < n64; ++i) s[i] = std::ldexp(s[i], scale);
  // svd.h wants V column-major: V(i, k) = Vt(k, i).
  T* v = static_cast<T*>(v_out.data_ptr());
  for (int64_t k = 0; k < n64; ++k) {
    for (int64_t i = 0; i < n64; ++i) v[i + k * n64] = vt[static_cast<size_t>(k + i * n64)];
  }
  return true;
}

}  // namespace

bool svd_lapack(const Tensor& a, bool full, const Tensor& s, const Tensor& u, const Tensor& v) {
  const linalg::SvdShape sh = linalg::check_svd(a, full, s, u, v);
  if (sh.n == 0 || sh.m > INT_MAX || sh.n > INT_MAX || (full ? sh.m * sh.m : sh.m * sh.n) > INT_MAX) return false;
  if (a.dtype() == kFloat64) {
    const blas::DgesddFn fn = blas::dgesdd();
    return fn != nullptr && gesdd<double>(fn, full, sh.m, sh.n, a, s, u, v);
  }
  const blas::SgesddFn fn = blas::sgesdd();
  return fn != nullptr && gesdd<float>(fn, full, sh.m, sh.n, a, s, u, v);
}

}  // namespace gx::ops
