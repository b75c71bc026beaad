// The random fills rand, randn and randint (ops/op-list.js has their schemas;
// lib/ops/random/random.ts calls them; philox.h the draws and NOTE [ Random
// streams ]): `out` (contiguous, allocated by lib/ops/random/random.ts) gets element
// j of the fill. Each device writes one `fill_<device>(out, Fill)`;
// GX_RANDOM_DEFINE_ENTRY_POINTS makes the three entry points from it.
#pragma once
#include <gpuext/extension.h>

#include "../common/dispatch.h"
#include "../ops.h"
#include "philox.h"

namespace gx::ops {
namespace random {

// Checks shared by both devices; the parameters as a Fill.
inline Fill check_fill(const char* op, const Tensor& out, int64_t seed, int64_t offset, Kind kind, double a, double b,
                       int64_t lo, int64_t hi) {
  GX_CHECK(out.is_contiguous(), op, ": out must be contiguous");
  const ScalarType t = out.dtype();
  if (kind == kInteger) {
    GX_CHECK(t != kBool, op, ": integer draws need a numeric dtype, got bool");
    GX_CHECK(hi > lo, op, ": the integer range [", lo, ", ", hi, ") is empty");
  } else {
    GX_CHECK(is_floating(t), op,
             ": uniform and normal draws need a floating dtype, got ", t);
  }
  GX_CHECK(offset >= 0, op, ": offset must be >= 0, got ", offset);
  return Fill{static_cast<uint64_t>(seed), static_cast<uint64_t>(offset), kind, a, b, lo, hi};
}

}  // namespace random
}  // namespace gx::ops

#define GX_RANDOM_DEFINE_ENTRY_POINTS(dev)                                                                      \
  void rand_##dev(const Tensor& out, int64_t seed, int64_t offset, double low, double high) {                   \
    fill_##dev(out, random::check_fill("rand", out, seed, offset, random::kUniform, low, high, 0, 1));          \
  }                                                                                                             \
  void randn_##dev(const Tensor& out, int64_t seed, int64_t offset, double mean, double std) {                  \
    fill_##dev(out, random::check_fill("randn", out, seed, offset, random::kNormal, mean, std, 0, 1));          \
  }                                                                                                             \
  void randint_##dev(const Tensor& out, int64_t seed, int64_t offset, int64_t low, int64_t high) {              \
    fill_##dev(out, random::check_fill("randint", out, seed, offset, random::kInteger, 0, 0, low, high));       \
  }
