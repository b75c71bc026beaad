// CUDA cumsum (scan.h), computing in float, double or int64_t.
//
//   cumsum_block_kernel     a block per (line, chunk of the line): tiles of 256
//                           elements, a warp-shuffle scan in each warp, the
//                           warps' totals through shared memory, a running carry
//                           from tile to tile. With one chunk per line its carry
//                           starts at 0; with several (few long lines, so that
//                           every SM has work) cumsum_chunk_sums_kernel first
//                           writes each chunk's total and a block starts from
//                           the sum of the totals before its chunk.
//   cumsum_lines_kernel     a thread per line, in order: short lines, or a
//                           strided dim with many lines (a warp then reads 32
//                           neighbouring lines' elements together).
// Loads and stores go through the runtime dtypes (NOTE [ Ops along one
// dimension ]): 3 kernels per compute type.
#include "../reduce/cuda_reduce.cuh"
#include "../reduce/reducers.h"
#include "scan.h"

namespace gx::ops {
namespace {

constexpr int kWarp = 32;
constexpr int kWarps = kThreads / kWarp;

template <typename C>
__global__ void __launch_bounds__(kThreads) cumsum_lines_kernel(const __grid_constant__ DimIter it) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; l < it.lines; l += stride) {
    int64_t in_off, out_off;
    line_offsets(it, l, in_off, out_off);
    const char* in = it.in + in_off;
    char* out = it.out + out_off;
    C acc = C(0);
    for (int64_t i = 0; i < it.len; ++i) {
      acc = scan_add(acc, load_as<C>(in + i * it.in_step, it.in_dtype));
      store_as(out + i * it.out_step, it.out_dtype, acc);
    }
  }
}

// partials[l * gridDim.y + c] = the sum of chunk c of line l.
template <typename C>
__global__ void __launch_bounds__(kThreads) cumsum_chunk_sums_kernel(const __grid_constant__ DimIter it, int64_t chunk,
                                                                     C* partials) {
  const int64_t l = blockIdx.x, c = blockIdx.y;
  int64_t in_off, out_off;
  line_offsets(it, l, in_off, out_off);
  const char* in = it.in + in_off;
  const int64_t begin = c * chunk;
  const int64_t end = begin + chunk < it.len ? begin + chunk : it.len;
  C acc = C(0);
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) acc = scan_add(acc, load_as<C>(in + i * it.in_step, it.in_dtype));
  acc = block_reduce(SumReducer<C>{}, acc);
  if (threadIdx.x == 0) partials[l * gridDim.y + c] = acc;
}

// Lines blockIdx.x, + gridDim.x, ...; chunk blockIdx.y of each (partials: the
// chunk totals when gridDim.y > 1, else null).
template <typename C>
__global__ void __launch_bounds__(kThreads) cumsum_block_kernel(const __grid_constant__ DimIter it, int64_t chunk,
                                                                const C* partials) {
  __shared__ C wsum[kWarps];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t c = blockIdx.y;
  for (int64_t l = blockIdx.x; l < it.lines; l += gridDim.x) {
    int64_t in_off, out_off;
    line_offsets(it, l, in_off, out_off);
    const char* in = it.in + in_off;
    char* out = it.out + out_off;
    C carry = C(0);
    if (partials != nullptr && c > 0) {
      C before = C(0);
      for (int64_t k = threadIdx.x; k < c; k += kThreads) before = scan_add(before, partials[l * gridDim.y + k]);
      carry = block_reduce(SumReducer<C>{}, before);
      __syncthreads();  // block_reduce's shared memory is read by every thread above
    }
    const int64_t begin = c * chunk;
    const int64_t end = begin + chunk < it.len ? begin + chunk : it.len;
    for (int64_t t0 = begin; t0 < end; t0 += kThreads) {
      const int64_t i = t0 + threadIdx.x;
      C v = i < end ? load_as<C>(in + i * it.in_step, it.in_dtype) : C(0);
#pragma unroll
      for (int o = 1; o < kWarp; o <<= 1) {
        const C u = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v = scan_add(u, v);
      }
      if (lane == kWarp - 1) wsum[warp] = v;
      __syncthreads();
      C before = carry, total = carry;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        if (w < warp) before = scan_add(before, wsum[w]);
        total = scan_add(total, wsum[w]);
      }
      if (i < end) store_as(out + i * it.out_step, it.out_dtype, scan_add(before, v));
      carry = total;
      __syncthreads();  // wsum is rewritten by the next tile
    }
  }
}

inline unsigned grid_of(int64_t want) {
  constexpr int64_t kMaxGrid = 0x7fffffff;
  return static_cast<unsigned>(want < 1 ? 1 : want > kMaxGrid ? kMaxGrid : want);
}

// Picks the kernels for `it` and launches them.
void cumsum_cuda_run(const DimIter& it, ScalarType dtype) {
  with_compute<kCNumeric>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if (it.numel() == 0) return;
    DeviceGuard guard(it.device);
    cudaStream_t stream = current_stream(it.device);
    const int64_t sms = sm_count(it.device);
    const bool contiguous = it.in_step == itemsize(it.in_dtype);
    if (it.len <= kWarp || (!contiguous && it.lines >= 4 * kThreads)) {
      cumsum_lines_kernel<C><<<grid_of((it.lines + kThreads - 1) / kThreads), kThreads, 0, stream>>>(it);
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
    C* partials = nullptr;
    if (chunks > 1) {
      scratch = empty({it.lines * chunks * static_cast<int64_t>(sizeof(C))}, kUInt8, Device(kCUDA, it.device));
      partials = static_cast<C*>(scratch.data_ptr());
      const dim3 grid(static_cast<unsigned>(it.lines), static_cast<unsigned>(chunks));
      cumsum_chunk_sums_kernel<C><<<grid, kThreads, 0, stream>>>(it, chunk, partials);
    }
    const dim3 grid(grid_of(it.lines), static_cast<unsigned>(chunks));
    cumsum_block_kernel<C><<<grid, kThreads, 0, stream>>>(it, chunk, partials);
    GX_CHECK_LAUNCH();
  });
}

}  // namespace

void cumsum_cuda(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  cumsum_cuda_run(make_dim_iter(self, dim, out), dtype);
}

}  // namespace gx::ops
