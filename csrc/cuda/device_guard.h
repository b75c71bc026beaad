// DeviceGuard: makes `device` current for the CUDA calls in its scope, then
// restores the caller's device (the caller may be working on another GPU).
#pragma once
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"

namespace gx::cuda {

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : device_(device) {
    GX_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device_) GX_CUDA_CHECK(cudaSetDevice(device_));
  }
  ~DeviceGuard() {
    if (prev_ != device_) (void)cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int device_;
  int prev_ = -1;
};

}  // namespace gx::cuda
