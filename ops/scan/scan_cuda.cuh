// CUDA scan kernels for every policy of scan.h (NOTE [ One scan, three
// operations ]); scan.cu and scan_extremum.cu instantiate them.
//
//   scan_block_kernel       a block per (line, chunk of the line): tiles of 256
//                           elements, a warp-shuffle scan in each warp, the
//                           warps' totals through shared memory, a running carry
//                           from tile to tile. With one chunk per line its carry
//                           starts at the identity; with several (few long
//                           lines, so that every SM has work)
//                           scan_chunk_totals_kernel first writes each chunk's
//                           total and a block starts from the combination of the
//                           totals before its chunk.
//   scan_lines_kernel       a thread per line, in order: short lines, or a
//                           strided dim with many lines (a warp then reads 32
//                           neighbouring lines' elements together).
// Loads and stores go through the runtime dtypes (NOTE [ Ops along one
// dimension ]): 3 kernels per policy and compute type. `ix` walks the indices
// output of the policies that have one (P::kIndices), else is unused.
#pragma once
#include "../reduce/cuda_reduce.cuh"
#include "scan.h"

namespace gx::ops {
namespace scan_detail {

constexpr int kWarp = 32;
constexpr int kWarps = kThreads / kWarp;

template <typename T> __device__ __forceinline__ T shfl_up(T v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }
template <typename C> __device__ __forceinline__ ValueIndex<C> shfl_up(ValueIndex<C> v, int o) {
  return ValueIndex<C>{__shfl_up_sync(0xffffffffu, v.v, o), __shfl_up_sync(0xffffffffu, v.i, o)};
}

// The start of line l's indices (policies with indices); else ix's base, never written (stores ignore it).
template <typename P> __device__ __forceinline__ char* index_line(const DimIter& ix, int64_t l) {
  if constexpr (P::kIndices) {
    int64_t unused, off;
    line_offsets(ix, l, unused, off);
    return ix.out + off;
  } else {
    return ix.out;
  }
}

template <typename P>
__global__ void __launch_bounds__(kThreads) scan_lines_kernel(P p, const __grid_constant__ DimIter it,
                                                              const __grid_constant__ DimIter ix) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; l < it.lines; l += stride) {
    int64_t in_off, out_off;
    line_offsets(it, l, in_off, out_off);
    const char* in = it.in + in_off;
    char* out = it.out + out_off;
    char* idx = index_line<P>(ix, l);
    typename P::Acc acc = p.init();
    for (int64_t i = 0; i < it.len; ++i) {
      acc = p.combine(acc, p.load(in + i * it.in_step, it.in_dtype, i));
      p.store(out + i * it.out_step, it.out_dtype, idx + i * ix.out_step, acc);
    }
  }
}

// totals[l * gridDim.y + c] = the combination of chunk c of line l (the
// combination is commutative: NOTE [ Running extremum keys ]).
template <typename P>
__global__ void __launch_bounds__(kThreads) scan_chunk_totals_kernel(P p, const __grid_constant__ DimIter it, int64_t chunk,
                                                                     typename P::Acc* totals) {
  const int64_t l = blockIdx.x, c = blockIdx.y;
  int64_t in_off, out_off;
  line_offsets(it, l, in_off, out_off);
  const char* in = it.in + in_off;
  const int64_t begin = c * chunk;
  const int64_t end = begin + chunk < it.len ? begin + chunk : it.len;
  typename P::Acc acc = p.init();
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) acc = p.combine(acc, p.load(in + i * it.in_step, it.in_dtype, i));
  acc = block_reduce(p, acc);
  if (threadIdx.x == 0) totals[l * gridDim.y + c] = acc;
}

// Lines blockIdx.x, + gridDim.x, ...; chunk blockIdx.y of each (totals: the
// chunk totals when gridDim.y > 1, else null).
template <typename P>
__global__ void __launch_bounds__(kThreads) scan_block_kernel(P p, const __grid_constant__ DimIter it,
                                                              const __grid_constant__ DimIter ix, int64_t chunk,
                                                              const typename P::Acc* totals) {
  using Acc = typename P::Acc;
  __shared__ Acc wsum[kWarps];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t c = blockIdx.y;
  for (int64_t l = blockIdx.x; l < it.lines; l += gridDim.x) {
    int64_t in_off, out_off;
    line_offsets(it, l, in_off, out_off);
    const char* in = it.in + in_off;
    char* out = it.out + out_off;
    char* idx = index_line<P>(ix, l);
    Acc carry = p.init();
    if (totals != nullptr && c > 0) {
      Acc before = p.init();
      for (int64_t k = threadIdx.x; k < c; k += kThreads) before = p.combine(before, totals[l * gridDim.y + k]);
      carry = block_reduce(p, before);
      __syncthreads();  // block_reduce's shared memory is read by every thread above
    }
    const int64_t begin = c * chunk;
    const int64_t end = begin + chunk < it.len ? begin + chunk : it.len;
    for (int64_t t0 = begin; t0 < end; t0 += kThreads) {
      const int64_t i = t0 + threadIdx.x;
      Acc v = i < end ? p.load(in + i * it.in_step, it.in_dtype, i) : p.init();
#pragma unroll
      for (int o = 1; o < kWarp; o <<= 1) {
        const Acc u = shfl_up(v, o);
        if (lane >= o) v = p.combine(u, v);
      }
      if (lane == kWarp - 1) wsum[warp] = v;
      __syncthreads();
      Acc before = carry, total = carry;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        if (w < warp) before = p.combine(before, wsum[w]);
        total = p.combine(total, wsum[w]);
      }
      if (i < end) p.store(out + i * it.out_step, it.out_dtype, idx + i * ix.out_step, p.combine(before, v));
      carry = total;
      __syncthreads();  // wsum is rewritten by the next tile
    }
  }
}

inline unsigned grid_of(int64_t want) {
  constexpr int64_t kMaxGrid = 0x7fffffff;
  return static_cast<unsigned>(want < 1 ? 1 : want > kMaxGrid ? kMaxGrid : want);
}

}  // namespace scan_detail

// Picks the kernels for `it` and launches policy p on the current stream.
template <typename P> void scan_cuda_run(const P& p, const DimIter& it, const DimIter& ix) {
  using namespace scan_detail;
  using Acc = typename P::Acc;
  if (it.numel() == 0) return;
  DeviceGuard guard(it.device);
  cudaStream_t stream = current_stream(it.device);
  const int64_t sms = sm_count(it.device);
  const bool contiguous = it.in_step == itemsize(it.in_dtype);
  if (it.len <= kWarp || (!contiguous && it.lines >= 4 * kThreads)) {
    scan_lines_kernel<P><<<grid_of((it.lines + kThreads - 1) / kThreads), kThreads, 0, stream>>>(p, it, ix);
    GX_CHECK_LAUNCH();
    return;
  }
  // Chunks so that every SM has a block, each of at least 16 tiles.
  const int64_t target = 4 * sms;
  int64_t chunks = 1;
  if (it.lines < target) {
    const int64_t by_size = it.len / (16 * kThreads);
    const int64_t by_fill = (target + it.lines - 1) / it.lines;
    chunks = by_size < by_fill ? by_size : by_fill;
    if (chunks > 65535) chunks = 65535;
    if (chunks < 1) chunks = 1;
  }
  const int64_t chunk = (it.len + chunks - 1) / chunks;
  chunks = (it.len + chunk - 1) / chunk;  // no empty chunk
  Tensor scratch;  // chunk totals; freed (stream-ordered) when this returns
  Acc* totals = nullptr;
  if (chunks > 1) {
    scratch = empty({it.lines * chunks * static_cast<int64_t>(sizeof(Acc))}, kUInt8, Device(kCUDA, it.device));
    totals = static_cast<Acc*>(scratch.data_ptr());
    const dim3 grid(static_cast<unsigned>(it.lines), static_cast<unsigned>(chunks));
    scan_chunk_totals_kernel<P><<<grid, kThreads, 0, stream>>>(p, it, chunk, totals);
  }
  const dim3 grid(grid_of(it.lines), static_cast<unsigned>(chunks));
  scan_block_kernel<P><<<grid, kThreads, 0, stream>>>(p, it, ix, chunk, totals);
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
