// Arithmetic rounded once per operation on both devices, for the ops whose
// results must match between the CPU and CUDA bit for bit (the optimizers'
// multi-tensor steps, ops/optim/foreach.h; the uniform draws, ops/random/philox.h).
//
// NOTE [ Rounded arithmetic ]
// nvcc contracts a * b + c into one fused multiply-add, which rounds once
// where the host rounds the product and the sum apart; so on the GPU the
// products and sums go through the __*_rn intrinsics, which are never
// contracted. The host side is plain arithmetic: the CPU build targets x86-64
// without -mfma, where nothing is contracted.
#pragma once
#include "hd_math.h"

namespace gx::ops {

GX_HD float rn_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
GX_HD double rn_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
GX_HD float rn_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
GX_HD double rn_add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
GX_HD float rn_sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
GX_HD double rn_sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
// a + b * c, the product rounded on its own (never one fused multiply-add).
template <typename F> GX_HD F rn_mul_add(F a, F b, F c) {
  return rn_add(a, rn_mul(b, c));
}

}  // namespace gx::ops
