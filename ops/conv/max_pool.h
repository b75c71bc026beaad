// Max pooling with indices (ops/op-list.js has the schemas; lib/ops/conv/
// max-pool.ts calls them for gx.nn.functional.maxPool1d / maxPool2d), written
// once for both devices (max_pool_cpu.cpp, max_pool.cu), over two spatial
// dims; one-dim callers pass a unit height:
//
//   max_pool2d_with_indices(self, kernel_size, dilation, padding, stride, out, indices)
//     out (N, C, OH, OW) = the maximum of each window of self (N, C, H, W),
//     indices (int64, out's shape) = where it was, as h * W + w (torch's flat
//     index into each plane).
//   max_pool2d_with_indices_backward(grad_output, indices, kernel_size, dilation, padding, stride, grad_input)
//     grad_input (N, C, H, W) = for each element, the sum of the gradients of
//     the windows whose index points at it.
//
// NOTE [ Max pooling with indices ]
// Windows are those of windows.h; the grid (OH, OW), out's size, is the
// caller's (torch's formula, ceil mode included). The forward follows torch's kernels
// (max_pool2d's CPU and CUDA ones) step for step: positions outside the input
// (the padding) are skipped, never read; the others are scanned row by row
// from a running maximum of -inf and index of the window's first position
// inside the input, and a value v takes over when `v > max || isnan(v)`. So
// the first maximum in scan order wins a tie, a NaN is the maximum and,
// of several NaNs, the last one's index is returned, and a window of -inf
// only reports its first position. Values are compared in the compute type
// (16-bit floats in float: exact) and the stored maximum is the input element
// itself.
// The backward gathers rather than scatters (torch's CUDA kernel does the
// same): one input element per thread walks the windows that can cover it
// (their rows, then their columns, ascending) and adds the gradient of each
// whose index is that element, in the compute type, rounding once on the
// store. No atomics: CUDA and the CPU (which runs the same function per
// element) add the same terms in the same order, equal bit for bit; the
// order is also that of torch's CPU backward, which scatters the windows in
// ascending order (float32 and float64 gradients equal torch 2.13's CPU ones
// bit for bit, values and indices in every dtype, on random small integers
// with NaNs and -infs; torch's CPU adds 16-bit gradients in their own type,
// its CUDA kernel in float as here, so there the two differ by a rounding).
// Indices are only compared, never followed, so a bad index cannot read out
// of bounds.
// Both loops select without branches (select_bits): on random data the
// comparisons go either way about equally often, and as branches they
// mispredicted enough to make the CPU forward and backward of a 64x32x28x28
// float32 input take 13 and 27 ms on one thread instead of 4.5 and 4.
#pragma once
#include <gpuext/extension.h>

#include "../common/dispatch.h"
#include "../common/hd.h"
#include "windows.h"

namespace gx::ops {

// mask (all ones or all zeros) ? a : b for a float or double, through its bits: compilers turn the
// ternary into a branch, which random data mispredicts (NOTE [ Max pooling with indices ]).
template <typename C> GX_HD C select_bits(int64_t mask, C a, C b) {
  using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
  U ua, ub;
  memcpy(&ua, &a, sizeof a);
  memcpy(&ub, &b, sizeof b);
  const U r = ub ^ ((ua ^ ub) & static_cast<U>(mask));
  C out;
  memcpy(&out, &r, sizeof r);
  return out;
}

// The image is the forward's self, the backward's grad_input; div_sh, div_sw serve the backward's window ranges.
struct MaxPoolGeometry : WindowGeometry {
  int64_t in_stride[4] = {0, 0, 0, 0};     // elements: the forward's self, the backward's grad_output
  int64_t idx_stride[4] = {0, 0, 0, 0};    // elements: the backward's indices (the forward writes them contiguous)

  // Window (y, x) of plane (b, ch): its maximum and index into value and index (NOTE [ Max pooling with indices ]).
  template <typename T, typename C>
  GX_HD void forward_one(const T* in, int64_t b, int64_t ch, int64_t y, int64_t x, T* value, int64_t* index) const {
    int64_t h0 = y * sh - ph, w0 = x * sw - pw;
    const int64_t h1 = h0 + (kh - 1) * dh + 1 < h ? h0 + (kh - 1) * dh + 1 : h;
    const int64_t w1 = w0 + (kw - 1) * dw + 1 < w ? w0 + (kw - 1) * dw + 1 : w;
    if (h0 < 0) h0 += (-h0 + dh - 1) / dh * dh;  // torch's `while (h0 < 0) h0 += dilation`
    if (w0 < 0) w0 += (-w0 + dw - 1) / dw * dw;
    const T* plane = in + b * in_stride[0] + ch * in_stride[1];
    C best = lowest<C>();
    int64_t at = h0 * w + w0, off = -1;  // off: where the maximum is read, -1 until one takes over
    for (int64_t hh = h0; hh < h1; hh += dh) {
      for (int64_t ww = w0; ww < w1; ww += dw) {
        const int64_t o = hh * in_stride[2] + ww * in_stride[3];
        const C v = to<C>(plane[o]);
        const bool take = (v > best) | is_nan(v);
        const int64_t mask = -static_cast<int64_t>(take);
        best = select_bits(mask, v, best);
        at ^= (at ^ (hh * w + ww)) & mask;
        off ^= (off ^ o) & mask;
      }
    }
    *value = off < 0 ? to<T>(best) : plane[off];  // the element itself (a NaN keeps its bits)
    *index = at;
  }

  // The gradient of input element (b, ch, y, x): the windows that may cover it, rows then columns ascending
  // (torch's range; with dilation some of them skip it, and then their index is not it).
  template <typename T, typename C>
  GX_HD C backward_one(const T* gy, const int64_t* idx, int64_t b, int64_t ch, int64_t y, int64_t x) const {
    const int64_t span_h = (kh - 1) * dh + 1, span_w = (kw - 1) * dw + 1;
    // The numerators are below 2^31 (set_windows checks the sizes): magic-number divisions, not 64-bit ones.
    const auto over = [](const FastDivU32& d, int64_t n) { return static_cast<int64_t>(d.div(static_cast<uint32_t>(n))); };
    const int64_t a0 = y + ph < span_h ? 0 : over(div_sh, y + ph - span_h) + 1;
    const int64_t a1 = over(div_sh, y + ph) + 1 < oh ? over(div_sh, y + ph) + 1 : oh;
    const int64_t b0 = x + pw < span_w ? 0 : over(div_sw, x + pw - span_w) + 1;
    const int64_t b1 = over(div_sw, x + pw) + 1 < ow ? over(div_sw, x + pw) + 1 : ow;
    const T* g = gy + b * in_stride[0] + ch * in_stride[1];
    const int64_t* ix = idx + b * idx_stride[0] + ch * idx_stride[1];
    const int64_t target = y * w + x;
    C acc = C(0);
    for (int64_t a = a0; a < a1; ++a) {
      for (int64_t e = b0; e < b1; ++e) {
        // Adds 0 for the windows pointing elsewhere: acc starts at +0 and is never -0, and x + 0 is x
        // for every other x, so the sum has the bits of the matching terms' sum.
        const int64_t mask = -static_cast<int64_t>(ix[a * idx_stride[2] + e * idx_stride[3]] == target);
        acc += select_bits(mask, to<C>(g[a * in_stride[2] + e * in_stride[3]]), C(0));
      }
    }
    return acc;
  }
};

// The geometry of a forward (image = self, pooled = out) or backward (image = grad_input, pooled =
// grad_output) call, checked; the grid is the pooled tensor's (OH, OW), and the tensor read through
// in_stride the image (forward) or the pooled one (backward).
inline MaxPoolGeometry make_max_pool(const Tensor& image, const Tensor& pooled, const Tensor& indices, IntArrayRef kernel_size,
                                     IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride, bool backward) {
  GX_CHECK(pooled.dim() == 4, "expected the pooled tensor as (N, C, OH, OW), got shape ", pooled.sizes());
  MaxPoolGeometry g;
  set_windows(g, image, kernel_size, dilation, padding, stride, pooled.size(2), pooled.size(3));
  GX_CHECK(indices.sizes() == pooled.sizes(), "indices of shape ", indices.sizes(), " do not match the pooled shape ", pooled.sizes());
  GX_CHECK(indices.dtype() == kInt64, "indices must be int64, got ", indices.dtype());
  GX_CHECK(image.dtype() == pooled.dtype(), "operands of dtypes ", image.dtype(), " and ", pooled.dtype());
  GX_CHECK(image.device() == pooled.device() && image.device() == indices.device(), "operands on ", image.device(), ", ",
           pooled.device(), " and ", indices.device());
  GX_CHECK(pooled.size(0) == g.n && pooled.size(1) == g.c, "pooled shape ", pooled.sizes(), " does not match the image ",
           image.sizes(), " in N and C");
  GX_CHECK(2 * g.ph <= g.kh && 2 * g.pw <= g.kw, "padding must be at most half the kernel size, got ", padding, " for kernel_size ",
           kernel_size);
  GX_CHECK((g.oh - 1) * g.sh < g.h + g.ph && (g.ow - 1) * g.sw < g.w + g.pw, "a grid of ", g.oh, "x", g.ow,
           " windows has windows starting past the input ", image.sizes(), " and its left padding");
  for (int d = 0; d < 4; ++d) g.in_stride[d] = (backward ? pooled : image).strides()[d];
  for (int d = 0; d < 4; ++d) g.idx_stride[d] = indices.strides()[d];
  return g;
}

}  // namespace gx::ops
