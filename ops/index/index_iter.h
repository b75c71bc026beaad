// gather and scatter (ops/op-list.js has their schemas; lib/ops/indexing/indexing.ts
// calls them, and builds index_select and take on gather).
//
//   gather(Tensor self, int axis, Tensor index, bool wrap, Tensor out) -> ()
//     out[i][j][k] = self[i][index[i][j][k]][k]  (axis 1); out has index's shape.
//   scatter(Tensor self, int axis, Tensor index, Tensor src, int reduce) -> ()
//     self[i][index[i][j][k]][k] = src[i][j][k]   (reduce 0: assign)
//                                += src[i][j][k]  (reduce 1: add)
//     in place (JS copies the input into a new tensor first).
//
// NOTE [ Walking an index ]
// Both ops walk the index tensor's shape. At each position three operands
// are read or written: the index itself, the tensor walked at the same
// position (gather's out, scatter's src, which may be larger than index in
// every dimension) and the tensor indexed along `axis` (gather's self,
// scatter's self), whose stride along axis is taken out of the walk and
// applied to the index's value instead. The three stride lists are collapsed
// as an elementwise op's (iter.h), so a contiguous gather walks one
// dimension. Index values are int32 or int64; a value outside [0, size)
// (with `wrap`, [-size, size), negatives counting from the end, as take
// does) is an error naming the value, the axis and its size: the CPU throws
// before writing past it, a CUDA kernel skips it and records it, and the op
// reads the record back (a sync) and throws.
#pragma once
#include <gpuext/extension.h>

#include <stdexcept>
#include <type_traits>

#include "../common/hd.h"
#include "../common/iter.h"
#include "../ops.h"

namespace gx::ops {

struct IndexIter {
  int ndim = 0;  // collapsed, innermost first
  int64_t numel = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[3][kMaxDims];  // bytes: [0] index, [1] walked, [2] indexed (0 along axis)
  const char* index = nullptr;
  char* walked = nullptr;
  char* indexed = nullptr;
  int64_t axis_stride = 0;  // bytes per step of the index's value in the indexed tensor
  int64_t axis_size = 1;
  int64_t axis = 0;
  bool wrap = false;
  ScalarType index_dtype = kInt64;
  int device = 0;

  // Fast 32-bit division by sizes[d] (PyTorch's IntDivider): q = (umulhi(n,
  // magic) + n) >> shift, exact for n < 2^31, which the 32-bit path ensures.
  uint32_t magic[kMaxDims];
  uint32_t shift[kMaxDims];

  // Byte offsets of position l (C order over index's shape) in the three
  // operands. I is the unsigned type the position is divided in: uint32_t
  // when every position fits (then by multiplication: see magic), else
  // uint64_t. The outermost dimension needs no division.
  template <typename I = uint64_t> GX_HD void offsets(I l, int64_t& i, int64_t& w, int64_t& x) const {
    i = w = x = 0;
    I rest = l;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int d = 0; d + 1 < ndim; ++d) {
      I q;
      if constexpr (std::is_same_v<I, uint32_t>) {
#if defined(__CUDA_ARCH__)
        q = (__umulhi(rest, magic[d]) + rest) >> shift[d];
#else
        q = static_cast<uint32_t>(((static_cast<uint64_t>(rest) * magic[d]) >> 32) + rest) >> shift[d];
#endif
      } else {
        q = rest / static_cast<I>(sizes[d]);
      }
      const int64_t k = static_cast<int64_t>(rest - q * static_cast<I>(sizes[d]));
      rest = q;
      i += k * strides[0][d];
      w += k * strides[1][d];
      x += k * strides[2][d];
    }
    if (ndim > 0) {
      const int64_t k = static_cast<int64_t>(rest);
      i += k * strides[0][ndim - 1];
      w += k * strides[1][ndim - 1];
      x += k * strides[2][ndim - 1];
    }
  }

  // The index value at byte offset i, made non-negative where wrap allows;
  // out of range values are returned as they are (in_range says).
  GX_HD int64_t value(int64_t i) const {
    int64_t k = index_dtype == kInt32 ? static_cast<int64_t>(*reinterpret_cast<const int32_t*>(index + i))
                                      : *reinterpret_cast<const int64_t*>(index + i);
    if (wrap && k < 0) k += axis_size;
    return k;
  }
  GX_HD bool in_range(int64_t k) const { return k >= 0 && k < axis_size; }
};

// The error for an out of range index value k (as value() returned it).
[[noreturn]] inline void throw_out_of_range(const IndexIter& it, int64_t k) {
  if (it.wrap && k < 0) k -= it.axis_size;  // as the caller wrote it
  GX_CHECK(false, "index ", k, " is out of range for dimension ", it.axis, " of size ", it.axis_size);
  throw std::logic_error("unreachable");
}

// `walked` must cover index's shape in every dimension; `indexed` in every
// dimension but axis; both of index's rank (a 0-d index goes with 0-d tensors).
inline IndexIter make_index_iter(const Tensor& index, int64_t axis, const Tensor& walked, const Tensor& indexed,
                                 bool wrap) {
  IndexIter it;
  const int64_t ndim = index.dim();
  GX_CHECK(ndim <= kMaxDims, "at most ", kMaxDims, " dimensions are supported, got ", ndim);
  GX_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32, "index must be int64 or int32, got ", index.dtype());
  GX_CHECK(walked.dim() == ndim && indexed.dim() == ndim, "index (", index.sizes(), "), ", walked.sizes(), " and ",
           indexed.sizes(), " must have the same number of dimensions");
  GX_CHECK(axis >= 0 && axis < (ndim > 0 ? ndim : 1), "dimension ", axis, " out of range for ", ndim, "-d tensors");
  GX_CHECK(walked.device() == index.device() && indexed.device() == index.device(), "index on ", index.device(),
           " but the tensors on ", walked.device(), " and ", indexed.device());
  GX_CHECK(walked.dtype() == indexed.dtype(), "dtypes ", walked.dtype(), " and ", indexed.dtype(), " differ");
  const IntArrayRef is = index.sizes(), ws = walked.sizes(), xs = indexed.sizes();
  const int64_t item = itemsize(walked.dtype()), iitem = itemsize(index.dtype());
  int64_t sizes[kMaxDims], st[kMaxOperands][kMaxDims];
  for (int64_t d = 0; d < ndim; ++d) {
    GX_CHECK(ws[d] >= is[d] && (d == axis || xs[d] >= is[d]), "index of shape ", is, " does not fit ", ws, " and ",
             xs, " (dimension ", d, ")");
    sizes[d] = is[d];
    st[0][d] = index.strides()[d] * iitem;
    st[1][d] = walked.strides()[d] * item;
    st[2][d] = d == axis ? 0 : indexed.strides()[d] * item;
  }
  it.ndim = collapse(static_cast<int>(ndim), sizes, 3, st);
  for (int d = 0; d < it.ndim; ++d) {
    it.sizes[d] = sizes[d];
    for (int k = 0; k < 3; ++k) it.strides[k][d] = st[k][d];
    // The divider (meaningful for sizes up to 2^31, all the 32-bit path sees).
    if (sizes[d] <= 0) continue;  // an empty tensor: no kernel runs
    uint32_t sh = 0;
    while (sh < 32 && (uint64_t(1) << sh) < static_cast<uint64_t>(sizes[d])) ++sh;
    it.shift[d] = sh;
    it.magic[d] = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << sh) - static_cast<uint64_t>(sizes[d]))) /
                                        static_cast<uint64_t>(sizes[d]) + 1);
  }
  it.numel = index.numel();
  it.index = static_cast<const char*>(index.data_ptr());
  it.walked = static_cast<char*>(walked.data_ptr());
  it.indexed = static_cast<char*>(indexed.data_ptr());
  it.axis = axis;
  it.axis_size = ndim > 0 ? xs[axis] : 1;
  it.axis_stride = ndim > 0 ? indexed.strides()[axis] * item : 0;
  it.wrap = wrap;
  it.index_dtype = index.dtype();
  it.device = index.device().index;
  return it;
}

// Copies one element of `size` bytes (gather and scatter move elements as they are).
GX_HD void copy_element(char* dst, const char* src, int64_t size) {
  switch (size) {
    case 1: *reinterpret_cast<uint8_t*>(dst) = *reinterpret_cast<const uint8_t*>(src); break;
    case 2: *reinterpret_cast<uint16_t*>(dst) = *reinterpret_cast<const uint16_t*>(src); break;
    case 4: *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(src); break;
    default: *reinterpret_cast<uint64_t*>(dst) = *reinterpret_cast<const uint64_t*>(src); break;
  }
}

constexpr int64_t kScatterAssign = 0;
constexpr int64_t kScatterAdd = 1;

}  // namespace gx::ops
