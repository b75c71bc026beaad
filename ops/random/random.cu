// CUDA random fills: one thread per element, grid-stride (philox.h).
#include <gpuext/cuda.h>

#include "random.h"

namespace gx::ops {
namespace {

template <typename T>
__global__ void random_fill_kernel(T* out, int64_t n, random::Fill f) {
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[j] = random::draw<T>(f, j);
  }
}

void fill_cuda(const Tensor& out, const random::Fill& f) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int device = out.device().index;
  DeviceGuard guard(device);
  with_storage_type(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      constexpr int kThreads = 256;
      const int64_t want = (n + kThreads - 1) / kThreads;
      const unsigned grid = static_cast<unsigned>(want < 65535 * 8 ? want : 65535 * 8);
      random_fill_kernel<T><<<grid, kThreads, 0, current_stream(device)>>>(static_cast<T*>(out.data_ptr()), n, f);
      GX_CHECK_LAUNCH();
    }
  });
}

}  // namespace

GX_RANDOM_DEFINE_ENTRY_POINTS(cuda)

}  // namespace gx::ops
