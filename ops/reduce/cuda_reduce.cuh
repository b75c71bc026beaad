// CUDA kernels of the reductions (NOTE [ Reductions ] in common/iter.h) and
// their launcher, CudaReduce::run (the interface of CpuReduce::run).
//
//   reduce_vec_kernel     a whole contiguous input to one value (the sum over
//                         2^28 floats that must reach ~90% of torch.sum): a
//                         grid of a few blocks per SM, each thread folding
//                         16-byte vectors grid-stride, 4 loads in flight; one
//                         partial per block, then reduce_finalize_kernel.
//   reduce_thread_kernel  many outputs, short reductions: a thread per output.
//   reduce_block_kernel   few outputs or long reductions: a block per (output,
//                         chunk of the reduced elements); with more than one
//                         chunk, partials go to scratch and
//                         reduce_finalize_kernel folds them per output.
//   reduce_block_vec_kernel  the same for outputs that each reduce one
//                         contiguous, 16-byte aligned run of float32, float16
//                         or bfloat16 (a sum over the last axis, a matrix
//                         norm over the last two), or rows of such runs (a
//                         sum over (0, 2, 3) of NCHW: NOTE [ Reducing outer
//                         and inner dims ]): 16-byte loads, 4 in flight per
//                         thread, and enough chunks for 8 blocks per SM.
//                         (The scalar block kernel, reading one element per
//                         thread at a time through the runtime dtype, took
//                         0.248 ms for the 2-norms of 64 rows of 2^20 float32
//                         on an H100, torch's matrix_norm 0.132 ms; this one
//                         0.109 to 0.121 ms, torch 0.121 to 0.128.)
//   reduce_cols_kernel    outputs that are consecutive in the input (a sum
//                         over dim 0): a thread per output and a slice of the
//                         reduced elements, NOTE [ Reducing outer dims ].
// Every launch goes on the current stream of the input's device; partial
// results live in a scratch tensor from the core's caching allocator.
//
// Order: every kernel folds a fixed set of elements per thread in a fixed
// order, then combines threads by a fixed tree and chunks' partials in chunk
// order, the sets depending only on the shapes, the dtype and the device's SM
// count: no atomics, so a run repeats its bits on one GPU (not the CPU's bits,
// whose chunks are NOTE [ Deterministic CPU reductions ]'s).
//
// NOTE [ Reducing outer and inner dims ]
// A bias gradient sums gy (N, C, H, W) over (0, 2, 3): C outputs, each
// reducing N rows of H*W contiguous elements, rows C*H*W apart (two collapsed
// reduced dims). The block kernel read that one element per thread at a time
// with a division chain per element (0.165 ms per sum on an H200 where torch
// takes ~0.06). reduce_block_vec_kernel takes it when each row's length is a
// whole number of 16-byte vectors and every row starts 16-byte aligned: vector
// v of an output is row v / (vectors per row), found by a magic-number
// division (NOTE [ Division by a run-time constant ]), and the element index
// handed to the reducer is still the C-order index over the reduced dims.
//
// NOTE [ Reducing outer dims ]
// A sum over dim 0 of (N, a, b) (the batched weight gradient) has many
// outputs, each a strided column, consecutive outputs consecutive in memory.
// A block per output reads its column one 32-byte sector per element (8x the
// bytes); here consecutive threads take consecutive outputs, so each load of a
// warp is one coalesced run, and the reduced range is cut into slices (grid
// dim y) when there are too few outputs to fill the GPU: each thread folds its
// slice in index order, 4 loads in flight, and reduce_cols_finalize_kernel
// folds the slices' partials in slice order. Fewer outputs than a block's
// threads keep the block kernel: most of each block would idle here.
#pragma once
#include <cuda_runtime.h>

#include "../common/cuda_loops.cuh"

namespace gx::ops {

// Folds every thread's value into one (valid in thread 0 and returned to all).
template <typename R, typename Acc>
__device__ __forceinline__ Acc block_reduce(const R& r, Acc acc) {
  __shared__ alignas(16) unsigned char raw[kThreads * sizeof(Acc)];
  Acc* s = reinterpret_cast<Acc*>(raw);
  s[threadIdx.x] = acc;
  __syncthreads();
#pragma unroll
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] = r.combine(s[threadIdx.x], s[threadIdx.x + w]);
    __syncthreads();
  }
  return s[0];
}

// Input and output byte offsets of output element o.
__device__ __forceinline__ void reduce_out_offsets(const ReduceIter& it, int64_t o, int64_t& in_off, int64_t& out_off) {
  in_off = 0;
  out_off = 0;
  uint64_t rest = static_cast<uint64_t>(o);
#pragma unroll 1
  for (int d = 0; d < it.out_ndim; ++d) {
    const uint64_t size = static_cast<uint64_t>(it.out_sizes[d]);
    const int64_t idx = static_cast<int64_t>(rest % size);
    rest /= size;
    in_off += idx * it.out_in_strides[d];
    out_off += idx * it.out_strides[d];
  }
}

// Input byte offset of reduced element j (C order over the reduced dims), from dim `first` on.
template <typename I>
__device__ __forceinline__ int64_t reduce_in_offset(const ReduceIter& it, I j, int first) {
  int64_t off = 0;
#pragma unroll 1
  for (int d = first; d < it.red_ndim; ++d) {
    const I size = static_cast<I>(it.red_sizes[d]);
    off += static_cast<int64_t>(j % size) * it.red_strides[d];
    j /= size;
  }
  return off;
}

template <typename R>
__global__ void __launch_bounds__(kThreads) reduce_thread_kernel(R r, const __grid_constant__ ReduceIter it) {
  using V = typename R::Value;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (o >= it.out_numel) return;
  int64_t in_off, out_off;
  reduce_out_offsets(it, o, in_off, out_off);
  const int64_t inner = it.red_ndim > 0 ? it.red_sizes[0] : 1;
  const int64_t inner_stride = it.red_ndim > 0 ? it.red_strides[0] : 0;
  const int64_t rows = inner == 0 ? 0 : it.red_numel / inner;
  typename R::Acc acc = r.init();
  for (int64_t k = 0; k < rows; ++k) {
    const char* row = it.in + in_off + reduce_in_offset<uint64_t>(it, static_cast<uint64_t>(k), 1);
    for (int64_t i = 0; i < inner; ++i) acc = r.step(acc, load_as<V>(row + i * inner_stride, it.in_dtype), k * inner + i);
  }
  store_as(it.out + out_off, it.out_dtype, r.project(acc));
}

// Block (o = blockIdx.x, chunk c = blockIdx.y): reduced elements [c * chunk, (c + 1) * chunk).
template <typename R>
__global__ void __launch_bounds__(kThreads) reduce_block_kernel(R r, const __grid_constant__ ReduceIter it,
                                                                int64_t chunk, typename R::Acc* partials) {
  using V = typename R::Value;
  const int64_t o = blockIdx.x;
  int64_t in_off, out_off;
  reduce_out_offsets(it, o, in_off, out_off);
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < it.red_numel ? begin + chunk : it.red_numel;
  const char* base = it.in + in_off;
  typename R::Acc acc = r.init();
  if (it.red_ndim == 1) {
    const int64_t stride = it.red_strides[0];
    for (int64_t j = begin + threadIdx.x; j < end; j += kThreads) acc = r.step(acc, load_as<V>(base + j * stride, it.in_dtype), j);
  } else if (it.red_numel <= 0xffffffffll) {
    for (int64_t j = begin + threadIdx.x; j < end; j += kThreads)
      acc = r.step(acc, load_as<V>(base + reduce_in_offset<uint32_t>(it, static_cast<uint32_t>(j), 0), it.in_dtype), j);
  } else {
    for (int64_t j = begin + threadIdx.x; j < end; j += kThreads)
      acc = r.step(acc, load_as<V>(base + reduce_in_offset<uint64_t>(it, static_cast<uint64_t>(j), 0), it.in_dtype), j);
  }
  acc = block_reduce(r, acc);
  if (threadIdx.x == 0) {
    if (partials != nullptr) partials[o * gridDim.y + blockIdx.y] = acc;
    else store_as(it.out + out_off, it.out_dtype, r.project(acc));
  }
}

// One block per output: folds its `chunks` partials.
template <typename R>
__global__ void __launch_bounds__(kThreads) reduce_finalize_kernel(R r, const __grid_constant__ ReduceIter it,
                                                                   int64_t chunks, const typename R::Acc* partials) {
  const int64_t o = blockIdx.x;
  typename R::Acc acc = r.init();
  for (int64_t c = threadIdx.x; c < chunks; c += kThreads) acc = r.combine(acc, partials[o * chunks + c]);
  acc = block_reduce(r, acc);
  if (threadIdx.x == 0) {
    int64_t in_off, out_off;
    reduce_out_offsets(it, o, in_off, out_off);
    store_as(it.out + out_off, it.out_dtype, r.project(acc));
  }
}

// Block (o = blockIdx.x, chunk c = blockIdx.y) over output o's contiguous run
// of T (16-byte aligned): elements [c * chunk, (c + 1) * chunk), chunk a
// multiple of VEC, read as VEC-element vectors kLoads at a time.
// Rows: with two reduced dims, vectors per row (a divisor) and the row
// stride in bytes (NOTE [ Reducing outer and inner dims ]); else rows.two is false.
struct VecRows {
  bool two = false;
  FastDivU32 per_row;
  int64_t row_stride = 0;
};

template <int VEC, typename T>
__device__ __forceinline__ Vec<T, VEC> load_vec(const T* in, int64_t v, const VecRows& rows) {
  using VT = Vec<T, VEC>;
  if (!rows.two) return reinterpret_cast<const VT*>(in)[v];
  const uint32_t row = rows.per_row.div(static_cast<uint32_t>(v));
  const uint32_t col = static_cast<uint32_t>(v) - row * rows.per_row.divisor;
  return reinterpret_cast<const VT*>(reinterpret_cast<const char*>(in) + row * rows.row_stride)[col];
}

template <int VEC, typename T, typename R>
__global__ void __launch_bounds__(kThreads) reduce_block_vec_kernel(R r, const __grid_constant__ ReduceIter it, int64_t chunk,
                                                                    typename R::Acc* partials, const VecRows rows) {
  using V = typename R::Value;
  using VT = Vec<T, VEC>;
  constexpr int kLoads = 4;
  const int64_t o = blockIdx.x;
  int64_t in_off, out_off;
  reduce_out_offsets(it, o, in_off, out_off);
  const T* in = reinterpret_cast<const T*>(it.in + in_off);
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < it.red_numel ? begin + chunk : it.red_numel;
  const int64_t vend = end / VEC;  // whole vectors; the rest (the last chunk's tail) one element at a time
  typename R::Acc acc = r.init();
  int64_t v = begin / VEC + threadIdx.x;
  for (; v + (kLoads - 1) * kThreads < vend; v += kLoads * kThreads) {
    VT x[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) x[u] = load_vec<VEC>(in, v + u * kThreads, rows);
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
#pragma unroll
      for (int j = 0; j < VEC; ++j) acc = r.step(acc, to<V>(x[u].v[j]), (v + u * kThreads) * VEC + j);
  }
  for (; v < vend; v += kThreads) {
    const VT x = load_vec<VEC>(in, v, rows);
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc = r.step(acc, to<V>(x.v[j]), v * VEC + j);
  }
  // The last chunk's tail (one reduced dim only: rows are whole vectors).
  for (int64_t i = vend * VEC + threadIdx.x; i < end; i += kThreads) acc = r.step(acc, to<V>(in[i]), i);
  acc = block_reduce(r, acc);
  if (threadIdx.x == 0) {
    if (partials != nullptr) partials[o * gridDim.y + blockIdx.y] = acc;
    else store_as(it.out + out_off, it.out_dtype, r.project(acc));
  }
}

// Outputs o = blockIdx.x * kThreads + threadIdx.x (consecutive in the input), reduced elements
// [blockIdx.y * slice, (blockIdx.y + 1) * slice) in index order, the input of the compute type's own
// dtype, float32 in and out (typed loads and stores: one instantiation per reducer); NOTE [ Reducing outer dims ].
template <typename R>
__global__ void __launch_bounds__(kThreads) reduce_cols_kernel(R r, const __grid_constant__ ReduceIter it, int64_t slice,
                                                               typename R::Acc* partials) {
  using V = typename R::Value;
  constexpr int kLoads = 4;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (o >= it.out_numel) return;
  int64_t in_off, out_off;
  reduce_out_offsets(it, o, in_off, out_off);
  const char* base = it.in + in_off;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * slice;
  const int64_t end = begin + slice < it.red_numel ? begin + slice : it.red_numel;
  const auto at = [&](int64_t j) {
    const char* p = it.red_ndim == 1 ? base + j * it.red_strides[0] : base + reduce_in_offset<uint64_t>(it, static_cast<uint64_t>(j), 0);
    return *reinterpret_cast<const V*>(p);
  };
  typename R::Acc acc = r.init();
  int64_t j = begin;
  for (; j + kLoads <= end; j += kLoads) {
    V x[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) x[u] = at(j + u);
#pragma unroll
    for (int u = 0; u < kLoads; ++u) acc = r.step(acc, x[u], j + u);
  }
  for (; j < end; ++j) acc = r.step(acc, at(j), j);
  if (partials != nullptr) partials[static_cast<int64_t>(blockIdx.y) * it.out_numel + o] = acc;
  else *reinterpret_cast<V*>(it.out + out_off) = to<V>(r.project(acc));  // out_dtype is V's
}

// A thread per output: folds its `slices` partials of reduce_cols_kernel in slice order.
template <typename R>
__global__ void __launch_bounds__(kThreads) reduce_cols_finalize_kernel(R r, const __grid_constant__ ReduceIter it, int64_t slices,
                                                                        const typename R::Acc* partials) {
  using V = typename R::Value;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (o >= it.out_numel) return;
  typename R::Acc acc = partials[o];
  for (int64_t c = 1; c < slices; ++c) acc = r.combine(acc, partials[c * it.out_numel + o]);
  int64_t in_off, out_off;
  reduce_out_offsets(it, o, in_off, out_off);
  *reinterpret_cast<V*>(it.out + out_off) = to<V>(r.project(acc));  // out_dtype is V's
}

template <int VEC, typename T, typename R>
__global__ void __launch_bounds__(kThreads) reduce_vec_kernel(R r, const T* __restrict__ in, int64_t n,
                                                              typename R::Acc* partials) {
  using V = typename R::Value;
  using VT = Vec<T, VEC>;
  constexpr int kLoads = 4;
  const int64_t nvec = n / VEC;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  int64_t v = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  typename R::Acc acc = r.init();
  for (; v + (kLoads - 1) * stride < nvec; v += kLoads * stride) {
    VT x[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) x[u] = reinterpret_cast<const VT*>(in)[v + u * stride];
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
#pragma unroll
      for (int j = 0; j < VEC; ++j) acc = r.step(acc, to<V>(x[u].v[j]), (v + u * stride) * VEC + j);
  }
  for (; v < nvec; v += stride) {
    const VT x = reinterpret_cast<const VT*>(in)[v];
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc = r.step(acc, to<V>(x.v[j]), v * VEC + j);
  }
  for (int64_t i = nvec * VEC + static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride)
    acc = r.step(acc, to<V>(in[i]), i);
  acc = block_reduce(r, acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

struct CudaReduce {
  static constexpr bool kWideFloatAcc = false;

  template <typename R> static void run(const R& r, const ReduceIter& it) {
    using Acc = typename R::Acc;
    using V = typename R::Value;
    DeviceGuard guard(it.device);
    cudaStream_t stream = current_stream(it.device);
    const int sms = sm_count(it.device);
    const Device dev(kCUDA, it.device);
    Tensor scratch;  // partials; freed (stream-ordered) when this returns
    const auto partials = [&](int64_t n) {
      scratch = empty({n * static_cast<int64_t>(sizeof(Acc))}, kUInt8, dev);
      return static_cast<Acc*>(scratch.data_ptr());
    };
    bool done = false;
    if (it.contiguous_full() && it.red_numel >= 4096 && std::is_same_v<V, float>) {
      with_storage_type(it.in_dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<V, float> && computes_in<T, float>()) {
          if (!aligned(it.in, 16)) return;
          constexpr int VEC = 16 / sizeof(T);
          const int64_t want = (it.red_numel / VEC + kThreads - 1) / kThreads;
          const int64_t blocks = want < 8LL * sms ? want : 8LL * sms;
          Acc* p = partials(blocks);
          launch<reduce_vec_kernel<VEC, T, R>>(static_cast<unsigned>(blocks), kThreads, stream, it.device, r,
                                               reinterpret_cast<const T*>(it.in), it.red_numel, p);
          launch<reduce_finalize_kernel<R>>(1u, kThreads, stream, it.device, r, it, blocks, static_cast<const Acc*>(p));
          done = true;
        }
      });
    }
    if (!done && std::is_same_v<V, float> && (it.red_ndim == 1 || it.red_ndim == 2) && it.red_numel >= 1024 &&
        it.red_strides[0] == itemsize(it.in_dtype) && it.out_numel <= 0x7fffffffLL) {
      // Each output reduces one contiguous run, or rows of them: vectorized when every run starts
      // 16-byte aligned and, for rows, is a whole number of vectors (NOTE [ Reducing outer and inner dims ]).
      with_storage_type(it.in_dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<V, float> && computes_in<T, float>()) {
          constexpr int VEC = 16 / sizeof(T);
          bool ok = aligned(it.in, 16);
          for (int d = 0; d < it.out_ndim && ok; ++d) ok = it.out_in_strides[d] % 16 == 0;
          VecRows rows;
          if (it.red_ndim == 2) {
            ok = ok && it.red_sizes[0] % VEC == 0 && it.red_strides[1] % 16 == 0 && it.red_numel / VEC < (int64_t{1} << 31);
            if (!ok) return;
            rows.two = true;
            rows.per_row = FastDivU32(static_cast<uint32_t>(it.red_sizes[0] / VEC));
            rows.row_stride = it.red_strides[1];
          }
          if (!ok) return;
          const int64_t target = 8LL * sms;  // blocks in flight, as the full reduction's
          const int64_t by_size = (it.red_numel + 4 * VEC * kThreads - 1) / (4 * VEC * kThreads);  // a full pass per thread
          int64_t chunks = (target + it.out_numel - 1) / it.out_numel;
          if (chunks > by_size) chunks = by_size;
          if (chunks > 65535) chunks = 65535;
          if (chunks < 1) chunks = 1;
          int64_t chunk = (it.red_numel + chunks - 1) / chunks;
          chunk = (chunk + VEC - 1) / VEC * VEC;
          chunks = (it.red_numel + chunk - 1) / chunk;
          Acc* p = chunks > 1 ? partials(it.out_numel * chunks) : nullptr;
          const dim3 grid(static_cast<unsigned>(it.out_numel), static_cast<unsigned>(chunks));
          launch<reduce_block_vec_kernel<VEC, T, R>>(grid, kThreads, stream, it.device, r, it, chunk, p, rows);
          if (chunks > 1)
            launch<reduce_finalize_kernel<R>>(static_cast<unsigned>(it.out_numel), kThreads, stream, it.device, r, it, chunks,
                                              static_cast<const Acc*>(p));
          done = true;
        }
      });
    }
    constexpr bool kCols = std::is_same_v<V, float>;  // float32 inputs only: a kernel pair per reducer, kept few
    if (kCols && !done && it.in_dtype == dtype_of<V>::value && it.out_dtype == it.in_dtype && it.out_ndim >= 1 && it.out_in_strides[0] == itemsize(it.in_dtype) && it.red_ndim >= 1 &&
        it.red_strides[0] != itemsize(it.in_dtype) && it.out_numel >= kThreads && it.red_numel > 0) {
      // Consecutive outputs are consecutive inputs: NOTE [ Reducing outer dims ].
      const int64_t bx = (it.out_numel + kThreads - 1) / kThreads;
      const int64_t target = 4LL * sms;
      int64_t slices = (target + bx - 1) / bx;
      const int64_t by_size = (it.red_numel + 15) / 16;  // at least 16 elements per thread
      if (slices > by_size) slices = by_size;
      if (slices > 65535) slices = 65535;
      if (slices < 1) slices = 1;
      const int64_t slice = (it.red_numel + slices - 1) / slices;
      slices = (it.red_numel + slice - 1) / slice;
      if (bx <= 0x7fffffffLL) {
        Acc* p = slices > 1 ? partials(it.out_numel * slices) : nullptr;
        const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(slices));
        if constexpr (kCols) {
          launch<reduce_cols_kernel<R>>(grid, kThreads, stream, it.device, r, it, slice, p);
          if (slices > 1)
            launch<reduce_cols_finalize_kernel<R>>(static_cast<unsigned>(bx), kThreads, stream, it.device, r, it, slices,
                                                   static_cast<const Acc*>(p));
        }
        done = true;
      }
    }
    if (!done) {
      const int64_t target = 4LL * sms;  // blocks that keep every SM busy
      if (it.red_numel < 1024 && it.out_numel >= static_cast<int64_t>(sms) * kThreads) {
        const int64_t blocks = (it.out_numel + kThreads - 1) / kThreads;
        launch<reduce_thread_kernel<R>>(static_cast<unsigned>(blocks), kThreads, stream, it.device, r, it);
      } else {
        int64_t chunks = 1;
        if (it.out_numel < target) {
          const int64_t by_size = (it.red_numel + 16 * kThreads - 1) / (16 * kThreads);
          const int64_t by_fill = (target + it.out_numel - 1) / it.out_numel;
          chunks = by_size < by_fill ? by_size : by_fill;
          if (chunks > 65535) chunks = 65535;
          if (chunks < 1) chunks = 1;
        }
        const int64_t chunk = chunks == 1 ? it.red_numel : (it.red_numel + chunks - 1) / chunks;
        Acc* p = chunks > 1 ? partials(it.out_numel * chunks) : nullptr;
        GX_CHECK(it.out_numel <= 0x7fffffffLL, "too many outputs (", it.out_numel, ") for one reduction");
        const dim3 grid(static_cast<unsigned>(it.out_numel), static_cast<unsigned>(chunks));
        launch<reduce_block_kernel<R>>(grid, kThreads, stream, it.device, r, it, chunk, p);
        if (chunks > 1)
          launch<reduce_finalize_kernel<R>>(static_cast<unsigned>(it.out_numel), kThreads, stream, it.device, r, it, chunks,
                                            static_cast<const Acc*>(p));
      }
    }
  }
};

}  // namespace gx::ops
