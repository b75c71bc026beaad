// Binary elementwise ops as functors: add, sub, mul, div, pow, maximum,
// minimum, remainder, fmod, floor and trunc division; comparisons (eq, ne, lt, le, gt, ge -> bool); logical
// and/or/xor (bool compute type). One definition each, run by the CPU loops
// and the CUDA kernels alike; C is the compute type (NOTE [ Compute types ]).
#pragma once
#include "../common/hd_math.h"

namespace gx::ops {

struct AddOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (is_integral_v<C>) return wrap_add(a, b);
    else return a + b;
  }
};

struct SubOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (is_integral_v<C>) return wrap_sub(a, b);
    else return a - b;
  }
};

struct MulOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (is_integral_v<C>) return wrap_mul(a, b);
    else return a * b;
  }
};

// True division: integer inputs arrive as float32 (lib/ops/promotion.ts).
struct DivOp {
  template <typename C> GX_HD C operator()(C a, C b) const { return a / b; }
};

// Integers: by squaring, wrapping like the dtype. A negative exponent gives
// 1 for base 1, +-1 for base -1 and 0 otherwise (integer results of 1/a^n).
struct PowOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (is_floating_point_v<C>) {
      return m_pow(a, b);
    } else {
      if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) ? -1 : 1;
        return 0;
      }
      int64_t r = 1, base = a;
      for (uint64_t e = static_cast<uint64_t>(b); e != 0; e >>= 1) {
        if (e & 1) r = wrap_mul(r, base);
        base = wrap_mul(base, base);
      }
      return r;
    }
  }
};

// NaN wins, as torch.maximum / torch.minimum.
struct MaximumOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a > b ? a : b;
  }
};

struct MinimumOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a < b ? a : b;
  }
};

// Python's %: the result has the divisor's sign (torch.remainder). Integer
// x % 0 gives 0 rather than trapping, as NumPy's (torch raises on the CPU);
// x % -1 is 0 for every x, and is answered before the % so INT64_MIN % -1
// never reaches the instruction (it traps on x86 and is undefined on CUDA).
struct RemainderOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    C r;
    if constexpr (is_floating_point_v<C>) {
      r = m_fmod(a, b);
    } else {
      if (b == 0 || b == -1) return 0;  // -1: INT64_MIN % -1 traps on x86
      r = a % b;
    }
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
};

// C's fmod, as torch.fmod: the result has the dividend's sign. Integers: x % 0 is 0 as in
// remainder (torch raises on the CPU).
struct FmodOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (is_floating_point_v<C>) {
      return m_fmod(a, b);
    } else {
      if (b == 0 || b == -1) return 0;  // -1: INT64_MIN % -1 traps on x86
      return a % b;
    }
  }
};

// NOTE [ Floor division ]
// self / other rounded toward -inf (torch.floor_divide, div's rounding_mode 'floor'; Python's //).
// Floats as torch's div_floor_floating (c10/util/generic_math.h), CPython's float floordiv:
// (a - fmod(a, b)) / b, one less where the remainder's sign is not b's, then floor with a
// round-up when the quotient sits more than 0.5 above it, so that a == q * b + remainder(a, b)
// as closely as rounding allows (floor(a / b) alone is one off where a / b rounds up to an
// integer: floor(1 / 0.1) is 10, 1 // 0.1 is 9); b == 0 gives a / b (+-inf or NaN) and a zero
// quotient the sign of a / b. 16-bit floats compute in float (NOTE [ Compute types ]).
// Integers exactly in int64 (narrower dtypes wrap back on the store, as their own arithmetic
// would): x // 0 is 0 as remainder's, and x // -1 is -x wrapping (INT64_MIN // -1 is INT64_MIN,
// as NumPy's), answered before the / (INT64_MIN / -1 traps on x86 and is undefined on CUDA).
// torch raises ZeroDivisionError on the CPU for x // 0, and its int32 INT32_MIN // -1 traps.
struct FloorDivideOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (is_floating_point_v<C>) {
      if (b == 0) return a / b;
      const C mod = m_fmod(a, b);
      C div = (a - mod) / b;
      if (mod != 0 && (b < 0) != (mod < 0)) div -= C(1);
      if (div == 0) return m_copysign(C(0), a / b);
      C floordiv = m_floor(div);
      if (div - floordiv > C(0.5)) floordiv += C(1);
      return floordiv;
    } else {
      if (b == 0) return 0;
      if (b == -1) return wrap_sub(0, a);
      const C q = a / b;
      return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
    }
  }
};

// self / other rounded toward 0 (div's rounding_mode 'trunc', C's integer /): floats trunc(a / b)
// as torch (16-bit floats dividing in float); integers as FloorDivideOp's, 0 for x / 0 and -x
// wrapping for x / -1.
struct TruncDivideOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if constexpr (is_floating_point_v<C>) {
      return m_trunc(a / b);
    } else {
      if (b == 0) return 0;
      if (b == -1) return wrap_sub(0, a);
      return a / b;
    }
  }
};

// The floating binary ops (integer inputs arrive as float32, as div's).
struct Atan2Op {
  template <typename C> GX_HD C operator()(C a, C b) const { return m_atan2(a, b); }
};

struct HypotOp {
  template <typename C> GX_HD C operator()(C a, C b) const { return m_hypot(a, b); }
};

struct CopysignOp {
  template <typename C> GX_HD C operator()(C a, C b) const { return m_copysign(a, b); }
};

// log(e^a + e^b) as torch: max + log1p(e^-|a - b|); equal infinities give themselves (inf - inf is NaN).
struct LogaddexpOp {
  template <typename C> GX_HD C operator()(C a, C b) const {
    if (a == b && (a - a) != (a - a)) return a;
    const C m = a > b ? a : b, d = a - b;
    if (d != d) return d;  // a NaN operand
    return m + m_log1p(m_exp(-m_fabs(d)));
  }
};

#define GX_OPS_COMPARE_FUNCTOR(Name, expr)                                  \
  struct Name {                                                             \
    template <typename C> GX_HD bool operator()(C a, C b) const { return expr; } \
  };
GX_OPS_COMPARE_FUNCTOR(EqOp, a == b)
GX_OPS_COMPARE_FUNCTOR(NeOp, a != b)
GX_OPS_COMPARE_FUNCTOR(LtOp, a < b)
GX_OPS_COMPARE_FUNCTOR(LeOp, a <= b)
GX_OPS_COMPARE_FUNCTOR(GtOp, a > b)
GX_OPS_COMPARE_FUNCTOR(GeOp, a >= b)
GX_OPS_COMPARE_FUNCTOR(LogicalAndOp, a && b)
GX_OPS_COMPARE_FUNCTOR(LogicalOrOp, a || b)
GX_OPS_COMPARE_FUNCTOR(LogicalXorOp, a != b)
#undef GX_OPS_COMPARE_FUNCTOR

}  // namespace gx::ops
