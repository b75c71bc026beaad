// CUDA softmax and log_softmax (softmax.h).
//
//   softmax_rows_kernel     rows() layouts (NOTE [ Ops along one dimension ]) of
//                           one dtype in and out: float32/float16/bfloat16
//                           (computing in float) and float64, 16-byte vector
//                           loads and stores when the rows are aligned (else
//                           one element per load). A warp per row while the row
//                           fits its registers (32 * kRegVecs vectors), else
//                           the smallest block of 256, 512 or 1024 threads it
//                           fits: the row is read once into registers (as C),
//                           and max, the exps and the outputs come from there,
//                           one exp per element: one read and one write of the
//                           row, the bandwidth floor. The bench case, 4096 x
//                           4096 float32 (>= 90% of torch.softmax), runs a
//                           256-thread block per row, 4 vectors per thread, 62
//                           registers. Rows longer than 1024 * kRegVecs vectors:
//                           online max and sum in one read, then a second read
//                           for the outputs.
//   softmax_line_kernel     any other layout or dtype mix with few lines, or a
//                           contiguous dim: a block per line, strided loads
//                           through the runtime dtypes, the same online read
//                           and output pass.
//   softmax_cols_kernel     a non-contiguous dim with many lines (softmax over
//                           axis 0 of a matrix): 32 lines per block, 8 threads
//                           splitting each line, so a warp reads 32 neighbouring
//                           lines' elements together.
// Instantiations: 8 row kernels (4 storage types x vector or scalar loads) and
// 2 x 2 general ones (float, double); log_softmax is a uniform runtime branch,
// not a template argument.
#include "../common/cuda_loops.cuh"
#include "softmax.h"

namespace gx::ops {
namespace {

constexpr int kWarp = 32;
constexpr int kWarps = kThreads / kWarp;
constexpr int kMaxBlock = 1024;      // the rows kernel's largest block
// Vectors of a row one thread of the rows kernel holds in registers: 16
// elements of float vectors, 8 of anything else (scalar loads, or double),
// what fits the 64 registers a 1024-thread block leaves without spilling.
template <int VEC, typename C> constexpr int kRegVecs = (VEC > 1 && sizeof(C) == 4 ? 16 : 8) / VEC;

struct MaxOp {
  template <typename C> __device__ __forceinline__ C operator()(C a, C b) const { return b > a ? b : a; }
};
struct SumOp {
  template <typename C> __device__ __forceinline__ C operator()(C a, C b) const { return a + b; }
};

template <typename C, typename Op> __device__ __forceinline__ C warp_reduce(C v, Op op) {
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <typename C> __device__ __forceinline__ C warp_max(C v) { return warp_reduce(v, MaxOp{}); }
template <typename C> __device__ __forceinline__ C warp_sum(C v) { return warp_reduce(v, SumOp{}); }

// Block-wide max / sum over the block's `nwarps` warps (every thread gets the
// result). Each has its own shared array, so two in a row (max, then sum) need
// no barrier between one row's reads and the next row's writes beyond the ones
// inside.
template <typename C, typename Op> __device__ __forceinline__ C block_reduce(C v, C* smem, int nwarps, Op op) {
  v = warp_reduce(v, op);
  if (threadIdx.x % kWarp == 0) smem[threadIdx.x / kWarp] = v;
  __syncthreads();
  C r = smem[0];
  for (int w = 1; w < nwarps; ++w) r = op(r, smem[w]);
  return r;
}
template <typename C> __device__ __forceinline__ C block_max(C v, C* smem, int nwarps) {
  return block_reduce(v, smem, nwarps, MaxOp{});
}
template <typename C> __device__ __forceinline__ C block_sum(C v, C* smem, int nwarps) {
  return block_reduce(v, smem, nwarps, SumOp{});
}

template <typename C> __device__ __forceinline__ C store_value(bool log, C x, C mx, C sum, C log_sum) {
  return log ? softmax_value<true>(x, mx, sum, log_sum) : softmax_value<false>(x, mx, sum, log_sum);
}

struct RowArgs {
  const void* in;
  void* out;
  int64_t rows;
  int64_t len;     // elements per row (a multiple of VEC)
  int64_t in_row;  // elements between row starts
  int64_t out_row;
  bool warp_rows;  // a warp per row (else a block)
  bool log;
};

// A warp (warp_rows) or the block per row, grid-stride over rows.
template <int VEC, typename T, typename C>
__global__ void __launch_bounds__(kMaxBlock) softmax_rows_kernel(RowArgs a) {
  using VT = Vec<T, VEC>;
  constexpr int R = kRegVecs<VEC, C>;
  __shared__ C smax[kMaxBlock / kWarp];
  __shared__ C ssum[kMaxBlock / kWarp];
  const bool wr = a.warp_rows;
  const int nwarps = blockDim.x / kWarp;
  const int group = wr ? kWarp : blockDim.x;
  const int tid = wr ? threadIdx.x % kWarp : threadIdx.x;
  const int64_t first = wr ? static_cast<int64_t>(blockIdx.x) * nwarps + threadIdx.x / kWarp : blockIdx.x;
  const int64_t step = wr ? static_cast<int64_t>(gridDim.x) * nwarps : gridDim.x;
  const int64_t nvec = a.len / VEC;
  const auto gmax = [&](C v) { return wr ? warp_max(v) : block_max(v, smax, nwarps); };
  const auto gsum = [&](C v) { return wr ? warp_sum(v) : block_sum(v, ssum, nwarps); };
  for (int64_t row = first; row < a.rows; row += step) {
    const VT* src = reinterpret_cast<const VT*>(static_cast<const T*>(a.in) + row * a.in_row);
    VT* dst = reinterpret_cast<VT*>(static_cast<T*>(a.out) + row * a.out_row);
    if (nvec <= static_cast<int64_t>(group) * R) {
      // The row in registers (as C): one read, one exp per element. 32-bit
      // indices: a row here has at most 1024 * R vectors.
      const int n = static_cast<int>(nvec);
      C x[R][VEC];
      C mx = lowest<C>();
#pragma unroll
      for (int k = 0; k < R; ++k) {
        const int v = tid + k * group;
        if (v < n) {
          const VT in = src[v];
#pragma unroll
          for (int j = 0; j < VEC; ++j) {
            x[k][j] = to<C>(in.v[j]);
            mx = x[k][j] > mx ? x[k][j] : mx;
          }
        }
      }
      mx = gmax(mx);
      C sum = C(0);
      if (a.log) {
#pragma unroll
        for (int k = 0; k < R; ++k)
          if (tid + k * group < n)
#pragma unroll
            for (int j = 0; j < VEC; ++j) sum += m_exp(x[k][j] - mx);
        sum = gsum(sum);
        const C log_sum = m_log(sum);
#pragma unroll
        for (int k = 0; k < R; ++k) {
          const int v = tid + k * group;
          if (v < n) {
            VT y;
#pragma unroll
            for (int j = 0; j < VEC; ++j) y.v[j] = to<T>(softmax_value<true>(x[k][j], mx, sum, log_sum));
            dst[v] = y;
          }
        }
      } else {
#pragma unroll
        for (int k = 0; k < R; ++k)
          if (tid + k * group < n)
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
              x[k][j] = m_exp(x[k][j] - mx);
              sum += x[k][j];
            }
        sum = gsum(sum);
        const C inv = C(1) / sum;
#pragma unroll
        for (int k = 0; k < R; ++k) {
          const int v = tid + k * group;
          if (v < n) {
            VT y;
#pragma unroll
            for (int j = 0; j < VEC; ++j) y.v[j] = to<T>(x[k][j] * inv);
            dst[v] = y;
          }
        }
      }
    } else {
      // Longer rows: online max and sum in one read, then a second read for the outputs.
      C m = lowest<C>(), s = C(0);
      for (int64_t v = tid; v < nvec; v += group) {
        const VT in = src[v];
#pragma unroll
        for (int j = 0; j < VEC; ++j) online_step(m, s, to<C>(in.v[j]));
      }
      const C mx = gmax(m);
      const C sum = gsum(online_rescale(m, s, mx));
      const C log_sum = m_log(sum);
      for (int64_t v = tid; v < nvec; v += group) {
        const VT in = src[v];
        VT y;
#pragma unroll
        for (int j = 0; j < VEC; ++j) y.v[j] = to<T>(store_value(a.log, to<C>(in.v[j]), mx, sum, log_sum));
        dst[v] = y;
      }
    }
  }
}

template <typename C>
__global__ void __launch_bounds__(kThreads) softmax_line_kernel(const __grid_constant__ DimIter it, bool log) {
  __shared__ C smax[kWarps];
  __shared__ C ssum[kWarps];
  for (int64_t l = blockIdx.x; l < it.lines; l += gridDim.x) {
    int64_t in_off, out_off;
    line_offsets(it, l, in_off, out_off);
    const char* in = it.in + in_off;
    char* out = it.out + out_off;
    C m = lowest<C>(), s = C(0);
    for (int64_t i = threadIdx.x; i < it.len; i += kThreads) online_step(m, s, load_as<C>(in + i * it.in_step, it.in_dtype));
    const C mx = block_max(m, smax, kWarps);
    const C sum = block_sum(online_rescale(m, s, mx), ssum, kWarps);
    const C log_sum = m_log(sum);
    for (int64_t i = threadIdx.x; i < it.len; i += kThreads)
      store_as(out + i * it.out_step, it.out_dtype,
               store_value(log, load_as<C>(in + i * it.in_step, it.in_dtype), mx, sum, log_sum));
  }
}

constexpr int kColLines = 32;                     // lines per block (threadIdx.x % 32)
constexpr int kColSplit = kThreads / kColLines;   // threads per line (threadIdx.x / 32)

template <typename C>
__global__ void __launch_bounds__(kThreads) softmax_cols_kernel(const __grid_constant__ DimIter it, bool log) {
  __shared__ C sm[kColSplit][kColLines];
  __shared__ C ss[kColSplit][kColLines];
  const int lx = threadIdx.x % kColLines, ly = threadIdx.x / kColLines;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kColLines; base < it.lines;
       base += static_cast<int64_t>(gridDim.x) * kColLines) {
    const int64_t l = base + lx;
    const bool live = l < it.lines;
    int64_t in_off = 0, out_off = 0;
    if (live) line_offsets(it, l, in_off, out_off);
    const char* in = it.in + in_off;
    char* out = it.out + out_off;
    C m = lowest<C>(), s = C(0);
    if (live)
      for (int64_t i = ly; i < it.len; i += kColSplit) online_step(m, s, load_as<C>(in + i * it.in_step, it.in_dtype));
    sm[ly][lx] = m;
    ss[ly][lx] = s;
    __syncthreads();
    C mx = sm[0][lx];
#pragma unroll
    for (int k = 1; k < kColSplit; ++k) mx = sm[k][lx] > mx ? sm[k][lx] : mx;
    C sum = C(0);
#pragma unroll
    for (int k = 0; k < kColSplit; ++k) sum += online_rescale(sm[k][lx], ss[k][lx], mx);
    __syncthreads();  // the next lines' partials overwrite these
    const C log_sum = m_log(sum);
    if (live)
      for (int64_t i = ly; i < it.len; i += kColSplit)
        store_as(out + i * it.out_step, it.out_dtype,
                 store_value(log, load_as<C>(in + i * it.in_step, it.in_dtype), mx, sum, log_sum));
  }
}

inline unsigned grid_of(int64_t want) {
  constexpr int64_t kMaxGrid = 0x7fffffff;
  return static_cast<unsigned>(want < 1 ? 1 : want > kMaxGrid ? kMaxGrid : want);
}

// The rows() fast path for storage type T (in and out), if its conditions hold.
template <typename T, typename C> bool launch_rows(const DimIter& it, bool log, cudaStream_t stream) {
  constexpr int VEC = 16 / sizeof(T);
  const int64_t item = sizeof(T);
  const int64_t in_row = it.row_in_stride(), out_row = it.row_out_stride();
  if (in_row % item != 0 || out_row % item != 0) return false;
  RowArgs a;
  a.in = it.in;
  a.out = it.out;
  a.rows = it.lines;
  a.len = it.len;
  a.in_row = in_row / item;
  a.out_row = out_row / item;
  a.log = log;
  const bool vec = it.len % VEC == 0 && aligned(it.in, 16) && aligned(it.out, 16) &&
                   (it.lines == 1 || (a.in_row % VEC == 0 && a.out_row % VEC == 0));
  const int v = vec ? VEC : 1;
  const int64_t nvec = it.len / v;
  const int64_t regs = vec ? kRegVecs<VEC, C> : kRegVecs<1, C>;  // vectors per thread in registers
  // A warp per row while the row fits its registers; else the smallest block
  // (256, 512, 1024 threads) it fits; else 1024 threads reading the row twice.
  a.warp_rows = nvec <= kWarp * regs;
  int block = kThreads;
  if (!a.warp_rows)
    while (block < kMaxBlock && nvec > block * regs) block *= 2;
  const unsigned grid = grid_of(a.warp_rows ? (it.lines + kWarps - 1) / kWarps : it.lines);
  if (vec) softmax_rows_kernel<VEC, T, C><<<grid, block, 0, stream>>>(a);
  else softmax_rows_kernel<1, T, C><<<grid, block, 0, stream>>>(a);
  return true;
}

// Picks the kernel for `it` (checked by softmax_iter) and launches it.
void softmax_cuda_run(const DimIter& it, bool log, ScalarType dtype) {
  if (it.numel() == 0) return;
  DeviceGuard guard(it.device);
  cudaStream_t stream = current_stream(it.device);
  with_compute<kCFloating>(dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    bool done = false;
    if (it.rows() && it.in_dtype == dtype && it.out_dtype == dtype) {
      with_storage_type(dtype, [&](auto st) {
        using T = typename decltype(st)::type;
        if constexpr (computes_in<T, C>()) done = launch_rows<T, C>(it, log, stream);
      });
    }
    if (!done) {
      const bool strided = it.in_step != itemsize(it.in_dtype);
      if (strided && it.lines >= 4 * kColLines) {
        softmax_cols_kernel<C><<<grid_of((it.lines + kColLines - 1) / kColLines), kThreads, 0, stream>>>(it, log);
      } else {
        softmax_line_kernel<C><<<grid_of(it.lines), kThreads, 0, stream>>>(it, log);
      }
    }
  });
  GX_CHECK_LAUNCH();
}

}  // namespace

void softmax_cuda(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  softmax_cuda_run(softmax_iter(self, dim, dtype, out), false, dtype);
}

void log_softmax_cuda(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  softmax_cuda_run(softmax_iter(self, dim, dtype, out), true, dtype);
}

}  // namespace gx::ops
