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
#undef GX_OPS_FLOAT_FUNCTOR

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

struct ReluOp {
  template <typename C> GX_HD C operator()(C x) const { return (x > C(0) || is_nan(x)) ? x : C(0); }
};

// where(condition, a, b): the condition arrives in the compute type (bool -> 0/1).
struct WhereOp {
  template <typename C> GX_HD C operator()(C cond, C a, C b) const { return cond != C(0) ? a : b; }
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
