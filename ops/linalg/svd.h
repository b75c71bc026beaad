// The SVD (ops/op-list.js has its schema), in LAPACK's column-major terms (lib/ops/linalg/matmul.ts
// orients the problem): `a` is a contiguous [n, m] tensor, i.e. the
// column-major m x n matrix A with m >= n, and is overwritten. Results, also
// column-major: s [n] descending, u [m, m] (full) or [n, m] (the first n
// columns of U), v [n, n] (V, not V^T: cuSOLVER's gesvdj gives V). float32
// and float64.
#pragma once
#include <gpuext/extension.h>

#include "../ops.h"

namespace gx::ops {

namespace linalg {

struct SvdShape {
  int64_t m, n;
};

inline SvdShape check_svd(const Tensor& a, bool full, const Tensor& s, const Tensor& u, const Tensor& v) {
  GX_CHECK(a.dim() == 2 && a.is_contiguous(), "svd: a must be a contiguous 2-d tensor, got ", a.sizes());
  const int64_t n = a.size(0), m = a.size(1);
  GX_CHECK(m >= n, "svd: expected the column-major m x n matrix with m >= n, got m = ", m, ", n = ", n);
  const ScalarType t = a.dtype();
  GX_CHECK(t == kFloat32 || t == kFloat64, "svd: dtype ", t, " is not supported; expected float32 or float64");
  GX_CHECK(s.dtype() == t && u.dtype() == t && v.dtype() == t, "svd: outputs must be ", t);
  GX_CHECK(s.dim() == 1 && s.size(0) == n && s.is_contiguous(), "svd: s must be [", n, "], got ", s.sizes());
  GX_CHECK(u.dim() == 2 && u.size(0) == (full ? m : n) && u.size(1) == m && u.is_contiguous(), "svd: u must be [",
           full ? m : n, ", ", m, "], got ", u.sizes());
  GX_CHECK(v.dim() == 2 && v.size(0) == n && v.size(1) == n && v.is_contiguous(), "svd: v must be [", n, ", ", n,
           "], got ", v.sizes());
  return SvdShape{m, n};
}

}  // namespace linalg
}  // namespace gx::ops
