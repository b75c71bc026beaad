// CUDA topk (sort_keys.h): the k best of each row without sorting it.
//
// NOTE [ topk on CUDA ]
// For k <= 32 and rows longer than a block sort's cheap tiers, each thread
// scans its strided share of a row keeping its KMAX (8, 16 or 32) best
// (key, index) pairs in registers, sorted (an unrolled insertion that only
// runs when an element beats the thread's worst, so a scan is mostly loads
// and one compare); then k rounds of a block-wide arg-best over the threads'
// heads (warp shuffles, then one warp over the warps' winners) pick the k best
// in order, the winner's thread dropping its head each round. Keys are those
// of NOTE [ Sort keys ], flipped for the smallest, and a pair is better with
// the larger key, then the lower index, so the result (best first, ties by
// the lower index) is what a stable sort would give, on every device. Few
// rows are split into chunks, a block each, whose k best go to a scratch
// buffer that a second launch reduces the same way. Larger k, and short rows,
// sort the rows (sort_rows_cuda) and keep the first k.
#include <algorithm>
#include <climits>

#include "sort_cuda.cuh"

namespace gx::ops {
namespace {

using sortkey::Codec;
using sortkey::load_bits;
using sortkey::store_bits;

constexpr int kTopkThreads = 256;
constexpr int kTopkWarps = kTopkThreads / 32;
constexpr int kUnroll = 8;  // loads in flight per thread
constexpr uint32_t kNoIndex = 0xffffffffu;

template <typename K> __device__ __forceinline__ bool better(K ak, uint32_t ai, K bk, uint32_t bi) {
  return ak > bk || (ak == bk && ai < bi);
}

// A thread's KMAX best pairs, best first; empty slots are (0, kNoIndex), worse than any element.
template <typename K, int KMAX> struct TopList {
  K key[KMAX];
  uint32_t idx[KMAX];

  __device__ __forceinline__ void init() {
#pragma unroll
    for (int j = 0; j < KMAX; ++j) {
      key[j] = K(0);
      idx[j] = kNoIndex;
    }
  }
  __device__ __forceinline__ void push(K k, uint32_t i) {
    if (!better(k, i, key[KMAX - 1], idx[KMAX - 1])) return;
    key[KMAX - 1] = k;
    idx[KMAX - 1] = i;
#pragma unroll
    for (int j = KMAX - 1; j > 0; --j) {
      if (better(key[j], idx[j], key[j - 1], idx[j - 1])) {
        const K tk = key[j];
        key[j] = key[j - 1];
        key[j - 1] = tk;
        const uint32_t ti = idx[j];
        idx[j] = idx[j - 1];
        idx[j - 1] = ti;
      }
    }
  }
  __device__ __forceinline__ void pop() {
#pragma unroll
    for (int j = 0; j + 1 < KMAX; ++j) {
      key[j] = key[j + 1];
      idx[j] = idx[j + 1];
    }
    key[KMAX - 1] = K(0);
    idx[KMAX - 1] = kNoIndex;
  }
};

struct TopkArgs {
  const char* x;  // the input rows [rows, n]
  Codec c;
  int64_t n;
  const void* in_keys;  // second pass: the first pass's candidates [rows, in_len]
  const uint32_t* in_idx;
  int64_t in_len;
  int64_t rows, chunk, chunks;  // each (row, chunk) a block
  int k;
  uint64_t flip;           // 0 (largest) or the key mask (smallest)
  void* out_keys;          // first of two passes: candidates [rows, chunks, k]
  uint32_t* out_idx;
  char* values;            // else the result [rows, k]
  int64_t* indices;
};

template <typename K> __device__ __forceinline__ void warp_best(K& k, uint32_t& i) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const K ok = __shfl_xor_sync(0xffffffffu, k, o);
    const uint32_t oi = __shfl_xor_sync(0xffffffffu, i, o);
    if (better(ok, oi, k, i)) {
      k = ok;
      i = oi;
    }
  }
}

template <typename K, int KMAX, bool FROM_X>
__global__ void __launch_bounds__(kTopkThreads) topk_kernel(const __grid_constant__ TopkArgs a) {
  __shared__ K wkey[kTopkWarps];
  __shared__ uint32_t widx[kTopkWarps];
  __shared__ K best_key;
  __shared__ uint32_t best_idx;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t len = FROM_X ? a.n : a.in_len;
  for (int64_t b = blockIdx.x; b < a.rows * a.chunks; b += gridDim.x) {
    const int64_t row = b / a.chunks, ch = b - row * a.chunks;
    const int64_t begin = ch * a.chunk, end = begin + a.chunk < len ? begin + a.chunk : len;
    TopList<K, KMAX> top;
    top.init();
    if constexpr (FROM_X) {
      const K flip = static_cast<K>(a.flip);
      const char* rowp = a.x + row * a.n * a.c.item;
      const auto scan = [&](auto tag) {
        using R = typename decltype(tag)::type;
        const R* p = reinterpret_cast<const R*>(rowp);
        for (int64_t i0 = begin + threadIdx.x; i0 < end; i0 += int64_t{kTopkThreads} * kUnroll) {
          R raw[kUnroll];
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            const int64_t i = i0 + int64_t{u} * kTopkThreads;
            raw[u] = i < end ? p[i] : R(0);
          }
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            const int64_t i = i0 + int64_t{u} * kTopkThreads;
            if (i < end) top.push(static_cast<K>(static_cast<K>(a.c.encode(raw[u])) ^ flip), static_cast<uint32_t>(i));
          }
        }
      };
      if constexpr (sizeof(K) == 4) {  // 1-, 2- and 4-byte elements
        if (a.c.item == 1) scan(Tag<uint8_t>{});
        else if (a.c.item == 2) scan(Tag<uint16_t>{});
        else scan(Tag<uint32_t>{});
      } else {
        scan(Tag<uint64_t>{});
      }
    } else {
      const K* kin = static_cast<const K*>(a.in_keys) + row * a.in_len;
      const uint32_t* iin = a.in_idx + row * a.in_len;
      for (int64_t i = begin + threadIdx.x; i < end; i += kTopkThreads) top.push(kin[i], iin[i]);
    }
    // k rounds: the block's best head wins and its thread drops it.
    for (int r = 0; r < a.k; ++r) {
      K bk = top.key[0];
      uint32_t bi = top.idx[0];
      warp_best(bk, bi);
      if (lane == 0) {
        wkey[warp] = bk;
        widx[warp] = bi;
      }
      __syncthreads();
      if (warp == 0) {
        bk = lane < kTopkWarps ? wkey[lane] : K(0);
        bi = lane < kTopkWarps ? widx[lane] : kNoIndex;
        warp_best(bk, bi);
        if (lane == 0) {
          best_key = bk;
          best_idx = bi;
        }
      }
      __syncthreads();
      bk = best_key;
      bi = best_idx;
      if (top.key[0] == bk && top.idx[0] == bi) top.pop();
      if (threadIdx.x == 0) {
        if (a.out_keys != nullptr) {
          const int64_t o = (row * a.chunks + ch) * a.k + r;
          static_cast<K*>(a.out_keys)[o] = bk;
          a.out_idx[o] = bi;
        } else {
          const uint64_t key = static_cast<K>(bk ^ static_cast<K>(a.flip));
          const int64_t item = a.c.item;
          const uint64_t v = a.c.special(key) ? load_bits(a.x + (row * a.n + bi) * item, item) : a.c.decode(key);
          store_bits(a.values + (row * a.k + r) * item, item, v);
          a.indices[row * a.k + r] = bi;
        }
      }
      __syncthreads();  // wkey and best_* are rewritten next round
    }
  }
}

template <typename K, int KMAX>
void topk_passes(TopkArgs a, int device, cudaStream_t stream) {
  const int64_t sms = sm_count(device);
  // Enough blocks for every SM; a chunk of at least 16 elements per thread.
  const int64_t target = 4 * sms;
  int64_t chunks = 1;
  if (a.rows < target) {
    const int64_t by_fill = (target + a.rows - 1) / a.rows;
    const int64_t by_size = a.n / (16 * kTopkThreads);
    chunks = std::max<int64_t>(1, std::min(by_fill, by_size));
  }
  a.chunk = (a.n + chunks - 1) / chunks;
  a.chunks = (a.n + a.chunk - 1) / a.chunk;
  const auto grid = [](int64_t blocks) { return static_cast<unsigned>(std::min<int64_t>(blocks, 0x7fffffff)); };
  if (a.chunks == 1) {
    topk_kernel<K, KMAX, true><<<grid(a.rows), kTopkThreads, 0, stream>>>(a);
    GX_CHECK_LAUNCH();
    return;
  }
  const int64_t cand = a.rows * a.chunks * a.k;
  Tensor kbuf = scratch(cand * static_cast<int64_t>(sizeof(K)), device);
  Tensor ibuf = scratch(cand * static_cast<int64_t>(sizeof(uint32_t)), device);
  TopkArgs first = a;
  first.out_keys = kbuf.data_ptr();
  first.out_idx = static_cast<uint32_t*>(ibuf.data_ptr());
  topk_kernel<K, KMAX, true><<<grid(a.rows * a.chunks), kTopkThreads, 0, stream>>>(first);
  GX_CHECK_LAUNCH();
  TopkArgs second = a;
  second.in_keys = kbuf.data_ptr();
  second.in_idx = first.out_idx;
  second.in_len = a.chunks * a.k;
  second.chunk = second.in_len;
  second.chunks = 1;
  topk_kernel<K, KMAX, false><<<grid(a.rows), kTopkThreads, 0, stream>>>(second);
  GX_CHECK_LAUNCH();
}

template <typename K>
void topk_registers(const TopkArgs& a, int device, cudaStream_t stream) {
  if (a.k <= 8) topk_passes<K, 8>(a, device, stream);
  else if (a.k <= 16) topk_passes<K, 16>(a, device, stream);
  else topk_passes<K, 32>(a, device, stream);
}

}  // namespace

void topk_cuda(const Tensor& self, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  const Rows r = rows_of(self, "topk");
  GX_CHECK(k >= 0 && k <= r.n, "topk: k (", k, ") must be in [0, ", r.n, "], the length of the rows");
  check_rows_out(self, values, k, self.dtype(), "topk", "values");
  check_rows_out(self, indices, k, kInt64, "topk", "indices");
  if (r.rows == 0 || k == 0) return;
  GX_CHECK(r.n <= INT_MAX, "topk: rows of ", r.n, " elements are too long for CUDA (at most 2^31 - 1)");
  const int device = self.device().index;
  DeviceGuard guard(device);
  const char* x = static_cast<const char*>(self.data_ptr());
  char* v = static_cast<char*>(values.data_ptr());
  auto* idx = static_cast<int64_t*>(indices.data_ptr());
  // Short rows: one block sort of each is about as cheap as the k merge rounds.
  if (k > 32 || r.n <= 1024) {
    sort_rows_cuda(x, self.dtype(), r.rows, r.n, largest, k, v, idx, device);
    return;
  }
  TopkArgs a{};
  a.x = x;
  a.c = sortkey::codec_of(self.dtype());
  a.n = r.n;
  a.rows = r.rows;
  a.k = static_cast<int>(k);
  a.flip = largest ? 0 : a.c.mask();
  a.values = v;
  a.indices = idx;
  cudaStream_t stream = current_stream(device);
  if (a.c.item <= 4) topk_registers<uint32_t>(a, device, stream);
  else topk_registers<uint64_t>(a, device, stream);
}

}  // namespace gx::ops
