// nonzero and masked_select (ops/op-list.js has their schemas): which
// elements to keep, in C order, and where they are.
//
// NOTE [ Compaction ]
// Both ops keep some elements of a tensor in C order, and only the data says
// how many: they count first, allocate the result, then write. The CPU does
// two passes. CUDA splits the elements into segments of kSegment, one per
// warp: a kernel counts each segment's kept elements (a ballot per 32), one
// block scans the counts into offsets and the total, the host reads the
// total back (the one sync, as torch's nonzero), allocates, and a second
// kernel has each warp walk its segment again, 32 elements at a time, each
// kept one written at its offset plus the kept ones before it in the warp
// (the ballot's popcount): consecutive elements go to consecutive places,
// so the writes of a warp are coalesced and the order is C order.
#pragma once
#include <gpuext/extension.h>

#include "../common/hd.h"
#include "../ops.h"
#include "../common/iter.h"

namespace gx::ops {

// One or two operands of one shape (self, and masked_select's mask), collapsed.
struct SelectWalk {
  int ndim = 0;  // innermost first
  int64_t numel = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[2][kMaxDims];  // bytes
  const char* data[2] = {nullptr, nullptr};
  ScalarType dtype[2] = {kBool, kBool};
  bool contiguous = false;  // every operand walked with stride itemsize in one dimension
  int64_t item = 1;         // self's element size

  template <typename I> GX_HD void offsets(I l, int64_t& a, int64_t& b) const {
    a = b = 0;
    I rest = l;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int d = 0; d < ndim; ++d) {
      I c;
      if (d + 1 < ndim) {
        const I size = static_cast<I>(sizes[d]);
        c = rest % size;
        rest /= size;
      } else {
        c = rest;
      }
      a += static_cast<int64_t>(c) * strides[0][d];
      b += static_cast<int64_t>(c) * strides[1][d];
    }
  }
};

// `second` may be null (nonzero walks self only); it has self's shape.
inline SelectWalk make_select_walk(const Tensor& self, const Tensor* second) {
  SelectWalk w;
  const int64_t ndim = self.dim();
  GX_CHECK(ndim <= kMaxDims, "at most ", kMaxDims, " dimensions are supported, got ", ndim);
  int64_t sizes[kMaxDims], st[kMaxOperands][kMaxDims];
  const int nops = second != nullptr ? 2 : 1;
  for (int64_t d = 0; d < ndim; ++d) {
    sizes[d] = self.sizes()[d];
    st[0][d] = self.strides()[d] * itemsize(self.dtype());
    st[1][d] = second != nullptr ? second->strides()[d] * itemsize(second->dtype()) : 0;
  }
  w.ndim = collapse(static_cast<int>(ndim), sizes, nops, st);
  for (int d = 0; d < w.ndim; ++d) {
    w.sizes[d] = sizes[d];
    w.strides[0][d] = st[0][d];
    w.strides[1][d] = nops == 2 ? st[1][d] : 0;
  }
  w.numel = self.numel();
  w.data[0] = static_cast<const char*>(self.data_ptr());
  w.dtype[0] = self.dtype();
  w.item = itemsize(self.dtype());
  if (second != nullptr) {
    GX_CHECK(second->sizes() == self.sizes(), "the mask's shape ", second->sizes(), " is not self's ", self.sizes());
    GX_CHECK(second->device() == self.device(), "the mask is on ", second->device(), " but self on ", self.device());
    w.data[1] = static_cast<const char*>(second->data_ptr());
    w.dtype[1] = second->dtype();
  }
  w.contiguous = w.ndim <= 1;
  if (w.ndim == 1) {
    w.contiguous = w.strides[0][0] == itemsize(w.dtype[0]) && (nops == 1 || w.strides[1][0] == itemsize(w.dtype[1]));
  }
  if (w.ndim == 0) {  // one element (or none)
    w.ndim = 1;
    w.sizes[0] = w.numel;
    w.strides[0][0] = itemsize(w.dtype[0]);
    w.strides[1][0] = nops == 2 ? itemsize(w.dtype[1]) : 0;
  }
  return w;
}

// The multi-index of element l (C order) of `shape`, written as int64 to out[0 .. ndim).
template <typename I> GX_HD void unravel_to(I l, const int64_t* shape, int ndim, int64_t* out) {
  for (int d = ndim - 1; d >= 0; --d) {
    if (d == 0) {
      out[0] = static_cast<int64_t>(l);
      break;
    }
    const I size = static_cast<I>(shape[d]);
    out[d] = static_cast<int64_t>(l % size);
    l /= size;
  }
}

}  // namespace gx::ops
