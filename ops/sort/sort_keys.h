// The ordering ops (ops/op-list.js has their schemas; lib/ops/sort/sorting.ts calls
// them): sort, topk (kthvalue is a topk in JS), unique, searchsorted.
//
//   sort(Tensor self, bool descending, Tensor values, Tensor indices) -> ()
//   topk(Tensor self, int k, bool largest, Tensor values, Tensor indices) -> ()
//     along the last dimension of contiguous tensors: JS moves another axis
//     last (a contiguous copy) and the results back (views), so the kernels
//     see rows: `rows` lines of `n` elements, one after the other.
//   unique(Tensor self, Tensor? inverse, Tensor? counts, Tensor values) -> int
//     over a contiguous 1-d self (JS flattens).
//   searchsorted(Tensor sorted_sequence, Tensor self, bool right, Tensor out) -> ()
//     rows of values against rows of a sorted sequence (or one for all).
//
// NOTE [ Sort keys ]
// sort, topk and unique never compare elements as numbers: each element is
// mapped to an unsigned key of its width whose unsigned order is the order
// the ops sort by, the same on the CPU and on CUDA (where CUB radix-sorts the
// keys):
//   unsigned integers and bool: the bits themselves;
//   signed integers: the bits with the sign bit flipped;
//   floats: -0.0 as 0.0, then a non-negative value gets its sign bit set and
//     a negative one all its bits flipped (so larger magnitudes of negatives
//     come first); every NaN is all ones: NaN is larger than +inf, as torch
//     sorts it, whatever its sign and payload (CUB's own float keys put a NaN
//     with the sign bit set before -inf).
// Descending order (sort) and "smallest" (topk) flip every bit of the key.
// Equal keys keep their order (the sorts are stable), so -0.0 and 0.0 stay in
// input order, and topk's ties go to the lower index. A result's values are
// the keys mapped back (decode), except for the two keys that lost bits
// (zero, NaN): those values are read from the input at their index, so the
// values are the input's elements bit for bit. Keys of 1- and 2-byte dtypes
// are sorted as 32-bit keys of which only the low 8 or 16 bits vary (the
// radix sorts are given that bit range), so every kernel is instantiated for
// two key types only (uint32_t, uint64_t).
#pragma once
#include <gpuext/extension.h>

#include <cstdint>

#include "../common/hd.h"
#include "../ops.h"

namespace gx::ops::sortkey {

enum Kind : int { kUnsigned = 0, kSigned = 1, kFloat = 2 };

// How one dtype's bits map to keys: the kind, the width and, for floats, the
// exponent bits (a magnitude above them is a NaN).
struct Codec {
  int kind = kUnsigned;
  int bits = 8;            // the dtype's width: the key's varying bits
  uint64_t expmask = 0;    // floats: all exponent bits set, mantissa 0 (the infinity's magnitude)
  int64_t item = 1;        // bytes per element

  GX_HD uint64_t mask() const { return bits == 64 ? ~uint64_t(0) : ((uint64_t(1) << bits) - 1); }
  GX_HD uint64_t sign() const { return uint64_t(1) << (bits - 1); }

  // The key of raw bits u (the element's bits, zero-extended).
  GX_HD uint64_t encode(uint64_t u) const {
    const uint64_t s = sign(), m = mask();
    if (kind == kUnsigned) return u;
    if (kind == kSigned) return u ^ s;
    const uint64_t a = u & ~s;
    if (a > expmask) return m;  // NaN: the largest key
    if (a == 0) u = 0;          // -0.0 sorts as 0.0
    return (u & s) ? (~u & m) : (u | s);
  }
  // The raw bits of key k (for floats: not for special() keys).
  GX_HD uint64_t decode(uint64_t k) const {
    const uint64_t s = sign(), m = mask();
    if (kind == kUnsigned) return k;
    if (kind == kSigned) return k ^ s;
    return (k & s) ? (k & ~s) : (~k & m);
  }
  // Keys that stand for several bit patterns (0.0 / -0.0, every NaN): their values are read from the input.
  GX_HD bool special(uint64_t k) const { return kind == kFloat && (k == sign() || k == mask()); }
  // Whether key k is a NaN's (unique keeps every NaN apart, as NaN != NaN).
  GX_HD bool nan(uint64_t k) const { return kind == kFloat && k == mask(); }
};

inline Codec codec_of(ScalarType t) {
  Codec c;
  c.item = itemsize(t);
  c.bits = static_cast<int>(8 * c.item);
  switch (t) {
    case kFloat32: c.kind = kFloat; c.expmask = 0x7f800000ull; break;
    case kFloat64: c.kind = kFloat; c.expmask = 0x7ff0000000000000ull; break;
    case kFloat16: c.kind = kFloat; c.expmask = 0x7c00ull; break;
    case kBFloat16: c.kind = kFloat; c.expmask = 0x7f80ull; break;
    case kInt8: case kInt16: case kInt32: case kInt64: c.kind = kSigned; break;
    default: c.kind = kUnsigned; break;  // uint8, bool
  }
  return c;
}

// The element's bits at p, zero-extended.
GX_HD uint64_t load_bits(const char* p, int64_t item) {
  switch (item) {
    case 1: return *reinterpret_cast<const uint8_t*>(p);
    case 2: return *reinterpret_cast<const uint16_t*>(p);
    case 4: return *reinterpret_cast<const uint32_t*>(p);
    default: return *reinterpret_cast<const uint64_t*>(p);
  }
}

GX_HD void store_bits(char* p, int64_t item, uint64_t u) {
  switch (item) {
    case 1: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(u); break;
    case 2: *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(u); break;
    case 4: *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(u); break;
    default: *reinterpret_cast<uint64_t*>(p) = u; break;
  }
}

}  // namespace gx::ops::sortkey

namespace gx::ops {

// The row layout every ordering op works on: `rows` contiguous lines of `n`.
struct Rows {
  int64_t rows = 1;
  int64_t n = 1;
};

// self contiguous, of at least one dimension (a 0-d tensor is one row of one);
// `out` (values or indices) contiguous of self's shape with the last dimension `last`.
inline Rows rows_of(const Tensor& self, const char* what) {
  GX_CHECK(self.is_contiguous(), what, ": the input must be contiguous (the JS side makes it so)");
  Rows r;
  const int64_t ndim = self.dim();
  r.n = ndim == 0 ? 1 : self.sizes()[ndim - 1];
  r.rows = r.n == 0 ? 0 : self.numel() / r.n;
  if (r.n == 0) {
    r.rows = 1;
    for (int64_t d = 0; d + 1 < ndim; ++d) r.rows *= self.sizes()[d];
  }
  return r;
}

inline void check_rows_out(const Tensor& self, const Tensor& out, int64_t last, ScalarType dtype, const char* what,
                           const char* name) {
  GX_CHECK(out.is_contiguous(), what, ": ", name, " must be contiguous");
  GX_CHECK(out.dtype() == dtype, what, ": ", name, " must be ", dtype, ", got ", out.dtype());
  GX_CHECK(out.device() == self.device(), what, ": ", name, " on ", out.device(), " but the input on ", self.device());
  const int64_t ndim = self.dim();
  GX_CHECK(out.dim() == ndim, what, ": ", name, " has ", out.dim(), " dimensions, expected ", ndim);
  for (int64_t d = 0; d < ndim; ++d) {
    const int64_t want = d + 1 == ndim ? last : self.sizes()[d];
    GX_CHECK(out.sizes()[d] == want, what, ": ", name, " of shape ", out.sizes(), " does not fit the input's ",
             self.sizes(), " with ", last, " along the last dimension");
  }
}

}  // namespace gx::ops
