// Host-side setup shared by the CPU and CUDA loops: how an elementwise op or
// a reduction walks its operands.
//
// NOTE [ Broadcasting in the kernels ]
// JS computes the broadcast shape, allocates the output with it (or checks the
// `out` the caller gave) and passes the inputs as they are. Here each input is
// aligned with the output's shape from the right; a dimension an input lacks,
// or has with size 1, gets byte stride 0. Then dimensions are collapsed: size-1
// dimensions go, and neighbours that every operand walks as one (outer stride
// == inner stride * inner size) merge. A contiguous add of any rank becomes one
// dimension; a row-vector broadcast over a matrix stays two. The loops index
// with these (size, byte stride) lists, innermost dimension first.
#pragma once
#include <gpuext/extension.h>

#include "hd.h"

namespace gx::ops {

// kMaxDims: gx::kMaxDims, the core's limit (gpuext/limits.h).
constexpr int kMaxOperands = 4;  // the output and up to three inputs

// itemsize, is_floating, is_integral: gpuext/tensor.h's, from the dtype list.

// A JS number operand: `f` for floating compute types, `i` for integer ones
// (JS passes both; see lib/ops/elementwise/elementwise.ts).
struct ScalarArg {
  double f = 0;
  int64_t i = 0;
};
template <typename C> C scalar_as(const ScalarArg& s) {
  if constexpr (std::is_same_v<C, bool>) return s.i != 0 || s.f != 0;
  else if constexpr (std::is_integral_v<C>) return static_cast<C>(s.i);
  else return static_cast<C>(s.f);
}

// The operands of one elementwise op. Operand 0 is the output.
struct ElementwiseIter {
  int ndim = 0;              // collapsed; at least 1
  int nops = 0;
  int device = 0;            // the CUDA device index (0 on the CPU)
  int64_t numel = 0;
  int64_t sizes[kMaxDims];   // innermost first
  int64_t strides[kMaxOperands][kMaxDims];  // bytes, innermost first; 0 where broadcast
  char* data[kMaxOperands];
  ScalarType dtype[kMaxOperands];
  bool is_scalar[kMaxOperands];  // a JS number: no data, no strides

  // One dimension walked with stride itemsize by every tensor operand.
  bool contiguous() const {
    if (ndim != 1) return false;
    for (int k = 0; k < nops; ++k)
      if (!is_scalar[k] && strides[k][0] != itemsize(dtype[k])) return false;
    return true;
  }
};

// Removes size-1 dimensions and merges neighbours walked as one. `sizes` and
// `strides` are outermost first on entry and innermost first on return.
// kCapacity: the most operands a caller passes (nops <= kCapacity).
template <int kCapacity = kMaxOperands>
inline int collapse(int ndim, int64_t* sizes, int nops, int64_t (*strides)[kMaxDims]) {
  int64_t s[kMaxDims];
  int64_t st[kCapacity][kMaxDims];
  int n = 0;
  for (int d = ndim - 1; d >= 0; --d) {  // innermost first
    if (sizes[d] == 1) continue;
    bool merge = n > 0;
    for (int k = 0; k < nops && merge; ++k) merge = strides[k][d] == st[k][n - 1] * s[n - 1];
    if (merge) {
      s[n - 1] *= sizes[d];
      continue;
    }
    s[n] = sizes[d];
    for (int k = 0; k < nops; ++k) st[k][n] = strides[k][d];
    ++n;
  }
  for (int d = 0; d < n; ++d) {
    sizes[d] = s[d];
    for (int k = 0; k < nops; ++k) strides[k][d] = st[k][d];
  }
  return n;
}

// Whether every tensor operand is contiguous with out's shape, on out's
// device: the iteration is then one dimension of numel elements, which the
// general path (make_elementwise) reaches after aligning and collapsing.
inline bool same_shape_contiguous(const Tensor& out, const Tensor* const* inputs, int nin) {
  if (!out.is_contiguous()) return false;
  const IntArrayRef osz = out.sizes();
  for (int k = 0; k < nin; ++k) {
    const Tensor* t = inputs[k];
    if (t != nullptr && (t->device() != out.device() || !(t->sizes() == osz) || !t->is_contiguous())) return false;
  }
  return true;
}

// The iteration of `out` = f(inputs...). A null input is a JS scalar.
// Every tensor input must broadcast to out's shape (JS has checked; this is
// the contract's second line, with the shapes in the message).
inline ElementwiseIter make_elementwise(const Tensor& out, const Tensor* const* inputs, int nin) {
  ElementwiseIter it;
  const int64_t ndim = out.dim();
  GX_CHECK(ndim <= kMaxDims, "at most ", kMaxDims, " dimensions are supported, got ", ndim);
  GX_INTERNAL_ASSERT(nin + 1 <= kMaxOperands, "too many operands");
  it.nops = nin + 1;
  it.numel = out.numel();
  it.device = out.device().index;
  // The common small call (a one-element op, same-shape contiguous operands):
  // the one dimension the general path ends with, with no strides to align or collapse.
  if (it.numel > 0 && same_shape_contiguous(out, inputs, nin)) {
    it.ndim = 1;
    it.sizes[0] = it.numel;
    for (int k = 0; k < it.nops; ++k) {
      const Tensor* t = k == 0 ? &out : inputs[k - 1];
      it.is_scalar[k] = t == nullptr;
      it.data[k] = t == nullptr ? nullptr : static_cast<char*>(t->data_ptr());
      it.dtype[k] = t == nullptr ? kFloat64 : t->dtype();
      it.strides[k][0] = t == nullptr ? 0 : itemsize(t->dtype());
    }
    return it;
  }
  const IntArrayRef osz = out.sizes();
  int64_t sizes[kMaxDims];
  for (int64_t d = 0; d < ndim; ++d) sizes[d] = osz[d];
  const auto fill = [&](int k, const Tensor& t) {
    const IntArrayRef sz = t.sizes(), st = t.strides();
    const int64_t lead = ndim - static_cast<int64_t>(sz.size());
    GX_CHECK(lead >= 0, "input of shape ", sz, " has more dimensions than the output's shape ", osz);
    const int64_t item = itemsize(t.dtype());
    for (int64_t d = 0; d < ndim; ++d) {
      if (d < lead) {
        it.strides[k][d] = 0;
        continue;
      }
      const int64_t s = sz[d - lead];
      GX_CHECK(s == osz[d] || s == 1, "input of shape ", sz, " does not broadcast to the output's shape ", osz);
      it.strides[k][d] = s == 1 ? 0 : st[d - lead] * item;
    }
    it.data[k] = static_cast<char*>(t.data_ptr());
    it.dtype[k] = t.dtype();
    it.is_scalar[k] = false;
  };
  fill(0, out);
  for (int k = 0; k < nin; ++k) {
    if (inputs[k] == nullptr) {
      for (int64_t d = 0; d < ndim; ++d) it.strides[k + 1][d] = 0;
      it.data[k + 1] = nullptr;
      it.dtype[k + 1] = kFloat64;
      it.is_scalar[k + 1] = true;
    } else {
      GX_CHECK(inputs[k]->device() == out.device(), "input on ", inputs[k]->device(), " but output on ", out.device());
      fill(k + 1, *inputs[k]);
    }
  }
  it.ndim = collapse(static_cast<int>(ndim), sizes, it.nops, it.strides);
  for (int d = 0; d < it.ndim; ++d) it.sizes[d] = sizes[d];
  if (it.ndim == 0) {  // one element (or a 0-d output)
    it.ndim = 1;
    it.sizes[0] = 1;
    for (int k = 0; k < it.nops; ++k) it.strides[k][0] = it.is_scalar[k] ? 0 : itemsize(it.dtype[k]);
  }
  return it;
}

// NOTE [ Reductions ]
// A reduction splits the input's dimensions into kept ones (the output's) and
// reduced ones. Each output element folds the input elements of its reduced
// sub-tensor in C order of the reduced dimensions, so an arg-reduction's
// running counter is the index PyTorch returns (along the one dimension, or
// into the flattened tensor). Both groups are collapsed independently.
struct ReduceIter {
  int out_ndim = 0;  // collapsed kept dims, innermost first (0 for one output)
  int64_t out_numel = 1;
  int64_t out_sizes[kMaxDims];
  int64_t out_in_strides[kMaxDims];  // input bytes per step of a kept dim
  int64_t out_strides[kMaxDims];     // output bytes per step of a kept dim
  int red_ndim = 0;  // collapsed reduced dims, innermost first
  int64_t red_numel = 1;
  int64_t red_sizes[kMaxDims];
  int64_t red_strides[kMaxDims];  // input bytes
  const char* in = nullptr;
  char* out = nullptr;
  int device = 0;
  ScalarType in_dtype = kFloat32;
  ScalarType out_dtype = kFloat32;

  // The input is one contiguous run reduced to a single output.
  bool contiguous_full() const {
    return out_numel == 1 && red_ndim == 1 && red_strides[0] == itemsize(in_dtype);
  }
};

// `dims`: the reduced dimensions of x, distinct and in range (JS normalizes
// them). `out` has x's shape with those dims either removed or of size 1.
inline ReduceIter make_reduce(const Tensor& x, IntArrayRef dims, const Tensor& out) {
  ReduceIter r;
  const int64_t ndim = x.dim();
  GX_CHECK(ndim <= kMaxDims, "at most ", kMaxDims, " dimensions are supported, got ", ndim);
  bool reduced[kMaxDims] = {false};
  for (int64_t d : dims) {
    GX_CHECK(d >= 0 && d < ndim, "dimension ", d, " out of range for an input of shape ", x.sizes());
    GX_CHECK(!reduced[d], "dimension ", d, " given twice");
    reduced[d] = true;
  }
  const IntArrayRef xs = x.sizes(), xst = x.strides(), os = out.sizes(), ost = out.strides();
  const bool keep = out.dim() == ndim;
  GX_CHECK(keep || out.dim() == ndim - static_cast<int64_t>(dims.size()), "output of shape ", os,
           " does not fit a reduction of shape ", xs, " over ", dims);
  GX_CHECK(out.device() == x.device(), "input on ", x.device(), " but output on ", out.device());
  const int64_t in_item = itemsize(x.dtype()), out_item = itemsize(out.dtype());
  // Outermost-first lists; strides arrays hold [0] input, [1] output.
  int64_t ksz[kMaxDims], kst[kMaxOperands][kMaxDims], rsz[kMaxDims], rst[kMaxOperands][kMaxDims];
  int nk = 0, nr = 0;
  for (int64_t d = 0, od = 0; d < ndim; ++d) {
    if (reduced[d]) {
      if (keep) {
        GX_CHECK(os[od] == 1, "output of shape ", os, " does not fit a reduction of shape ", xs, " over ", dims);
        ++od;
      }
      rsz[nr] = xs[d];
      rst[0][nr] = xst[d] * in_item;
      ++nr;
    } else {
      GX_CHECK(os[od] == xs[d], "output of shape ", os, " does not fit a reduction of shape ", xs, " over ", dims);
      ksz[nk] = xs[d];
      kst[0][nk] = xst[d] * in_item;
      kst[1][nk] = ost[od] * out_item;
      ++nk;
      ++od;
    }
  }
  r.out_ndim = collapse(nk, ksz, 2, kst);
  r.red_ndim = collapse(nr, rsz, 1, rst);
  for (int d = 0; d < r.out_ndim; ++d) {
    r.out_sizes[d] = ksz[d];
    r.out_in_strides[d] = kst[0][d];
    r.out_strides[d] = kst[1][d];
    r.out_numel *= ksz[d];
  }
  for (int d = 0; d < r.red_ndim; ++d) {
    r.red_sizes[d] = rsz[d];
    r.red_strides[d] = rst[0][d];
    r.red_numel *= rsz[d];
  }
  // An empty input: a kept size 0 leaves nothing to write (out_numel 0); a
  // reduced size 0 makes every output the identity (red_numel 0).
  r.in = static_cast<const char*>(x.data_ptr());
  r.out = static_cast<char*>(out.data_ptr());
  r.device = x.device().index;
  r.in_dtype = x.dtype();
  r.out_dtype = out.dtype();
  return r;
}

}  // namespace gx::ops
