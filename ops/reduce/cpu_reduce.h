// The CPU loop of the reductions (NOTE [ Reductions ] in common/iter.h): for
// each output element, the reduced elements in C order, innermost in a
// strided inner loop; long reductions in fixed-size chunks on several threads.
//
// NOTE [ Deterministic CPU reductions ]
// The reduced range of each output is cut into chunks of kChunk elements by
// its size alone, never by the thread count. Each chunk folds its elements
// into a partial (contiguous runs in kLanes interleaved partials, so the
// compiler can vectorize a sum), the partials of a chunk and then the chunks'
// partials are combined in index order. Threads only decide who computes which
// chunk, so every run gives the same bits whatever GPUEXT_NUM_THREADS says
// (test/cpu-parallel.test.ts). Reducers combine with `combine`, which the CUDA
// kernels rely on already; arg reducers carry the global index, so the first
// extreme element still wins.
#pragma once
#include <gpuext/parallel.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../common/cpu_loops.h"
#include "../common/iter.h"

namespace gx::ops {

struct CpuReduce {
  static constexpr bool kWideFloatAcc = true;
  static constexpr int64_t kChunk = int64_t{1} << 15;  // reduced elements per partial
  static constexpr int kLanes = 8;

  template <typename R> static void run(const R& r, const ReduceIter& it) {
    using Acc = typename R::Acc;
    if (it.out_numel == 0) return;
    const int64_t chunks = it.red_numel <= kChunk ? 1 : (it.red_numel + kChunk - 1) / kChunk;
    if (chunks == 1) {
      // One partial per output: outputs are independent, split them over threads.
      const int64_t grain = std::max<int64_t>(1, kDefaultGrain / std::max<int64_t>(1, it.red_numel));
      parallel_for(0, it.out_numel, grain, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          const OutPos p = out_pos(it, o);
          store_as(p.out, it.out_dtype, r.project(fold_range(r, it, p.in, 0, it.red_numel)));
        }
      });
      return;
    }
    std::vector<Acc> partial(static_cast<size_t>(it.out_numel * chunks));
    parallel_for(0, it.out_numel * chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t task = b; task < e; ++task) {
        const int64_t o = task / chunks, c = task % chunks;
        const int64_t lo = c * kChunk, hi = std::min(it.red_numel, lo + kChunk);
        partial[static_cast<size_t>(task)] = fold_range(r, it, out_pos(it, o).in, lo, hi);
      }
    });
    parallel_for(0, it.out_numel, kDefaultGrain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        Acc acc = partial[static_cast<size_t>(o * chunks)];
        for (int64_t c = 1; c < chunks; ++c) acc = r.combine(acc, partial[static_cast<size_t>(o * chunks + c)]);
        store_as(out_pos(it, o).out, it.out_dtype, r.project(acc));
      }
    });
  }

 private:
  struct OutPos {
    const char* in;
    char* out;
  };

  // Where output o (C order over the kept dims) reads and writes.
  static OutPos out_pos(const ReduceIter& it, int64_t o) {
    OutPos p{it.in, it.out};
    for (int d = 0; d < it.out_ndim; ++d) {
      const int64_t idx = o % it.out_sizes[d];
      o /= it.out_sizes[d];
      p.in += idx * it.out_in_strides[d];
      p.out += idx * it.out_strides[d];
    }
    return p;
  }

  // Folds reduced elements [b, e) (C order over the reduced dims) of the
  // sub-tensor at `base` into a fresh partial.
  template <typename R>
  static typename R::Acc fold_range(const R& r, const ReduceIter& it, const char* base, int64_t b, int64_t e) {
    typename R::Acc acc = r.init();
    if (b >= e) return acc;
    const int64_t inner = it.red_ndim > 0 ? it.red_sizes[0] : 1;
    const int64_t inner_stride = it.red_ndim > 0 ? it.red_strides[0] : 0;
    int64_t rcount[kMaxDims] = {0};
    const char* row = base;
    int64_t rest = b / inner;
    for (int d = 1; d < it.red_ndim; ++d) {
      rcount[d] = rest % it.red_sizes[d];
      rest /= it.red_sizes[d];
      row += rcount[d] * it.red_strides[d];
    }
    int64_t k = b / inner, i0 = b % inner;
    for (int64_t pos = b; pos < e; ++k) {
      const int64_t stop = std::min(inner, i0 + (e - pos));
      acc = fold_run(r, acc, it, row, inner_stride, i0, stop, k * inner);
      pos += stop - i0;
      i0 = 0;
      for (int d = 1; d < it.red_ndim; ++d) {
        row += it.red_strides[d];
        if (++rcount[d] < it.red_sizes[d]) break;
        row -= it.red_strides[d] * it.red_sizes[d];
        rcount[d] = 0;
      }
    }
    return acc;
  }

  // Elements [i0, stop) of one innermost run starting at `row`; index base `idx`.
  template <typename R>
  static typename R::Acc fold_run(const R& r, typename R::Acc acc, const ReduceIter& it, const char* row,
                                  int64_t stride, int64_t i0, int64_t stop, int64_t idx) {
    using V = typename R::Value;
    if (stride == itemsize(it.in_dtype)) {
      switch (it.in_dtype) {
        case kFloat32: return fold_typed(r, acc, reinterpret_cast<const float*>(row), i0, stop, idx);
        case kFloat64: return fold_typed(r, acc, reinterpret_cast<const double*>(row), i0, stop, idx);
        case kInt32: return fold_typed(r, acc, reinterpret_cast<const int32_t*>(row), i0, stop, idx);
        case kInt64: return fold_typed(r, acc, reinterpret_cast<const int64_t*>(row), i0, stop, idx);
        default: break;
      }
    }
    for (int64_t i = i0; i < stop; ++i) acc = r.step(acc, load_as<V>(row + i * stride, it.in_dtype), idx + i);
    return acc;
  }

  // A contiguous run in kLanes interleaved partials (the loop vectorizes for
  // sums), combined in lane order after the run; cloned for AVX-512F/AVX2
  // (NOTE [ CPU loop clones ] in common/cpu_loops.h).
  template <typename R, typename T>
  GX_CPU_CLONES static typename R::Acc fold_typed(const R& r, typename R::Acc acc, const T* p, int64_t i0, int64_t stop,
                                    int64_t idx) {
    using V = typename R::Value;
    using Acc = typename R::Acc;
    int64_t i = i0;
    if (stop - i0 >= 4 * kLanes) {
      Acc lane[kLanes];
      for (int j = 0; j < kLanes; ++j) lane[j] = r.init();
      for (; i + kLanes <= stop; i += kLanes)
        for (int j = 0; j < kLanes; ++j) lane[j] = r.step(lane[j], to<V>(p[i + j]), idx + i + j);
      for (int j = 0; j < kLanes; ++j) acc = r.combine(acc, lane[j]);
    }
    for (; i < stop; ++i) acc = r.step(acc, to<V>(p[i]), idx + i);
    return acc;
  }
};

}  // namespace gx::ops
