// GX_CUDA_CHECK(expr): evaluates a CUDA runtime call and throws
// gx::core::Error(ErrorKind::Cuda) when it does not return cudaSuccess, naming the
// call, the CUDA error and where it happened.
//
// The error is also cleared from the runtime's per-thread "last error" so that
// a later cudaGetLastError() (e.g. after a kernel launch) does not report it a
// second time. Sticky errors (a kernel fault) cannot be cleared; they will keep
// coming back from every call, which is what we want.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "base/error.h"

namespace gx::core::cuda {

// "cudaMalloc(&p, n) failed: out of memory (cudaErrorMemoryAllocation) at file.cpp:42"
inline std::string cuda_error_message(cudaError_t err, const char* what, const char* file,
                                      int line) {
  return core::str(what, " failed: ", cudaGetErrorString(err), " (", cudaGetErrorName(err),
                 ") at ", file, ":", line);
}

}  // namespace gx::core::cuda

#define GX_CUDA_CHECK(expr)                                                        \
  do {                                                                             \
    const cudaError_t gx_cuda_err_ = (expr);                                       \
    if (gx_cuda_err_ != cudaSuccess) {                                             \
      (void)cudaGetLastError();                                                    \
      throw ::gx::core::Error(::gx::core::ErrorKind::Cuda,                                     \
                        ::gx::core::cuda::cuda_error_message(gx_cuda_err_, #expr, __FILE__, \
                                                       __LINE__));                 \
    }                                                                              \
  } while (0)
