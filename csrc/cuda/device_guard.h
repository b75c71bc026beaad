// CoreDeviceGuard: makes `device` current for the core's CUDA calls in its
// scope, then restores the caller's device (the caller may be working on
// another GPU). The core's own, throwing gx::core::Error (ErrorKind::Cuda) like the
// rest of the core; extensions and the built-in ops use gx::DeviceGuard
// (gpuext/cuda.h), which throws the extension-side gx::OpError.
#pragma once
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"

namespace gx::core::cuda {

class CoreDeviceGuard {
 public:
  explicit CoreDeviceGuard(int device) : device_(device) {
    GX_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device_) GX_CUDA_CHECK(cudaSetDevice(device_));
  }
  ~CoreDeviceGuard() {
    if (prev_ != device_) (void)cudaSetDevice(prev_);
  }
  CoreDeviceGuard(const CoreDeviceGuard&) = delete;
  CoreDeviceGuard& operator=(const CoreDeviceGuard&) = delete;

 private:
  int device_;
  int prev_ = -1;
};

}  // namespace gx::core::cuda
