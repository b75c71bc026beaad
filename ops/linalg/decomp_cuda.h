// What the decompositions' CUDA implementations (qr.cu, lu.cu, symmetric.cu)
// share: cuSOLVER set up on the tensors' device and current stream, and
// scratch memory from the caching allocator, ordered on that stream.
#pragma once
#include <gpuext/cuda.h>

#include "cusolver.h"
#include "decomp.h"

namespace gx::ops::linalg {

// cuSOLVER for one call of op `what` on `device`, which the caller has made current (a DeviceGuard): the current
// stream, this thread's handle bound to it, and the routines for T.
template <typename T>
struct Solver {
  cudaStream_t stream;
  cusolver::Handle handle;
  const cusolver::Dense<T>& api;

  Solver(const char* what, int device)
      : stream(current_stream(device)),
        handle(cusolver::handle(what, device, stream)),
        api(cusolver::dense<T>(what)) {}
};

// A workspace of `elements` (at least one) of like's dtype on its device.
inline Tensor workspace(int64_t elements, const Tensor& like) {
  return empty({elements > 0 ? elements : 1}, like.dtype(), like.device());
}

// `count` (at least one) int32s on like's device: pivots, or an info cuSOLVER writes that nobody reads.
inline Tensor ints(int64_t count, const Tensor& like) {
  return empty({count > 0 ? count : 1}, kInt32, like.device());
}

// info [batch] = 0, for the matrices there is nothing to factor in (n == 0).
inline void zero_info(const char* what, const Tensor& info, cudaStream_t stream) {
  GX_CHECK(cudaMemsetAsync(info.data_ptr(), 0, static_cast<size_t>(info.numel()) * sizeof(int32_t), stream) ==
               cudaSuccess,
           what, ": cudaMemsetAsync failed");
}

}  // namespace gx::ops::linalg
