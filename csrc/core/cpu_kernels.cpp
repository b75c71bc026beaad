#include "core/cpu_kernels.h"

#include <cstring>

#include "base/error.h"
#include "base/linspace_points.h"
#include "gpuext/float_to_int.h"
#include "gpuext/half_types.h"
#include "gpuext/parallel.h"

namespace gx::core::cpu {
namespace {

// An odometer over the C-order index space of `l`, started at linear index
// `start` (one division per dimension there, none per element after).
struct Odometer {
  const Layout& l;
  int64_t idx[kMaxDims] = {};
  int64_t off = 0;

  Odometer(const Layout& layout, int64_t start) : l(layout) {
    for (int d = l.ndim - 1; d >= 0; --d) {
      idx[d] = start % l.sizes[d];
      start /= l.sizes[d];
      off += idx[d] * l.strides[d];
    }
  }
  void next() {
    for (int d = l.ndim - 1; d >= 0; --d) {
      if (++idx[d] < l.sizes[d]) {
        off += l.strides[d];
        return;
      }
      off -= (l.sizes[d] - 1) * l.strides[d];
      idx[d] = 0;
    }
  }
};

// NOTE [ Threads in the core's kernels ]
// fill (ones/zeros/full), copies (contiguous, to, clone) and arange/linspace
// split their index range over gx::parallel_for in chunks of at least
// kDefaultGrain elements: each chunk writes its own elements, so the result
// does not depend on the thread count, and a small tensor stays on the
// calling thread. Page faults of a fresh buffer are taken in parallel too.
template <typename F>
void for_chunks(int64_t numel, F&& f) {
  parallel_for(0, numel, kDefaultGrain, f);
}

template <typename W>
void copy_words(W* dst, const Layout& dl, const W* src, const Layout& sl, int64_t numel) {
  const bool dst_contiguous = layout_is_contiguous(dl), src_contiguous = layout_is_contiguous(sl);
  for_chunks(numel, [&](int64_t b, int64_t e) {
    if (dst_contiguous) {
      Odometer so(sl, b);
      for (int64_t i = b; i < e; ++i, so.next()) dst[i] = src[so.off];
    } else if (src_contiguous) {
      Odometer d(dl, b);
      for (int64_t i = b; i < e; ++i, d.next()) dst[d.off] = src[i];
    } else {
      // Two odometers in step: gather source offsets into the destination walk.
      Odometer d(dl, b), so(sl, b);
      for (int64_t i = b; i < e; ++i, d.next(), so.next()) dst[d.off] = src[so.off];
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
  GX_CORE_INTERNAL_ASSERT(false, "unsupported item size");
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
    // NOTE [ Floats out of an integer's range ] (gpuext/float_to_int.h): the CUDA kernels' conversion too.
    case DType::Int8: static_cast<int8_t*>(dst)[i] = float_to_int<int8_t>(v); return;
    case DType::Int16: static_cast<int16_t*>(dst)[i] = float_to_int<int16_t>(v); return;
    case DType::Int32: static_cast<int32_t*>(dst)[i] = float_to_int<int32_t>(v); return;
    case DType::Int64: static_cast<int64_t*>(dst)[i] = float_to_int<int64_t>(v); return;
    case DType::UInt8: static_cast<uint8_t*>(dst)[i] = float_to_int<uint8_t>(v); return;
    case DType::Bool: static_cast<bool*>(dst)[i] = v != 0.0; return;
  }
}

}  // namespace

void strided_copy(void* dst, const Layout& dst_layout, const void* src, const Layout& src_layout,
                  size_t itemsize, int64_t numel) {
  if (numel == 0) return;
  if (layout_is_contiguous(dst_layout) && layout_is_contiguous(src_layout)) {
    // Overlapping buffers (a copy between views of one storage) keep one
    // memmove: chunks of it on several threads could read what another wrote.
    char* d = static_cast<char*>(dst);
    const char* sp = static_cast<const char*>(src);
    const size_t bytes = static_cast<size_t>(numel) * itemsize;
    if (d + bytes <= sp || sp + bytes <= d) {
      for_chunks(numel, [&](int64_t b, int64_t e) {
        std::memcpy(d + b * itemsize, sp + b * itemsize, static_cast<size_t>(e - b) * itemsize);
      });
    } else {
      std::memmove(dst, src, bytes);
    }
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
    const bool contiguous = layout_is_contiguous(layout);
    for_chunks(numel, [&](int64_t b, int64_t e) {
      if (contiguous) {
        for (int64_t i = b; i < e; ++i) p[i] = value;  // vectorized
        return;
      }
      Odometer o(layout, b);
      for (int64_t i = b; i < e; ++i, o.next()) p[o.off] = value;
    });
  });
}

void affine(void* dst, DType dtype, int64_t n, double start, double step) {
  for_chunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) store(dst, dtype, i, start + static_cast<double>(i) * step);
  });
}

// As the CUDA kernel: in uint64, where overflow is defined (the caller checked every value fits).
void affine_int64(int64_t* dst, int64_t n, int64_t start, int64_t step) {
  for_chunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      dst[i] = static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(step));
    }
  });
}

// float16 and bfloat16 rounding for linspace's 16-bit arithmetic (NOTE [ Linspace as torch computes it ]).
struct RoundHalf {
  float operator()(float f) const { return static_cast<float>(Half(f)); }
};
struct RoundBFloat16 {
  float operator()(float f) const { return static_cast<float>(BFloat16(f)); }
};

template <typename T, typename Points, typename Store>
void linspace_points(T* dst, int64_t n, const Points& points, Store store_point) {
  for_chunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = store_point(points(i));
  });
}

void linspace(void* dst, DType dtype, int64_t n, double start, double end) {
  using namespace linspace;
  switch (dtype) {
    case DType::Float32:
      return linspace_points(static_cast<float*>(dst), n, FloatPoints(start, end, n), [](float v) { return v; });
    case DType::Float16:
      return linspace_points(static_cast<uint16_t*>(dst), n, SixteenBitPoints<RoundHalf>(start, end, n),
                             [](float v) { return Half(v).x; });
    case DType::BFloat16:
      return linspace_points(static_cast<uint16_t*>(dst), n, SixteenBitPoints<RoundBFloat16>(start, end, n),
                             [](float v) { return BFloat16(v).x; });
    default: {
      const DoublePoints points(start, end, n);
      for_chunks(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) store(dst, dtype, i, points(i));
      });
    }
  }
}

}  // namespace gx::core::cpu
