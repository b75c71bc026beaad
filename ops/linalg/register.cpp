// Registration of matmul (matmul.h; lib/ops/linalg.ts calls it).
#include "matmul.h"

#if defined(GX_OPS_NO_CUDA)
#define GX_MATMUL_IMPLS .impl(gx::kCPU, gx::ops::matmul_cpu)
#else
#define GX_MATMUL_IMPLS .impl(gx::kCPU, gx::ops::matmul_cpu).impl(gx::kCUDA, gx::ops::matmul_cuda)
#endif

GX_LIBRARY(gx_ops, m) {
  m.def("matmul(Tensor self, Tensor other, bool allow_tf32, Tensor out) -> ()",
        "out[b] = self[b or 0] @ other[b or 0] for contiguous [batch, m, k] and [batch, k, n] (cuBLAS on CUDA; "
        "allow_tf32 lets float32 use TF32 tensor cores).")
      GX_MATMUL_IMPLS;
}
