// Per-dtype facts as tables indexed by the dtype's code (gx_dtype), expanded
// once from the dtype list (gpuext/dtype_list.h): the extensions' ScalarType
// (gpuext/tensor.h) and the core's DType (csrc/base/dtype.h) both read these
// rather than each expanding the list into switches of its own.
#pragma once
#include <cstdint>

#include "gpuext/abi.h"

namespace gx::dtype_table {

#define GX_DTYPE_TABLE_SIZE(Enum, name, kind, size, ...) size,
inline constexpr int64_t kItemsize[GX_NUM_DTYPES] = {GX_FORALL_DTYPES(GX_DTYPE_TABLE_SIZE)};
#undef GX_DTYPE_TABLE_SIZE

#define GX_DTYPE_TABLE_NAME(Enum, name, ...) #name,
inline constexpr const char* kName[GX_NUM_DTYPES] = {GX_FORALL_DTYPES(GX_DTYPE_TABLE_NAME)};
#undef GX_DTYPE_TABLE_NAME

// kind f = floating point (the list's other kinds: i, u, b).
#define GX_DTYPE_TABLE_FLOATING(Enum, name, kind, ...) (#kind[0] == 'f'),
inline constexpr bool kFloating[GX_NUM_DTYPES] = {GX_FORALL_DTYPES(GX_DTYPE_TABLE_FLOATING)};
#undef GX_DTYPE_TABLE_FLOATING

// Whether `code` names a dtype (the tables' bound).
inline constexpr bool valid(int64_t code) { return code >= 0 && code < GX_NUM_DTYPES; }

}  // namespace gx::dtype_table
