// CUDA unfold and fold (unfold.h, NOTE [ unfold and fold ]).
//   unfold_kernel: a thread per (image, channel, window l), writing the
//                  KH*KW column elements of that window.
//   fold_kernel:   a thread per output element, gathering its windows in
//                  fold_one's order (the CPU's).
//
// NOTE [ unfold at the memory limit ]
// unfold writes KH*KW times more than it reads (the conv bench's 7x7 unfold:
// 472 MB written from a 38 MB image), so its time is the time of its stores.
// Consecutive threads take consecutive windows l of one (image, channel), so
// each of a warp's KH*KW stores is one run of 32 consecutive floats of a
// column row (coalesced), and its loads, one image row apart per (i, j), stay
// within a few cache lines the next (i, j) reuses. The index arithmetic is
// done once per thread, not per element: three divisions (l, channel, image)
// in 32 bits when every thread index fits (N*C*L < 2^31; 64-bit otherwise),
// then walking the KH*KW positions is additions only, and the loads of
// kBatch positions are issued before their stores so several are in flight.
// (The previous kernel, a thread per column element with a 64-bit division
// chain each, took 1.43 ms on an H200 for that unfold, ten times the bound.)
// The values are copies, so this order changes no result.
#include "grid_stride.cuh"
#include "unfold.h"

namespace gx::ops {
namespace {

constexpr int kBatch = 4;  // (i, j) positions loaded before their stores

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads) unfold_kernel(const __grid_constant__ Im2colGeometry g, const T* __restrict__ img,
                                                          T* __restrict__ out, I total, T pad) {
  const I L = static_cast<I>(g.oh * g.ow), c = static_cast<I>(g.c);
  const int32_t ow = static_cast<int32_t>(g.ow), kh = static_cast<int32_t>(g.kh), kw = static_cast<int32_t>(g.kw);
  const int32_t kk = kh * kw, h = static_cast<int32_t>(g.h), w = static_cast<int32_t>(g.w);
  for (I t = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; t < total; t += static_cast<I>(gridDim.x) * kThreads) {
    const I nc = t / L, ch = nc % c, b = nc / c;
    const int32_t l = static_cast<int32_t>(t - nc * L), y = l / ow, x = l - y * ow;
    const int32_t h0 = y * static_cast<int32_t>(g.sh) - static_cast<int32_t>(g.ph);
    const int32_t w0 = x * static_cast<int32_t>(g.sw) - static_cast<int32_t>(g.pw);
    const T* src = img + static_cast<int64_t>(b) * g.img_stride[0] + static_cast<int64_t>(ch) * g.img_stride[1];
    // Row (b, ch*KH*KW + i*KW + j) of the columns is row nc*KH*KW + i*KW + j: out is contiguous.
    T* dst = out + static_cast<int64_t>(nc) * kk * static_cast<int64_t>(L) + l;
    int32_t i = 0, j = 0;
    for (int32_t k = 0; k < kk; k += kBatch) {
      T v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int32_t hh = h0 + i * static_cast<int32_t>(g.dh), ww = w0 + j * static_cast<int32_t>(g.dw);
        const bool in = k + u < kk && hh >= 0 && hh < h && ww >= 0 && ww < w;
        v[u] = in ? src[hh * g.img_stride[2] + ww * g.img_stride[3]] : pad;
        if (++j == kw) j = 0, ++i;
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (k + u < kk) dst[static_cast<int64_t>(k + u) * L] = v[u];
    }
  }
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads) fold_kernel(const __grid_constant__ Im2colGeometry g, const T* __restrict__ col,
                                                        T* __restrict__ out, I total) {
  using C = typename ComputeOf<T>::type;
  const I w = static_cast<I>(g.w), h = static_cast<I>(g.h), c = static_cast<I>(g.c);
  for (I t = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; t < total; t += static_cast<I>(gridDim.x) * kThreads) {
    const I r = t / w, x = t - r * w, p = r / h, y = r - p * h, ch = p % c, b = p / c;
    out[t] = to<T>(g.fold_one<T, C>(col, static_cast<int64_t>(b), static_cast<int64_t>(ch), static_cast<int64_t>(y), static_cast<int64_t>(x)));
  }
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
  const int64_t total = g.n * g.c * g.cols();  // threads: one per (image, channel, window)
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeOf<T>::type;
    const T pad = to<T>(static_cast<C>(pad_value));  // unfold_one's padding value
    with_index(total, [&](auto itag) {
      using I = decltype(itag);
      unfold_kernel<T, I><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr()),
                                                               static_cast<I>(total), pad);
    });
  });
  GX_CHECK_LAUNCH();
}

void fold_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
               IntArrayRef grid, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  const Im2colGeometry g = make_im2col(out, self, kernel_size, dilation, padding, stride, grid);
  if (out.numel() == 0) return;
  DeviceGuard guard(g.device);
  cudaStream_t s = current_stream(g.device);
  const int64_t total = out.numel();
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_index(total, [&](auto itag) {
      using I = decltype(itag);
      fold_kernel<T, I><<<blocks_for(total), kThreads, 0, s>>>(g, static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr()),
                                                             static_cast<I>(total));
    });
  });
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
