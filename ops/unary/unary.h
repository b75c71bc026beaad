// The unary ops' entry points and where / clamp / astype, written once for
// both devices (`Loops`: CpuLoops or CudaLoops). GX_OPS_DEFINE_UNARY_ONE and
// GX_OPS_DEFINE_SELECT expand to the entry points ops.h declares.
#pragma once
#include "../common/dispatch.h"
#include "../ops.h"
#include "functors.h"

namespace gx::ops {

template <typename Loops, unsigned Set, typename F>
void unary_op(const F& f, const Tensor& x, ScalarType common, const Tensor& out) {
  const Tensor* ins[1] = {&x};
  const ElementwiseIter it = make_elementwise(out, ins, 1);
  with_compute<Set>(common, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if (it.numel == 0) return;
    const C scalars[1] = {C(0)};
    Loops::template run<C, 1>(f, it, scalars, common);
  });
}

template <typename Loops>
void where_impl(const Tensor& cond, const std::optional<Tensor>& a, const std::optional<Tensor>& b, ScalarArg sa,
                ScalarArg sb, ScalarType common, const Tensor& out) {
  GX_CHECK(cond.dtype() == kBool, "condition must be a bool tensor, got ", cond.dtype());
  const Tensor* ins[3] = {&cond, a ? &*a : nullptr, b ? &*b : nullptr};
  const ElementwiseIter it = make_elementwise(out, ins, 3);
  with_compute<kCNumeric>(common, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if (it.numel == 0) return;
    const C scalars[3] = {C(0), scalar_as<C>(sa), scalar_as<C>(sb)};
    Loops::template run<C, 3>(WhereOp{}, it, scalars, common);
  });
}

// lerp(self, end, weight): weight a tensor, or (absent) the number weight_scalar.
template <typename Loops>
void lerp_impl(const Tensor& a, const Tensor& b, const std::optional<Tensor>& w, double ws, ScalarType common,
               const Tensor& out) {
  const Tensor* ins[3] = {&a, &b, w ? &*w : nullptr};
  const ElementwiseIter it = make_elementwise(out, ins, 3);
  with_compute<kCFloating>(common, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if (it.numel == 0) return;
    const C scalars[3] = {C(0), C(0), C(ws)};
    Loops::template run<C, 3>(LerpOp{}, it, scalars, common);
  });
}

template <typename Loops>
void clamp_impl(const Tensor& x, std::optional<double> lo, std::optional<double> hi, int64_t ilo, int64_t ihi,
                ScalarType common, const Tensor& out) {
  const ClampOp f{lo.value_or(0), hi.value_or(0), ilo, ihi, lo.has_value(), hi.has_value()};
  unary_op<Loops, kCNumeric | kCNoBool>(f, x, common, out);
}

// The dtype astype computes in: enough for both ends (NOTE [ Compute types ]).
inline ScalarType astype_common(ScalarType in, ScalarType out) {
  if (in == out) return in;
  if (in == kFloat64 || out == kFloat64) return kFloat64;
  if (is_floating(in) || is_floating(out)) return kFloat32;
  return kInt64;
}

template <typename Loops>
void astype_impl(const Tensor& x, const Tensor& out) {
  GX_CHECK(x.sizes() == out.sizes(), "output of shape ", out.sizes(), " for an input of shape ", x.sizes());
  unary_op<Loops, kCNumeric>(CopyOp{}, x, astype_common(x.dtype(), out.dtype()), out);
}

}  // namespace gx::ops

#define GX_OPS_DEFINE_UNARY_ONE(Loops, dev, name, F, S)                              \
  void name##_##dev(const Tensor& self, ScalarType dtype, const Tensor& out) {       \
    unary_op<Loops, S>(F{}, self, dtype, out);                                       \
  }

#define GX_OPS_DEFINE_UNARY_PARAMS_ONE(Loops, dev, name, F, S, params, args)            \
  void name##_##dev(const Tensor& self, GX_OPS_UNPAREN params ScalarType dtype, const Tensor& out) { \
    unary_op<Loops, S>(F{GX_OPS_UNPAREN args}, self, dtype, out);                                    \
  }
#define GX_OPS_UNPAREN(...) __VA_ARGS__

#define GX_OPS_DEFINE_SELECT(Loops, dev)                                                                          \
  void where_##dev(const Tensor& condition, const std::optional<Tensor>& self, const std::optional<Tensor>& other, \
                   double self_scalar, int64_t self_int, double other_scalar, int64_t other_int, ScalarType dtype,    \
                   const Tensor& out) {                                                                           \
    where_impl<Loops>(condition, self, other, ScalarArg{self_scalar, self_int}, ScalarArg{other_scalar, other_int}, \
                      dtype, out);                                                                                \
  }                                                                                                               \
  void clamp_##dev(const Tensor& self, std::optional<double> min, std::optional<double> max, int64_t min_int,      \
                   int64_t max_int, ScalarType dtype, const Tensor& out) {                                        \
    clamp_impl<Loops>(self, min, max, min_int, max_int, dtype, out);                                              \
  }                                                                                                               \
  void astype_##dev(const Tensor& self, const Tensor& out) { astype_impl<Loops>(self, out); }                   \
  void lerp_##dev(const Tensor& self, const Tensor& end, const std::optional<Tensor>& weight, double weight_scalar, \
                  ScalarType dtype, const Tensor& out) {                                                         \
    lerp_impl<Loops>(self, end, weight, weight_scalar, dtype, out);                                               \
  }
