// DType: the core's C++ face of the dtype list (csrc/include/gpuext/dtype_list.h).
//
// One list, three faces, the same codes:
//   gx_dtype             the C ABI's enum (gpuext/abi.h), what crosses between
//                        the core and extensions and what JS passes;
//   gx::ScalarType       the extensions' and built-in ops' C++ enum (gpuext/tensor.h);
//   gx::core::DType      this one, the core's, which never appears in a public header.
// Converting between them is a static_cast of the code.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gpuext/abi.h"

namespace gx::core {

enum class DType : int32_t {
#define GX_DTYPE_ENUM(Enum, name, kind, size, storage, value, ctype) Enum = GX_##Enum,
  GX_FORALL_DTYPES(GX_DTYPE_ENUM)
#undef GX_DTYPE_ENUM
};

constexpr int kNumDTypes = GX_NUM_DTYPES;

inline size_t itemsize(DType t) {
  switch (t) {
#define GX_DTYPE_SIZE(Enum, name, kind, size, storage, value, ctype) \
  case DType::Enum:                                           \
    return size;
    GX_FORALL_DTYPES(GX_DTYPE_SIZE)
#undef GX_DTYPE_SIZE
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
#define GX_DTYPE_NAME(Enum, name, kind, size, storage, value, ctype) \
  case DType::Enum:                                           \
    return #name;
    GX_FORALL_DTYPES(GX_DTYPE_NAME)
#undef GX_DTYPE_NAME
  }
  return "unknown";
}

inline bool is_valid_dtype(int64_t code) { return code >= 0 && code < kNumDTypes; }

}  // namespace gx::core
