// The CPU loop of the reductions (NOTE [ Reductions ] in common/iter.h): for
// each output element, the reduced elements in C order, innermost in a
// strided inner loop.
#pragma once
#include "../common/iter.h"

namespace gx::ops {

struct CpuReduce {
  static constexpr bool kWideFloatAcc = true;

  template <typename R> static void run(const R& r, const ReduceIter& it) {
    using V = typename R::Value;
    const int64_t inner = it.red_ndim > 0 ? it.red_sizes[0] : 1;
    const int64_t inner_stride = it.red_ndim > 0 ? it.red_strides[0] : 0;
    const int64_t rows = inner == 0 ? 0 : it.red_numel / inner;
    int64_t ocount[kMaxDims] = {0};
    const char* in = it.in;
    char* out = it.out;
    for (int64_t o = 0; o < it.out_numel; ++o) {
      typename R::Acc acc = r.init();
      int64_t rcount[kMaxDims] = {0};
      const char* row = in;
      for (int64_t k = 0; k < rows; ++k) {
        for (int64_t i = 0; i < inner; ++i) acc = r.step(acc, load_as<V>(row + i * inner_stride, it.in_dtype), k * inner + i);
        for (int d = 1; d < it.red_ndim; ++d) {
          row += it.red_strides[d];
          if (++rcount[d] < it.red_sizes[d]) break;
          row -= it.red_strides[d] * it.red_sizes[d];
          rcount[d] = 0;
        }
      }
      store_as(out, it.out_dtype, r.project(acc));
      for (int d = 0; d < it.out_ndim; ++d) {
        in += it.out_in_strides[d];
        out += it.out_strides[d];
        if (++ocount[d] < it.out_sizes[d]) break;
        in -= it.out_in_strides[d] * it.out_sizes[d];
        out -= it.out_strides[d] * it.out_sizes[d];
        ocount[d] = 0;
      }
    }
  }
};

}  // namespace gx::ops
