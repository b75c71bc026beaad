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
                                                          T* __restrict__ out, I total) {
  using C = typename ComputeOf<T>::type;
  const T zero = to<T>(C(0));  // outside the image (NOTE [ unfold and fold ])
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
        v[u] = in ? src[hh * g.img_stride[2] + ww * g.img_stride[3]] : zero;
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
  for (I t = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; t < total; t += static_cast<I>(gridDim.x) * kThreads) {
    const PlanePosition<I> q = plane_position(t, static_cast<I>(g.h), static_cast<I>(g.w), static_cast<I>(g.c));
    out[t] = to<T>(g.fold_one<T, C>(col, static_cast<int64_t>(q.b), static_cast<int64_t>(q.ch), static_cast<int64_t>(q.y),
                                    static_cast<int64_t>(q.x)));
  }
}

}  // namespace

void unfold_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
                 IntArrayRef grid, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  const Im2colGeometry g = make_im2col(self, out, kernel_size, dilation, padding, stride, grid);
  if (out.numel() == 0) return;
  GX_CHECK(g.cols() < (int64_t{1} << 30), "at most 2^30 windows per image are supported, got ", g.cols());
  const int64_t total = g.n * g.c * g.cols();  // threads: one per (image, channel, window)
  launch_floating(g.dtype, g.device, total, [&](auto tag, auto itag, unsigned blocks, cudaStream_t s) {
    using T = typename decltype(tag)::type;
    using I = decltype(itag);
    unfold_kernel<T, I><<<blocks, kThreads, 0, s>>>(g, static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr()),
                                                    static_cast<I>(total));
  });
}

void fold_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
               IntArrayRef grid, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  const Im2colGeometry g = make_im2col(out, self, kernel_size, dilation, padding, stride, grid);
  const int64_t total = out.numel();
  if (total == 0) return;
  launch_floating(g.dtype, g.device, total, [&](auto tag, auto itag, unsigned blocks, cudaStream_t s) {
    using T = typename decltype(tag)::type;
    using I = decltype(itag);
    fold_kernel<T, I><<<blocks, kThreads, 0, s>>>(g, static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr()),
                                                  static_cast<I>(total));
  });
}

}  // namespace gx::ops
