// Unary elementwise ops as functors, and where / clamp / astype. One
// definition each for the CPU loops and the CUDA kernels; C is the compute
// type (NOTE [ Compute types ] in common/hd.h). Float ops see float or double
// (integer inputs arrive converted: lib/ops promotes them to float32); the
// "keep" ops (neg, abs, sign, floor, ceil, round, relu) also see int64_t.
#pragma once
#include "../common/hd_math.h"

namespace gx::ops {

// kComputeBound: the CPU's contiguous loop takes its widest clone for these
// (NOTE [ CPU loop clones ] in common/cpu_loops.h).
#define GX_OPS_FLOAT_FUNCTOR(Name, expr)                      \
  struct Name {                                               \
    static constexpr bool kComputeBound = true;               \
    template <typename C> GX_HD C operator()(C x) const { return expr; } \
  };
GX_OPS_FLOAT_FUNCTOR(ExpOp, m_exp(x))
GX_OPS_FLOAT_FUNCTOR(LogOp, m_log(x))
GX_OPS_FLOAT_FUNCTOR(Log1pOp, m_log1p(x))
GX_OPS_FLOAT_FUNCTOR(SqrtOp, m_sqrt(x))
GX_OPS_FLOAT_FUNCTOR(RsqrtOp, m_rsqrt(x))
GX_OPS_FLOAT_FUNCTOR(SinOp, m_sin(x))
GX_OPS_FLOAT_FUNCTOR(CosOp, m_cos(x))
GX_OPS_FLOAT_FUNCTOR(TanhOp, m_tanh(x))
GX_OPS_FLOAT_FUNCTOR(SigmoidOp, C(1) / (C(1) + m_exp(-x)))
// torch.nn.functional.gelu's default (approximate='none').
GX_OPS_FLOAT_FUNCTOR(GeluOp, C(0.5) * x * (C(1) + m_erf(x * C(0.70710678118654752440))))
// torch.nn.functional.softplus with beta 1 and threshold 20.
GX_OPS_FLOAT_FUNCTOR(SoftplusOp, x > C(20) ? x : m_log1p(m_exp(x)))
GX_OPS_FLOAT_FUNCTOR(TanOp, m_tan(x))
GX_OPS_FLOAT_FUNCTOR(AsinOp, m_asin(x))
GX_OPS_FLOAT_FUNCTOR(AcosOp, m_acos(x))
GX_OPS_FLOAT_FUNCTOR(AtanOp, m_atan(x))
GX_OPS_FLOAT_FUNCTOR(SinhOp, m_sinh(x))
GX_OPS_FLOAT_FUNCTOR(CoshOp, m_cosh(x))
GX_OPS_FLOAT_FUNCTOR(AsinhOp, m_asinh(x))
GX_OPS_FLOAT_FUNCTOR(AcoshOp, m_acosh(x))
GX_OPS_FLOAT_FUNCTOR(AtanhOp, m_atanh(x))
GX_OPS_FLOAT_FUNCTOR(Expm1Op, m_expm1(x))
GX_OPS_FLOAT_FUNCTOR(Exp2Op, m_exp2(x))
GX_OPS_FLOAT_FUNCTOR(Log2Op, m_log2(x))
GX_OPS_FLOAT_FUNCTOR(Log10Op, m_log10(x))
GX_OPS_FLOAT_FUNCTOR(ErfOp, m_erf(x))
GX_OPS_FLOAT_FUNCTOR(ErfcOp, m_erfc(x))
GX_OPS_FLOAT_FUNCTOR(ErfinvOp, m_erfinv(x))
GX_OPS_FLOAT_FUNCTOR(ReciprocalOp, C(1) / x)
// x - trunc(x), as torch.frac: the fraction keeps x's sign; +-inf give NaN.
GX_OPS_FLOAT_FUNCTOR(FracOp, x - m_trunc(x))
// The activations, each as torch computes it (aten/src/ATen/native/cpu/Activation.cpp and the CUDA
// kernels beside it): silu x / (1 + e^-x); mish x tanh(softplus(x)) with no threshold; logSigmoid as
// min(x, 0) - log1p(e^-|x|), which neither overflows nor loses small results.
GX_OPS_FLOAT_FUNCTOR(SiluOp, x / (C(1) + m_exp(-x)))
GX_OPS_FLOAT_FUNCTOR(MishOp, x * m_tanh(m_log1p(m_exp(x))))
GX_OPS_FLOAT_FUNCTOR(LogSigmoidOp, (x < C(0) ? x : C(0)) - m_log1p(m_exp(-m_fabs(x))))
// selu: scale * (x > 0 ? x : alpha * expm1(x)) with torch's alpha and scale.
GX_OPS_FLOAT_FUNCTOR(SeluOp, x > C(0) ? C(1.0507009873554804934193349852946) * x
                                      : C(1.0507009873554804934193349852946 * 1.6732632423543772848170429916717) * m_expm1(x))
// min(max(x + 3, 0), 6) / 6; NaN propagates (torch's std::max / std::min keep their first operand).
GX_OPS_FLOAT_FUNCTOR(HardsigmoidOp, is_nan(x) ? x : (x <= C(-3) ? C(0) : x >= C(3) ? C(1) : (x + C(3)) / C(6)))
#undef GX_OPS_FLOAT_FUNCTOR

// NOTE [ Functors with parameters ]
// An op with number parameters (op-list.js `params`) has a functor whose
// members are the parameters, in the schema's order, each with torch's
// default: a `float p` is `double p`, a `float? p` is `bool has_p; double p`.
// The kernels build it from the schema's arguments (unary.h,
// GX_OPS_DEFINE_UNARY_PARAMS), gx.fuse from the call's numbers, or with no
// numbers as `F{}`: the defaults. Parameters are doubles on every compute
// type, converted where they meet x, as torch's Scalars are.

// x > 0 ? x : negative_slope * x.
struct LeakyReluOp {
  static constexpr bool kComputeBound = true;
  double negative_slope = 0.01;
  template <typename C> GX_HD C operator()(C x) const { return x > C(0) ? x : x * C(negative_slope); }
};

// x > 0 ? x : alpha * (e^x - 1).
struct EluOp {
  static constexpr bool kComputeBound = true;
  double alpha = 1.0;
  template <typename C> GX_HD C operator()(C x) const { return x > C(0) ? x : C(alpha) * m_expm1(x); }
};

// min(max(x, min_val), max_val); NaN propagates.
struct HardtanhOp {
  double min_val = -1.0;
  double max_val = 1.0;
  template <typename C> GX_HD C operator()(C x) const {
    if (is_nan(x)) return x;
    return x < C(min_val) ? C(min_val) : x > C(max_val) ? C(max_val) : x;
  }
};

// NaN to `nan`, +inf to `posinf`, -inf to `neginf` (absent: the compute type's largest and lowest
// finite values, as torch's defaults for float32 and float64; float16 and bfloat16 results take
// float's, which their store makes inf: torch there uses the storage type's own limits, lib/ops
// passes those). Integers pass unchanged.
struct NanToNumOp {
  double nan = 0.0;
  bool has_posinf = false;
  double posinf = 0.0;
  bool has_neginf = false;
  double neginf = 0.0;
  template <typename C> GX_HD C operator()(C x) const {
    if constexpr (is_integral_v<C>) {
      return x;
    } else {
      if (x != x) return C(nan);
      if (x > max_finite<C>()) return has_posinf ? C(posinf) : max_finite<C>();
      if (x < -max_finite<C>()) return has_neginf ? C(neginf) : -max_finite<C>();
      return x;
    }
  }
};

struct NegOp {
  template <typename C> GX_HD C operator()(C x) const {
    if constexpr (is_integral_v<C>) return wrap_sub(0, x);
    else return -x;
  }
};

struct AbsOp {
  template <typename C> GX_HD C operator()(C x) const {
    if constexpr (is_integral_v<C>) return x < 0 ? wrap_sub(0, x) : x;
    else return m_fabs(x);
  }
};

// 0 for NaN, as torch.sign.
struct SignOp {
  template <typename C> GX_HD C operator()(C x) const { return C(x > C(0)) - C(x < C(0)); }
};

#define GX_OPS_ROUNDING_FUNCTOR(Name, fn)                  \
  struct Name {                                            \
    template <typename C> GX_HD C operator()(C x) const {  \
      if constexpr (is_integral_v<C>) return x;       \
      else return fn(x);                                   \
    }                                                      \
  };
GX_OPS_ROUNDING_FUNCTOR(FloorOp, m_floor)
GX_OPS_ROUNDING_FUNCTOR(CeilOp, m_ceil)
GX_OPS_ROUNDING_FUNCTOR(RoundOp, m_rint)
#undef GX_OPS_ROUNDING_FUNCTOR

struct SquareOp {
  template <typename C> GX_HD C operator()(C x) const {
    if constexpr (is_integral_v<C>) return wrap_mul(x, x);
    else return x * x;
  }
};

struct TruncOp {
  template <typename C> GX_HD C operator()(C x) const {
    if constexpr (is_integral_v<C>) return x;
    else return m_trunc(x);
  }
};

struct ReluOp {
  template <typename C> GX_HD C operator()(C x) const { return (x > C(0) || is_nan(x)) ? x : C(0); }
};

// where(condition, a, b): the condition arrives in the compute type (bool -> 0/1).
struct WhereOp {
  template <typename C> GX_HD C operator()(C cond, C a, C b) const { return cond != C(0) ? a : b; }
};

// lerp(self, end, weight) as torch: from the nearer end, so weight 0 gives self and 1 gives end exactly.
struct LerpOp {
  template <typename C> GX_HD C operator()(C a, C b, C w) const {
    return (w < C(0.5) && w > C(-0.5)) ? a + w * (b - a) : b - (b - a) * (C(1) - w);
  }
};

// clamp(x, min?, max?) with JS-number bounds; min > max gives max (torch.clamp).
struct ClampOp {
  double lo, hi;
  int64_t ilo, ihi;
  bool has_lo, has_hi;
  template <typename C> GX_HD C operator()(C x) const {
    if (is_nan(x)) return x;
    if constexpr (is_integral_v<C>) {
      if (has_lo && x < ilo) x = ilo;
      if (has_hi && x > ihi) x = ihi;
    } else {
      if (has_lo && x < C(lo)) x = C(lo);
      if (has_hi && x > C(hi)) x = C(hi);
    }
    return x;
  }
};

// astype: the conversion happens in the loads and the store.
struct CopyOp {
  template <typename C> GX_HD C operator()(C x) const { return x; }
};

}  // namespace gx::ops
