// CPU unfold and fold (unfold.h, NOTE [ unfold and fold ]): rows of the
// output split over threads, each element computed by the functions the CUDA
// kernels call (so fold sums in the same order), the index arithmetic done
// per row instead of per element.
#include <algorithm>

#include <gpuext/parallel.h>

#include "unfold.h"

namespace gx::ops {

void unfold_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
                IntArrayRef grid, const Tensor& out) {
  GX_CHECK(out.is_contiguous(), "out must be contiguous");
  const Im2colGeometry g = make_im2col(self, out, kernel_size, dilation, padding, stride, grid);
  const int64_t numel = out.numel();
  if (numel == 0) return;
  with_floating_storage(g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeOf<T>::type;
    const T* img = static_cast<const T*>(self.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    // A row: one (image, channel, i, j) over the whole grid.
    const int64_t rows = g.n * g.rows(), cols = g.cols();
    parallel_for(0, rows, std::max<int64_t>(1, kDefaultGrain / 4 / std::max<int64_t>(1, cols)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t j = r % g.kw, i = (r / g.kw) % g.kh, ch = (r / (g.kw * g.kh)) % g.c, b = r / g.rows();
        T* row = dst + r * cols;
        for (int64_t y = 0; y < g.oh; ++y) {
          for (int64_t x = 0; x < g.ow; ++x) row[y * g.ow + x] = to<T>(g.unfold_one<T, C>(img, b, ch, i, j, y, x));
        }
      }
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
    // A row: one (image, channel, y) across the width.
    const int64_t rows = g.n * g.c * g.h;
    parallel_for(0, rows, std::max<int64_t>(1, kDefaultGrain / 16 / std::max<int64_t>(1, g.w * g.kh * g.kw)), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t y = r % g.h, ch = (r / g.h) % g.c, b = r / (g.h * g.c);
        for (int64_t x = 0; x < g.w; ++x) dst[r * g.w + x] = to<T>(g.fold_one<T, C>(col, b, ch, y, x));
      }
    });
  });
}

}  // namespace gx::ops
