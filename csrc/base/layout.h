// A strided layout in elements, small enough to pass to a kernel by value.
#pragma once
#include <cstdint>

#include "gpuext/limits.h"

namespace gx::core {

// kMaxDims: gx::kMaxDims of gpuext/limits.h (checked at tensor creation).

struct Layout {
  int32_t ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

// Element offset of the linear (C-order) index `i` within `l`.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline int64_t layout_offset(const Layout& l, int64_t i) {
  int64_t off = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    const int64_t s = l.sizes[d];
    off += (i % s) * l.strides[d];
    i /= s;
  }
  return off;
}

// The C-order contiguous layout of `ndim` sizes (ndim <= kMaxDims, checked by the caller).
inline Layout contiguous_layout(const int64_t* sizes, int32_t ndim) {
  Layout l;
  l.ndim = ndim;
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    l.sizes[d] = sizes[d];
    l.strides[d] = stride;
    stride *= sizes[d] > 0 ? sizes[d] : 1;
  }
  return l;
}

// C-order contiguous (size-1 dims may have any stride, and a tensor with no
// elements is contiguous, as in PyTorch).
inline bool layout_is_contiguous(const Layout& l) {
  for (int d = 0; d < l.ndim; ++d) {
    if (l.sizes[d] == 0) return true;
  }
  int64_t expected = 1;
  for (int d = l.ndim - 1; d >= 0; --d) {
    if (l.sizes[d] != 1 && l.strides[d] != expected) return false;
    expected *= l.sizes[d];
  }
  return true;
}

}  // namespace gx::core
