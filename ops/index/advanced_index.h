// Advanced indexing (x[idx0, :, idx1], x[mask] after nonzero) and its write,
// index_put: ops/op-list.js has their schemas; lib/ops/indexing/index-expr.ts plans
// the views.
//
// NOTE [ Advanced indexing ]
// JS turns an index expression into views of one shape R, the result's: the
// indexed tensor `self` restrided so that its indexed dimensions are gone and
// the broadcast index dimensions have stride 0, and each index tensor
// restrided so that the other dimensions have stride 0. Position p of R then
// reads (or, for index_put, writes) self at
//   p's offset in the restrided self + sum_k indices[k][p] * strides[k]
// with strides[k] the indexed dimension's stride and sizes[k] its size
// (negative values count from the end; one out of [-size, size) is an error
// naming dims[k], the dimension as the user counts it). So the kernels are
// elementwise over R with 2 + K operands (out or values, self, K indices),
// their dimensions collapsed as an elementwise op's (common/iter.h), and
// never look at where the advanced dimensions went (PyTorch's placement rule
// is JS's). Out of range values: the CPU throws before touching memory past
// them; CUDA skips and records them (index_launch.cuh).
#pragma once
#include <gpuext/extension.h>

#include <stdexcept>
#include <vector>

#include "../common/hd.h"
#include "../ops.h"
#include "../common/iter.h"

namespace gx::ops {

struct AdvIter {
  int ndim = 0;  // collapsed, innermost first
  int nidx = 0;
  int device = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[2 + kMaxDims][kMaxDims];  // bytes: [0] out / values, [1] self, [2 + k] index k
  char* data[2];                            // out / values, self
  const char* idx[kMaxDims];
  ScalarType idx_dtype[kMaxDims];
  int64_t idx_size[kMaxDims];
  int64_t idx_stride[kMaxDims];  // bytes of self per unit of index k's value

  // Byte offsets of position l (C order over R) in out / values and self,
  // with the index values added to self's; false (and k, the index, and
  // v, its value) when a value is out of range.
  template <typename I> GX_HD bool offsets(I l, int64_t& o, int64_t& s, int& bad_k, int64_t& bad_v) const {
    int64_t off[2 + kMaxDims];
    const int nops = 2 + nidx;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int k = 0; k < nops; ++k) off[k] = 0;
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
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
      for (int k = 0; k < nops; ++k) off[k] += static_cast<int64_t>(c) * strides[k][d];
    }
    o = off[0];
    s = off[1];
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int k = 0; k < nidx; ++k) {
      const char* p = idx[k] + off[2 + k];
      int64_t v = idx_dtype[k] == kInt32 ? static_cast<int64_t>(*reinterpret_cast<const int32_t*>(p))
                                         : *reinterpret_cast<const int64_t*>(p);
      const int64_t n = idx_size[k];
      if (v < -n || v >= n) {
        bad_k = k;
        bad_v = v;
        return false;
      }
      if (v < 0) v += n;
      s += v * idx_stride[k];
    }
    return true;
  }
};


// `walked` (out, or index_put's values) and self and every index have the
// same shape (JS's views); sizes / strides / dims: one per index.
inline AdvIter make_adv_iter(const Tensor& walked, const Tensor& self, const std::vector<Tensor>& indices,
                             IntArrayRef sizes, IntArrayRef strides, IntArrayRef dims) {
  AdvIter it;
  const int64_t ndim = walked.dim();
  const int64_t nidx = static_cast<int64_t>(indices.size());
  GX_CHECK(ndim <= kMaxDims, "at most ", kMaxDims, " dimensions are supported, got ", ndim);
  GX_CHECK(nidx >= 1 && nidx <= kMaxDims, "1 to ", kMaxDims, " index tensors, got ", nidx);
  GX_CHECK(static_cast<int64_t>(sizes.size()) == nidx && static_cast<int64_t>(strides.size()) == nidx &&
               static_cast<int64_t>(dims.size()) == nidx,
           "sizes, strides and dims need one entry per index");
  GX_CHECK(self.dtype() == walked.dtype(), "dtypes ", self.dtype(), " and ", walked.dtype(), " differ");
  GX_CHECK(self.sizes() == walked.sizes(), "self's view ", self.sizes(), " and ", walked.sizes(), " differ in shape");
  GX_CHECK(self.device() == walked.device(), "self on ", self.device(), " but the other tensor on ", walked.device());
  const int64_t item = itemsize(self.dtype());
  int64_t sz[kMaxDims];
  int64_t st[2 + kMaxDims][kMaxDims];
  for (int64_t d = 0; d < ndim; ++d) {
    sz[d] = walked.sizes()[d];
    st[0][d] = walked.strides()[d] * item;
    st[1][d] = self.strides()[d] * item;
  }
  for (int64_t k = 0; k < nidx; ++k) {
    const Tensor& t = indices[static_cast<size_t>(k)];
    GX_CHECK(t.dtype() == kInt64 || t.dtype() == kInt32, "index ", k, " must be int64 or int32, got ", t.dtype());
    GX_CHECK(t.sizes() == walked.sizes(), "index ", k, " of shape ", t.sizes(), " is not a view of shape ", walked.sizes());
    GX_CHECK(t.device() == self.device(), "index ", k, " on ", t.device(), " but self on ", self.device());
    const int64_t ii = itemsize(t.dtype());
    for (int64_t d = 0; d < ndim; ++d) st[2 + k][d] = t.strides()[d] * ii;
    it.idx[k] = static_cast<const char*>(t.data_ptr());
    it.idx_dtype[k] = t.dtype();
    it.idx_size[k] = sizes[k];
    it.idx_stride[k] = strides[k] * item;
  }
  it.nidx = static_cast<int>(nidx);
  it.ndim = collapse<2 + kMaxDims>(static_cast<int>(ndim), sz, 2 + it.nidx, st);
  for (int d = 0; d < it.ndim; ++d) {
    it.sizes[d] = sz[d];
    for (int k = 0; k < 2 + it.nidx; ++k) it.strides[k][d] = st[k][d];
  }
  it.numel = walked.numel();
  it.data[0] = static_cast<char*>(walked.data_ptr());
  it.data[1] = static_cast<char*>(self.data_ptr());
  it.device = self.device().index;
  return it;
}

[[noreturn]] inline void throw_adv_out_of_range(IntArrayRef sizes, IntArrayRef dims, int k, int64_t v) {
  GX_CHECK(false, "index ", v, " is out of range for dimension ", dims[k], " of size ", sizes[k]);
  throw std::logic_error("unreachable");
}

}  // namespace gx::ops
