// What the CUDA files of ops/sort/ share: the row sort every op falls back on
// (sort.cu), the block sorts (sort_block.cu), the device-wide radix sort
// (sort.cu, used by unique.cu too), and the scratch memory they take from the
// caching allocator. NOTE [ Sort keys ] (sort_keys.h) says what is sorted.
//
// NOTE [ Row sorts on CUDA ]
// A row of n elements is sorted by one of three, by n and the number of rows:
//   n <= 4096 (8192 for keys of up to 4 bytes): a block per row
//     (cub::BlockRadixSort over the keys with the index as payload, in
//     registers and shared memory: one read of the row, one write of the
//     results; the block size grows with n in tiers, block_sort_* in
//     sort_block.cu);
//   few rows or very long ones (rows < 64 or n >= 2^20): one
//     cub::DeviceRadixSort per row, each filling the GPU;
//   else cub::DeviceSegmentedRadixSort over all rows (a block per row,
//     passes through global memory).
// Measured on an H100 (float32, random): 4096 rows of 8192 in 1.3-1.5 ms by
// the block sort against 3.2 ms segmented and torch's 2.9 ms; 16384 x 2048
// 0.91 ms (torch 1.09); 8 x 2^20 per row 0.94 ms (torch 0.87); one row of
// 2^26 3.7 ms (torch 3.5).
// The last two work on scratch copies: a prep kernel writes the keys and the
// indices 0..n-1 (int32: a row holds fewer than 2^31 elements), CUB sorts them
// in place (DoubleBuffer: no further copies), a post kernel writes values
// (decoded keys) and int64 indices. Every launch and CUB call goes on the
// current stream; nothing synchronizes.
#pragma once
#include <cuda_runtime.h>

#include "../common/cuda_loops.cuh"
#include "sort_keys.h"

namespace gx::ops {

// Sorts `rows` contiguous rows of `n` elements of x (dtype) and writes the
// first `keep` sorted elements of each (values: x's dtype, indices: int64),
// rows of `keep` contiguous. descending: largest first; either way stable.
void sort_rows_cuda(const char* x, ScalarType dtype, int64_t rows, int64_t n, bool descending, int64_t keep, char* values,
                    int64_t* indices, int device);

// The block sort for rows of n <= block_sort_max(item) elements (sort_block.cu); false when n is too long.
int64_t block_sort_max(int64_t item);
bool block_sort(const char* x, const sortkey::Codec& c, int64_t rows, int64_t n, bool descending, int64_t keep,
                char* values, int64_t* indices, cudaStream_t stream);

// cub::DeviceRadixSort::SortPairs over n pairs of keys (bits [0, end_bit))
// and int32 payloads held in keys[0] / vals[0], with keys[1] / vals[1] as the
// other halves of the double buffers; returns which half holds the result.
// CUB's temporary storage comes from the caching allocator (freed
// stream-ordered on return).
template <typename K>
int radix_sort_pairs(K* const keys[2], int32_t* const vals[2], int64_t n, int end_bit, int device, cudaStream_t stream);

// Scratch memory from the caching allocator, freed (stream-ordered) with the Tensor.
inline Tensor scratch(int64_t bytes, int device) {
  return empty({bytes > 0 ? bytes : 1}, kUInt8, Device(kCUDA, device));
}

inline unsigned grid_for(int64_t n, int threads = kThreads) {
  const int64_t b = (n + threads - 1) / threads;
  constexpr int64_t kMaxGrid = int64_t{1} << 20;  // grid-stride beyond this
  return static_cast<unsigned>(b < 1 ? 1 : b > kMaxGrid ? kMaxGrid : b);
}

// keys[i] = key of x[i] ^ flip, idx[i] = i % n: a radix sort's input for rows of n (NOTE [ Row sorts on CUDA ]).
template <typename K>
__global__ void __launch_bounds__(kThreads) sort_prep_kernel(const char* __restrict__ x, const sortkey::Codec c,
                                                             int64_t total, int64_t n, K flip, K* __restrict__ keys,
                                                             int32_t* __restrict__ idx) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total; i += stride) {
    keys[i] = static_cast<K>(static_cast<K>(c.encode(sortkey::load_bits(x + i * c.item, c.item))) ^ flip);
    idx[i] = static_cast<int32_t>(i % n);
  }
}

// Checks a CUB call's status.
inline void cub_check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    GX_CHECK(false, what, " failed: ", cudaGetErrorString(err));
  }
}

}  // namespace gx::ops
