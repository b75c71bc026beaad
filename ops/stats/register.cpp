// Registration of var and std (var.h; lib/ops/statistics.ts calls them).
#include "var.h"

#if defined(GX_OPS_NO_CUDA)
#define GX_VAR_IMPLS(fn) .impl(gx::kCPU, gx::ops::fn##_cpu)
#else
#define GX_VAR_IMPLS(fn) .impl(gx::kCPU, gx::ops::fn##_cpu).impl(gx::kCUDA, gx::ops::fn##_cuda)
#endif

GX_LIBRARY(gx_ops, m) {
  // Not "var": the generated JS bindings (ops/build/gx_ops.js) name a function after each op.
  m.def("variance(Tensor self, int[] dims, float correction, ScalarType dtype, Tensor out) -> ()",
        "Variance over dims: sum((x - mean)^2) / max(0, N - correction), one pass (shifted Welford).")
      GX_VAR_IMPLS(var);
  m.def("std(Tensor self, int[] dims, float correction, ScalarType dtype, Tensor out) -> ()",
        "Standard deviation over dims: the square root of var's result.")
      GX_VAR_IMPLS(std);
}
