// The scans (ops/op-list.js has their schemas; lib/ops/reduce/scan.ts and
// scan-extremum.ts call them):
//
//   cumsum(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()
//   cumprod(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()
//     out (self's shape) = the inclusive prefix sums / products of self along
//     axis (NOTE [ Ops along one dimension ]), computed in dtype's compute
//     type (NOTE [ Compute types ]: integers and bool in int64 with
//     wraparound, float32/float16/bfloat16 in float, float64 in double; the
//     CPU accumulates floats in double, as torch's CPU cumsum and cumprod do).
//   cummax / cummin(Tensor self, int axis, Tensor values, Tensor indices) -> ()
//     values (self's dtype and shape) = the running max / min along axis,
//     indices (int64, self's shape) = where each was found.
//
// NOTE [ One scan, three operations ]
// Every scan here is a policy handed to the same loops (scan_cpu.h, the CUDA
// kernels of scan_cuda.cuh): an accumulator type Acc, its identity init(),
// an associative combine(earlier, later), load (an element and its index
// along the line) and store. The CUDA kernels group the combinations as a
// tree (warp shuffles, then warps, then chunks of a line), the CPU runs each
// line in order: for integers and for cummax / cummin that gives the same
// results bit for bit; float sums and products are rounded in a different
// order (and the CPU keeps them in double), so the devices agree within
// rounding there, not bit for bit.
//
// NOTE [ Running extremum keys ]
// cummax and cummin follow torch's kernels: the later element takes over
// when it is NaN, or when neither is NaN and it is >= (cummax) / <= (cummin)
// the running one; so ties and a run of NaNs go to the LAST index (torch
// 2.13 CPU: cummax([1, 3, 3, nan, 2, nan, 5]) has indices [0, 1, 2, 3, 3, 5,
// 5]). As a combination of two pieces of a line that is the larger of the
// keys (is NaN, value (negated for cummin), index): associative and
// commutative, which the tree grouping and the block reduction of chunk
// totals need. An index of -1 marks the identity (an empty piece).
#pragma once
#include <gpuext/extension.h>

#include "../common/dim_iter.h"
#include "../common/dispatch.h"
#include "../ops.h"

namespace gx::ops {

template <typename A> GX_HD A scan_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) return wrap_add(a, b);
  else return a + b;
}

template <typename A> GX_HD A scan_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) return wrap_mul(a, b);
  else return a * b;
}

// Running sums (A: the accumulator, C: the compute type it loads through).
template <typename A, typename C = A> struct SumScan {
  using Acc = A;
  static constexpr bool kIndices = false;
  GX_HD Acc init() const { return A(0); }
  GX_HD Acc combine(Acc a, Acc b) const { return scan_add(a, b); }
  GX_HD Acc load(const char* p, ScalarType t, int64_t) const { return static_cast<A>(load_as<C>(p, t)); }
  GX_HD void store(char* p, ScalarType t, char*, Acc a) const { store_as(p, t, a); }
};

// Running products.
template <typename A, typename C = A> struct ProdScan {
  using Acc = A;
  static constexpr bool kIndices = false;
  GX_HD Acc init() const { return A(1); }
  GX_HD Acc combine(Acc a, Acc b) const { return scan_mul(a, b); }
  GX_HD Acc load(const char* p, ScalarType t, int64_t) const { return static_cast<A>(load_as<C>(p, t)); }
  GX_HD void store(char* p, ScalarType t, char*, Acc a) const { store_as(p, t, a); }
};

// A value and the index along the line it came from (-1: the identity).
template <typename C> struct ValueIndex {
  C v;
  int64_t i;
};

// Running max (Largest) or min and its index: NOTE [ Running extremum keys ].
template <typename C, bool Largest> struct ExtremumScan {
  using Acc = ValueIndex<C>;
  static constexpr bool kIndices = true;
  GX_HD Acc init() const { return Acc{C(0), -1}; }
  GX_HD Acc combine(Acc a, Acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool na = is_nan(a.v), nb = is_nan(b.v);
    if (na != nb) return na ? a : b;
    if (!na && a.v != b.v) return (Largest ? a.v > b.v : a.v < b.v) ? a : b;
    return a.i > b.i ? a : b;
  }
  GX_HD Acc load(const char* p, ScalarType t, int64_t i) const { return Acc{load_as<C>(p, t), i}; }
  GX_HD void store(char* p, ScalarType t, char* idx, Acc a) const {
    store_as(p, t, a.v);
    *reinterpret_cast<int64_t*>(idx) = a.i;
  }
};

}  // namespace gx::ops
