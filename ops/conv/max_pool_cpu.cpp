// CPU max pooling with indices and its backward (max_pool.h, NOTE [ Max
// pooling with indices ]): rows of the output (forward) or of grad_input
// (backward) split over threads, each element computed by the functions the
// CUDA kernels call, so the backward adds in the same order.
#include <algorithm>

#include <gpuext/parallel.h>

#include "max_pool.h"

namespace gx::ops {

void max_pool2d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                                 IntArrayRef stride, const Tensor& out, const Tensor& indices) {
  GX_CHECK(out.is_contiguous() && indices.is_contiguous(), "out and indices must be contiguous");
  const MaxPoolGeometry g = make_max_pool(self, out, indices, kernel_size, dilation, padding, stride, false);
  if (out.numel() == 0) return;
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeOf<T>::type;
    const T* in = static_cast<const T*>(self.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    int64_t* ix = static_cast<int64_t*>(indices.data_ptr());
    // A row: one (image, channel, y) across the grid's width.
    const int64_t rows = g.n * g.c * g.oh, per_row = g.ow * g.kh * g.kw;
    parallel_for(0, rows, std::max<int64_t>(1, kDefaultGrain / 4 / std::max<int64_t>(1, per_row)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t y = r % g.oh, ch = (r / g.oh) % g.c, b = r / (g.oh * g.c);
        for (int64_t x = 0; x < g.ow; ++x) g.forward_one<T, C>(in, b, ch, y, x, dst + r * g.ow + x, ix + r * g.ow + x);
      }
    });
  });
}

void max_pool2d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& indices, IntArrayRef kernel_size,
                                          IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride, const Tensor& grad_input) {
  GX_CHECK(grad_input.is_contiguous(), "grad_input must be contiguous");
  const MaxPoolGeometry g = make_max_pool(grad_input, grad_output, indices, kernel_size, dilation, padding, stride, true);
  if (grad_input.numel() == 0) return;
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeOf<T>::type;
    const T* gy = static_cast<const T*>(grad_output.data_ptr());
    const int64_t* ix = static_cast<const int64_t*>(indices.data_ptr());
    T* dst = static_cast<T*>(grad_input.data_ptr());
    // A row: one (image, channel, y) across the width.
    const int64_t rows = g.n * g.c * g.h;
    parallel_for(0, rows, std::max<int64_t>(1, kDefaultGrain / 16 / std::max<int64_t>(1, g.w)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t y = r % g.h, ch = (r / g.h) % g.c, b = r / (g.h * g.c);
        for (int64_t x = 0; x < g.w; ++x) dst[r * g.w + x] = to<T>(g.backward_one<T, C>(gy, ix, b, ch, y, x));
      }
    });
  });
}

}  // namespace gx::ops
