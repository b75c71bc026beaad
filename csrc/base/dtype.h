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
#include "gpuext/dtype_table.h"

namespace gx::core {

enum class DType : int32_t {
#define GX_DTYPE_ENUM(Enum, ...) Enum = GX_##Enum,
  GX_FORALL_DTYPES(GX_DTYPE_ENUM)
#undef GX_DTYPE_ENUM
};

constexpr int kNumDTypes = GX_NUM_DTYPES;

inline size_t itemsize(DType t) {
  const int32_t code = static_cast<int32_t>(t);
  return dtype_table::valid(code) ? static_cast<size_t>(dtype_table::kItemsize[code]) : 0;
}

inline const char* dtype_name(DType t) {
  const int32_t code = static_cast<int32_t>(t);
  return dtype_table::valid(code) ? dtype_table::kName[code] : "unknown";
}

inline bool is_valid_dtype(int64_t code) { return dtype_table::valid(code); }

}  // namespace gx::core
