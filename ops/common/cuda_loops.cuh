// CUDA kernels of the built-in elementwise ops, and their launcher
// (CudaLoops::run, the same interface as CpuLoops::run in cpu_loops.h).
//
//   ew_vec_kernel      contiguous operands of the common dtype, 16-byte
//                      aligned: each thread loads kUnroll vectors of 16 bytes
//                      per input before computing (the bandwidth path: add and
//                      mul on float32 must reach ~97% of torch.add).
//   ew_tail_kernel     the same operands one element per thread: the vector
//                      kernel's tail, and small or unaligned tensors, with
//                      the same few bytes of parameters (the general kernel's
//                      iterator is about a kilobyte, which a launch pays for).
//   ew_general_kernel  anything else: an offset calculator over the collapsed
//                      dims (NOTE [ Broadcasting in the kernels ]), loads and
//                      stores through the runtime dtypes, 32-bit index math
//                      when the element count allows it.
// Every launch goes on the current stream of the output's device.
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "cpu_loops.h"

namespace gx::ops {

constexpr int kThreads = 256;

// DeviceGuard (throwing) and sm_count: gpuext/cuda.h's, shared with extensions.

inline bool aligned(const void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

template <typename T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <typename C, int NIN> struct VecArgs {
  const void* in[NIN];  // null for a scalar
  C scalar[NIN];
  void* out;
  int64_t nvec;  // whole vectors; the tail goes to ew_tail_kernel
};

// One VEC-element vector per thread and input: a 16-byte load of each, then
// the functor on each element, then one store.
template <int VEC, typename T, typename O, typename C, int NIN, typename F>
__global__ void __launch_bounds__(kThreads) ew_vec_kernel(F f, VecArgs<C, NIN> a) {
  using VT = Vec<T, VEC>;
  using VO = Vec<O, VEC>;
  const int64_t v = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= a.nvec) return;
  VT x[NIN];
#pragma unroll
  for (int k = 0; k < NIN; ++k)
    if (a.in[k] != nullptr) x[k] = static_cast<const VT*>(a.in[k])[v];
  VO y;
#pragma unroll
  for (int j = 0; j < VEC; ++j) {
    C c[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) c[k] = a.in[k] != nullptr ? to<C>(x[k].v[j]) : a.scalar[k];
    y.v[j] = to<O>(apply<NIN>(f, c));
  }
  static_cast<VO*>(a.out)[v] = y;
}

// Elements [start, start + n) of the operands ew_vec_kernel takes, one per thread, computed as it does.
template <typename T, typename O, typename C, int NIN, typename F>
__global__ void __launch_bounds__(kThreads) ew_tail_kernel(F f, VecArgs<C, NIN> a, int64_t start, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  const int64_t e = start + i;
  C c[NIN];
#pragma unroll
  for (int k = 0; k < NIN; ++k) c[k] = a.in[k] != nullptr ? to<C>(static_cast<const T*>(a.in[k])[e]) : a.scalar[k];
  static_cast<O*>(a.out)[e] = to<O>(apply<NIN>(f, c));
}

template <typename C, int NIN> struct GeneralArgs {
  C scalar[NIN];
  bool round[NIN];
  ScalarType common;
};

// Byte offsets of element `i` (C order of the collapsed dims) in each operand.
// `it` is a __grid_constant__ kernel parameter, so this loop indexes it in
// place (no per-thread copy) and needs no unrolling over kMaxDims.
template <typename I, int NOPS>
__device__ __forceinline__ void ew_offsets(const ElementwiseIter& it, I i, int64_t* off) {
#pragma unroll
  for (int k = 0; k < NOPS; ++k) off[k] = 0;
#pragma unroll 1
  for (int d = 0; d < it.ndim; ++d) {
    const I size = static_cast<I>(it.sizes[d]);
    const I idx = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < NOPS; ++k) off[k] += static_cast<int64_t>(idx) * it.strides[k][d];
  }
}

constexpr int kGeneralPerThread = 4;

template <typename I, typename C, int NIN, typename F>
__device__ __forceinline__ void ew_general_body(const F& f, const ElementwiseIter& it, const GeneralArgs<C, NIN>& g) {
  const I base = static_cast<I>(blockIdx.x) * (kThreads * kGeneralPerThread) + threadIdx.x;
#pragma unroll 1
  for (int u = 0; u < kGeneralPerThread; ++u) {
    const I i = base + u * kThreads;
    if (static_cast<int64_t>(i) >= it.numel) return;
    int64_t off[NIN + 1];
    ew_offsets<I, NIN + 1>(it, i, off);
    C c[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) {
      if (it.is_scalar[k + 1]) {
        c[k] = g.scalar[k];
      } else {
        c[k] = load_operand<C>(it.data[k + 1] + off[k + 1], it.dtype[k + 1], g.common, g.round[k]);
      }
    }
    store_as(it.data[0] + off[0], it.dtype[0], apply<NIN>(f, c));
  }
}

template <typename C, int NIN, typename F>
__global__ void __launch_bounds__(kThreads) ew_general_kernel(F f, const __grid_constant__ ElementwiseIter it,
                                                              GeneralArgs<C, NIN> g) {
  // 32-bit index math while every index this grid forms fits (the last block overshoots numel a little).
  if (it.numel <= 0x7fffffffll) ew_general_body<uint32_t, C, NIN>(f, it, g);
  else ew_general_body<uint64_t, C, NIN>(f, it, g);
}

// Storage types with a vectorized kernel per compute type (others, and int8,
// int16, uint8 and bool inputs, take the general kernel: fewer instantiations,
// so the ops build in reasonable time for every default arch).
template <typename T, typename C> constexpr bool has_vec_kernel() {
  if constexpr (std::is_same_v<C, float>)
    return std::is_same_v<T, float> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  else if constexpr (std::is_same_v<C, double>) return std::is_same_v<T, double>;
  else if constexpr (std::is_same_v<C, int64_t>) return std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;
  else return std::is_same_v<T, bool>;
}

struct CudaLoops {
  template <typename C, int NIN, typename F>
  static void run(const F& f, const ElementwiseIter& it, const C* scalars, ScalarType common) {
    using R = ResultOf<F, C, NIN>;
    if (it.numel == 0) return;
    DeviceGuard guard(it.device);
    cudaStream_t stream = current_stream(it.device);
    bool done = false;  // the contiguous kernels covered every element
    if (it.contiguous()) {
      with_storage_type(common, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (has_vec_kernel<T, C>()) {
          using O = std::conditional_t<std::is_same_v<R, bool>, bool, T>;
          constexpr int VEC = 16 / sizeof(T);
          if (it.dtype[0] != dtype_of<O>::value) return;
          bool vec_aligned = aligned(it.data[0], sizeof(O) * VEC);
          VecArgs<C, NIN> a;
          for (int k = 0; k < NIN; ++k) {
            if (it.is_scalar[k + 1]) {
              a.in[k] = nullptr;
              a.scalar[k] = scalars[k];
            } else {
              if (it.dtype[k + 1] != dtype_of<T>::value) return;
              vec_aligned = vec_aligned && aligned(it.data[k + 1], 16);
              a.in[k] = it.data[k + 1];
              a.scalar[k] = C(0);
            }
          }
          a.out = it.data[0];
          a.nvec = vec_aligned ? it.numel / VEC : 0;
          if (a.nvec > 0) {
            const int64_t blocks = (a.nvec + kThreads - 1) / kThreads;
            ew_vec_kernel<VEC, T, O, C, NIN><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(f, a);
          }
          const int64_t start = a.nvec * VEC, tail = it.numel - start;
          if (tail > 0) {
            const int64_t blocks = (tail + kThreads - 1) / kThreads;
            ew_tail_kernel<T, O, C, NIN><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(f, a, start, tail);
          }
          done = true;
        }
      });
    }
    if (!done) {
      GeneralArgs<C, NIN> g;
      for (int k = 0; k < NIN; ++k) {
        g.scalar[k] = scalars[k];
        g.round[k] = converts_operand<C>(it, k + 1, common);
      }
      g.common = common;
      const int64_t per_block = static_cast<int64_t>(kThreads) * kGeneralPerThread;
      const int64_t blocks = (it.numel + per_block - 1) / per_block;
      ew_general_kernel<C, NIN><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(f, it, g);
    }
    GX_CHECK_LAUNCH();
  }
};

}  // namespace gx::ops
