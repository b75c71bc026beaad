// DType: the C++ face of the dtype list (csrc/include/gpuext/dtype_list.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "gpuext/abi.h"

namespace gx {

enum class DType : int32_t {
#define GX_DTYPE_ENUM(Enum, name, kind, size, storage, value) Enum = GX_##Enum,
  GX_FORALL_DTYPES(GX_DTYPE_ENUM)
#undef GX_DTYPE_ENUM
};

constexpr int kNumDTypes = GX_NUM_DTYPES;

inline size_t itemsize(DType t) {
  switch (t) {
#define GX_DTYPE_SIZE(Enum, name, kind, size, storage, value) \
  case DType::Enum:                                           \
    return size;
    GX_FORALL_DTYPES(GX_DTYPE_SIZE)
#undef GX_DTYPE_SIZE
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
#define GX_DTYPE_NAME(Enum, name, kind, size, storage, value) \
  case DType::Enum:                                           \
    return #name;
    GX_FORALL_DTYPES(GX_DTYPE_NAME)
#undef GX_DTYPE_NAME
  }
  return "unknown";
}

inline bool is_valid_dtype(int64_t code) { return code >= 0 && code < kNumDTypes; }

}  // namespace gx
