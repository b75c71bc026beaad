// The gx::ops faces written by hand (gpuext/ops.h includes this after its
// generated part): the ops whose result the op list's `kind` does not decide
// (matmul, softmax, where, clamp, the statistics), the ones made of views and
// copies (cat, stack, chunk), torch's composites the LLTM needs (addmm; elu is a built-in op),
// and operators (a + b, 1 - s, x *= y, z > 0). Each decides dtypes and sizes
// as its lib/ops/ function does; the checks the ops themselves make (shapes,
// devices, dtypes they have kernels for) are left to them.
#pragma once
#include "gpuext/ops.h"

namespace gx::ops {
namespace detail {

inline Dims concat_dims(IntArrayRef a, IntArrayRef b) {
  Dims d;
  GX_CHECK(a.size() + b.size() <= static_cast<size_t>(kMaxDims), "a tensor has at most ", kMaxDims, " dimensions");
  for (int64_t v : a) d.v[d.n++] = v;
  for (int64_t v : b) d.v[d.n++] = v;
  return d;
}

inline int64_t numel_of(IntArrayRef s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// A CUDA matrix operand for raw::matmul: itself when contiguous, its transpose
// (with the trans flag) when that is contiguous, else a contiguous copy; the
// CPU kernel takes any strides.
inline Tensor matmul_operand(const Tensor& m, bool& trans) {
  trans = false;
  if (m.is_cpu() || m.is_contiguous()) return m;
  const Tensor mt = m.transpose(-1, -2);
  if (mt.is_contiguous()) {
    trans = true;
    return mt;
  }
  return m.contiguous();
}

// In place self op= other (a tensor or a number): the result must keep self's
// sizes and cast to its dtype, as an in-place op of lib/ops.
inline void check_inplace(const BinarySpec& s, const Tensor& self, IntArrayRef sizes, ScalarType common) {
  GX_CHECK(sizes == self.sizes(), s.fn, " in place: the result's sizes ", sizes, " differ from self's ", self.sizes());
  const ScalarType r = binary_result(s, common), d = self.dtype();
  GX_CHECK(!(is_floating(r) && !is_floating(d)) && !(r != kBool && d == kBool), s.fn,
           " in place: the result's dtype ", r, " cannot be written into self's ", d);
}

inline const Tensor& binary_(const BinarySpec& s, BinaryTensorFn call, const Tensor& self, const Tensor& other) {
  check_defined(self, s.fn, "self");
  check_defined(other, s.fn, "other");
  const ScalarType common = binary_compute(s, result_type(self, other), to_string(self.dtype()), to_string(other.dtype()));
  check_inplace(s, self, broadcast_sizes(self.sizes(), other.sizes(), s.fn).ref(), common);
  call(self, other, common, self);
  return self;
}

inline const Tensor& binary_(const BinarySpec& s, BinaryScalarFn call, const Tensor& self, const Scalar& other) {
  check_defined(self, s.fn, "self");
  const ScalarType common = binary_compute(s, result_type(self, other), to_string(self.dtype()), to_string(other.type()));
  check_inplace(s, self, self.sizes(), common);
  const ScalarArgs v = scalar_args(other, common, s.fn, s.kind != BinaryKind::Logical);
  call(self, v.f, v.i, false, common, self);
  return self;
}

// where's operand: a tensor, or a number (passed as its scalar arguments).
struct WhereOperand {
  const Tensor* tensor;
  Scalar number;
};

inline Tensor where(const Tensor& cond, const WhereOperand& x, const WhereOperand& y) {
  const char* fn = "gx::ops::where";
  check_defined(cond, fn, "condition");
  GX_CHECK(cond.dtype() == kBool, fn, ": condition must be a bool tensor, got ", cond.dtype(),
           "; compare first, e.g. gx::ops::gt(x, 0)");
  ResultType rt;
  Dims sizes = gx::detail::dims_of(cond.sizes());
  for (const WhereOperand* o : {&x, &y}) {
    if (o->tensor != nullptr) {
      check_defined(*o->tensor, fn, o == &x ? "self" : "other");
      rt << *o->tensor;
      sizes = broadcast_sizes(sizes.ref(), o->tensor->sizes(), fn);
    } else {
      rt << o->number;
    }
  }
  const ScalarType common = rt.get();
  const ScalarArgs xs = x.tensor ? ScalarArgs{0, 0} : scalar_args(x.number, common, fn, true);
  const ScalarArgs ys = y.tensor ? ScalarArgs{0, 0} : scalar_args(y.number, common, fn, true);
  Tensor out = empty(sizes.ref(), TensorOptions(common).device(cond.device()));
  raw::where(cond, x.tensor, y.tensor, xs.f, xs.i, ys.f, ys.i, common, out);
  return out;
}

inline Tensor clamp(const Tensor& x, const Scalar* lo, const Scalar* hi) {
  const char* fn = "gx::ops::clamp";
  check_defined(x, fn, "self");
  GX_CHECK(lo != nullptr || hi != nullptr, fn, ": needs min or max (or both)");
  ResultType rt;
  rt << x;
  if (lo) rt << *lo;
  if (hi) rt << *hi;
  const ScalarType common = rt.get();
  GX_CHECK(common != kBool, fn, ": dtype bool is not supported");
  const bool integral = category(common) == 1;
  const double lo_f = lo ? lo->to_double() : 0, hi_f = hi ? hi->to_double() : 0;
  Tensor out = empty(x.sizes(), TensorOptions(common).device(x.device()));
  raw::clamp(x, lo ? &lo_f : nullptr, hi ? &hi_f : nullptr, integral && lo ? lo->to_int() : 0,
             integral && hi ? hi->to_int() : 0, common, out);
  return out;
}

using AlongDimFn = void (*)(const Tensor&, int64_t, ScalarType, const Tensor&);

// softmax, log_softmax, cumsum, cumprod: the result has x's sizes and `dtype`; an asked
// dtype converts the input first (lib/ops/axes.ts callAlongAxis).
inline Tensor along_dim(const char* fn, AlongDimFn call, const Tensor& x, int64_t dim, ScalarType dtype, bool asked) {
  check_defined(x, fn, "self");
  const int64_t d = gx::detail::wrap_dim(dim, x.dim(), fn);
  const Tensor src = asked ? x.to(dtype) : x;
  Tensor out = empty(x.sizes(), TensorOptions(dtype).device(x.device()));
  call(src, d, dtype, out);
  return out;
}

inline Tensor softmax_like(const char* fn, AlongDimFn call, const Tensor& x, int64_t dim, const ScalarType* asked) {
  check_defined(x, fn, "self");
  const ScalarType dtype = asked ? *asked : x.dtype();
  GX_CHECK(is_floating(dtype), fn, ": dtype ", dtype, " is not supported; it needs a floating-point input or a dtype");
  return along_dim(fn, call, x, dim, dtype, asked != nullptr);
}

// The sizes of x reduced over dims (all for none), with keepdim.
inline Dims reduced_sizes(const Tensor& x, const Dims& axes, bool keepdim) {
  Dims shape;
  for (int64_t d = 0, k = 0; d < x.dim(); ++d) {
    const bool r = k < static_cast<int64_t>(axes.n) && axes.v[k] == d;
    if (r) ++k;
    if (!r) shape.v[shape.n++] = x.sizes()[d];
    else if (keepdim) shape.v[shape.n++] = 1;
  }
  return shape;
}

}  // namespace detail

// --- linear algebra ---------------------------------------------------------

// a @ b as torch.matmul: vectors, matrices, and batches broadcast against each other.
inline Tensor matmul(const Tensor& a, const Tensor& b) {
  const char* fn = "gx::ops::matmul";
  detail::check_defined(a, fn, "self");
  detail::check_defined(b, fn, "other");
  GX_CHECK(a.dim() > 0 && b.dim() > 0, fn, ": both operands need at least 1 dimension, got sizes ", a.sizes(), " and ",
           b.sizes());
  GX_CHECK(a.dtype() == b.dtype(), fn, ": dtypes differ: ", a.dtype(), " and ", b.dtype());
  GX_CHECK(is_floating(a.dtype()), fn, ": dtype ", a.dtype(), " is not supported; expected a floating dtype");
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;    // [1, k]
  const Tensor b2 = b.dim() == 1 ? b.unsqueeze(-1) : b;   // [k, 1]
  const int64_t m = a2.size(-2), k = a2.size(-1), k2 = b2.size(-2), n = b2.size(-1);
  GX_CHECK(k == k2, fn, ": inner dimensions differ: ", a.sizes(), " @ ", b.sizes(), " (", k, " vs ", k2, ")");
  const IntArrayRef abatch(a2.sizes().data(), a2.sizes().size() - 2), bbatch(b2.sizes().data(), b2.sizes().size() - 2);
  const detail::Dims batch = detail::broadcast_sizes(abatch, bbatch, fn);
  detail::Dims shape = batch;
  if (a.dim() > 1) shape.v[shape.n++] = m;
  if (b.dim() > 1) shape.v[shape.n++] = n;
  Tensor out = empty(shape.ref(), a.options());
  bool ta = false, tb = false;
  if (a.dim() == 2 && b.dim() == 2) {
    const Tensor x = detail::matmul_operand(a, ta), y = detail::matmul_operand(b, tb);
    raw::matmul(x, y, false, ta, tb, out);
    return out;
  }
  // [batch, m, k] @ [batch, k, n] (a batch of one broadcasts), as lib/ops/linalg/matmul.ts.
  const int64_t nb = detail::numel_of(batch.ref());
  auto as3 = [&](const Tensor& t, IntArrayRef own, int64_t r, int64_t c) {
    if (detail::numel_of(own) == 1) return t.reshape({1, r, c});
    const int64_t rc[2] = {r, c};
    const Tensor e = t.expand(detail::concat_dims(batch.ref(), IntArrayRef(rc, 2)).ref());
    return (t.is_cpu() ? e : e.contiguous()).reshape({nb, r, c});
  };
  const Tensor x = as3(a2, abatch, m, k), y = as3(b2, bbatch, k, n);
  raw::matmul(x.is_cpu() ? x : x.contiguous(), y.is_cpu() ? y : y.contiguous(), false, false, false,
              out.view({nb, m, n}));
  return out;
}

// Matrices only, as torch.mm.
inline Tensor mm(const Tensor& a, const Tensor& b) {
  GX_CHECK(a.dim() == 2 && b.dim() == 2, "gx::ops::mm: expects two matrices, got sizes ", a.sizes(), " and ", b.sizes());
  return matmul(a, b);
}

// beta * self + alpha * (mat1 @ mat2), self broadcast to the product's sizes (torch.addmm).
inline Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
                    const Scalar& alpha = 1) {
  Tensor out = mm(mat1, mat2);
  if (alpha.to_double() != 1) detail::binary_(k_mul_spec, raw::mul_scalar, out, alpha);
  if (beta.to_double() == 0) return out;
  detail::binary_(k_add_spec, raw::add, out, beta.to_double() == 1 ? self : mul(self, beta));
  return out;
}

// --- joining and splitting (copies into, and views of, one tensor) -------------

// The tensors joined along dim; sizes match elsewhere; one dtype and device; a
// 1-d empty tensor is skipped, as in torch (lib/ops/layout/layout.ts cat).
inline Tensor cat(TensorList tensors, int64_t dim = 0) {
  const char* fn = "gx::ops::cat";
  GX_CHECK(tensors.size() > 0, fn, ": tensors is empty; expected at least one tensor");
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    GX_CHECK(t.defined(), fn, ": tensors[", i, "] is an undefined Tensor");
    GX_CHECK(t.dtype() == tensors[0].dtype(), fn, ": tensors[", i, "] has dtype ", t.dtype(), " but tensors[0] has ",
             tensors[0].dtype(), "; all inputs must have the same dtype");
    GX_CHECK(t.device() == tensors[0].device(), fn, ": tensors[", i, "] is on ", t.device(), " but tensors[0] is on ",
             tensors[0].device(), "; all inputs must be on the same device");
    if (ref == nullptr && !(t.dim() == 1 && t.size(0) == 0)) ref = &t;
  }
  if (ref == nullptr) return empty({0}, tensors[0].options());
  const int64_t d = gx::detail::wrap_dim(dim, ref->dim(), fn);
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() == 1 && t.size(0) == 0) continue;
    bool same = t.dim() == ref->dim();
    for (int64_t j = 0; same && j < t.dim(); ++j) same = j == d || t.sizes()[j] == ref->sizes()[j];
    GX_CHECK(same, fn, ": tensors[", i, "] has sizes ", t.sizes(), " but the first nonempty has ", ref->sizes(),
             "; sizes must match except in dimension ", d);
    total += t.size(d);
  }
  detail::Dims shape = gx::detail::dims_of(ref->sizes());
  shape.v[d] = total;
  Tensor out = empty(shape.ref(), ref->options());
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    if ((t.dim() == 1 && t.size(0) == 0) || t.numel() == 0) continue;
    out.narrow(d, at, t.size(d)).copy_(t);
    at += t.size(d);
  }
  return out;
}

// The tensors, all of one shape, stacked along a new dimension dim.
inline Tensor stack(TensorList tensors, int64_t dim = 0) {
  GX_CHECK(tensors.size() > 0, "gx::ops::stack: tensors is empty; expected at least one tensor");
  const int64_t d = gx::detail::wrap_dim(dim, tensors[0].dim(), "gx::ops::stack", true);
  TensorVector parts(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    GX_CHECK(tensors[i].defined() && tensors[i].sizes() == tensors[0].sizes(), "gx::ops::stack: tensors[", i,
             "] must have the sizes of tensors[0], ", tensors[0].sizes());
    parts[i] = tensors[i].unsqueeze(d);
  }
  return cat(parts, d);
}

inline TensorVector chunk(const Tensor& x, int64_t chunks, int64_t dim = 0) { return x.chunk(chunks, dim); }
inline Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) { return x.narrow(dim, start, length); }
inline Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) { return x.transpose(dim0, dim1); }
inline Tensor t(const Tensor& x) { return x.t(); }
inline Tensor reshape(const Tensor& x, IntArrayRef sizes) { return x.reshape(sizes); }

// --- elementwise ops with their own schemas ---------------------------------------

// condition ? self : other, broadcasting; either may be a number.
inline Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  return detail::where(condition, {&self, 0}, {&other, 0});
}
inline Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  return detail::where(condition, {&self, 0}, {nullptr, other});
}
inline Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  return detail::where(condition, {nullptr, self}, {&other, 0});
}
inline Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other) {
  return detail::where(condition, {nullptr, self}, {nullptr, other});
}

// min(max(self, min), max), NaN propagating; the bounds promote as numbers do.
inline Tensor clamp(const Tensor& self, const Scalar& min, const Scalar& max) { return detail::clamp(self, &min, &max); }
inline Tensor clamp_min(const Tensor& self, const Scalar& min) { return detail::clamp(self, &min, nullptr); }
inline Tensor clamp_max(const Tensor& self, const Scalar& max) { return detail::clamp(self, nullptr, &max); }

// --- along one dimension ---------------------------------------------------------

inline Tensor softmax(const Tensor& self, int64_t dim) { return detail::softmax_like("gx::ops::softmax", raw::softmax, self, dim, nullptr); }
inline Tensor softmax(const Tensor& self, int64_t dim, ScalarType dtype) {
  return detail::softmax_like("gx::ops::softmax", raw::softmax, self, dim, &dtype);
}
inline Tensor log_softmax(const Tensor& self, int64_t dim) {
  return detail::softmax_like("gx::ops::log_softmax", raw::log_softmax, self, dim, nullptr);
}
inline Tensor log_softmax(const Tensor& self, int64_t dim, ScalarType dtype) {
  return detail::softmax_like("gx::ops::log_softmax", raw::log_softmax, self, dim, &dtype);
}
// Inclusive prefix sums: integer and bool inputs give int64, as torch.cumsum.
inline Tensor cumsum(const Tensor& self, int64_t dim) {
  detail::check_defined(self, "gx::ops::cumsum", "self");
  return detail::along_dim("gx::ops::cumsum", raw::cumsum, self, dim, is_floating(self.dtype()) ? self.dtype() : kInt64,
                           false);
}
inline Tensor cumsum(const Tensor& self, int64_t dim, ScalarType dtype) {
  GX_CHECK(dtype != kBool, "gx::ops::cumsum: dtype bool is not supported; ask for an integer or floating dtype");
  return detail::along_dim("gx::ops::cumsum", raw::cumsum, self, dim, dtype, true);
}
// Inclusive prefix products: integer and bool inputs give int64 (wrapping), as torch.cumprod.
inline Tensor cumprod(const Tensor& self, int64_t dim) {
  detail::check_defined(self, "gx::ops::cumprod", "self");
  return detail::along_dim("gx::ops::cumprod", raw::cumprod, self, dim, is_floating(self.dtype()) ? self.dtype() : kInt64,
                           false);
}
inline Tensor cumprod(const Tensor& self, int64_t dim, ScalarType dtype) {
  GX_CHECK(dtype != kBool, "gx::ops::cumprod: dtype bool is not supported; ask for an integer or floating dtype");
  return detail::along_dim("gx::ops::cumprod", raw::cumprod, self, dim, dtype, true);
}

// --- statistics ------------------------------------------------------------------

// log(sum(exp(x))) over dim (all for none), stable; integer inputs give float32.
inline Tensor logsumexp(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false) {
  const char* fn = "gx::ops::logsumexp";
  detail::check_defined(self, fn, "self");
  const ScalarType dtype = is_floating(self.dtype()) ? self.dtype() : kFloat32;
  const detail::Dims axes = detail::reduce_dims(dim, self.dim(), fn);
  Tensor out = empty(detail::reduced_sizes(self, axes, keepdim).ref(), TensorOptions(dtype).device(self.device()));
  raw::logsumexp(self, axes.ref(), dtype, out);
  return out;
}

namespace detail {
using StatFn = void (*)(const Tensor&, IntArrayRef, double, ScalarType, const Tensor&);
inline Tensor stat(const char* fn, StatFn call, const Tensor& self, IntArrayRef dim, double correction, bool keepdim) {
  check_defined(self, fn, "self");
  GX_CHECK(is_floating(self.dtype()), fn, ": dtype ", self.dtype(), " is not supported; it needs a floating-point input");
  const Dims axes = reduce_dims(dim, self.dim(), fn);
  Tensor out = empty(reduced_sizes(self, axes, keepdim).ref(), self.options());
  call(self, axes.ref(), correction, self.dtype(), out);
  return out;
}
}  // namespace detail

// Variance over dim (all for none), dividing by N - correction (torch's default 1).
inline Tensor var(const Tensor& self, IntArrayRef dim = {}, double correction = 1, bool keepdim = false) {
  return detail::stat("gx::ops::var", raw::var, self, dim, correction, keepdim);
}
inline Tensor std(const Tensor& self, IntArrayRef dim = {}, double correction = 1, bool keepdim = false) {
  return detail::stat("gx::ops::std", raw::std, self, dim, correction, keepdim);
}

// --- operators (torch's on at::Tensor) ------------------------------------------------

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
inline Tensor operator/(const Scalar& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }

// In place, as torch's: self keeps its storage, sizes and dtype.
inline const Tensor& operator+=(const Tensor& a, const Tensor& b) { return detail::binary_(k_add_spec, raw::add, a, b); }
inline const Tensor& operator+=(const Tensor& a, const Scalar& b) { return detail::binary_(k_add_spec, raw::add_scalar, a, b); }
inline const Tensor& operator-=(const Tensor& a, const Tensor& b) { return detail::binary_(k_sub_spec, raw::sub, a, b); }
inline const Tensor& operator-=(const Tensor& a, const Scalar& b) { return detail::binary_(k_sub_spec, raw::sub_scalar, a, b); }
inline const Tensor& operator*=(const Tensor& a, const Tensor& b) { return detail::binary_(k_mul_spec, raw::mul, a, b); }
inline const Tensor& operator*=(const Tensor& a, const Scalar& b) { return detail::binary_(k_mul_spec, raw::mul_scalar, a, b); }
inline const Tensor& operator/=(const Tensor& a, const Tensor& b) { return detail::binary_(k_div_spec, raw::div, a, b); }
inline const Tensor& operator/=(const Tensor& a, const Scalar& b) { return detail::binary_(k_div_spec, raw::div_scalar, a, b); }

}  // namespace gx::ops

namespace gx {
// The operators where a Tensor's namespace finds them (argument-dependent lookup).
using ops::operator+;
using ops::operator-;
using ops::operator*;
using ops::operator/;
using ops::operator<;
using ops::operator<=;
using ops::operator>;
using ops::operator>=;
using ops::operator+=;
using ops::operator-=;
using ops::operator*=;
using ops::operator/=;
}  // namespace gx
