// CPU unfold and fold (unfold.h, NOTE [ unfold and fold ]): the output's
// elements split over threads, each computed as the CUDA kernels compute it.
#include <gpuext/parallel.h>

#include "unfold.h"

namespace gx::ops {

void unfold_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
                IntArrayRef grid, double pad_value, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  Im2colGeometry g = make_im2col(self, out, kernel_size, dilation, padding, stride, grid);
  g.pad_value = pad_value;
  const int64_t numel = out.numel();
  if (numel == 0) return;
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeOf<T>::type;
    const T* img = static_cast<const T*>(self.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    parallel_for(0, numel, kDefaultGrain / 4, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) dst[k] = to<T>(g.unfold_at<T, C, int64_t>(img, k));
    });
  });
}

void fold_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
              IntArrayRef grid, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  const Im2colGeometry g = make_im2col(out, self, kernel_size, dilation, padding, stride, grid);
  const int64_t numel = out.numel();
  if (numel == 0) return;
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeOf<T>::type;
    const T* col = static_cast<const T*>(self.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    parallel_for(0, numel, kDefaultGrain / 16, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) dst[k] = to<T>(g.fold_at<T, C, int64_t>(col, k));
    });
  });
}

}  // namespace gx::ops
