// The block sorts of NOTE [ Row sorts on CUDA ] (sort_cuda.cuh): a block per
// row, cub::BlockRadixSort over (key, index) pairs in registers and shared
// memory. Each thread reads its elements striped (coalesced), a
// cub::BlockExchange puts them in blocked order (the order the sort keeps for
// equal keys, so blocked position = index keeps it stable), and the sort
// leaves them striped for coalesced writes of the first `keep` of each row.
// Positions past the row's end get the largest key and, coming after every
// element, stay last. Tiers of (threads, items per thread) by the row's
// length; 8-byte keys stop at 4096 (32 KiB of shared memory for the exchange).
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_radix_sort.cuh>

#include <algorithm>

#include "sort_cuda.cuh"

namespace gx::ops {
namespace {

using sortkey::Codec;
using sortkey::load_bits;
using sortkey::store_bits;

template <typename K, int T, int I>
__global__ void __launch_bounds__(T) block_sort_kernel(const char* __restrict__ x, const Codec c, int64_t rows, int n,
                                                       K flip, int keep, char* __restrict__ values,
                                                       int64_t* __restrict__ indices) {
  using Exchange = cub::BlockExchange<K, T, I>;
  using Sort = cub::BlockRadixSort<K, T, I, int>;
  __shared__ union {
    typename Exchange::TempStorage exchange;
    typename Sort::TempStorage sort;
  } tmp;
  const int64_t item = c.item;
  const K pad = static_cast<K>(c.mask());
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const char* row = x + r * n * item;
    K keys[I];
    int vals[I];
#pragma unroll
    for (int j = 0; j < I; ++j) {
      const int pos = static_cast<int>(threadIdx.x) + j * T;
      keys[j] = pos < n ? static_cast<K>(static_cast<K>(c.encode(load_bits(row + pos * item, item))) ^ flip) : pad;
    }
    Exchange(tmp.exchange).StripedToBlocked(keys);
#pragma unroll
    for (int j = 0; j < I; ++j) vals[j] = static_cast<int>(threadIdx.x) * I + j;
    __syncthreads();  // the exchange's shared memory becomes the sort's
    Sort(tmp.sort).SortBlockedToStriped(keys, vals, 0, c.bits);
    char* vrow = values + r * keep * item;
    int64_t* irow = indices + r * keep;
#pragma unroll
    for (int j = 0; j < I; ++j) {
      const int pos = static_cast<int>(threadIdx.x) + j * T;
      if (pos < keep) {
        const uint64_t k = static_cast<K>(keys[j] ^ flip);
        const int id = vals[j];
        store_bits(vrow + pos * item, item, c.special(k) ? load_bits(row + id * item, item) : c.decode(k));
        irow[pos] = id;
      }
    }
    __syncthreads();  // the next row reuses the shared memory
  }
}

template <typename K, int T, int I>
void launch(const char* x, const Codec& c, int64_t rows, int64_t n, bool descending, int64_t keep, char* values,
            int64_t* indices, cudaStream_t stream) {
  const K flip = descending ? static_cast<K>(c.mask()) : K(0);
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, 0x7fffffff));
  block_sort_kernel<K, T, I><<<grid, T, 0, stream>>>(x, c, rows, static_cast<int>(n), flip, static_cast<int>(keep),
                                                      values, indices);
}

template <typename K>
void launch_tier(const char* x, const Codec& c, int64_t rows, int64_t n, bool descending, int64_t keep, char* values,
                 int64_t* indices, cudaStream_t stream) {
  if (n <= 32) launch<K, 32, 1>(x, c, rows, n, descending, keep, values, indices, stream);
  else if (n <= 128) launch<K, 32, 4>(x, c, rows, n, descending, keep, values, indices, stream);
  else if (n <= 512) launch<K, 128, 4>(x, c, rows, n, descending, keep, values, indices, stream);
  else if (n <= 1024) launch<K, 128, 8>(x, c, rows, n, descending, keep, values, indices, stream);
  else if (n <= 2048) launch<K, 256, 8>(x, c, rows, n, descending, keep, values, indices, stream);
  else if (n <= 4096) launch<K, 256, 16>(x, c, rows, n, descending, keep, values, indices, stream);
  else if constexpr (sizeof(K) == 4) launch<K, 512, 16>(x, c, rows, n, descending, keep, values, indices, stream);
}

}  // namespace

int64_t block_sort_max(int64_t item) { return item <= 4 ? 8192 : 4096; }

bool block_sort(const char* x, const Codec& c, int64_t rows, int64_t n, bool descending, int64_t keep, char* values,
                int64_t* indices, cudaStream_t stream) {
  if (n > block_sort_max(c.item)) return false;
  if (c.item <= 4) launch_tier<uint32_t>(x, c, rows, n, descending, keep, values, indices, stream);
  else launch_tier<uint64_t>(x, c, rows, n, descending, keep, values, indices, stream);
  GX_CHECK_LAUNCH();
  return true;
}

}  // namespace gx::ops
