// Host-side setup (and the line walk both devices share) for the ops that map
// each line of the input along one dimension to the same line of an output of
// the same shape: softmax, log_softmax (ops/softmax/) and cumsum (ops/scan/).
//
// NOTE [ Ops along one dimension ]
// The input's dimensions split into the one the op runs along (`dim`) and the
// others ("kept"), which are collapsed as a reduction's kept dims are (NOTE
// [ Reductions ] in iter.h), with the input's and the output's byte strides.
// Line l (C order over the kept dims) starts at line_offsets(it, l) in both
// tensors; its `len` elements are `in_step` / `out_step` bytes apart. A 0-d
// input is one line of one element. The fast paths look for rows(): every
// line contiguous in both tensors and the lines evenly spaced (a contiguous
// tensor along its last dim, or a row-sliced view of one).
#pragma once
#include "iter.h"

namespace gx::ops {

struct DimIter {
  int kept_ndim = 0;  // collapsed kept dims, innermost first (0: one line)
  int64_t lines = 1;
  int64_t kept_sizes[kMaxDims];
  int64_t kept_in_strides[kMaxDims];   // input bytes per step of a kept dim
  int64_t kept_out_strides[kMaxDims];  // output bytes per step of a kept dim
  int64_t len = 1;                     // elements per line
  int64_t in_step = 0, out_step = 0;   // bytes between a line's elements
  const char* in = nullptr;
  char* out = nullptr;
  ScalarType in_dtype = kFloat32;
  ScalarType out_dtype = kFloat32;
  int device = 0;

  int64_t numel() const { return lines * len; }
  // Every line contiguous in both tensors, and the lines evenly spaced.
  bool rows() const { return kept_ndim <= 1 && in_step == itemsize(in_dtype) && out_step == itemsize(out_dtype); }
  // Bytes between consecutive lines (rows() layouts).
  int64_t row_in_stride() const { return kept_ndim == 0 ? 0 : kept_in_strides[0]; }
  int64_t row_out_stride() const { return kept_ndim == 0 ? 0 : kept_out_strides[0]; }
};

// `dim`: in range for x (JS normalizes it; a 0-d x takes 0). `out` has x's shape.
inline DimIter make_dim_iter(const Tensor& x, int64_t dim, const Tensor& out) {
  DimIter it;
  const int64_t ndim = x.dim();
  GX_CHECK(ndim <= kMaxDims, "at most ", kMaxDims, " dimensions are supported, got ", ndim);
  GX_CHECK(dim >= 0 && dim < (ndim > 0 ? ndim : 1), "dimension ", dim, " out of range for an input of shape ", x.sizes());
  const IntArrayRef xs = x.sizes(), xst = x.strides(), os = out.sizes(), ost = out.strides();
  GX_CHECK(os == xs, "output of shape ", os, " does not match the input's shape ", xs);
  GX_CHECK(out.device() == x.device(), "input on ", x.device(), " but output on ", out.device());
  const int64_t in_item = itemsize(x.dtype()), out_item = itemsize(out.dtype());
  int64_t ksz[kMaxDims], kst[kMaxOperands][kMaxDims];  // outermost first; [0] input, [1] output
  int nk = 0;
  for (int64_t d = 0; d < ndim; ++d) {
    if (d == dim) continue;
    ksz[nk] = xs[d];
    kst[0][nk] = xst[d] * in_item;
    kst[1][nk] = ost[d] * out_item;
    ++nk;
  }
  it.kept_ndim = collapse(nk, ksz, 2, kst);
  for (int d = 0; d < it.kept_ndim; ++d) {
    it.kept_sizes[d] = ksz[d];
    it.kept_in_strides[d] = kst[0][d];
    it.kept_out_strides[d] = kst[1][d];
    it.lines *= ksz[d];
  }
  it.len = ndim > 0 ? xs[dim] : 1;
  // A line of one element has no step; call it contiguous.
  it.in_step = ndim > 0 && it.len > 1 ? xst[dim] * in_item : in_item;
  it.out_step = ndim > 0 && it.len > 1 ? ost[dim] * out_item : out_item;
  it.in = static_cast<const char*>(x.data_ptr());
  it.out = static_cast<char*>(out.data_ptr());
  it.in_dtype = x.dtype();
  it.out_dtype = out.dtype();
  it.device = x.device().index;
  return it;
}

// Byte offsets of line l's first element in the input and the output.
GX_HD void line_offsets(const DimIter& it, int64_t l, int64_t& in_off, int64_t& out_off) {
  in_off = 0;
  out_off = 0;
  uint64_t rest = static_cast<uint64_t>(l);
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int d = 0; d < it.kept_ndim; ++d) {
    const uint64_t size = static_cast<uint64_t>(it.kept_sizes[d]);
    const int64_t idx = static_cast<int64_t>(rest % size);
    rest /= size;
    in_off += idx * it.kept_in_strides[d];
    out_off += idx * it.kept_out_strides[d];
  }
}

// Calls f(in, out) with the start of every line, in C order (the CPU loops).
template <typename F> void for_each_line(const DimIter& it, F&& f) {
  int64_t counter[kMaxDims] = {0};
  const char* in = it.in;
  char* out = it.out;
  for (int64_t l = 0; l < it.lines; ++l) {
    f(in, out);
    for (int d = 0; d < it.kept_ndim; ++d) {
      in += it.kept_in_strides[d];
      out += it.kept_out_strides[d];
      if (++counter[d] < it.kept_sizes[d]) break;
      in -= it.kept_in_strides[d] * it.kept_sizes[d];
      out -= it.kept_out_strides[d] * it.kept_sizes[d];
      counter[d] = 0;
    }
  }
}

}  // namespace gx::ops
