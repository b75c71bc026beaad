// What the decompositions' CUDA implementations (qr.cu, lu.cu, symmetric.cu)
// share: cuSOLVER set up on the tensors' device and current stream, and
// scratch memory from the caching allocator, ordered on that stream.
#pragma once
#include <initializer_list>
#include <type_traits>

#include <gpuext/cuda.h>

#include "cusolver.h"
#include "decomp.h"

namespace gx::ops::linalg {

// cuSOLVER for one call of op `what` on `device`, which the caller has made current (a DeviceGuard): the current
// stream, this thread's handle bound to it, and the routines for T.
template <typename T>
struct Solver {
  using Scalar = T;
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

// The prologue every decomposition shares: the sizes checked against cuSOLVER's ints, a's device made current,
// and body(solver) run with a Solver of a's float type (body reads it as `typename
// std::decay_t<decltype(s)>::Scalar`). When there is nothing to factor (`empty`), body is skipped and `info`, when
// given, zeroed.
template <typename Body>
void on_solver(const char* what, const Tensor& a, std::initializer_list<int64_t> sizes, bool empty, const Tensor* info,
               Body&& body) {
  check_int_sizes(what, sizes);
  const int device = a.device().index;
  DeviceGuard guard(device);  // cuSOLVER and the kernels work on the current device: the tensors'
  with_float(a, [&](auto tag) {
    const Solver<typename decltype(tag)::type> s(what, device);
    if (empty) {
      if (info != nullptr) zero_info(what, *info, s.stream);
      return;
    }
    body(s);
  });
}

}  // namespace gx::ops::linalg
