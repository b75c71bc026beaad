// Unsigned 32-bit division by a divisor fixed before a kernel runs, as a
// multiply-high, an add and a shift (the same on the host and the device).
//
// NOTE [ Division by a run-time constant ]
// A GPU has no integer divider: n / d with d known only at run time is a
// sequence of about 20 instructions in 32 bits and a call of about 70 in 64
// bits, and an index calculation over collapsed dims pays one per dim per
// element. Where the divisor is fixed for a whole launch (a dim's size, a
// stride), the host works out a magic number once and each division becomes
// __umulhi(n, m) + n >> s (Granlund and Montgomery; PyTorch's IntDivider in
// ATen/cuda/detail/IntegerDivider.cuh): exact for every n < 2^31 and every
// divisor in [1, 2^31], so it never changes a result, only its cost. Callers
// keep to 32-bit indices (numel < 2^31) on this path and fall back to plain
// 64-bit division beyond.
#pragma once
#include <cstdint>

#include "hd_math.h"

namespace gx::ops {

struct FastDivU32 {
  uint32_t divisor = 1;
  uint32_t magic = 1;
  uint32_t shift = 0;

  FastDivU32() = default;
  // d in [1, 2^31] (callers check their sizes against that on the host).
  explicit FastDivU32(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint32_t{1} << shift) < d) ++shift;
    const uint64_t one = 1;
    magic = static_cast<uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }

  // n / divisor for n < 2^31.
  GX_HD uint32_t div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t t = __umulhi(n, magic);
#else
    const uint32_t t = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32);
#endif
    return (t + n) >> shift;
  }
};

}  // namespace gx::ops
