// The window geometry unfold / fold (unfold.h) and max pooling (max_pool.h)
// share: an image (N, C, H, W), a kernel of KH x KW positions DH, DW apart,
// padding PH, PW, strides SH, SW and the caller's grid of OH x OW windows.
// Window (y, x) covers the rows y*SH - PH + i*DH (i < KH) and the columns
// x*SW - PW + j*DW (j < KW). Its fields and their checks are written once
// here; each op adds its operands' strides and its own checks.
#pragma once
#include <gpuext/extension.h>

#include "../common/fast_div.h"
#include "../ops.h"

namespace gx::ops {

struct WindowGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // the image (fold's output, the max pooling backward's grad_input)
  int64_t kh = 1, kw = 1, dh = 1, dw = 1, ph = 0, pw = 0, sh = 1, sw = 1;
  int64_t oh = 0, ow = 0;              // the grid of windows
  // By the strides: the gathering kernels' window ranges (NOTE [ Division by a run-time constant ]).
  FastDivU32 div_sh, div_sw;
  ScalarType dtype = kFloat32;
  int device = 0;
};

// Sets g's fields from image (N, C, H, W), the four (height, width) pairs and the grid (oh, ow), checked;
// the bounds keep the kernels' index arithmetic in 32 bits (a window's row or column, plus padding, below 2^31).
inline void set_windows(WindowGeometry& g, const Tensor& image, IntArrayRef kernel_size, IntArrayRef dilation,
                        IntArrayRef padding, IntArrayRef stride, int64_t oh, int64_t ow) {
  auto pair = [](IntArrayRef a, const char* name) {
    GX_CHECK(a.size() == 2, name, " must have 2 entries (height, width), got ", a.size());
  };
  pair(kernel_size, "kernel_size"), pair(dilation, "dilation"), pair(padding, "padding"), pair(stride, "stride");
  GX_CHECK(image.dim() == 4, "expected the image as (N, C, H, W), got shape ", image.sizes());
  g.n = image.size(0), g.c = image.size(1), g.h = image.size(2), g.w = image.size(3);
  g.kh = kernel_size[0], g.kw = kernel_size[1], g.dh = dilation[0], g.dw = dilation[1];
  g.ph = padding[0], g.pw = padding[1], g.sh = stride[0], g.sw = stride[1], g.oh = oh, g.ow = ow;
  GX_CHECK(g.kh > 0 && g.kw > 0 && g.dh > 0 && g.dw > 0 && g.sh > 0 && g.sw > 0 && g.ph >= 0 && g.pw >= 0 && g.oh >= 0 && g.ow >= 0,
           "kernel_size, dilation and stride must be positive, padding and the grid non-negative; got kernel_size ", kernel_size,
           ", dilation ", dilation, ", stride ", stride, ", padding ", padding, " and a grid of ", oh, "x", ow);
  constexpr int64_t k30 = int64_t{1} << 30, k29 = int64_t{1} << 29;
  GX_CHECK(g.h < k30 && g.w < k30 && g.oh < k30 && g.ow < k30 && g.sh < k30 && g.sw < k30,
           "spatial sizes, grids and strides of 2^30 or more are not supported");
  GX_CHECK(g.ph < k29 && g.pw < k29 && (g.kh - 1) * g.dh < k29 && (g.kw - 1) * g.dw < k29,
           "padding and dilated kernels of 2^29 or more are not supported");
  g.div_sh = FastDivU32(static_cast<uint32_t>(g.sh));
  g.div_sw = FastDivU32(static_cast<uint32_t>(g.sw));
  g.dtype = image.dtype();
  g.device = image.device().index;
}

}  // namespace gx::ops
