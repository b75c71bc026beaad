// bincount and histc (ops/op-list.js has their schemas; lib/ops/scatter-
// family.ts checks the arguments, finds the range and the length, zeroes the
// output and converts histc's int64 counts to the input's dtype): which bin
// an element goes to, one definition for the CPU loops and the CUDA kernels.
//
// NOTE [ Histograms on CUDA ]
// The Numba notebook's histogram: each block counts its share of the
// elements in a private copy of the bins in shared memory (shared-memory
// atomics, cheap and uncontended across blocks), then adds its copy to the
// output with one global atomic per nonzero bin. When the bins do not fit in
// shared memory (kSharedBytes) every element goes straight to the output
// with a global atomic. Counts are 32-bit in shared memory and int64 in the
// output; weighted sums are float32 or float64 in both.
#pragma once
#include <cstdint>

#include "../common/hd.h"
#include "../ops.h"

namespace gx::ops {

// histc's bin of v for `bins` bins over [lo, hi] (hi > lo), as torch's CUDA
// histc computes it: (v - lo) * bins / (hi - lo) truncated, the top edge in
// the last bin; -1 for NaN and values outside.
template <typename C> GX_HD int64_t histc_bin(C v, C lo, C hi, int64_t bins) {
  if (!(v >= lo && v <= hi)) return -1;
  int64_t b = static_cast<int64_t>((v - lo) * static_cast<C>(bins) / (hi - lo));
  if (b >= bins) b = bins - 1;
  if (b < 0) b = 0;
  return b;
}

// bincount's bin: the element itself (JS has checked them all in [0, bins)).
struct BincountBin {
  const char* data;
  ScalarType dtype;
  int64_t item;
  GX_HD int64_t operator()(int64_t l) const { return load_as<int64_t>(data + l * item, dtype); }
};

template <typename C> struct HistcBin {
  const char* data;
  ScalarType dtype;
  int64_t item;
  C lo, hi;
  int64_t bins;
  GX_HD int64_t operator()(int64_t l) const { return histc_bin<C>(load_as<C>(data + l * item, dtype), lo, hi, bins); }
};

// The weight of element l: 1 (counts), or weights[l].
template <typename T> struct UnitWeight {
  GX_HD T operator()(int64_t) const { return T(1); }
};
template <typename T> struct ArrayWeight {
  const T* w;
  GX_HD T operator()(int64_t l) const { return w[l]; }
};

}  // namespace gx::ops
