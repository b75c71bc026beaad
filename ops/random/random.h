// The random fills' entry points (philox.h; NOTE [ Random streams ]), one per
// device: `out` (contiguous, allocated by lib/ops/random.ts) gets element j of
// the fill (seed, offset, kind, a, b, lo, hi).
#pragma once
#include <gpuext/extension.h>

#include "../common/dispatch.h"
#include "philox.h"

namespace gx::ops {

void random_fill_cpu(const Tensor& out, int64_t seed, int64_t offset, int64_t kind, double a, double b, int64_t lo,
                     int64_t hi);
void random_fill_cuda(const Tensor& out, int64_t seed, int64_t offset, int64_t kind, double a, double b, int64_t lo,
                      int64_t hi);

namespace random {

// Checks shared by both devices; the parameters as a Fill.
inline Fill check_fill(const Tensor& out, int64_t seed, int64_t offset, int64_t kind, double a, double b, int64_t lo,
                       int64_t hi) {
  GX_CHECK(out.is_contiguous(), "random_fill: out must be contiguous");
  GX_CHECK(kind >= kUniform && kind <= kInteger, "random_fill: kind ", kind, " is not 0 (uniform), 1 (normal) or 2 (integer)");
  const ScalarType t = out.dtype();
  if (kind == kInteger) {
    GX_CHECK(t != kBool, "random_fill: integer draws need a numeric dtype, got bool");
    GX_CHECK(hi > lo, "random_fill: the integer range [", lo, ", ", hi, ") is empty");
  } else {
    GX_CHECK(t == kFloat32 || t == kFloat64 || t == kFloat16 || t == kBFloat16,
             "random_fill: uniform and normal draws need a floating dtype, got ", t);
  }
  GX_CHECK(offset >= 0, "random_fill: offset must be >= 0, got ", offset);
  return Fill{static_cast<uint64_t>(seed), static_cast<uint64_t>(offset), kind, a, b, lo, hi};
}

}  // namespace random
}  // namespace gx::ops
