// The functions of a library loaded on first use (gpuext/optional_library.h),
// or an error naming the op and why the library did not load: what cuBLAS,
// cuSOLVER and NCCL each give their callers.
#pragma once
#include <gpuext/extension.h>
#include <gpuext/optional_library.h>

namespace gx::ops {

template <typename Api>
const Api& loaded_api(const optional_library::Loaded<Api>& l, const char* what) {
  GX_CHECK(l.ok, what, ": ", l.error);
  return l.api;
}

}  // namespace gx::ops
