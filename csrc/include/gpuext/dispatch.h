// Dtype dispatch for templated kernels: runs the body with `scalar_t` bound to
// the C++ type of a runtime dtype, like AT_DISPATCH_*:
//
//   GX_DISPATCH_FLOATING_TYPES(x.dtype(), "scale", [&] {
//     scale_kernel<scalar_t><<<gx::blocks(n), 256, 0, gx::current_stream()>>>(...);
//   });
//
// An unsupported dtype is a GX_CHECK failure naming the op and the dtypes it takes.
#pragma once
#include "gpuext/half.h"
#include "gpuext/tensor.h"

// Each dtype's C++ type by its enum name, from the dtype list's C++ type column.
namespace gx::dtype_types {
#define GX_DTYPE_TYPE_ALIAS(Enum, name, kind, size, storage, value, ctype, ...) using Enum = ctype;
GX_FORALL_DTYPES(GX_DTYPE_TYPE_ALIAS)
#undef GX_DTYPE_TYPE_ALIAS
}  // namespace gx::dtype_types

#define GX_DISPATCH_CASE_(ENUM, ...)               \
  case ::gx::ScalarType::ENUM: {                   \
    using scalar_t = ::gx::dtype_types::ENUM;      \
    return __VA_ARGS__();                          \
  }

#define GX_DISPATCH_SWITCH_(DTYPE, NAME, EXPECTED, CASES)                                      \
  [&] {                                                                                        \
    const ::gx::ScalarType gx_dispatch_dtype_ = (DTYPE);                                      \
    switch (gx_dispatch_dtype_) {                                                              \
      CASES                                                                                    \
      default:                                                                                 \
        throw ::gx::OpError(GX_ERR_INVALID_ARGUMENT,                                           \
                            ::gx::detail::cat(NAME, ": unsupported dtype ", gx_dispatch_dtype_, \
                                              "; expected one of " EXPECTED));                 \
    }                                                                                          \
  }()

#define GX_FLOATING_CASES_(...)           \
  GX_DISPATCH_CASE_(Float32, __VA_ARGS__) \
  GX_DISPATCH_CASE_(Float64, __VA_ARGS__)

#define GX_HALF_CASES_(...)               \
  GX_DISPATCH_CASE_(Float16, __VA_ARGS__) \
  GX_DISPATCH_CASE_(BFloat16, __VA_ARGS__)

#define GX_INTEGRAL_CASES_(...)           \
  GX_DISPATCH_CASE_(Int8, __VA_ARGS__)    \
  GX_DISPATCH_CASE_(Int16, __VA_ARGS__)   \
  GX_DISPATCH_CASE_(Int32, __VA_ARGS__)   \
  GX_DISPATCH_CASE_(Int64, __VA_ARGS__)   \
  GX_DISPATCH_CASE_(UInt8, __VA_ARGS__)

// float32, float64
#define GX_DISPATCH_FLOATING_TYPES(DTYPE, NAME, ...) \
  GX_DISPATCH_SWITCH_(DTYPE, NAME, "float32, float64", GX_FLOATING_CASES_(__VA_ARGS__))

// float32, float64, float16, bfloat16
#define GX_DISPATCH_FLOATING_AND_HALF_TYPES(DTYPE, NAME, ...)               \
  GX_DISPATCH_SWITCH_(DTYPE, NAME, "float32, float64, float16, bfloat16", \
                      GX_FLOATING_CASES_(__VA_ARGS__) GX_HALF_CASES_(__VA_ARGS__))

// int8, int16, int32, int64, uint8
#define GX_DISPATCH_INTEGRAL_TYPES(DTYPE, NAME, ...) \
  GX_DISPATCH_SWITCH_(DTYPE, NAME, "int8, int16, int32, int64, uint8", GX_INTEGRAL_CASES_(__VA_ARGS__))

// every numeric dtype (all but bool)
#define GX_DISPATCH_ALL_TYPES(DTYPE, NAME, ...)                                                 \
  GX_DISPATCH_SWITCH_(DTYPE, NAME, "float32, float64, float16, bfloat16, int8, int16, int32, " \
                                   "int64, uint8",                                             \
                      GX_FLOATING_CASES_(__VA_ARGS__) GX_HALF_CASES_(__VA_ARGS__)               \
                          GX_INTEGRAL_CASES_(__VA_ARGS__))
