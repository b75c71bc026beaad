// cross (ops/op-list.js has its schema; lib/ops/linalg/products.ts calls it
// for gx.cross and Tensor.cross): out = self x other along `axis`, whose size
// is 3, written once for both devices (cross_cpu.cpp, cross.cu).
//
// NOTE [ The cross product in one pass ]
// Composed from ops, each of the three components is two products and a
// difference of strided slices (nine launches and six temporaries of a third
// of the output, then a stack): about four times the memory traffic of one
// pass. Here JS broadcasts self and other to out's shape (expand: stride 0
// where broadcast) and one loop walks out's positions with the axis taken
// out, the three operands' strides collapsed as an elementwise op's (iter.h);
// each position reads the three components of both inputs through their axis
// strides, computes in the compute type (NOTE [ Compute types ]: float for
// the 16-bit floats, int64 wrapping for the integers) and writes three.
#pragma once
#include <gpuext/extension.h>

#include "../common/dispatch.h"
#include "../common/hd.h"
#include "../common/iter.h"
#include "../ops.h"

namespace gx::ops {

struct CrossIter {
  int ndim = 0;  // collapsed, innermost first (the axis removed)
  int64_t numel = 0;  // positions: out's elements / 3
  int64_t sizes[kMaxDims];
  int64_t strides[3][kMaxDims];  // bytes: [0] out, [1] self, [2] other
  int64_t axis_stride[3];        // bytes between components
  char* data[3];
  ScalarType dtype = kFloat32;
  int device = 0;

  // Byte offsets of position l (C order over out's shape without the axis).
  GX_HD void offsets(int64_t l, int64_t& o, int64_t& a, int64_t& b) const {
    o = a = b = 0;
    uint64_t rest = static_cast<uint64_t>(l);
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int d = 0; d < ndim; ++d) {
      const uint64_t size = static_cast<uint64_t>(sizes[d]);
      const int64_t k = static_cast<int64_t>(rest % size);
      rest /= size;
      o += k * strides[0][d];
      a += k * strides[1][d];
      b += k * strides[2][d];
    }
  }

  // The cross product at position l, computed in C.
  template <typename C> GX_HD void apply(int64_t l) const {
    int64_t o, a, b;
    offsets(l, o, a, b);
    const char* pa = data[1] + a;
    const char* pb = data[2] + b;
    const C a0 = load_as<C>(pa, dtype), a1 = load_as<C>(pa + axis_stride[1], dtype), a2 = load_as<C>(pa + 2 * axis_stride[1], dtype);
    const C b0 = load_as<C>(pb, dtype), b1 = load_as<C>(pb + axis_stride[2], dtype), b2 = load_as<C>(pb + 2 * axis_stride[2], dtype);
    char* po = data[0] + o;
    if constexpr (std::is_integral_v<C>) {
      store_as(po, dtype, wrap_sub(wrap_mul(a1, b2), wrap_mul(a2, b1)));
      store_as(po + axis_stride[0], dtype, wrap_sub(wrap_mul(a2, b0), wrap_mul(a0, b2)));
      store_as(po + 2 * axis_stride[0], dtype, wrap_sub(wrap_mul(a0, b1), wrap_mul(a1, b0)));
    } else {
      store_as(po, dtype, a1 * b2 - a2 * b1);
      store_as(po + axis_stride[0], dtype, a2 * b0 - a0 * b2);
      store_as(po + 2 * axis_stride[0], dtype, a0 * b1 - a1 * b0);
    }
  }
};

// self, other and out: one shape (JS broadcasts the inputs with expand) and dtype, 3 along `axis`.
inline CrossIter make_cross(const Tensor& self, const Tensor& other, int64_t axis, const Tensor& out) {
  CrossIter it;
  const int64_t ndim = out.dim();
  GX_CHECK(ndim <= kMaxDims, "at most ", kMaxDims, " dimensions are supported, got ", ndim);
  GX_CHECK(axis >= 0 && axis < ndim && out.size(axis) == 3, "axis ", axis, " of the output of shape ", out.sizes(),
           " is not of size 3");
  const Tensor* ops[3] = {&out, &self, &other};
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxOperands][kMaxDims];
  for (int64_t d = 0; d < ndim; ++d) sizes[d] = d == axis ? 1 : out.size(d);
  for (int k = 0; k < 3; ++k) {
    const Tensor& t = *ops[k];
    GX_CHECK(t.dim() == ndim, "operand of shape ", t.sizes(), " does not match the output's shape ", out.sizes());
    GX_CHECK(t.dtype() == out.dtype(), "operands of dtypes ", t.dtype(), " and ", out.dtype());
    GX_CHECK(t.device() == out.device(), "input on ", t.device(), " but output on ", out.device());
    const int64_t item = itemsize(t.dtype());
    const IntArrayRef sz = t.sizes(), st = t.strides();
    for (int64_t d = 0; d < ndim; ++d) {
      GX_CHECK(sz[d] == out.size(d), "operand of shape ", sz, " does not match the output's shape ", out.sizes());
      strides[k][d] = st[d] * item;
    }
    it.axis_stride[k] = st[axis] * item;
    it.data[k] = static_cast<char*>(t.data_ptr());
  }
  it.numel = out.numel() / 3;
  it.dtype = out.dtype();
  it.device = out.device().index;
  it.ndim = collapse(static_cast<int>(ndim), sizes, 3, strides);
  for (int d = 0; d < it.ndim; ++d) {
    it.sizes[d] = sizes[d];
    for (int k = 0; k < 3; ++k) it.strides[k][d] = strides[k][d];
  }
  return it;
}

}  // namespace gx::ops
