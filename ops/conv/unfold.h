// unfold and fold (ops/op-list.js has their schemas; lib/ops/conv/unfold.ts
// calls them for gx.nn.functional.unfold / fold and the convolutions and
// average pools of lib/nn): im2col and its adjoint col2im over two spatial dims,
// written once for both devices (unfold_cpu.cpp, unfold.cu). One-dim callers
// pass a unit height.
//
// NOTE [ unfold and fold ]
// unfold copies self (N, C, H, W), any strides, into out (N, C*KH*KW, OH*OW),
// contiguous: out[n, (c*KH + i)*KW + j, oh*OW + ow] = self[n, c, h, w] with
// h = oh*SH - PH + i*DH, w = ow*SW - PW + j*DW, and 0 where (h, w) falls
// outside self (torch's unfold, the convolutions' and average pooling's
// padding; max pooling has its own op, max_pool.h). The grid
// (OH, OW) is the caller's: torch's formula, or one more window per dim for
// ceil mode, whose last windows read padding only past the input.
// fold is unfold's adjoint: out (N, C, H, W), contiguous, is the sum over
// every window position covering (h, w). It gathers rather than scatters:
// one output element per thread walks its (i, j) in ascending order and
// accumulates in the compute type, so no atomics, and the CPU and CUDA sums
// are the same sums in the same order (equal bit for bit in float32 and
// float64). 16-bit floats load into float and round once on the store.
#pragma once
#include <gpuext/extension.h>

#include "../common/dispatch.h"
#include "../common/hd.h"
#include "windows.h"

namespace gx::ops {

// The image is fold's output; div_sh, div_sw serve fold_one's divisibility tests.
struct Im2colGeometry : WindowGeometry {
  int64_t img_stride[4] = {0, 0, 0, 0};  // elements: unfold's input (fold's output is contiguous)
  int64_t col_stride[3] = {0, 0, 0};     // elements: fold's input (unfold's output is contiguous)

  GX_HD int64_t rows() const { return c * kh * kw; }
  GX_HD int64_t cols() const { return oh * ow; }

  // The image element window (i, j) of window (y, x) reads, in C: 0 outside the image.
  template <typename T, typename C> GX_HD C unfold_one(const T* img, int64_t b, int64_t ch, int64_t i, int64_t j, int64_t y, int64_t x) const {
    const int64_t hh = y * sh - ph + i * dh, ww = x * sw - pw + j * dw;
    if (hh < 0 || hh >= h || ww < 0 || ww >= w) return C(0);
    return to<C>(img[b * img_stride[0] + ch * img_stride[1] + hh * img_stride[2] + ww * img_stride[3]]);
  }

  // fold's element (b, ch, y, x): the sum of the window positions covering it, (i, j) ascending. The
  // divisibility tests run in 32 bits (spatial sizes are below 2^30; set_windows checks) and divide by
  // the strides' magic numbers: a division per KH + KH*KW positions would cost more than the loads.
  template <typename T, typename C> GX_HD C fold_one(const T* col, int64_t b, int64_t ch, int64_t y, int64_t x) const {
    const int32_t y32 = static_cast<int32_t>(y), x32 = static_cast<int32_t>(x);
    const T* base = col + b * col_stride[0] + ch * kh * kw * col_stride[1];
    C acc = C(0);
    for (int32_t i = 0; i < kh; ++i) {
      const int32_t hh = y32 + static_cast<int32_t>(ph) - i * static_cast<int32_t>(dh);
      if (hh < 0) break;  // hh only falls as i grows
      const int32_t wy = static_cast<int32_t>(div_sh.div(static_cast<uint32_t>(hh)));
      if (hh - wy * static_cast<int32_t>(sh) != 0 || wy >= oh) continue;
      for (int32_t j = 0; j < kw; ++j) {
        const int32_t ww = x32 + static_cast<int32_t>(pw) - j * static_cast<int32_t>(dw);
        if (ww < 0) break;
        const int32_t wx = static_cast<int32_t>(div_sw.div(static_cast<uint32_t>(ww)));
        if (ww - wx * static_cast<int32_t>(sw) != 0 || wx >= ow) continue;
        acc += to<C>(base[(static_cast<int64_t>(i) * kw + j) * col_stride[1] + (static_cast<int64_t>(wy) * ow + wx) * col_stride[2]]);
      }
    }
    return acc;
  }
};

// The geometry of an unfold (image = self, col = out) or fold (col = self, image = out) call, checked.
inline Im2colGeometry make_im2col(const Tensor& image, const Tensor& col, IntArrayRef kernel_size, IntArrayRef dilation,
                                  IntArrayRef padding, IntArrayRef stride, IntArrayRef grid) {
  GX_CHECK(grid.size() == 2, "grid must have 2 entries (height, width), got ", grid.size());
  Im2colGeometry g;
  set_windows(g, image, kernel_size, dilation, padding, stride, grid[0], grid[1]);
  GX_CHECK(col.dim() == 3, "expected the columns as (N, C*KH*KW, L), got shape ", col.sizes());
  GX_CHECK(image.dtype() == col.dtype(), "operands of dtypes ", image.dtype(), " and ", col.dtype());
  GX_CHECK(image.device() == col.device(), "image on ", image.device(), " but columns on ", col.device());
  GX_CHECK(col.size(0) == g.n && col.size(1) == g.rows() && col.size(2) == g.cols(), "columns of shape ", col.sizes(),
           " do not match the image ", image.sizes(), " with kernel ", kernel_size, " and grid ", grid);
  for (int d = 0; d < 4; ++d) g.img_stride[d] = image.strides()[d];
  for (int d = 0; d < 3; ++d) g.col_stride[d] = col.strides()[d];
  return g;
}

}  // namespace gx::ops
