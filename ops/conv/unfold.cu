// CUDA unfold and fold (unfold.h, NOTE [ unfold and fold ]): a thread per
// output element, grid-stride; 32-bit index arithmetic when the output and
// the input's span fit (64-bit division is emulated on the GPU).
#include "../common/cuda_loops.cuh"
#include "unfold.h"

namespace gx::ops {
namespace {

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads) unfold_kernel(const __grid_constant__ Im2colGeometry g, const T* img, T* out, I numel) {
  using C = typename ComputeOf<T>::type;
  const I stride = static_cast<I>(gridDim.x) * kThreads;
  for (I e = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; e < numel; e += stride) out[e] = to<T>(g.unfold_at<T, C, I>(img, e));
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads) fold_kernel(const __grid_constant__ Im2colGeometry g, const T* col, T* out, I numel) {
  using C = typename ComputeOf<T>::type;
  const I stride = static_cast<I>(gridDim.x) * kThreads;
  for (I e = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; e < numel; e += stride) out[e] = to<T>(g.fold_at<T, C, I>(col, e));
}

unsigned blocks_for(int64_t numel) {
  const int64_t want = (numel + kThreads - 1) / kThreads;
  return static_cast<unsigned>(want > (1 << 20) ? (1 << 20) : want);
}

// Whether 32-bit indices are safe: the output's elements (plus a grid stride) and the input's largest offset.
bool fits_int32(int64_t numel, int64_t span) { return numel + (int64_t{1} << 28) < (int64_t{1} << 31) && span < (int64_t{1} << 31); }

}  // namespace

void unfold_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
                 IntArrayRef grid, double pad_value, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  Im2colGeometry g = make_im2col(self, out, kernel_size, dilation, padding, stride, grid);
  g.pad_value = pad_value;
  const int64_t numel = out.numel();
  if (numel == 0) return;
  DeviceGuard guard(g.device);
  cudaStream_t s = current_stream(g.device);
  int64_t span = 0;
  for (int d = 0; d < 4; ++d) span += (self.size(d) - 1) * self.strides()[d];
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* img = static_cast<const T*>(self.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    if (fits_int32(numel, span)) {
      unfold_kernel<T, int32_t><<<blocks_for(numel), kThreads, 0, s>>>(g, img, dst, static_cast<int32_t>(numel));
    } else {
      unfold_kernel<T, int64_t><<<blocks_for(numel), kThreads, 0, s>>>(g, img, dst, numel);
    }
  });
  GX_CHECK_LAUNCH();
}

void fold_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
               IntArrayRef grid, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  const Im2colGeometry g = make_im2col(out, self, kernel_size, dilation, padding, stride, grid);
  const int64_t numel = out.numel();
  if (numel == 0) return;
  DeviceGuard guard(g.device);
  cudaStream_t s = current_stream(g.device);
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* col = static_cast<const T*>(self.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    // fold_at indexes the columns in 64 bits; the 32-bit path only speeds the output's decomposition.
    if (fits_int32(numel, 0)) {
      fold_kernel<T, int32_t><<<blocks_for(numel), kThreads, 0, s>>>(g, col, dst, static_cast<int32_t>(numel));
    } else {
      fold_kernel<T, int64_t><<<blocks_for(numel), kThreads, 0, s>>>(g, col, dst, numel);
    }
  });
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
