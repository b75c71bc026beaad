// CUDA max pooling with indices and its backward (max_pool.h, NOTE [ Max
// pooling with indices ]).
//   max_pool_kernel:          a thread per output element (window), scanning it
//                             as the CPU does.
//   max_pool_backward_kernel: a thread per input element, gathering the
//                             gradients of the windows whose index is it in
//                             the CPU's order: deterministic, no atomics.
// Consecutive threads take consecutive elements of a row, so the stores are
// coalesced and a warp's loads stay within a few rows of the input.
#include "grid_stride.cuh"
#include "max_pool.h"

namespace gx::ops {
namespace {

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads) max_pool_kernel(const __grid_constant__ MaxPoolGeometry g, const T* __restrict__ in,
                                                            T* __restrict__ out, int64_t* __restrict__ idx, I total) {
  using C = typename ComputeOf<T>::type;
  for (I t = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; t < total; t += static_cast<I>(gridDim.x) * kThreads) {
    const PlanePosition<I> q = plane_position(t, static_cast<I>(g.oh), static_cast<I>(g.ow), static_cast<I>(g.c));
    g.forward_one<T, C>(in, static_cast<int64_t>(q.b), static_cast<int64_t>(q.ch), static_cast<int64_t>(q.y), static_cast<int64_t>(q.x),
                        out + t, idx + t);
  }
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads) max_pool_backward_kernel(const __grid_constant__ MaxPoolGeometry g, const T* __restrict__ gy,
                                                                     const int64_t* __restrict__ idx, T* __restrict__ out, I total) {
  using C = typename ComputeOf<T>::type;
  for (I t = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; t < total; t += static_cast<I>(gridDim.x) * kThreads) {
    const PlanePosition<I> q = plane_position(t, static_cast<I>(g.h), static_cast<I>(g.w), static_cast<I>(g.c));
    out[t] = to<T>(g.backward_one<T, C>(gy, idx, static_cast<int64_t>(q.b), static_cast<int64_t>(q.ch), static_cast<int64_t>(q.y),
                                        static_cast<int64_t>(q.x)));
  }
}

}  // namespace

void max_pool2d_with_indices_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                                  IntArrayRef stride, const Tensor& out, const Tensor& indices) {
  GX_CHECK(out.is_contiguous() && indices.is_contiguous(), "out and indices must be contiguous");
  const MaxPoolGeometry g = make_max_pool(self, out, indices, kernel_size, dilation, padding, stride, false);
  const int64_t total = out.numel();
  if (total == 0) return;
  launch_floating(g.dtype, g.device, total, [&](auto tag, auto itag, unsigned blocks, cudaStream_t s) {
    using T = typename decltype(tag)::type;
    using I = decltype(itag);
    max_pool_kernel<T, I><<<blocks, kThreads, 0, s>>>(g, static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr()),
                                                      static_cast<int64_t*>(indices.data_ptr()), static_cast<I>(total));
  });
}

void max_pool2d_with_indices_backward_cuda(const Tensor& grad_output, const Tensor& indices, IntArrayRef kernel_size,
                                           IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride, const Tensor& grad_input) {
  GX_CHECK(grad_input.is_contiguous(), "grad_input must be contiguous");
  const MaxPoolGeometry g = make_max_pool(grad_input, grad_output, indices, kernel_size, dilation, padding, stride, true);
  const int64_t total = grad_input.numel();
  if (total == 0) return;
  launch_floating(g.dtype, g.device, total, [&](auto tag, auto itag, unsigned blocks, cudaStream_t s) {
    using T = typename decltype(tag)::type;
    using I = decltype(itag);
    max_pool_backward_kernel<T, I><<<blocks, kThreads, 0, s>>>(g, static_cast<const T*>(grad_output.data_ptr()),
                                                               static_cast<const int64_t*>(indices.data_ptr()),
                                                               static_cast<T*>(grad_input.data_ptr()), static_cast<I>(total));
  });
}

}  // namespace gx::ops
