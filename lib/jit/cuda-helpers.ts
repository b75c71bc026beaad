// The C++ helpers generated kernels call, each emitted once when a kernel
// uses it (each guarded, so a source that gets one twice still compiles).
// Written to compile as CUDA and, with the qualifiers defined away, as host
// C++: test/jit-semantics.test.ts runs the generated source on the host as
// the reference of the simulator. Their meaning is lib/jit/LANGUAGE.md's.

import { FLOAT_TO_INTEGER_HELPER } from '../rtc/params';

const guard = (name: string, body: string): string => `#ifndef GX_JIT_${name}\n#define GX_JIT_${name}\n${body}#endif\n`;
const D = '__device__ __forceinline__';

export const HELPERS = {
  round: guard('ROUND', `${D} float gx_jit_roundf(float x) { return floorf(x + 0.5f); }
${D} double gx_jit_round(double x) { return floor(x + 0.5); }
`),
  sign: guard('SIGN', `${D} float gx_jit_signf(float x) { return x > 0.f ? 1.f : x < 0.f ? -1.f : x; }
${D} double gx_jit_sign(double x) { return x > 0. ? 1. : x < 0. ? -1. : x; }
`),
  // JS's Math.min / max: NaN propagates, and -0 is below +0 (fminf leaves both open).
  minmax: guard('MINMAX', `${D} float gx_jit_minf(float a, float b) { return (a != a || b != b) ? a + b : a < b ? a : b < a ? b : (signbit(a) ? a : b); }
${D} double gx_jit_min(double a, double b) { return (a != a || b != b) ? a + b : a < b ? a : b < a ? b : (signbit(a) ? a : b); }
${D} float gx_jit_maxf(float a, float b) { return (a != a || b != b) ? a + b : a > b ? a : b > a ? b : (signbit(a) ? b : a); }
${D} double gx_jit_max(double a, double b) { return (a != a || b != b) ? a + b : a > b ? a : b > a ? b : (signbit(a) ? b : a); }
`),
  iminmax: guard('IMINMAX', `template <typename T> ${D} T gx_jit_imin(T a, T b) { return a < b ? a : b; }
template <typename T> ${D} T gx_jit_imax(T a, T b) { return a > b ? a : b; }
`),
  iabs: guard('IABS', `${D} int gx_jit_iabs(int x) { return x < 0 ? (int)(0u - (unsigned)x) : x; }
${D} long long gx_jit_iabs(long long x) { return x < 0 ? (long long)(0ull - (unsigned long long)x) : x; }
${D} int gx_jit_isign(int x) { return (x > 0) - (x < 0); }
${D} long long gx_jit_isign(long long x) { return (long long)((x > 0) - (x < 0)); }
`),
  // JS truthiness: NaN is false (C's would be true).
  truth: guard('TRUTH', `${D} bool gx_jit_truth(float x) { return x == x && x != 0.f; }
${D} bool gx_jit_truth(double x) { return x == x && x != 0.; }
`),
  // Float to integer: toward zero, saturating, NaN 0 (shared with the number operands of rtc's kernels).
  f2i: FLOAT_TO_INTEGER_HELPER,
  // Integer remainder: C's (the dividend's sign); by 0 (and INT_MIN % -1, which traps) it is 0.
  rem: guard('REM', `${D} int gx_jit_rem(int a, int b) { return (b == 0 || b == -1) ? 0 : a % b; }
${D} long long gx_jit_rem(long long a, long long b) { return (b == 0 || b == -1) ? 0 : a % b; }
`),
  // Integer power, wrapping; a negative exponent gives the truncated real power (0 but for 1 and -1; 0 ** -n is 0).
  ipow: guard('IPOW', `${D} int gx_jit_ipow(int b, int e) {
  if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  unsigned r = 1u, x = (unsigned)b;
  while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }
  return (int)r;
}
${D} long long gx_jit_ipow(long long b, long long e) {
  if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  unsigned long long r = 1ull, x = (unsigned long long)b;
  while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }
  return (long long)r;
}
`),
} as const;
export type HelperName = keyof typeof HELPERS;

/** JS's Math.round (halves up), Math.sign and NaN-propagating Math.min / Math.max: what gx.fuse's op table calls. */
export const JIT_HELPERS = HELPERS.round + HELPERS.sign + HELPERS.minmax + HELPERS.iminmax;

/** Atomics for the four dtypes they work on, by bit pattern where CUDA has no overload (NOTE: gx.jit.atomic). */
export const ATOMIC_HELPERS = guard('ATOMIC', `typedef unsigned long long gx_u64;
__device__ __forceinline__ int gx_atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ long long gx_atomic_add(long long* p, long long v) { return (long long)atomicAdd((gx_u64*)p, (gx_u64)v); }
__device__ __forceinline__ float gx_atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double gx_atomic_add(double* p, double v) { return atomicAdd(p, v); }
template <typename T> __device__ __forceinline__ T gx_atomic_sub(T* p, T v) { return gx_atomic_add(p, (T)(-v)); }
__device__ __forceinline__ int gx_atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ __forceinline__ long long gx_atomic_min(long long* p, long long v) { return atomicMin(p, v); }
__device__ __forceinline__ int gx_atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ __forceinline__ long long gx_atomic_max(long long* p, long long v) { return atomicMax(p, v); }
__device__ __forceinline__ float gx_atomic_min(float* p, float v) {
  int old = __float_as_int(*p), seen;
  do { seen = old; if (!(v < __int_as_float(seen))) break; old = atomicCAS((int*)p, seen, __float_as_int(v)); } while (old != seen);
  return __int_as_float(old);
}
__device__ __forceinline__ float gx_atomic_max(float* p, float v) {
  int old = __float_as_int(*p), seen;
  do { seen = old; if (!(v > __int_as_float(seen))) break; old = atomicCAS((int*)p, seen, __float_as_int(v)); } while (old != seen);
  return __int_as_float(old);
}
__device__ __forceinline__ double gx_atomic_min(double* p, double v) {
  long long old = __double_as_longlong(*p), seen;
  do { seen = old; if (!(v < __longlong_as_double(seen))) break; old = (long long)atomicCAS((gx_u64*)p, (gx_u64)seen, (gx_u64)__double_as_longlong(v)); } while (old != seen);
  return __longlong_as_double(old);
}
__device__ __forceinline__ double gx_atomic_max(double* p, double v) {
  long long old = __double_as_longlong(*p), seen;
  do { seen = old; if (!(v > __longlong_as_double(seen))) break; old = (long long)atomicCAS((gx_u64*)p, (gx_u64)seen, (gx_u64)__double_as_longlong(v)); } while (old != seen);
  return __longlong_as_double(old);
}
__device__ __forceinline__ int gx_atomic_exch(int* p, int v) { return atomicExch(p, v); }
__device__ __forceinline__ long long gx_atomic_exch(long long* p, long long v) { return (long long)atomicExch((gx_u64*)p, (gx_u64)v); }
__device__ __forceinline__ float gx_atomic_exch(float* p, float v) { return atomicExch(p, v); }
__device__ __forceinline__ double gx_atomic_exch(double* p, double v) { return __longlong_as_double((long long)atomicExch((gx_u64*)p, (gx_u64)__double_as_longlong(v))); }
__device__ __forceinline__ int gx_atomic_cas(int* p, int c, int v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ long long gx_atomic_cas(long long* p, long long c, long long v) { return (long long)atomicCAS((gx_u64*)p, (gx_u64)c, (gx_u64)v); }
__device__ __forceinline__ float gx_atomic_cas(float* p, float c, float v) { return __int_as_float(atomicCAS((int*)p, __float_as_int(c), __float_as_int(v))); }
__device__ __forceinline__ double gx_atomic_cas(double* p, double c, double v) { return __longlong_as_double((long long)atomicCAS((gx_u64*)p, (gx_u64)__double_as_longlong(c), (gx_u64)__double_as_longlong(v))); }
__device__ __forceinline__ int gx_atomic_and(int* p, int v) { return atomicAnd(p, v); }
__device__ __forceinline__ long long gx_atomic_and(long long* p, long long v) { return (long long)atomicAnd((gx_u64*)p, (gx_u64)v); }
__device__ __forceinline__ int gx_atomic_or(int* p, int v) { return atomicOr(p, v); }
__device__ __forceinline__ long long gx_atomic_or(long long* p, long long v) { return (long long)atomicOr((gx_u64*)p, (gx_u64)v); }
__device__ __forceinline__ int gx_atomic_xor(int* p, int v) { return atomicXor(p, v); }
__device__ __forceinline__ long long gx_atomic_xor(long long* p, long long v) { return (long long)atomicXor((gx_u64*)p, (gx_u64)v); }
`);

/** An index out of range, in { debug: true } kernels: the first one is recorded in gx_err and the access goes to a sink. */
export const DEBUG_HELPERS = guard('DEBUG', `__device__ __forceinline__ bool gx_jit_in(long long* err, int site, int dim, long long i, long long n) {
  if (i >= 0 && i < n) return true;
  if (atomicCAS((unsigned long long*)err, 0ULL, 1ULL) == 0ULL) {
    err[1] = site; err[2] = dim; err[3] = i; err[4] = n;
    err[5] = threadIdx.x; err[6] = threadIdx.y; err[7] = threadIdx.z;
    err[8] = blockIdx.x; err[9] = blockIdx.y; err[10] = blockIdx.z;
  }
  return false;
}
template <typename T> __device__ __forceinline__ T gx_jit_rem_checked(long long* err, int site, T a, T b) {
  if (b == 0) {
    gx_jit_in(err, site, -1, (long long)a, 0);
    return 0;
  }
  return b == -1 ? 0 : a % b;
}
`);
