// The functions of a library loaded on first use (gpuext/optional_library.h),
// or an error naming the op and why the library did not load: what cuBLAS,
// cuSOLVER, cuDNN and NCCL each give their callers; and the device check
// their per-thread handles share.
#pragma once
#include <cuda_runtime.h>
#include <gpuext/extension.h>
#include <gpuext/optional_library.h>

namespace gx::ops {

template <typename Api>
const Api& loaded_api(const optional_library::Loaded<Api>& l, const char* what) {
  GX_CHECK(l.ok, what, ": ", l.error);
  return l.api;
}

// A library handle is made for and used on one device, the one current in the
// caller's DeviceGuard: right by construction, and this says which op forgot
// its guard otherwise. `library` names the library ("cuBLAS").
inline void check_handle_device(const char* what, const char* library, int device) {
  int current = -1;
  GX_CHECK(cudaGetDevice(&current) == cudaSuccess, what, ": cudaGetDevice failed");
  GX_CHECK(current == device, what, ": the ", library, " handle of cuda:", device, " was asked for while cuda:", current,
           " is current (the op must make its tensors' device current first)");
}

}  // namespace gx::ops
