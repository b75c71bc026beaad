// The registration of every built-in op: the gx_ops library, built by the
// same toolkit and schema mechanism as user extensions (the root
// setup.config.json; scripts/build-ops.js). One schema per op, its CPU
// implementation and, unless this is a CPU-only build (GX_OPS_NO_CUDA, set by
// scripts/build-ops.js where there is no nvcc), its CUDA one.
// The calling convention: NOTE [ Calling convention of the built-in ops ] in ops.h.
#include <gpuext/extension.h>

#include <optional>

#include "ops.h"

#if defined(GX_OPS_NO_CUDA)
#define GX_OPS_IMPLS(fn) .impl(gx::kCPU, gx::ops::fn##_cpu)
#else
#define GX_OPS_IMPLS(fn) .impl(gx::kCPU, gx::ops::fn##_cpu).impl(gx::kCUDA, gx::ops::fn##_cuda)
#endif

GX_LIBRARY(gx_ops, m) {
#define GX_OPS_REGISTER_BINARY(name, F, S, doc)                                                                \
  m.def(#name "(Tensor self, Tensor other, ScalarType dtype, Tensor out) -> ()", doc) GX_OPS_IMPLS(name);     \
  m.def(#name "_scalar(Tensor self, float other, int other_int, bool reverse, ScalarType dtype, Tensor out) -> ()", \
        doc " `other` is a JS number (its value, and as an integer); `reverse` puts it on the left.")          \
      GX_OPS_IMPLS(name##_scalar);
  GX_OPS_BINARY(GX_OPS_REGISTER_BINARY)
#undef GX_OPS_REGISTER_BINARY

#define GX_OPS_REGISTER_UNARY(name, F, S, doc) \
  m.def(#name "(Tensor self, ScalarType dtype, Tensor out) -> ()", doc) GX_OPS_IMPLS(name);
  GX_OPS_UNARY(GX_OPS_REGISTER_UNARY)
#undef GX_OPS_REGISTER_UNARY

  m.def("where(Tensor condition, Tensor? self, Tensor? other, float self_scalar, int self_int, float other_scalar, "
        "int other_int, ScalarType dtype, Tensor out) -> ()",
        "Elementwise condition ? self : other, broadcasting; an absent self/other is the scalar beside it.")
      GX_OPS_IMPLS(where);
  m.def("clamp(Tensor self, float? min, float? max, int min_int, int max_int, ScalarType dtype, Tensor out) -> ()",
        "Elementwise min(max(self, min), max) with number bounds (each optional); NaN propagates.")
      GX_OPS_IMPLS(clamp);
  m.def("astype(Tensor self, Tensor out) -> ()", "Copies self into out (same shape), converting to out's dtype.")
      GX_OPS_IMPLS(astype);

#define GX_OPS_REGISTER_REDUCE(name, R, S, doc) \
  m.def(#name "(Tensor self, int[] dims, ScalarType dtype, Tensor out) -> ()", doc) GX_OPS_IMPLS(name);
  GX_OPS_REDUCE(GX_OPS_REGISTER_REDUCE)
#undef GX_OPS_REGISTER_REDUCE
}
