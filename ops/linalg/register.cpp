// Registration of matmul and the SVD (matmul.h, svd.h; lib/ops/linalg.ts calls them).
#include "matmul.h"
#include "svd.h"

#if defined(GX_OPS_NO_CUDA)
#define GX_MATMUL_IMPLS .impl(gx::kCPU, gx::ops::matmul_cpu)
#define GX_SVD_IMPLS .impl(gx::kCPU, gx::ops::svd_colmajor_cpu)
#else
#define GX_SVD_IMPLS .impl(gx::kCPU, gx::ops::svd_colmajor_cpu).impl(gx::kCUDA, gx::ops::svd_colmajor_cuda)
#define GX_MATMUL_IMPLS .impl(gx::kCPU, gx::ops::matmul_cpu).impl(gx::kCUDA, gx::ops::matmul_cuda)
#endif

GX_LIBRARY(gx_ops, m) {
  m.def("matmul(Tensor self, Tensor other, bool allow_tf32, Tensor out) -> ()",
        "out[b] = self[b or 0] @ other[b or 0] for contiguous [batch, m, k] and [batch, k, n] (cuBLAS on CUDA; "
        "allow_tf32 lets float32 use TF32 tensor cores).")
      GX_MATMUL_IMPLS;
  m.def("svd_colmajor(Tensor a, bool full, Tensor s, Tensor u, Tensor v) -> ()",
        "SVD of the column-major m x n matrix a ([n, m], m >= n; overwritten): s [n], u [m or n, m], v [n, n], "
        "column-major (cuSOLVER gesvdj on CUDA, one-sided Jacobi on the CPU).")
      GX_SVD_IMPLS;
}
