// Picking C++ types at run time for the built-in ops: the compute type of a
// common dtype (NOTE [ Compute types ] in hd.h) and the storage types a typed
// fast path is instantiated for. Each op names the compute types it supports
// as a set; a dtype outside it is a GX_CHECK failure naming the dtype.
#pragma once
#include <cstdint>
#include <type_traits>

#include "iter.h"

namespace gx::ops {

template <typename T> struct Tag { using type = T; };

// Compute-type sets.
constexpr unsigned kCFloat = 1;   // float32, float16, bfloat16 compute in float
constexpr unsigned kCDouble = 2;  // float64
constexpr unsigned kCInt = 4;     // integer dtypes and bool compute in int64_t
constexpr unsigned kCBool = 8;    // logical ops: every dtype read as "nonzero"
constexpr unsigned kCNoBool = 16; // with kCInt: integers but not bool
constexpr unsigned kCFloating = kCFloat | kCDouble;
constexpr unsigned kCNumeric = kCFloat | kCDouble | kCInt;

// The storage type of a dtype, as a Tag: the dtype list's C++ type column
// (gpuext/dtype_list.h).
template <typename F> void with_storage_type(ScalarType t, F&& f) {
  switch (t) {
#define GX_OPS_STORAGE_CASE(Enum, name, kind, size, storage, value, ctype, kernel_ctype) \
  case ScalarType::Enum:                                                  \
    return f(Tag<ctype>{});
    GX_FORALL_DTYPES(GX_OPS_STORAGE_CASE)
#undef GX_OPS_STORAGE_CASE
  }
}

// Whether storage type T computes in C (so a typed loop over T is worth instantiating for C).
template <typename T, typename C> constexpr bool computes_in() {
  if constexpr (std::is_same_v<C, bool>) return true;
  else if constexpr (std::is_same_v<C, float>)
    return std::is_same_v<T, float> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  else if constexpr (std::is_same_v<C, double>) return std::is_same_v<T, double>;
  else return std::is_integral_v<T>;
}

// Calls f(Tag<C>{}) with the compute type of `common`, or fails naming the dtype.
template <unsigned Set, typename F> void with_compute(ScalarType common, F&& f) {
  if constexpr ((Set & kCBool) != 0) {
    return f(Tag<bool>{});
  } else {
    if (common == kFloat32 || common == kFloat16 || common == kBFloat16) {
      if constexpr ((Set & kCFloat) != 0) return f(Tag<float>{});
    } else if (common == kFloat64) {
      if constexpr ((Set & kCDouble) != 0) return f(Tag<double>{});
    } else if (common != kBool || (Set & kCNoBool) == 0) {
      if constexpr ((Set & kCInt) != 0) return f(Tag<int64_t>{});
    }
    GX_CHECK(false, "dtype ", common, " is not supported");
  }
}

// The dtype an op's result is stored in when it is the common dtype's own
// (R, the functor's result, is not bool) or bool (comparisons, logical ops).
template <typename R> ScalarType natural_out(ScalarType common) {
  return std::is_same_v<R, bool> ? kBool : common;
}

}  // namespace gx::ops
