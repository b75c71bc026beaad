// Registration of cumsum (scan.h; lib/ops/scan.ts calls it).
#include "scan.h"

#if defined(GX_OPS_NO_CUDA)
#define GX_SCAN_IMPLS(fn) .impl(gx::kCPU, gx::ops::fn##_cpu)
#else
#define GX_SCAN_IMPLS(fn) .impl(gx::kCPU, gx::ops::fn##_cpu).impl(gx::kCUDA, gx::ops::fn##_cuda)
#endif

GX_LIBRARY(gx_ops, m) {
  m.def("cumsum(Tensor self, int dim, ScalarType dtype, Tensor out) -> ()",
        "Inclusive prefix sums along dim (out has self's shape), computing in dtype's compute type.")
      GX_SCAN_IMPLS(cumsum);
}
