// CUDA unfold and fold (unfold.h, NOTE [ unfold and fold ]): a thread per
// output element, blocks laid out as (a stretch of a row, rows), so the
// row's coordinates are worked out once per row and each element costs one
// 32-bit division (64-bit division is emulated on the GPU).
//   unfold: a row is one (image, channel, i, j) over the grid of windows (L);
//   fold:   a row is one (image, channel) plane (H*W), each element gathering
//           its windows in fold_one's order (the CPU's).
#include <algorithm>

#include "../common/cuda_loops.cuh"
#include "unfold.h"

namespace gx::ops {
namespace {

constexpr int64_t kMaxGridY = 65535;

template <typename T>
__global__ void __launch_bounds__(kThreads) unfold_kernel(const __grid_constant__ Im2colGeometry g, const T* img, T* out, int64_t rows) {
  using C = typename ComputeOf<T>::type;
  const int32_t L = static_cast<int32_t>(g.oh * g.ow), ow = static_cast<int32_t>(g.ow);
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const int64_t j = r % g.kw, i = (r / g.kw) % g.kh, ch = (r / (g.kw * g.kh)) % g.c, b = r / g.rows();
    T* row = out + r * L;
    for (int32_t l = static_cast<int32_t>(blockIdx.x) * kThreads + threadIdx.x; l < L; l += static_cast<int32_t>(gridDim.x) * kThreads) {
      const int32_t y = l / ow, x = l - y * ow;
      row[l] = to<T>(g.unfold_one<T, C>(img, b, ch, i, j, y, x));
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) fold_kernel(const __grid_constant__ Im2colGeometry g, const T* col, T* out, int64_t planes) {
  using C = typename ComputeOf<T>::type;
  const int32_t hw = static_cast<int32_t>(g.h * g.w), w = static_cast<int32_t>(g.w);
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const int64_t ch = p % g.c, b = p / g.c;
    T* plane = out + p * hw;
    for (int32_t l = static_cast<int32_t>(blockIdx.x) * kThreads + threadIdx.x; l < hw; l += static_cast<int32_t>(gridDim.x) * kThreads) {
      const int32_t y = l / w, x = l - y * w;
      plane[l] = to<T>(g.fold_one<T, C>(col, b, ch, y, x));
    }
  }
}

// Blocks for rows of `width` elements: enough stretches to cover a row (at most 1024), rows up to the grid's limit.
dim3 grid_for(int64_t rows, int64_t width) {
  const int64_t x = std::min<int64_t>((width + kThreads - 1) / kThreads, 1024);
  return dim3(static_cast<unsigned>(std::max<int64_t>(x, 1)), static_cast<unsigned>(std::min(rows, kMaxGridY)));
}

}  // namespace

void unfold_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
                 IntArrayRef grid, double pad_value, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  Im2colGeometry g = make_im2col(self, out, kernel_size, dilation, padding, stride, grid);
  g.pad_value = pad_value;
  if (out.numel() == 0) return;
  GX_CHECK(g.cols() < (int64_t{1} << 30), "at most 2^30 windows per image are supported, got ", g.cols());
  DeviceGuard guard(g.device);
  cudaStream_t s = current_stream(g.device);
  const int64_t rows = g.n * g.rows();
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unfold_kernel<T><<<grid_for(rows, g.cols()), kThreads, 0, s>>>(g, static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr()), rows);
  });
  GX_CHECK_LAUNCH();
}

void fold_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
               IntArrayRef grid, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  const Im2colGeometry g = make_im2col(out, self, kernel_size, dilation, padding, stride, grid);
  if (out.numel() == 0) return;
  GX_CHECK(g.h * g.w < (int64_t{1} << 30), "at most 2^30 elements per image plane are supported, got ", g.h * g.w);
  DeviceGuard guard(g.device);
  cudaStream_t s = current_stream(g.device);
  const int64_t planes = g.n * g.c;
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fold_kernel<T><<<grid_for(planes, g.h * g.w), kThreads, 0, s>>>(g, static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr()), planes);
  });
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
