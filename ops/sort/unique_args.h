// unique's argument checks, the same on both devices (sort_cpu.cpp,
// unique.cu): a contiguous 1-d input (the JS side flattens it) and outputs
// of its length.
#pragma once

#include <gpuext/extension.h>

#include <optional>

#include "../ops.h"

namespace gx::ops::unique_args {

inline void check_flat(const Tensor& t, int64_t n, ScalarType dtype, const Tensor& self, const char* name) {
  GX_CHECK(t.dim() == 1 && t.sizes()[0] == n && t.is_contiguous(), "unique: ", name, " must be contiguous [", n, "], got ",
           t.sizes());
  GX_CHECK(t.dtype() == dtype, "unique: ", name, " must be ", dtype, ", got ", t.dtype());
  GX_CHECK(t.device() == self.device(), "unique: ", name, " on ", t.device(), " but the input on ", self.device());
}

// Checks self and the outputs; returns self's length.
inline int64_t check(const Tensor& self, const std::optional<Tensor>& inverse, const std::optional<Tensor>& counts,
                     const Tensor& values) {
  GX_CHECK(self.dim() == 1 && self.is_contiguous(), "unique: the input must be contiguous 1-d (the JS side flattens it)");
  const int64_t n = self.numel();
  check_flat(values, n, self.dtype(), self, "values");
  if (inverse) check_flat(*inverse, n, kInt64, self, "inverse");
  if (counts) check_flat(*counts, n, kInt64, self, "counts");
  return n;
}

}  // namespace gx::ops::unique_args
