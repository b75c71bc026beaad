// CPU loops of the built-in ops: an elementwise loop over an ElementwiseIter
// (a typed one for contiguous operands of the common dtype, a general one
// reading and writing through the runtime dtypes) and a reduction loop over a
// ReduceIter. The same functors run in the CUDA kernels (cuda_loops.cuh).
#pragma once
#include <type_traits>
#include <utility>

#include "dispatch.h"

namespace gx::ops {

template <int NIN, typename F, typename C> GX_HD auto apply(const F& f, const C* x) {
  if constexpr (NIN == 1) return f(x[0]);
  else if constexpr (NIN == 2) return f(x[0], x[1]);
  else return f(x[0], x[1], x[2]);
}

template <typename F, typename C, int NIN>
using ResultOf = decltype(apply<NIN>(std::declval<const F&>(), std::declval<const C*>()));

// Whether input k of an op computing in C with common dtype `common` must be
// converted to it first (NOTE [ Operands converted to the common dtype ] in
// hd.h): where C is wider than the common dtype (a 16-bit float, or an integer
// narrower than int64), and for logical ops (bool compute), whose "nonzero"
// depends on the common dtype too.
template <typename C> bool converts_operand(const ElementwiseIter& it, int k, ScalarType common) {
  if (it.is_scalar[k] || it.dtype[k] == common) return false;
  if constexpr (std::is_same_v<C, bool>) return true;
  return common == kFloat16 || common == kBFloat16 || common == kInt8 || common == kInt16 || common == kInt32 ||
         common == kUInt8;
}

struct CpuLoops {
  template <typename C, int NIN, typename F>
  static void run(const F& f, const ElementwiseIter& it, const C* scalars, ScalarType common) {
    using R = ResultOf<F, C, NIN>;
    bool done = false;
    if (it.contiguous()) {
      with_storage_type(common, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (computes_in<T, C>()) {
          using O = std::conditional_t<std::is_same_v<R, bool>, bool, T>;
          if (it.dtype[0] != dtype_of<O>::value) return;
          for (int k = 1; k < it.nops; ++k)
            if (!it.is_scalar[k] && it.dtype[k] != dtype_of<T>::value) return;
          contiguous<T, O, C, NIN>(f, it, scalars);
          done = true;
        }
      });
    }
    if (!done) general<C, NIN>(f, it, scalars, common);
  }

  template <typename T, typename O, typename C, int NIN, typename F>
  static void contiguous(const F& f, const ElementwiseIter& it, const C* scalars) {
    O* out = reinterpret_cast<O*>(it.data[0]);
    const T* in[NIN];
    bool any_scalar = false;
    for (int k = 0; k < NIN; ++k) {
      in[k] = reinterpret_cast<const T*>(it.data[k + 1]);
      any_scalar = any_scalar || it.is_scalar[k + 1];
    }
    const int64_t n = it.numel;
    if (!any_scalar) {
      for (int64_t i = 0; i < n; ++i) {
        C x[NIN];
        for (int k = 0; k < NIN; ++k) x[k] = to<C>(in[k][i]);
        out[i] = to<O>(apply<NIN>(f, x));
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      C x[NIN];
      for (int k = 0; k < NIN; ++k) x[k] = it.is_scalar[k + 1] ? scalars[k] : to<C>(in[k][i]);
      out[i] = to<O>(apply<NIN>(f, x));
    }
  }

  template <typename C, int NIN, typename F>
  static void general(const F& f, const ElementwiseIter& it, const C* scalars, ScalarType common) {
    bool rnd[NIN];
    for (int k = 0; k < NIN; ++k) rnd[k] = converts_operand<C>(it, k + 1, common);
    char* ptr[kMaxOperands];
    for (int k = 0; k < it.nops; ++k) ptr[k] = it.data[k];
    int64_t counter[kMaxDims] = {0};
    const int64_t inner = it.sizes[0];
    const int64_t outer = inner == 0 ? 0 : it.numel / inner;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        C x[NIN];
        for (int k = 0; k < NIN; ++k) {
          if (it.is_scalar[k + 1]) {
            x[k] = scalars[k];
          } else {
            x[k] = load_operand<C>(ptr[k + 1] + i * it.strides[k + 1][0], it.dtype[k + 1], common, rnd[k]);
          }
        }
        store_as(ptr[0] + i * it.strides[0][0], it.dtype[0], apply<NIN>(f, x));
      }
      for (int d = 1; d < it.ndim; ++d) {
        for (int k = 0; k < it.nops; ++k) ptr[k] += it.strides[k][d];
        if (++counter[d] < it.sizes[d]) break;
        for (int k = 0; k < it.nops; ++k) ptr[k] -= it.strides[k][d] * it.sizes[d];
        counter[d] = 0;
      }
    }
  }
};

}  // namespace gx::ops
