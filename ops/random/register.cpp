// Registration of the random fill (philox.h; lib/ops/random.ts calls it).
#include "random.h"

#if defined(GX_OPS_NO_CUDA)
#define GX_RANDOM_IMPLS .impl(gx::kCPU, gx::ops::random_fill_cpu)
#else
#define GX_RANDOM_IMPLS .impl(gx::kCPU, gx::ops::random_fill_cpu).impl(gx::kCUDA, gx::ops::random_fill_cuda)
#endif

GX_LIBRARY(gx_ops, m) {
  m.def("random_fill(Tensor out, int seed, int offset, int kind, float a, float b, int lo, int hi) -> ()",
        "Fills out (contiguous) with Philox4x32-10 draws: kind 0 uniform in [a, b), 1 normal (mean a, std b), "
        "2 integers in [lo, hi); element j uses counter offset + j / 4 (64-bit draws: j / 2).")
      GX_RANDOM_IMPLS;
}
