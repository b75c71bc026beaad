// CPU loops of the built-in ops: an elementwise loop over an ElementwiseIter
// (a typed one for contiguous operands of the common dtype, a general one
// reading and writing through the runtime dtypes) and a reduction loop over a
// ReduceIter. The same functors run in the CUDA kernels (cuda_loops.cuh).
#pragma once
#include <gpuext/parallel.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "dim_iter.h"
#include "dispatch.h"

// NOTE [ CPU loop clones ]
// The ops must run on any x86-64, so they are compiled for the baseline
// (SSE2); hot loops are also compiled for wider vectors and the widest clone
// the CPU has is picked at load time (an ifunc). Two sets, by what bounds the
// loop (measured on this project's 2-core AMD EPYC test machine, one thread,
// 1e7 float32, huge pages):
//   GX_CPU_CLONES       avx2 + baseline: loops that stream memory (add: 3.4 ms
//                       in either clone, but 4.2 ms in an AVX-512F one; a sum
//                       in double: 1.1 ms AVX2, 1.4 ms baseline);
//   GX_CPU_CLONES_WIDE  avx512f + avx2 + baseline: loops that compute (float32
//                       exp, NOTE [ CPU expf ]: 13-14 ms AVX2, 5 ms AVX-512F);
//                       functors say so with kComputeBound (unary/functors.h).
// -ffp-contract is off under -std=c++17, so no clone fuses a multiply-add the
// others do not: all give the same bits.
// Not under nvcc: cuda_loops.cuh includes this file for apply() and friends,
// and the CPU loops are instantiated only in the *_cpu.cpp units anyway.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__) && !defined(GX_NO_CPU_CLONES)
#define GX_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#define GX_CPU_CLONES_WIDE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GX_CPU_CLONES
#define GX_CPU_CLONES_WIDE
#endif

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
  return computes_wider(common);
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

  // NOTE [ Threads in the CPU loops ]
  // Both loops split the output's elements over gx::parallel_for in chunks of
  // at least kDefaultGrain (NOTE [ Parallel grain ] in gpuext/parallel.h).
  // Each element is computed by the same code whichever chunk holds it, so
  // the result does not depend on the thread count; an `out` that is also an
  // input (same elements, same layout: NOTE [ Overlapping outputs ] in
  // lib/ops/overlap.ts) is read and written element by element in one chunk.
  template <typename T, typename O, typename C, int NIN, typename F>
  static void contiguous(const F& f, const ElementwiseIter& it, const C* scalars) {
    O* out = reinterpret_cast<O*>(it.data[0]);
    const T* in[NIN];
    bool any_scalar = false;
    for (int k = 0; k < NIN; ++k) {
      in[k] = reinterpret_cast<const T*>(it.data[k + 1]);
      any_scalar = any_scalar || it.is_scalar[k + 1];
    }
    // Which input of a binary op is a JS number, if one is: that loop vectorizes too.
    int scalar_at = -1;
    if constexpr (NIN == 2) {
      if (it.is_scalar[1] != it.is_scalar[2]) scalar_at = it.is_scalar[1] ? 0 : 1;
    }
    parallel_for(0, it.numel, kDefaultGrain, [&](int64_t b, int64_t e) {
      if (!any_scalar) {
        contiguous_run<-1, T, O, C, NIN>(f, out, in, C(0), b, e);
        return;
      }
      if constexpr (NIN == 2) {
        if (scalar_at == 0) return contiguous_run<0, T, O, C, NIN>(f, out, in, scalars[0], b, e);
        if (scalar_at == 1) return contiguous_run<1, T, O, C, NIN>(f, out, in, scalars[1], b, e);
      }
      for (int64_t i = b; i < e; ++i) {
        C x[NIN];
        for (int k = 0; k < NIN; ++k) x[k] = it.is_scalar[k + 1] ? scalars[k] : to<C>(in[k][i]);
        out[i] = to<O>(apply<NIN>(f, x));
      }
    });
  }

  // Whether F computes enough per element to want the widest vectors
  // (NOTE [ CPU loop clones ]).
  template <typename F, typename = void> struct ComputeBound : std::false_type {};
  template <typename F> struct ComputeBound<F, std::void_t<decltype(F::kComputeBound)>>
      : std::bool_constant<F::kComputeBound> {};

  // The loop the compiler vectorizes (ops are built with -O3: setup.config.json),
  // inlined into the clones below. S: the input that is the scalar `s` (a
  // binary op's JS number), or -1 for none.
  template <int S, typename T, typename O, typename C, int NIN, typename F>
  __attribute__((always_inline)) static inline void contiguous_body(const F& f, O* out, const T* const* in, C s,
                                                                    int64_t b, int64_t e) {
    if constexpr (NIN == 1) {
      const T* a = in[0];
      for (int64_t i = b; i < e; ++i) out[i] = to<O>(f(to<C>(a[i])));
    } else if constexpr (NIN == 2 && S == 0) {
      const T* c = in[1];
      for (int64_t i = b; i < e; ++i) out[i] = to<O>(f(s, to<C>(c[i])));
    } else if constexpr (NIN == 2 && S == 1) {
      const T* a = in[0];
      for (int64_t i = b; i < e; ++i) out[i] = to<O>(f(to<C>(a[i]), s));
    } else if constexpr (NIN == 2) {
      const T* a = in[0];
      const T* c = in[1];
      for (int64_t i = b; i < e; ++i) out[i] = to<O>(f(to<C>(a[i]), to<C>(c[i])));
    } else {
      const T* a = in[0];
      const T* c = in[1];
      const T* d = in[2];
      for (int64_t i = b; i < e; ++i) out[i] = to<O>(f(to<C>(a[i]), to<C>(c[i]), to<C>(d[i])));
    }
  }
  template <int S, typename T, typename O, typename C, int NIN, typename F>
  GX_CPU_CLONES static void contiguous_stream(const F& f, O* out, const T* const* in, C s, int64_t b, int64_t e) {
    contiguous_body<S, T, O, C, NIN>(f, out, in, s, b, e);
  }
  template <int S, typename T, typename O, typename C, int NIN, typename F>
  GX_CPU_CLONES_WIDE static void contiguous_compute(const F& f, O* out, const T* const* in, C s, int64_t b,
                                                    int64_t e) {
    contiguous_body<S, T, O, C, NIN>(f, out, in, s, b, e);
  }
  template <int S, typename T, typename O, typename C, int NIN, typename F>
  static void contiguous_run(const F& f, O* out, const T* const* in, C s, int64_t b, int64_t e) {
    if constexpr (ComputeBound<F>::value) contiguous_compute<S, T, O, C, NIN>(f, out, in, s, b, e);
    else contiguous_stream<S, T, O, C, NIN>(f, out, in, s, b, e);
  }

  template <typename C, int NIN, typename F>
  static void general(const F& f, const ElementwiseIter& it, const C* scalars, ScalarType common) {
    bool rnd[NIN];
    for (int k = 0; k < NIN; ++k) rnd[k] = converts_operand<C>(it, k + 1, common);
    const int64_t inner = it.sizes[0];
    if (inner == 0) return;
    parallel_for(0, it.numel, kDefaultGrain, [&](int64_t b, int64_t e) {
      // Position of linear index b: inner index i0, outer counters, pointers.
      int64_t counter[kMaxDims] = {0};
      char* ptr[kMaxOperands];
      for (int k = 0; k < it.nops; ++k) ptr[k] = it.data[k];
      int64_t rest = b / inner;
      for (int d = 1; d < it.ndim; ++d) {
        counter[d] = rest % it.sizes[d];
        rest /= it.sizes[d];
        for (int k = 0; k < it.nops; ++k) ptr[k] += counter[d] * it.strides[k][d];
      }
      int64_t i0 = b % inner;
      for (int64_t pos = b; pos < e;) {
        const int64_t stop = std::min(inner, i0 + (e - pos));
        for (int64_t i = i0; i < stop; ++i) {
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
        pos += stop - i0;
        i0 = 0;
        for (int d = 1; d < it.ndim; ++d) {
          for (int k = 0; k < it.nops; ++k) ptr[k] += it.strides[k][d];
          if (++counter[d] < it.sizes[d]) break;
          for (int k = 0; k < it.nops; ++k) ptr[k] -= it.strides[k][d] * it.sizes[d];
          counter[d] = 0;
        }
      }
    });
  }
};

// f(in, out) for the start of every line of `it` (dim_iter.h), lines split
// over threads: each line is one call, wherever it runs.
template <typename F> void for_lines_parallel(const DimIter& it, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kDefaultGrain / std::max<int64_t>(1, it.len));
  parallel_for(0, it.lines, grain, [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) {
      int64_t in_off, out_off;
      line_offsets(it, l, in_off, out_off);
      f(it.in + in_off, it.out + out_off);
    }
  });
}

}  // namespace gx::ops
