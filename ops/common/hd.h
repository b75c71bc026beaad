// Code the CPU (.cpp, host compiler) and CUDA (.cu, nvcc) sides of the
// built-in ops share: conversions between element types, loads and stores by
// a runtime dtype, and (from hd_math.h, which NVRTC compiles too) the GX_HD
// qualifier and math wrappers with one name on both sides. Functors written
// against these compile unchanged for both devices.
//
// NOTE [ Compute types ]
// Every elementwise op and reduction computes in one of four C++ types, picked
// from the op's common dtype (lib/ops/promotion.ts decides it; the kernels only
// obey) by the dtype list's compute-type column (gpuext/dtype_list.h; dispatch.h
// reads it): float for float32/float16/bfloat16 (16-bit floats compute in float, as
// PyTorch's opmath does), double for float64, int64_t for every integer dtype
// and bool (two's-complement wraparound makes int8 + int8 computed in int64
// and truncated equal to int8 arithmetic), and bool for the logical ops.
// Integer +, -, * go through uint64_t so overflow is defined behaviour.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <gpuext/float_to_int.h>
#include <gpuext/half.h>

#include "hd_math.h"

namespace gx::ops {

// --- conversions ------------------------------------------------------------
// To<T>(v): one element converted like a C++ static_cast, with 16-bit floats
// going through float and anything to bool meaning "nonzero" (NaN is true).
template <typename T> struct To {
  template <typename V> GX_HD static T from(V v) {
    if constexpr (std::is_same_v<V, Half> || std::is_same_v<V, BFloat16>) {
      return To<T>::from(static_cast<float>(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      return v != V(0);
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return T(static_cast<float>(v));
    } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
      return ::gx::float_to_int<T>(v);  // NOTE [ Floats out of an integer's range ]: defined, the same on both devices
    } else {
      return static_cast<T>(v);
    }
  }
};
template <typename T, typename V> GX_HD T to(V v) { return To<T>::from(v); }

// NOTE [ Operands converted to the common dtype ]
// Inputs of another dtype are converted to the op's common dtype before
// computing, as PyTorch does. It matters where the compute type is wider than
// the common dtype: a float32 input of a float16 op rounds through float16,
// and an integer input wider than the common dtype (a 0-d int16 tensor with a
// uint8 one: 0-d operands do not widen the result) wraps to it, so
// minimum(uint8 [1], int16 -1) compares 1 with 255 and gives 1. Logical ops
// test "nonzero" after the conversion (logicalAnd(uint8 [1], int16 256) is
// false). Found by the fuzz suite (test/fuzz/).
GX_HD float round_through(ScalarType t, float v) {
  if (t == kFloat16) return static_cast<float>(Half(v));
  if (t == kBFloat16) return static_cast<float>(BFloat16(v));
  return v;
}
GX_HD int64_t round_through(ScalarType t, int64_t v) {
  switch (t) {
    case kInt8: return static_cast<int8_t>(v);
    case kInt16: return static_cast<int16_t>(v);
    case kInt32: return static_cast<int32_t>(v);
    case kUInt8: return static_cast<uint8_t>(v);
    default: return v;
  }
}

// --- loads and stores by runtime dtype --------------------------------------
// One case per dtype, from the dtype list's C++ type column (gpuext/dtype_list.h).
template <typename C> GX_HD C load_as(const char* p, ScalarType t) {
  switch (t) {
#define GX_OPS_LOAD_CASE(Enum, name, kind, size, storage, value, ctype, ...) \
  case k##Enum: return to<C>(*reinterpret_cast<const ctype*>(p));
    GX_FORALL_DTYPES(GX_OPS_LOAD_CASE)
#undef GX_OPS_LOAD_CASE
  }
  return C(0);
}

template <typename V> GX_HD void store_as(char* p, ScalarType t, V v) {
  switch (t) {
#define GX_OPS_STORE_CASE(Enum, name, kind, size, storage, value, ctype, ...) \
  case k##Enum: *reinterpret_cast<ctype*>(p) = to<ctype>(v); break;
    GX_FORALL_DTYPES(GX_OPS_STORE_CASE)
#undef GX_OPS_STORE_CASE
  }
}

// A logical op's operand (bool compute) as "nonzero" after conversion to the
// common dtype (NOTE [ Operands converted to the common dtype ]): a 0-d
// int16 256 beside uint8 is 0, a 0-d float64 5e-324 beside float32 is 0.
GX_HD bool nonzero_through(const char* p, ScalarType t, ScalarType common) {
  switch (common) {
    case kBool: return load_as<bool>(p, t);
    case kFloat64: return load_as<double>(p, t) != 0;
    case kFloat32: return static_cast<float>(load_as<double>(p, t)) != 0.0f;
    case kFloat16:
    case kBFloat16: return round_through(common, static_cast<float>(load_as<double>(p, t))) != 0.0f;
    default: return round_through(common, load_as<int64_t>(p, t)) != 0;
  }
}

// One operand element as an op computing in C reads it: `convert` (from
// converts_operand) says it is first converted to the common dtype.
template <typename C> GX_HD C load_operand(const char* p, ScalarType t, ScalarType common, bool convert) {
  if constexpr (std::is_same_v<C, bool>) {
    return convert ? nonzero_through(p, t, common) : load_as<bool>(p, t);
  } else {
    C v = load_as<C>(p, t);
    if constexpr (std::is_same_v<C, float> || std::is_same_v<C, int64_t>)
      if (convert) v = round_through(common, v);
    return v;
  }
}

GX_HD float inf_f() {
  const uint32_t u = 0x7f800000u;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
GX_HD double inf_d() {
  const uint64_t u = 0x7ff0000000000000ull;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

// Largest / smallest values of a compute type (reduction identities).
template <typename C> GX_HD C lowest() {
  if constexpr (std::is_same_v<C, float>) return -inf_f();
  else if constexpr (std::is_same_v<C, double>) return -inf_d();
  else if constexpr (std::is_same_v<C, bool>) return false;
  else return static_cast<C>(static_cast<uint64_t>(1) << 63);  // INT64_MIN
}
template <typename C> GX_HD C highest() {
  if constexpr (std::is_same_v<C, float>) return inf_f();
  else if constexpr (std::is_same_v<C, double>) return inf_d();
  else if constexpr (std::is_same_v<C, bool>) return true;
  else return static_cast<C>(~(static_cast<uint64_t>(1) << 63));  // INT64_MAX
}

}  // namespace gx::ops
