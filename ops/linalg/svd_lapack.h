// The CPU SVD's LAPACK path (svd_lapack.cpp).
#pragma once
#include <gpuext/extension.h>

namespace gx::ops {

// svd_cpu's contract (svd.h) through LAPACK's ?gesdd; false, having
// written nothing the caller relies on, when no LAPACK is loaded or it fails.
bool svd_lapack(const Tensor& a, bool full, const Tensor& s, const Tensor& u, const Tensor& v);

}  // namespace gx::ops
