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
#define GX_OPS_STORAGE_CASE(Enum, name, kind, size, storage, value, ctype, ...) \
  case ScalarType::Enum:                                                  \
    return f(Tag<ctype>{});
    GX_FORALL_DTYPES(GX_OPS_STORAGE_CASE)
#undef GX_OPS_STORAGE_CASE
  }
}

// The compute type of a storage type (NOTE [ Compute types ] in hd.h): the
// dtype list's compute-type column, by its C++ type column.
template <typename T> struct ComputeOf;
#define GX_OPS_COMPUTE_OF(Enum, name, kind, size, storage, value, ctype, kernel_ctype, compute, ...) \
  template <> struct ComputeOf<ctype> { using type = compute; };
GX_FORALL_DTYPES(GX_OPS_COMPUTE_OF)
#undef GX_OPS_COMPUTE_OF

// Calls f(Tag<T>{}) with the storage type of a floating dtype, or fails naming it.
template <typename F> void with_floating_storage(ScalarType t, F&& f) {
  GX_CHECK(t == kFloat32 || t == kFloat64 || t == kFloat16 || t == kBFloat16, "dtype ", t, " is not supported (floating only)");
  with_storage_type(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) f(tag);
  });
}

// Whether storage type T computes in C (so a typed loop over T is worth instantiating for C).
template <typename T, typename C> constexpr bool computes_in() {
  return std::is_same_v<C, bool> || std::is_same_v<typename ComputeOf<T>::type, C>;
}

// Whether dtype t computes in C (the compute-type column, read at run time).
template <typename C> bool computes_as(ScalarType t) {
  switch (t) {
#define GX_OPS_COMPUTES_AS(Enum, name, kind, size, storage, value, ctype, kernel_ctype, compute, ...) \
  case k##Enum: return std::is_same_v<compute, C>;
    GX_FORALL_DTYPES(GX_OPS_COMPUTES_AS)
#undef GX_OPS_COMPUTES_AS
  }
  return false;
}

// Whether a number of dtype t computes in a type wider than its own (16-bit
// floats, integers narrower than int64), so that rounding back through t
// changes it (NOTE [ Operands converted to the common dtype ] in hd.h); bool
// is read as it is.
inline bool computes_wider(ScalarType t) {
  switch (t) {
#define GX_OPS_COMPUTES_WIDER(Enum, name, kind, size, storage, value, ctype, kernel_ctype, compute, ...) \
  case k##Enum: return #kind[0] != 'b' && !std::is_same_v<ctype, compute>;
    GX_FORALL_DTYPES(GX_OPS_COMPUTES_WIDER)
#undef GX_OPS_COMPUTES_WIDER
  }
  return false;
}

// The compute-type set flag that admits compute type C.
template <typename C> constexpr unsigned compute_flag() {
  return std::is_same_v<C, float> ? kCFloat : std::is_same_v<C, double> ? kCDouble : kCInt;
}

// Calls f(Tag<C>{}) with the compute type of `common`, or fails naming the dtype.
template <unsigned Set, typename F> void with_compute(ScalarType common, F&& f) {
  if constexpr ((Set & kCBool) != 0) {
    return f(Tag<bool>{});
  } else {
    bool called = false;
    with_storage_type(common, [&](auto storage) {
      using C = typename ComputeOf<typename decltype(storage)::type>::type;
      if constexpr ((Set & compute_flag<C>()) != 0) {
        if (common != kBool || (Set & kCNoBool) == 0) {
          called = true;
          f(Tag<C>{});
        }
      }
    });
    GX_CHECK(called, "dtype ", common, " is not supported");
  }
}

// The dtype an op's result is stored in when it is the common dtype's own
// (R, the functor's result, is not bool) or bool (comparisons, logical ops).
template <typename R> ScalarType natural_out(ScalarType common) {
  return std::is_same_v<R, bool> ? kBool : common;
}

}  // namespace gx::ops
