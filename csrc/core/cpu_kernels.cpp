#include "core/cpu_kernels.h"

#include <cstring>

#include "core/error.h"
#include "gpuext/half_types.h"

namespace gx::cpu {
namespace {

// Walks the C-order index space of `l` like an odometer, calling f(offset)
// with each element's offset: no division per element.
template <typename F>
void for_each_offset(const Layout& l, int64_t numel, F&& f) {
  int64_t idx[kMaxDims] = {};
  int64_t off = 0;
  for (int64_t i = 0; i < numel; ++i) {
    f(i, off);
    for (int d = l.ndim - 1; d >= 0; --d) {
      if (++idx[d] < l.sizes[d]) {
        off += l.strides[d];
        break;
      }
      off -= (l.sizes[d] - 1) * l.strides[d];
      idx[d] = 0;
    }
  }
}

template <typename W>
void copy_words(W* dst, const Layout& dl, const W* src, const Layout& sl, int64_t numel) {
  if (layout_is_contiguous(dl)) {
    for_each_offset(sl, numel, [&](int64_t i, int64_t so) { dst[i] = src[so]; });
    return;
  }
  // Two odometers in step: gather source offsets into the destination walk.
  int64_t sidx[kMaxDims] = {};
  int64_t soff = 0;
  for_each_offset(dl, numel, [&](int64_t, int64_t doff) {
    dst[doff] = src[soff];
    for (int d = sl.ndim - 1; d >= 0; --d) {
      if (++sidx[d] < sl.sizes[d]) {
        soff += sl.strides[d];
        break;
      }
      soff -= (sl.sizes[d] - 1) * sl.strides[d];
      sidx[d] = 0;
    }
  });
}

template <typename F>
void dispatch_word(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
  }
  GX_INTERNAL_ASSERT(false, "unsupported item size");
}

// Writes double v into dst[i] converted to `dtype`.
void store(void* dst, DType dtype, int64_t i, double v) {
  switch (dtype) {
    case DType::Float32: static_cast<float*>(dst)[i] = static_cast<float>(v); return;
    case DType::Float64: static_cast<double*>(dst)[i] = v; return;
    case DType::Float16:
      static_cast<uint16_t*>(dst)[i] = Half(static_cast<float>(v)).x;
      return;
    case DType::BFloat16:
      static_cast<uint16_t*>(dst)[i] = BFloat16(static_cast<float>(v)).x;
      return;
    case DType::Int8: static_cast<int8_t*>(dst)[i] = static_cast<int8_t>(v); return;
    case DType::Int16: static_cast<int16_t*>(dst)[i] = static_cast<int16_t>(v); return;
    case DType::Int32: static_cast<int32_t*>(dst)[i] = static_cast<int32_t>(v); return;
    case DType::Int64: static_cast<int64_t*>(dst)[i] = static_cast<int64_t>(v); return;
    case DType::UInt8: static_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>(v); return;
    case DType::Bool: static_cast<bool*>(dst)[i] = v != 0.0; return;
  }
}

}  // namespace

void strided_copy(void* dst, const Layout& dst_layout, const void* src, const Layout& src_layout,
                  size_t itemsize, int64_t numel) {
  if (numel == 0) return;
  if (layout_is_contiguous(dst_layout) && layout_is_contiguous(src_layout)) {
    std::memmove(dst, src, static_cast<size_t>(numel) * itemsize);
    return;
  }
  dispatch_word(itemsize, [&](auto w) {
    using W = decltype(w);
    copy_words(static_cast<W*>(dst), dst_layout, static_cast<const W*>(src), src_layout, numel);
  });
}

void fill(void* dst, const Layout& layout, size_t itemsize, uint64_t bits, int64_t numel) {
  dispatch_word(itemsize, [&](auto w) {
    using W = decltype(w);
    W* p = static_cast<W*>(dst);
    const W value = static_cast<W>(bits);
    for_each_offset(layout, numel, [&](int64_t, int64_t off) { p[off] = value; });
  });
}

void affine(void* dst, DType dtype, int64_t n, double start, double step) {
  for (int64_t i = 0; i < n; ++i) store(dst, dtype, i, start + static_cast<double>(i) * step);
}

void linspace(void* dst, DType dtype, int64_t n, double start, double end) {
  const double step = n > 1 ? (end - start) / static_cast<double>(n - 1) : 0.0;
  const int64_t half = n / 2;
  for (int64_t i = 0; i < n; ++i) {
    const double v = (i < half || n == 1) ? start + step * static_cast<double>(i)
                                          : end - step * static_cast<double>(n - 1 - i);
    store(dst, dtype, i, v);
  }
}

}  // namespace gx::cpu
