// searchsorted's binary search, one definition for both devices (sort_keys.h
// has the op's schema). The comparisons are torch's, so NaN lands where torch
// puts it: a NaN value goes past every element (no comparison with it is
// true), and a NaN in the sequence counts as smaller than every value.
#pragma once
#include <gpuext/extension.h>

#include "../common/hd.h"

namespace gx::ops {

// The insertion point of v among the m elements of dtype `dt` at s (item bytes
// apart): the first i with s[i] >= v, or with `right` the first with s[i] > v.
template <typename C>
GX_HD int64_t search_row(const char* s, ScalarType dt, int64_t item, int64_t m, C v, bool right) {
  int64_t lo = 0, hi = m;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const C b = load_as<C>(s + mid * item, dt);
    const bool past = right ? !(b > v) : !(b >= v);
    if (past) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The shapes searchsorted takes (JS reshapes to them): sequence [srows, m]
// with srows the values' rows or 1, values [rows, k], out [rows, k].
struct SearchShape {
  int64_t rows = 0, k = 0, m = 0;
  bool shared = false;  // one sequence for every row
};

inline SearchShape search_shape(const Tensor& seq, const Tensor& self, const Tensor& out) {
  GX_CHECK(seq.dim() == 2 && self.dim() == 2 && out.dim() == 2, "searchsorted: expected 2-d sequence, values and out, got ",
           seq.sizes(), ", ", self.sizes(), " and ", out.sizes());
  GX_CHECK(seq.is_contiguous() && self.is_contiguous() && out.is_contiguous(),
           "searchsorted: the sequence, the values and out must be contiguous");
  GX_CHECK(seq.dtype() == self.dtype(), "searchsorted: the sequence is ", seq.dtype(), " but the values ", self.dtype());
  GX_CHECK(out.dtype() == kInt64 || out.dtype() == kInt32, "searchsorted: out must be int64 or int32, got ", out.dtype());
  GX_CHECK(seq.device() == self.device() && out.device() == self.device(), "searchsorted: tensors on different devices");
  SearchShape s;
  s.rows = self.sizes()[0];
  s.k = self.sizes()[1];
  s.m = seq.sizes()[1];
  s.shared = seq.sizes()[0] == 1;
  GX_CHECK(s.shared || seq.sizes()[0] == s.rows, "searchsorted: ", seq.sizes()[0], " sequences for ", s.rows, " rows of values");
  GX_CHECK(out.sizes()[0] == s.rows && out.sizes()[1] == s.k, "searchsorted: out of shape ", out.sizes(),
           " does not match the values' ", self.sizes());
  return s;
}

}  // namespace gx::ops
