// The built-in ops of gpuext (the gx_ops library): every list that the
// registration (registry.cpp), the CPU implementations (*_cpu.cpp) and the
// CUDA ones (*.cu) share, and the declarations of their entry points.
//
// NOTE [ Calling convention of the built-in ops ]
// JS (lib/ops/) does the deciding: it checks the arguments, computes the
// broadcast shape and the dtypes with the one promotion table
// (lib/ops/promotion.ts), allocates the output or takes the caller's `out`,
// and calls the op by id. Every op here writes into `out` and returns nothing:
//   name(Tensor self, Tensor other, ScalarType dtype, Tensor out) -> ()
//   name_scalar(Tensor self, float other, int other_int, bool reverse, ScalarType dtype, Tensor out) -> ()
// `dtype` is the common dtype the op computes in (its compute type: NOTE
// [ Compute types ] in common/hd.h); the output may be of another dtype (a
// comparison's bool, a caller's `out`) and is converted on store. A JS number
// operand arrives as `other` (its value as a double) and `other_int` (as an
// integer, for integer compute types), never as a tensor; `reverse` puts it
// on the left (2 - x). The C++ side re-checks what it relies on (shapes that
// broadcast to out, dtypes it has kernels for) and fails with GX_CHECK.
#pragma once
#include <gpuext/extension.h>

#include <optional>

// --- lists: (name, functor, compute types, doc) --------------------------------

#define GX_OPS_BINARY_ARITH(_)                                                   \
  _(add, AddOp, kCNumeric, "Elementwise self + other, broadcasting.")             \
  _(sub, SubOp, kCNumeric | kCNoBool, "Elementwise self - other, broadcasting.")  \
  _(mul, MulOp, kCNumeric, "Elementwise self * other, broadcasting.")             \
  _(div, DivOp, kCFloating, "Elementwise true division self / other, broadcasting.")

#define GX_OPS_BINARY_MISC(_)                                                                   \
  _(pow, PowOp, kCNumeric | kCNoBool, "Elementwise self ** other, broadcasting.")                \
  _(maximum, MaximumOp, kCNumeric, "Elementwise maximum (NaN propagates), broadcasting.")        \
  _(minimum, MinimumOp, kCNumeric, "Elementwise minimum (NaN propagates), broadcasting.")        \
  _(remainder, RemainderOp, kCNumeric | kCNoBool, "Python-style self % other (the divisor's sign).")

#define GX_OPS_BINARY_COMPARE(_)                           \
  _(eq, EqOp, kCNumeric, "Elementwise self == other -> bool.") \
  _(ne, NeOp, kCNumeric, "Elementwise self != other -> bool.") \
  _(lt, LtOp, kCNumeric, "Elementwise self < other -> bool.")  \
  _(le, LeOp, kCNumeric, "Elementwise self <= other -> bool.") \
  _(gt, GtOp, kCNumeric, "Elementwise self > other -> bool.")  \
  _(ge, GeOp, kCNumeric, "Elementwise self >= other -> bool.")

#define GX_OPS_BINARY_LOGICAL(_)                                                  \
  _(logical_and, LogicalAndOp, kCBool, "Elementwise logical and of nonzero -> bool.") \
  _(logical_or, LogicalOrOp, kCBool, "Elementwise logical or of nonzero -> bool.")    \
  _(logical_xor, LogicalXorOp, kCBool, "Elementwise logical xor of nonzero -> bool.")

#define GX_OPS_BINARY(_) GX_OPS_BINARY_ARITH(_) GX_OPS_BINARY_MISC(_) GX_OPS_BINARY_COMPARE(_) GX_OPS_BINARY_LOGICAL(_)

// Unary: `exp(Tensor self, ScalarType dtype, Tensor out) -> ()`.
#define GX_OPS_UNARY_FLOAT(_)                                        \
  _(exp, ExpOp, kCFloating, "Elementwise e ** x.")                    \
  _(log, LogOp, kCFloating, "Elementwise natural logarithm.")         \
  _(log1p, Log1pOp, kCFloating, "Elementwise log(1 + x), accurate near 0.") \
  _(sqrt, SqrtOp, kCFloating, "Elementwise square root.")             \
  _(rsqrt, RsqrtOp, kCFloating, "Elementwise 1 / sqrt(x).")           \
  _(sin, SinOp, kCFloating, "Elementwise sine.")                      \
  _(cos, CosOp, kCFloating, "Elementwise cosine.")

#define GX_OPS_UNARY_ACTIVATION(_)                                                 \
  _(tanh, TanhOp, kCFloating, "Elementwise hyperbolic tangent.")                   \
  _(sigmoid, SigmoidOp, kCFloating, "Elementwise 1 / (1 + exp(-x)).")             \
  _(gelu, GeluOp, kCFloating, "Elementwise GELU, the exact erf form.")            \
  _(softplus, SoftplusOp, kCFloating, "Elementwise log(1 + exp(x)); x above 20 passes through.")

#define GX_OPS_UNARY_KEEP(_)                                                          \
  _(neg, NegOp, kCNumeric | kCNoBool, "Elementwise -x.")                              \
  _(abs, AbsOp, kCNumeric | kCNoBool, "Elementwise |x|.")                             \
  _(sign, SignOp, kCNumeric | kCNoBool, "Elementwise sign: -1, 0 or 1 (0 for NaN).")  \
  _(floor, FloorOp, kCNumeric | kCNoBool, "Elementwise floor (integers unchanged).")  \
  _(ceil, CeilOp, kCNumeric | kCNoBool, "Elementwise ceiling (integers unchanged).")  \
  _(round, RoundOp, kCNumeric | kCNoBool, "Elementwise rounding, half to even (integers unchanged).") \
  _(relu, ReluOp, kCNumeric | kCNoBool, "Elementwise max(x, 0) (NaN propagates).")

#define GX_OPS_UNARY(_) GX_OPS_UNARY_FLOAT(_) GX_OPS_UNARY_ACTIVATION(_) GX_OPS_UNARY_KEEP(_)

// Reductions: `sum(Tensor self, int[] dims, ScalarType dtype, Tensor out) -> ()`.
// dtype: the dtype the reduction computes in (sum/prod/mean: the result's; max,
// min, argmax, argmin: the input's).
#define GX_OPS_REDUCE(_)                                                               \
  _(sum, SumReducer, kCNumeric, "Sum over dims (all for []).")                         \
  _(prod, ProdReducer, kCNumeric, "Product over dims.")                                \
  _(mean, MeanReducer, kCFloating, "Mean over dims.")                                  \
  _(amax, MaxReducer, kCNumeric, "Maximum over dims (NaN propagates).")                \
  _(amin, MinReducer, kCNumeric, "Minimum over dims (NaN propagates).")                \
  _(argmax, ArgMaxReducer, kCNumeric | kCNoBool, "Index of the first maximum over dims (C order); NaN counts as the maximum.") \
  _(argmin, ArgMinReducer, kCNumeric | kCNoBool, "Index of the first minimum over dims (C order); NaN counts as the minimum.")

namespace gx::ops {

#define GX_OPS_DECLARE_BINARY_FOR(name, dev)                                                          \
  void name##_##dev(const Tensor& self, const Tensor& other, ScalarType dtype, const Tensor& out);   \
  void name##_scalar_##dev(const Tensor& self, double other, int64_t other_int, bool reverse, ScalarType dtype, \
                           const Tensor& out);
#define GX_OPS_DECLARE_BINARY(name, F, S, doc) GX_OPS_DECLARE_BINARY_FOR(name, cpu) GX_OPS_DECLARE_BINARY_FOR(name, cuda)
GX_OPS_BINARY(GX_OPS_DECLARE_BINARY)

#define GX_OPS_DECLARE_UNARY(name, F, S, doc)                                 \
  void name##_cpu(const Tensor& self, ScalarType dtype, const Tensor& out);  \
  void name##_cuda(const Tensor& self, ScalarType dtype, const Tensor& out);
GX_OPS_UNARY(GX_OPS_DECLARE_UNARY)

#define GX_OPS_DECLARE_REDUCE(name, R, S, doc)                                            \
  void name##_cpu(const Tensor& self, IntArrayRef dims, ScalarType dtype, const Tensor& out); \
  void name##_cuda(const Tensor& self, IntArrayRef dims, ScalarType dtype, const Tensor& out);
GX_OPS_REDUCE(GX_OPS_DECLARE_REDUCE)

// where(condition, self, other): a null self/other is the scalar beside it.
#define GX_OPS_DECLARE_MISC(dev)                                                                        \
  void where_##dev(const Tensor& condition, const std::optional<Tensor>& self, const std::optional<Tensor>& other, \
                   double self_scalar, int64_t self_int, double other_scalar, int64_t other_int, ScalarType dtype, \
                   const Tensor& out);                                                                  \
  void clamp_##dev(const Tensor& self, std::optional<double> min, std::optional<double> max, int64_t min_int,   \
                   int64_t max_int, ScalarType dtype, const Tensor& out);                               \
  void astype_##dev(const Tensor& self, const Tensor& out);
GX_OPS_DECLARE_MISC(cpu)
GX_OPS_DECLARE_MISC(cuda)

}  // namespace gx::ops
