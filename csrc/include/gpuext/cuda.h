// CUDA helpers for extension kernels (included by gpuext/extension.h in .cu files).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "gpuext/api.h"

namespace gx {

// The current stream of the op's device on this thread (NOTE [ Current
// stream ] in the core): launch every kernel on it, never on stream 0.
// `device` -1 means the device the op was dispatched to (outside a CUDA op:
// the thread's current device, gx::current_device()).
inline cudaStream_t current_stream(int device = -1) {
  void* s = nullptr;
  detail::check_status(detail::api().current_stream(device, &s));
  return static_cast<cudaStream_t>(s);
}

// Makes `device` current for the CUDA calls in its scope, then restores the
// caller's device. An extension's CUDA runtime keeps its own current device,
// apart from the core's, so a kernel for cuda:1 needs this even when the core
// was working on cuda:1. Throws gx::OpError (GX_ERR_CUDA) when the device
// cannot be made current: launching on the wrong device would fail later with
// a less clear message, or not at all.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    int prev = 0;
    check(cudaGetDevice(&prev), "cudaGetDevice");
    if (prev != device) {
      check(cudaSetDevice(device), "cudaSetDevice");
      prev_ = prev;
    }
  }
  ~DeviceGuard() {
    if (prev_ >= 0) (void)cudaSetDevice(prev_);  // nothing to report to from a destructor
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  static void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: do not let the next launch check report it again
      throw OpError(GX_ERR_CUDA, detail::cat(what, " failed: ", cudaGetErrorString(err)));
    }
  }
  int prev_ = -1;  // the device to restore; -1 when it was already current
};

// The number of streaming multiprocessors of `device`, for sizing grids that
// should fill the GPU. Asked of the runtime once per device (and per
// extension); throws gx::OpError (GX_ERR_CUDA) when the runtime cannot say.
inline int sm_count(int device) {
  static int counts[64] = {0};
  const bool cached = device >= 0 && device < 64;
  if (cached && counts[device] > 0) return counts[device];
  int n = 0;
  const cudaError_t err = cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    throw OpError(GX_ERR_CUDA, detail::cat("sm_count(", device, "): cudaDeviceGetAttribute failed: ",
                                           cudaGetErrorString(err)));
  }
  if (cached) counts[device] = n;
  return n;
}

// Blocks of `threads` threads covering n elements (at least one block, so a
// launch for n == 0 stays valid when the kernel checks its bound).
inline unsigned blocks(int64_t n, int threads = 256) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 0x7fffffff ? 0x7fffffff : b));
}

}  // namespace gx

// Checks the last launch; the core prefixes the op's name to the message.
#undef GX_CHECK_LAUNCH  // extension.h's placeholder for host-compiled files, when this header is included there
#define GX_CHECK_LAUNCH()                                                                    \
  do {                                                                                       \
    const cudaError_t gx_launch_err_ = cudaGetLastError();                                   \
    if (gx_launch_err_ != cudaSuccess)                                                       \
      throw ::gx::OpError(GX_ERR_CUDA, ::gx::detail::cat("kernel launch failed: ",           \
                                                         cudaGetErrorString(gx_launch_err_), \
                                                         " (", __FILE__, ":", __LINE__, ")")); \
  } while (0)
