// What gx::ops (gpuext/ops.h) decides before it calls a built-in op: the
// built-in ops write into an `out` the caller allocates, computing in a dtype
// the caller picks (NOTE [ Calling convention of the built-in ops ] in
// ops/ops.h), so the C++ face, as the TypeScript one (lib/ops/), broadcasts
// shapes, promotes dtypes and allocates the result.
//
// NOTE [ Type promotion in C++ ]
// The rules are lib/ops/promotion.ts's (NOTE [ Type promotion ] there: torch's
// result_type): categories bool < integer < floating; within a category the
// larger type, uint8 with a signed type the next signed one, float16 with
// bfloat16 float32; operands ranked as tensors with dimensions, 0-d tensors,
// then numbers, a lower rank counting only when it raises the category. A C++
// number is a gx::Scalar: an integral C++ type is an integer (int64), a
// floating one floating (float32 when it raises the category), as torch's
// C++ Scalar. test/cxx-ops.test.ts checks this table against the TypeScript
// one for every pair of dtypes.
#pragma once
#include "gpuext/promotion_table.h"
#include "gpuext/tensor.h"

namespace gx {

// A number where an op takes a tensor or a number (torch::Scalar).
class Scalar {
 public:
  enum Kind : int32_t { kBoolKind = 0, kIntKind = 1, kFloatKind = 2 };
  Scalar(bool v) : kind_(kBoolKind), i_(v ? 1 : 0), f_(v ? 1.0 : 0.0) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(kIntKind), i_(static_cast<int64_t>(v)), f_(static_cast<double>(v)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(kFloatKind), i_(0), f_(static_cast<double>(v)) {}  // NOLINT
  Kind kind() const { return kind_; }
  double to_double() const { return f_; }
  int64_t to_int() const { return kind_ == kFloatKind ? static_cast<int64_t>(f_) : i_; }
  bool is_integral_value() const { return kind_ != kFloatKind || f_ == static_cast<double>(static_cast<int64_t>(f_)); }
  // The dtype the number stands for on its own.
  ScalarType type() const { return kind_ == kBoolKind ? kBool : kind_ == kIntKind ? kInt64 : kFloat32; }

 private:
  Kind kind_;
  int64_t i_;
  double f_;
};
inline void append_to(Message& m, const Scalar& s) {
  if (s.kind() == Scalar::kFloatKind) append_to(m, s.to_double());
  else if (s.kind() == Scalar::kIntKind) append_to(m, s.to_int());
  else append_to(m, s.to_int() != 0);
}

namespace ops::detail {
using gx::detail::Dims;

// 0 bool, 1 integer, 2 floating.
inline int category(ScalarType t) { return t == kBool ? 0 : is_floating(t) ? 2 : 1; }

// The generated table (NOTE [ Type promotion ] in scripts/gen/dtypes.js), the one lib/ops/promotion.ts reads.
inline ScalarType promote_types(ScalarType a, ScalarType b) {
  return static_cast<ScalarType>(dtype_table::kPromotion[static_cast<int32_t>(a)][static_cast<int32_t>(b)]);
}

// torch's result_type over tensors and numbers (NOTE [ Type promotion in C++ ]).
class ResultType {
 public:
  ResultType& operator<<(const Tensor& t) {
    join(t.dim() > 0 ? dim_ : zero_, t.dtype());
    return *this;
  }
  ResultType& operator<<(const Scalar& s) {
    join(wrapped_, s.type());
    return *this;
  }
  // Needs at least one operand (every caller has a tensor).
  ScalarType get() const { return static_cast<ScalarType>(combine(dim_, combine(zero_, wrapped_))); }

 private:
  static constexpr int32_t kNone = -1;
  static void join(int32_t& slot, ScalarType t) {
    slot = slot == kNone ? static_cast<int32_t>(t)
                         : static_cast<int32_t>(promote_types(static_cast<ScalarType>(slot), t));
  }
  // The lower rank counts only when it raises the category.
  static int32_t combine(int32_t higher, int32_t lower) {
    if (higher == kNone) return lower;
    if (lower == kNone) return higher;
    const ScalarType h = static_cast<ScalarType>(higher), l = static_cast<ScalarType>(lower);
    if (is_floating(h)) return higher;
    if (h == kBool || is_floating(l)) return static_cast<int32_t>(promote_types(h, l));
    return higher;
  }
  int32_t dim_ = kNone, zero_ = kNone, wrapped_ = kNone;
};

inline ScalarType result_type(const Tensor& a, const Tensor& b) { return (ResultType() << a << b).get(); }
inline ScalarType result_type(const Tensor& a, const Scalar& b) { return (ResultType() << a << b).get(); }

// The broadcast of two shapes (NumPy's rule); `fn` names the op in the message.
inline Dims broadcast_sizes(IntArrayRef a, IntArrayRef b, const char* fn) {
  Dims out;
  out.n = a.size() > b.size() ? a.size() : b.size();
  GX_CHECK(out.n <= static_cast<size_t>(kMaxDims), fn, ": a tensor has at most ", kMaxDims, " dimensions");
  for (size_t i = 0; i < out.n; ++i) {  // from the right
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    GX_CHECK(x == y || x == 1 || y == 1, fn, ": shapes ", a, " and ", b, " cannot be broadcast together");
    out.v[out.n - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

inline void check_defined(const Tensor& t, const char* fn, const char* arg) {
  GX_CHECK(t.defined(), fn, ": argument '", arg, "' is an undefined Tensor");
}

// A number as the two arguments the kernels take (lib/ops/elementwise/elementwise.ts
// scalarArgs): its value as a double, and as an integer for integer compute
// types, where it must fit the dtype (except for logical ops, which read "nonzero").
struct ScalarArgs {
  double f;
  int64_t i;
};
inline ScalarArgs scalar_args(const Scalar& s, ScalarType common, const char* fn, bool check_range) {
  if (s.kind() == Scalar::kBoolKind) return {s.to_double(), s.to_int()};
  if (common == kBool || is_floating(common)) return {s.to_double(), 0};
  if (!s.is_integral_value()) return {s.to_double(), 0};
  const int64_t v = s.to_int();
  if (itemsize(common) < 8 || common == kUInt8) {
    const int64_t bits = itemsize(common) * 8;
    const int64_t lo = common == kUInt8 ? 0 : -(int64_t{1} << (bits - 1));
    const int64_t hi = common == kUInt8 ? 255 : (int64_t{1} << (bits - 1)) - 1;
    if (v < lo || v > hi) {
      GX_CHECK(!check_range, fn, ": the number ", v, " is out of range for ", common,
               ", the dtype this op computes in; convert the tensor with .to() first");
      return {s.to_double(), v < lo ? lo : hi};
    }
  }
  return {s.to_double(), v};
}

// --- the families of ops/op-list.js, by the `kind` the list gives each ---------

enum class BinaryKind { Arith, Div, Compare, Logical };
enum class UnaryKind { Float, Keep };
enum class ReduceKind { Sum, Mean, Extremum, Arg };

struct BinarySpec {
  const char* fn;       // "gx::ops::add", for messages
  BinaryKind kind;
  const char* no_bool;  // set when bool operands are refused: the hint that ends the message
  bool is_pow;
};
using BinaryTensorFn = void (*)(const Tensor&, const Tensor&, ScalarType, const Tensor&);
using BinaryScalarFn = void (*)(const Tensor&, double, int64_t, bool, ScalarType, const Tensor&);

inline ScalarType binary_compute(const BinarySpec& s, ScalarType common, const char* got_a, const char* got_b) {
  if (s.kind == BinaryKind::Div && !is_floating(common)) common = kFloat32;  // true division
  GX_CHECK(!(s.no_bool != nullptr && common == kBool), s.fn, ": bool operands are not supported (got ", got_a,
           " and ", got_b, ")", s.no_bool);
  return common;
}
inline ScalarType binary_result(const BinarySpec& s, ScalarType common) {
  return s.kind == BinaryKind::Compare || s.kind == BinaryKind::Logical ? kBool : common;
}

inline Tensor binary(const BinarySpec& s, BinaryTensorFn call, const Tensor& a, const Tensor& b) {
  check_defined(a, s.fn, "self");
  check_defined(b, s.fn, "other");
  const ScalarType common = binary_compute(s, result_type(a, b), to_string(a.dtype()), to_string(b.dtype()));
  const Dims sizes = a.sizes() == b.sizes() ? gx::detail::dims_of(a.sizes()) : broadcast_sizes(a.sizes(), b.sizes(), s.fn);
  Tensor out = empty(sizes.ref(), TensorOptions(binary_result(s, common)).device(a.device()));
  call(a, b, common, out);
  return out;
}

// t op number, or number op t (reverse).
inline Tensor binary(const BinarySpec& s, BinaryScalarFn call, const Tensor& t, const Scalar& n, bool reverse) {
  check_defined(t, s.fn, reverse ? "other" : "self");
  const ScalarType common = binary_compute(s, result_type(t, n), to_string(t.dtype()), to_string(n.type()));
  GX_CHECK(!(s.is_pow && category(common) == 1 && !reverse && n.to_double() < 0), s.fn,
           ": integers to negative integer powers are not allowed (got ", t.dtype(), " ** ", n, ")");
  const ScalarArgs v = scalar_args(n, common, s.fn, s.kind != BinaryKind::Logical);
  Tensor out = empty(t.sizes(), TensorOptions(binary_result(s, common)).device(t.device()));
  call(t, v.f, v.i, reverse, common, out);
  return out;
}

using UnaryFn = void (*)(const Tensor&, ScalarType, const Tensor&);

// `call` is a UnaryFn, or a lambda passing an op's parameters besides (NOTE [ Parameters of elementwise ops ]).
template <typename Call>
inline Tensor unary(const char* fn, UnaryKind kind, const Call& call, const Tensor& x) {
  check_defined(x, fn, "self");
  ScalarType common = x.dtype();
  if (kind == UnaryKind::Float) {
    if (!is_floating(common)) common = kFloat32;
  } else {
    GX_CHECK(common != kBool, fn, ": dtype bool is not supported");
  }
  Tensor out = empty(x.sizes(), TensorOptions(common).device(x.device()));
  call(x, common, out);
  return out;
}

// Dimensions normalized (negative from the end), sorted, without repeats;
// none means all.
inline Dims reduce_dims(IntArrayRef dims, int64_t ndim, const char* fn) {
  Dims out;
  bool seen[kMaxDims] = {};
  if (dims.size() == 0) {
    for (int64_t d = 0; d < ndim; ++d) seen[d] = true;
  }
  for (int64_t d : dims) {
    const int64_t w = gx::detail::wrap_dim(d, ndim, fn);
    GX_CHECK(!seen[w] || ndim == 0, fn, ": dimension ", w, " appears more than once in ", dims);
    if (ndim > 0) seen[w] = true;
  }
  for (int64_t d = 0; d < ndim; ++d)
    if (seen[d]) out.v[out.n++] = d;
  return out;
}

using ReduceFn = void (*)(const Tensor&, IntArrayRef, ScalarType, const Tensor&);

// `asked`: the dtype to convert the input to and compute in (sum, prod, mean), or nullptr.
inline Tensor reduce(const char* fn, ReduceKind kind, ReduceFn call, const Tensor& x, IntArrayRef dims, bool keepdim,
                     const ScalarType* asked) {
  check_defined(x, fn, "self");
  const Dims axes = reduce_dims(dims, x.dim(), fn);
  Dims shape;
  int64_t reduced = 1, kept = 1;
  for (int64_t d = 0, k = 0; d < x.dim(); ++d) {
    const bool r = k < static_cast<int64_t>(axes.n) && axes.v[k] == d;
    if (r) ++k;
    (r ? reduced : kept) *= x.sizes()[d];
    if (!r) shape.v[shape.n++] = x.sizes()[d];
    else if (keepdim) shape.v[shape.n++] = 1;
  }
  const ScalarType xd = x.dtype();
  GX_CHECK(asked == nullptr || kind == ReduceKind::Sum || kind == ReduceKind::Mean, fn,
           ": takes no dtype (the result has the input's ", kind == ReduceKind::Arg ? "indices" : "dtype", ")");
  ScalarType compute = xd, result = xd;
  switch (kind) {
    case ReduceKind::Sum: compute = result = asked ? *asked : (is_floating(xd) ? xd : kInt64); break;
    case ReduceKind::Mean:
      compute = result = asked ? *asked : xd;
      GX_CHECK(is_floating(compute), fn, ": dtype ", compute, " is not supported; mean needs a floating-point input or a dtype");
      break;
    case ReduceKind::Extremum: break;
    case ReduceKind::Arg:
      GX_CHECK(xd != kBool, fn, ": dtype bool is not supported");
      result = kInt64;
      break;
  }
  if (kind == ReduceKind::Extremum || kind == ReduceKind::Arg) {
    GX_CHECK(!(reduced == 0 && kept > 0), fn, ": cannot reduce zero elements (input of sizes ", x.sizes(),
             "): it has no identity");
  }
  const Tensor src = asked != nullptr ? x.to(*asked) : x;  // converted first, as torch's dtype argument
  Tensor out = empty(shape.ref(), TensorOptions(result).device(x.device()));
  call(src, axes.ref(), compute, out);
  return out;
}

}  // namespace ops::detail
}  // namespace gx
