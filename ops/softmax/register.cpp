// Registration of softmax, log_softmax and logsumexp (softmax.h;
// lib/ops/softmax.ts and lib/ops/statistics.ts call them).
#include "softmax.h"

#if defined(GX_OPS_NO_CUDA)
#define GX_SOFTMAX_IMPLS(fn) .impl(gx::kCPU, gx::ops::fn##_cpu)
#else
#define GX_SOFTMAX_IMPLS(fn) .impl(gx::kCPU, gx::ops::fn##_cpu).impl(gx::kCUDA, gx::ops::fn##_cuda)
#endif

GX_LIBRARY(gx_ops, m) {
  m.def("softmax(Tensor self, int dim, ScalarType dtype, Tensor out) -> ()",
        "out = exp(x - max) / sum(exp(x - max)) along dim (out has self's shape), computing in dtype (floating).")
      GX_SOFTMAX_IMPLS(softmax);
  m.def("log_softmax(Tensor self, int dim, ScalarType dtype, Tensor out) -> ()",
        "out = x - max - log(sum(exp(x - max))) along dim (out has self's shape), computing in dtype (floating).")
      GX_SOFTMAX_IMPLS(log_softmax);
  m.def("logsumexp(Tensor self, int[] dims, ScalarType dtype, Tensor out) -> ()",
        "log(sum(exp(x))) over dims, stable (max + log(sum(exp(x - max)))); -inf for lines of -inf or none.")
      GX_SOFTMAX_IMPLS(logsumexp);
}
