// CUDA searchsorted (searchsorted.h): a thread per value, a binary search of
// its row's sequence, comparing in the dtype's compute type.
#include "searchsorted.h"
#include "sort_cuda.cuh"

namespace gx::ops {
namespace {

template <typename C>
__global__ void __launch_bounds__(kThreads) searchsorted_kernel(const char* __restrict__ seq, const char* __restrict__ vals,
                                                                ScalarType dt, int64_t item, SearchShape s, bool right,
                                                                bool out32, void* __restrict__ out) {
  const int64_t total = s.rows * s.k, stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total; i += stride) {
    const int64_t row = s.shared ? 0 : i / s.k;
    const int64_t pos = search_row<C>(seq + row * s.m * item, dt, item, s.m, load_as<C>(vals + i * item, dt), right);
    if (out32) static_cast<int32_t*>(out)[i] = static_cast<int32_t>(pos);
    else static_cast<int64_t*>(out)[i] = pos;
  }
}

}  // namespace

void searchsorted_cuda(const Tensor& sorted_sequence, const Tensor& self, bool right, const Tensor& out) {
  const SearchShape s = search_shape(sorted_sequence, self, out);
  if (s.rows * s.k == 0) return;
  const int device = self.device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  const ScalarType dt = self.dtype();
  with_compute<kCNumeric>(dt, [&](auto tag) {
    using C = typename decltype(tag)::type;
    searchsorted_kernel<C><<<grid_for(s.rows * s.k), kThreads, 0, stream>>>(
        static_cast<const char*>(sorted_sequence.data_ptr()), static_cast<const char*>(self.data_ptr()), dt, itemsize(dt),
        s, right, out.dtype() == kInt32, out.data_ptr());
    GX_CHECK_LAUNCH();
  });
}

}  // namespace gx::ops
