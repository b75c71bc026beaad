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
//   ew_strided_kernel  broadcast or strided operands that all have the common
//                      dtype's storage type (float32 + a float32 bias): typed
//                      loads and stores, NOTE [ The strided elementwise kernel ].
//   ew_general_kernel  anything else: an offset calculator over the collapsed
//                      dims (NOTE [ Broadcasting in the kernels ]), loads and
//                      stores through the runtime dtypes, 32-bit index math
//                      when the element count allows it.
// Every launch goes on the current stream of the output's device, through
// the driver (NOTE [ Driver launches ] in gpuext/launch.h).
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "cpu_loops.h"
#include "driver_launch.cuh"
#include "fast_div.h"

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

// NOTE [ The strided elementwise kernel ]
// A broadcast (y + bias viewed (1, C, 1, 1) over (N, C, H, W): collapsed dims
// [H*W, C, N]) or strided operand set where every tensor has the common
// dtype's storage type T (and the output T, or bool for a comparison). Against
// ew_general_kernel it drops what the common case does not need: the loads and
// stores are typed (no switch over the dtype list per element, no conversion
// to the common dtype: there is none to do), each thread computes the offsets
// of its kStridedPerThread elements and issues all their loads before the
// first functor call (so that many loads are in flight, not one), and the
// offsets divide by the dims' sizes through magic numbers (NOTE [ Division by
// a run-time constant ]) in 32 bits, the outermost dim needing none; a
// thread's later elements that stay in its first element's innermost row
// (most of them, for a bias add's rows of H*W) add a stride instead. Elements
// go to threads as in the general kernel (element base + u * kThreads of a
// block, so a warp's accesses of one u are consecutive along the innermost
// dim), and the per-element arithmetic is the same functor on the same
// compute-type values, so the results are the general kernel's bit for bit.
// Only float32 is instantiated (has_strided_kernel: the build's size), at most
// kStridedDims collapsed dims (a parameter block of ~250 bytes, not the
// general iterator's kilobyte) and numel < 2^31; anything else takes the
// general kernel. (On an H200 the general kernel took 0.454 ms
// for (64, 64, 112, 112) + (1, 64, 1, 1) float32, ~4x the memory bound.)
constexpr int kStridedDims = 6;
constexpr int kStridedPerThread = 4;

template <typename C, int NIN> struct StridedArgs {
  int ndim;  // collapsed, innermost first, 1 to kStridedDims
  uint32_t numel;
  FastDivU32 size[kStridedDims];               // dims 0 .. ndim-2; the outermost is never divided
  int64_t strides[NIN + 1][kStridedDims];      // bytes
  char* data[NIN + 1];                         // null for a scalar input
  C scalar[NIN];
};

// Byte offsets of element i (C order of the collapsed dims) in each operand; returns i's index along
// the innermost dim.
template <typename C, int NIN>
__device__ __forceinline__ uint32_t strided_offsets(const StridedArgs<C, NIN>& a, uint32_t i, int64_t* off) {
#pragma unroll
  for (int k = 0; k <= NIN; ++k) off[k] = static_cast<int64_t>(0);
  uint32_t inner = i;
  // A loop, not unrolled over kStridedDims: `a` is a __grid_constant__ parameter, indexed in place,
  // and the unrolled form grew each op's object by half again.
#pragma unroll 1
  for (int d = 0; d < a.ndim - 1; ++d) {
    const uint32_t q = a.size[d].div(i);
    const uint32_t idx = i - q * a.size[d].divisor;
    if (d == 0) inner = idx;
    i = q;
#pragma unroll
    for (int k = 0; k <= NIN; ++k) off[k] += static_cast<int64_t>(idx) * a.strides[k][d];
  }
#pragma unroll
  for (int k = 0; k <= NIN; ++k) off[k] += static_cast<int64_t>(i) * a.strides[k][a.ndim - 1];
  return inner;
}

template <typename T, typename O, typename C, int NIN, typename F>
__global__ void __launch_bounds__(kThreads) ew_strided_kernel(F f, const __grid_constant__ StridedArgs<C, NIN> a) {
  const uint32_t base = blockIdx.x * (kThreads * kStridedPerThread) + threadIdx.x;
  if (base >= a.numel) return;
  int64_t off[kStridedPerThread][NIN + 1];
  C x[kStridedPerThread][NIN];
  // Element base's offsets in full; the next ones, kThreads apart, follow from them by the innermost
  // strides while they stay in base's innermost row (a bias add's rows are H*W long).
  const uint32_t row = a.ndim > 1 ? a.size[0].divisor : a.numel;
  const uint32_t col = strided_offsets(a, base, off[0]);
#pragma unroll
  for (int u = 1; u < kStridedPerThread; ++u) {
    const uint32_t i = base + u * kThreads;
    if (i >= a.numel) break;
    if (col + u * kThreads < row) {
#pragma unroll
      for (int k = 0; k <= NIN; ++k) off[u][k] = off[0][k] + static_cast<int64_t>(u * kThreads) * a.strides[k][0];
    } else {
      strided_offsets(a, i, off[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < kStridedPerThread; ++u) {
    if (base + u * kThreads >= a.numel) break;
#pragma unroll
    for (int k = 0; k < NIN; ++k)
      x[u][k] = a.data[k + 1] != nullptr ? to<C>(*reinterpret_cast<const T*>(a.data[k + 1] + off[u][k + 1])) : a.scalar[k];
  }
#pragma unroll
  for (int u = 0; u < kStridedPerThread; ++u) {
    if (base + u * kThreads >= a.numel) break;
    *reinterpret_cast<O*>(a.data[0] + off[u][0]) = to<O>(apply<NIN>(f, x[u]));
  }
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

// The storage types with a strided kernel: the floating ones of has_vec_kernel
// (integer broadcasts stay on the general kernel, to keep the build's size).
template <typename T, typename C> constexpr bool has_strided_kernel() {
  return std::is_same_v<T, float> && std::is_same_v<C, float>;
}

struct CudaLoops {
  // ew_strided_kernel when its conditions hold (NOTE [ The strided elementwise kernel ]); false if not launched.
  template <typename C, int NIN, typename F>
  static bool run_strided(const F& f, const ElementwiseIter& it, const C* scalars, ScalarType common, cudaStream_t stream) {
    using R = ResultOf<F, C, NIN>;
    if (it.numel > 0x7fffffffLL || it.ndim > kStridedDims) return false;
    bool done = false;
    with_storage_type(common, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (has_strided_kernel<T, C>()) {
        using O = std::conditional_t<std::is_same_v<R, bool>, bool, T>;
        if (it.dtype[0] != dtype_of<O>::value) return;
        for (int k = 1; k < it.nops; ++k)
          if (!it.is_scalar[k] && it.dtype[k] != dtype_of<T>::value) return;
        StridedArgs<C, NIN> a;
        a.ndim = it.ndim;
        a.numel = static_cast<uint32_t>(it.numel);
        for (int d = 0; d < it.ndim; ++d) {
          if (d + 1 < it.ndim) a.size[d] = FastDivU32(static_cast<uint32_t>(it.sizes[d]));
          for (int k = 0; k <= NIN; ++k) a.strides[k][d] = it.strides[k][d];
        }
        for (int k = 0; k <= NIN; ++k) a.data[k] = it.is_scalar[k] ? nullptr : it.data[k];
        for (int k = 0; k < NIN; ++k) a.scalar[k] = scalars[k];
        const int64_t per_block = static_cast<int64_t>(kThreads) * kStridedPerThread;
        const int64_t blocks = (it.numel + per_block - 1) / per_block;
        launch<ew_strided_kernel<T, O, C, NIN, F>>(static_cast<unsigned>(blocks), kThreads, stream, it.device, f, a);
        done = true;
      }
    });
    return done;
  }

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
            launch<ew_vec_kernel<VEC, T, O, C, NIN, F>>(static_cast<unsigned>(blocks), kThreads, stream, it.device, f, a);
          }
          const int64_t start = a.nvec * VEC, tail = it.numel - start;
          if (tail > 0) {
            const int64_t blocks = (tail + kThreads - 1) / kThreads;
            launch<ew_tail_kernel<T, O, C, NIN, F>>(static_cast<unsigned>(blocks), kThreads, stream, it.device, f, a, start, tail);
          }
          done = true;
        }
      });
    }
    if (!done) done = run_strided<C, NIN>(f, it, scalars, common, stream);
    if (!done) {
      GeneralArgs<C, NIN> g;
      for (int k = 0; k < NIN; ++k) {
        g.scalar[k] = scalars[k];
        g.round[k] = converts_operand<C>(it, k + 1, common);
      }
      g.common = common;
      const int64_t per_block = static_cast<int64_t>(kThreads) * kGeneralPerThread;
      const int64_t blocks = (it.numel + per_block - 1) / per_block;
      launch<ew_general_kernel<C, NIN, F>>(static_cast<unsigned>(blocks), kThreads, stream, it.device, f, it, g);
    }
  }
};

}  // namespace gx::ops
