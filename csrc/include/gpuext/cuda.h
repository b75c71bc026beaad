// CUDA helpers for extension kernels (included by gpuext/extension.h in .cu files).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "gpuext/api.h"

namespace gx {

// The current stream of the op's device on this thread (NOTE [ Current
// stream ] in the core): launch every kernel on it, never on stream 0.
// `device` -1 means the device the op was dispatched to.
inline cudaStream_t current_stream(int device = -1) {
  void* s = nullptr;
  detail::check_status(detail::api().current_stream(device, &s));
  return static_cast<cudaStream_t>(s);
}

// Blocks of `threads` threads covering n elements (at least one block, so a
// launch for n == 0 stays valid when the kernel checks its bound).
inline unsigned blocks(int64_t n, int threads = 256) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 0x7fffffff ? 0x7fffffff : b));
}

}  // namespace gx

// Checks the last launch; the core prefixes the op's name to the message.
#define GX_CHECK_LAUNCH()                                                                    \
  do {                                                                                       \
    const cudaError_t gx_launch_err_ = cudaGetLastError();                                   \
    if (gx_launch_err_ != cudaSuccess)                                                       \
      throw ::gx::OpError(GX_ERR_CUDA, ::gx::detail::cat("kernel launch failed: ",           \
                                                         cudaGetErrorString(gx_launch_err_), \
                                                         " (", __FILE__, ":", __LINE__, ")")); \
  } while (0)
