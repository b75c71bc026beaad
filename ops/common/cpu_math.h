// Math the CPU loops can vectorize, for the functors' host side (hd.h).
//
// NOTE [ CPU expf ]
// glibc's expf is a call per element, so a loop around it never vectorizes:
// gx.exp of 1e7 float32 took 13x NumPy's time (NumPy has SIMD exp). cpu_expf
// is branch-free arithmetic the compiler vectorizes in the contiguous loop
// (common/cpu_loops.h), and as accurate as glibc's: it works in double,
// x = n ln2 + r with |r| <= ln2/2, e^r by a degree-8 polynomial (Chebyshev
// interpolation; relative error 1.1e-12, 2^-39.8), 2^n put into the exponent
// bits, one rounding to float at the end. So results are the correctly
// rounded e^x except within 2^-39 of a rounding tie (rarer than 1 in 10^4
// inputs, then 1 ulp off), where glibc's expf is also correctly rounded in
// practice. Subnormal results and overflow come out of that last rounding as
// IEEE says; NaN propagates through the arithmetic; x is clamped to
// [-104, 89] first (beyond: 0 and inf), which keeps 2^n a normal double.
// The CUDA side keeps CUDA's expf (hd.h).
#pragma once
#include <cstdint>
#include <cstring>

namespace gx::ops {

// The clamp's bounds are variables, never written, on purpose: with literal
// bounds GCC folds e^-104 and e^89 to constants and turns the clamps into
// branches around the whole computation ("control flow in loop"), and the
// loop no longer vectorizes. It cannot fold a variable another unit might write.
inline double cpu_expf_lo = -104.0;
inline double cpu_expf_hi = 89.0;

inline float cpu_expf(float xf) {
  double x = xf;
  x = x < cpu_expf_lo ? cpu_expf_lo : x;
  x = x > cpu_expf_hi ? cpu_expf_hi : x;
  constexpr double kMagic = 0x1.8p52;  // adding it rounds to an integer held in the low mantissa bits
  const double t = x * 0x1.71547652b82fep0 + kMagic;  // log2(e)
  const double n = t - kMagic;
  const double r = x - n * 0x1.62e42fefa39efp-1;  // ln(2)
  double p = 0x1.a159e93adbf2fp-16;
  p = p * r + 0x1.a1aa817b3711dp-13;
  p = p * r + 0x1.6c164e580ba71p-10;
  p = p * r + 0x1.111080ac12511p-7;
  p = p * r + 0x1.55555573eefa6p-5;
  p = p * r + 0x1.555555a26f9f3p-3;
  p = p * r + 0x1.fffffffff741fp-2;
  p = p * r + 0x1.ffffffffd38b5p-1;
  p = p * r + 0x1.0000000000002p+0;
  uint64_t tb;
  std::memcpy(&tb, &t, sizeof tb);
  // t's bits are kMagic's plus n: n + 1023 shifted into the exponent is 2^n.
  const uint64_t sb = (tb - 0x4338000000000000ull + 1023u) << 52;
  double s;
  std::memcpy(&s, &sb, sizeof s);
  return static_cast<float>(p * s);
}

}  // namespace gx::ops
