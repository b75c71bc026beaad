// gx.linalg's decompositions (ops/op-list.js has their schemas; lib/ops/
// linalg-decomp.ts orients, copies and checks, and reads `info`): the
// contracts both devices' implementations keep, and the checks of them.
//
// Every matrix operand is a contiguous [batch, rows, cols] tensor, float32 or
// float64, one dtype and one device throughout; the matrices of a batch are
// factored one after another. LAPACK and cuSOLVER factor column-major
// matrices, and a row-major [rows, cols] matrix read column-major is its
// transpose, which the ops use rather than copy where they can:
//
//   qr(a, q?, r)   a [batch, m, n] row-major A, read only (each matrix is
//                  transposed into a column-major workspace: QR, unlike the
//                  SVD, has no use for A^T). r [batch, rk, n] gets R (rk = k =
//                  min(m, n), or m: the complete R with zero rows below), q
//                  [batch, m, kq] Q with kq = k or m orthonormal columns, both
//                  row-major; without q only R is computed. geqrf then orgqr;
//                  never synchronizes.
//   cholesky(a, upper, info)  a [batch, n, n] row-major A, overwritten by its
//                  factor L (A = L L^T, read from A's lower triangle) or U
//                  (A = U^T U, upper triangle), the other triangle zeroed.
//                  A row-major A is, column-major, A^T = A: potrf of the
//                  column-major matrix with the other triangle named.
//   solve(a, b, out, info)  A X = B for a [batch, n, n] row-major A
//                  (overwritten by the LU factors of the column-major A^T), b
//                  and out [batch, n, k] row-major: getrf of A^T, getrs with
//                  the transpose.
//   inv(a, out, info)  out [batch, n, n] = A^-1: getrs of A^T's factors
//                  against the identity gives (A^T)^-1 = (A^-1)^T column-major,
//                  which is A^-1 row-major.
//   det(a, out)    out [batch] = det A = det A^T from getrf's factors.
//   eigh(a, upper, w, v, info)  a [batch, n, n] row-major symmetric A (only
//                  its upper or lower triangle read), overwritten; w [batch, n]
//                  the eigenvalues ascending, v [batch, n, n] row-major with
//                  the eigenvectors as columns (A V = V diag(w)): syevd.
//
// info [batch] int32 gets each matrix's LAPACK info (potrf: the order of the
// first leading minor that is not positive-definite; getrf: i + 1 for the
// first exactly zero U(i, i); syevd: > 0 when it did not converge), 0 when it
// worked; the caller reads it and raises the error.
#pragma once
#include <climits>
#include <initializer_list>
#include <optional>

#include <gpuext/extension.h>

#include "../ops.h"

namespace gx::ops::linalg {

// a's dtype, which must be float32 or float64.
inline ScalarType check_float(const char* what, const Tensor& a) {
  const ScalarType t = a.dtype();
  GX_CHECK(t == kFloat32 || t == kFloat64, what, ": dtype ", t, " is not supported; expected float32 or float64");
  return t;
}

template <typename T>
struct FloatTag {
  using type = T;
};

// f(FloatTag<T>{}) for a's dtype, float32 or float64 (checked before): the ops' one dispatch.
template <typename F>
void with_float(const Tensor& a, F&& f) {
  if (a.dtype() == kFloat64) {
    f(FloatTag<double>{});
  } else {
    f(FloatTag<float>{});
  }
}

// `t` (argument `name` of `what`) is a contiguous [batch, rows, cols] tensor of dtype on like's device.
inline void check_matrices(const char* what, const char* name, const Tensor& t, const Tensor& like, ScalarType dtype,
                           int64_t batch, int64_t rows, int64_t cols) {
  GX_CHECK(t.dim() == 3 && t.size(0) == batch && t.size(1) == rows && t.size(2) == cols && t.is_contiguous(), what,
           ": ", name, " must be a contiguous [", batch, ", ", rows, ", ", cols, "] tensor, got ", t.sizes());
  GX_CHECK(t.dtype() == dtype && t.device() == like.device(), what, ": ", name, " must be ", dtype, " on ",
           like.device(), ", got ", t.dtype(), " on ", t.device());
}

// info, a contiguous int32 [batch] tensor on like's device.
inline void check_info(const char* what, const Tensor& info, const Tensor& like, int64_t batch) {
  GX_CHECK(info.dim() == 1 && info.size(0) == batch && info.is_contiguous() && info.dtype() == kInt32 &&
               info.device() == like.device(),
           what, ": info must be a contiguous int32 [", batch, "] tensor on ", like.device());
}

// A batch of square matrices a [batch, n, n].
struct Square {
  int64_t batch, n;
};

inline Square check_square(const char* what, const Tensor& a) {
  const ScalarType t = check_float(what, a);
  GX_CHECK(a.dim() == 3 && a.size(1) == a.size(2), what, ": a must be [batch, n, n], got ", a.sizes());
  const Square s{a.size(0), a.size(1)};
  check_matrices(what, "a", a, a, t, s.batch, s.n, s.n);
  return s;
}

struct QrShape {
  int64_t batch, m, n, k;
  int64_t rk, kq;  // rows of R, columns of Q (each k or m)
  bool want_q;
};

inline QrShape check_qr(const Tensor& a, const std::optional<Tensor>& q, const Tensor& r) {
  constexpr const char* kWhat = "qr";
  const ScalarType t = check_float(kWhat, a);
  GX_CHECK(a.dim() == 3, kWhat, ": a must be [batch, m, n], got ", a.sizes());
  QrShape s{a.size(0), a.size(1), a.size(2), 0, 0, 0, q.has_value()};
  s.k = s.m < s.n ? s.m : s.n;
  check_matrices(kWhat, "a", a, a, t, s.batch, s.m, s.n);
  s.rk = r.dim() == 3 ? r.size(1) : -1;
  GX_CHECK(s.rk == s.k || s.rk == s.m, kWhat, ": r must have k = ", s.k, " or m = ", s.m, " rows, got ", r.sizes());
  check_matrices(kWhat, "r", r, a, t, s.batch, s.rk, s.n);
  if (q.has_value()) {
    s.kq = q->dim() == 3 ? q->size(2) : -1;
    GX_CHECK(s.kq == s.k || s.kq == s.m, kWhat, ": q must have k = ", s.k, " or m = ", s.m, " columns, got ",
             q->sizes());
    check_matrices(kWhat, "q", *q, a, t, s.batch, s.m, s.kq);
  }
  return s;
}

// cholesky(a, upper, info), and the checks of the other ops on one batch of square matrices a [batch, n, n].
inline Square check_cholesky(const Tensor& a, const Tensor& info) {
  const Square s = check_square("cholesky", a);
  check_info("cholesky", info, a, s.batch);
  return s;
}

// solve(a, b, out, info): b and out [batch, n, k].
struct SolveShape {
  int64_t batch, n, k;
};

inline SolveShape check_solve(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& info) {
  constexpr const char* kWhat = "solve";
  const Square s = check_square(kWhat, a);
  GX_CHECK(b.dim() == 3, kWhat, ": b must be [batch, n, k], got ", b.sizes());
  const SolveShape sh{s.batch, s.n, b.size(2)};
  check_matrices(kWhat, "b", b, a, a.dtype(), sh.batch, sh.n, sh.k);
  check_matrices(kWhat, "out", out, a, a.dtype(), sh.batch, sh.n, sh.k);
  check_info(kWhat, info, a, sh.batch);
  return sh;
}

// inv(a, out, info): out [batch, n, n].
inline Square check_inv(const Tensor& a, const Tensor& out, const Tensor& info) {
  const Square s = check_square("inv", a);
  check_matrices("inv", "out", out, a, a.dtype(), s.batch, s.n, s.n);
  check_info("inv", info, a, s.batch);
  return s;
}

// det(a, out): out [batch].
inline Square check_det(const Tensor& a, const Tensor& out) {
  const Square s = check_square("det", a);
  GX_CHECK(out.dim() == 1 && out.size(0) == s.batch && out.is_contiguous() && out.dtype() == a.dtype() &&
               out.device() == a.device(),
           "det: out must be a contiguous ", a.dtype(), " [", s.batch, "] tensor on ", a.device());
  return s;
}

// eigh(a, upper, w, v, info): w [batch, n], v [batch, n, n].
inline Square check_eigh(const Tensor& a, const Tensor& w, const Tensor& v, const Tensor& info) {
  const Square s = check_square("eigh", a);
  GX_CHECK(w.dim() == 2 && w.size(0) == s.batch && w.size(1) == s.n && w.is_contiguous() && w.dtype() == a.dtype() &&
               w.device() == a.device(),
           "eigh: w must be a contiguous ", a.dtype(), " [", s.batch, ", ", s.n, "] tensor on ", a.device());
  check_matrices("eigh", "v", v, a, a.dtype(), s.batch, s.n, s.n);
  check_info("eigh", info, a, s.batch);
  return s;
}

// Dimensions cuSOLVER's 32-bit API takes.
inline void check_int_sizes(const char* what, std::initializer_list<int64_t> sizes) {
  for (int64_t s : sizes) {
    GX_CHECK(s <= INT_MAX, what, ": dimensions beyond 2^31 - 1 are not supported by cuSOLVER, got ", s);
  }
}

}  // namespace gx::ops::linalg
