// CUDA cross (cross.h, NOTE [ The cross product in one pass ]): a thread per
// position, grid-stride.
#include "../common/cuda_loops.cuh"
#include "cross.h"

namespace gx::ops {
namespace {

template <typename C>
__global__ void __launch_bounds__(kThreads) cross_kernel(const __grid_constant__ CrossIter it) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; l < it.numel; l += stride) it.apply<C>(l);
}

}  // namespace

void cross_cuda(const Tensor& self, const Tensor& other, int64_t axis, const Tensor& out) {
  const CrossIter it = make_cross(self, other, axis, out);
  if (it.numel == 0) return;
  DeviceGuard guard(it.device);
  cudaStream_t stream = current_stream(it.device);
  const int64_t want = (it.numel + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(want > (1 << 20) ? (1 << 20) : want);
  with_compute<kCNumeric | kCNoBool>(it.dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    cross_kernel<C><<<blocks, kThreads, 0, stream>>>(it);
  });
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
