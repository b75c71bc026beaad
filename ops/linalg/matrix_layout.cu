// matrix_layout_cuda.h: the kernels. The transpose goes through a shared
// memory tile so both its reads (down src's columns) and its writes (along
// dst's rows) are coalesced: it moves Q of a tall QR (e.g. 100000 x 1000),
// where a strided copy would read one element per memory transaction.
#include <gpuext/extension.h>
#include <gpuext/cuda.h>

#include "matrix_layout_cuda.h"

namespace gx::ops::linalg {
namespace {

constexpr int kTile = 32, kTileRows = 8;  // a 32 x 32 tile moved by 32 x 8 threads
constexpr int kThreads = 256;
constexpr int64_t kMaxBatchBlocks = 65535;  // gridDim.z's limit; more matrices loop

template <typename T>
__global__ void transpose_kernel(const T* src, int64_t ld, int64_t src_batch, T* dst, int64_t rows, int64_t cols,
                                 int64_t batch, Keep keep, int64_t tiles_i, int64_t tiles) {
  __shared__ T tile[kTile][kTile + 1];  // + 1: a column of the tile spreads over the banks
  for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const T* s = src + b * src_batch;
    T* d = dst + b * rows * cols;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      const int64_t i0 = (t % tiles_i) * kTile, j0 = (t / tiles_i) * kTile;
      for (int k = threadIdx.y; k < kTile; k += kTileRows) {  // threadIdx.x down a column of src
        const int64_t i = i0 + threadIdx.x, j = j0 + k;
        if (i < rows && j < cols) tile[k][threadIdx.x] = s[i + j * ld];
      }
      __syncthreads();
      for (int k = threadIdx.y; k < kTile; k += kTileRows) {  // threadIdx.x along a row of dst
        const int64_t i = i0 + k, j = j0 + threadIdx.x;
        if (i < rows && j < cols) d[i * cols + j] = kept(keep, i, j) ? tile[threadIdx.x][k] : T(0);
      }
      __syncthreads();  // before the next tile overwrites this one
    }
  }
}

template <typename T>
__global__ void keep_triangle_kernel(T* a, int64_t n, int64_t total, Keep keep) {
  for (int64_t x = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x < total;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ij = x % (n * n), i = ij / n, j = ij % n;
    if (!kept(keep, i, j)) a[x] = T(0);
  }
}

template <typename T>
__global__ void set_identity_kernel(T* a, int64_t n, int64_t total) {
  for (int64_t x = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; x < total;
       x += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ij = x % (n * n);
    a[x] = ij / n == ij % n ? T(1) : T(0);
  }
}

// One block per matrix: each thread multiplies a stride of U's diagonal and counts its row swaps and exact
// zeros, then the block combines them (lu_det's meaning).
template <typename T>
__global__ void lu_det_kernel(const T* lu, const int* ipiv, int64_t n, int64_t batch, T* out) {
  __shared__ double prod[kThreads];
  __shared__ int swaps[kThreads], zeros[kThreads];
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* m = lu + b * n * n;
    const int* p = ipiv + b * n;
    double x = 1;
    int s = 0, z = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const double d = static_cast<double>(m[i * n + i]);
      x *= d;
      z += d == 0;
      s += p[i] != i + 1;
    }
    prod[threadIdx.x] = x;
    swaps[threadIdx.x] = s;
    zeros[threadIdx.x] = z;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        prod[threadIdx.x] *= prod[threadIdx.x + half];
        swaps[threadIdx.x] += swaps[threadIdx.x + half];
        zeros[threadIdx.x] += zeros[threadIdx.x + half];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) out[b] = static_cast<T>(zeros[0] > 0 ? 0.0 : swaps[0] % 2 != 0 ? -prod[0] : prod[0]);
    __syncthreads();  // before the next matrix overwrites the shared partials
  }
}

unsigned grid_for(int64_t total) { return blocks(total, kThreads); }

}  // namespace

template <typename T>
void transpose_into_cuda(const T* src, int64_t ld, int64_t src_batch, T* dst, int64_t rows, int64_t cols,
                         int64_t batch, Keep keep, cudaStream_t stream) {
  if (rows == 0 || cols == 0 || batch == 0) return;
  const int64_t tiles_i = (rows + kTile - 1) / kTile, tiles = tiles_i * ((cols + kTile - 1) / kTile);
  const dim3 grid(static_cast<unsigned>(tiles < 0x7fffffff ? tiles : 0x7fffffff), 1,
                  static_cast<unsigned>(batch < kMaxBatchBlocks ? batch : kMaxBatchBlocks));
  transpose_kernel<T><<<grid, dim3(kTile, kTileRows), 0, stream>>>(src, ld, src_batch, dst, rows, cols, batch, keep,
                                                                    tiles_i, tiles);
  GX_CHECK_LAUNCH();
}

template <typename T>
void keep_triangle_cuda(T* a, int64_t n, int64_t batch, Keep keep, cudaStream_t stream) {
  const int64_t total = batch * n * n;
  if (total == 0 || keep == Keep::kAll) return;
  keep_triangle_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(a, n, total, keep);
  GX_CHECK_LAUNCH();
}

template <typename T>
void set_identity_cuda(T* a, int64_t n, int64_t batch, cudaStream_t stream) {
  const int64_t total = batch * n * n;
  if (total == 0) return;
  set_identity_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(a, n, total);
  GX_CHECK_LAUNCH();
}

template <typename T>
void lu_det_cuda(const T* lu, const int* ipiv, int64_t n, int64_t batch, T* out, cudaStream_t stream) {
  if (batch == 0) return;
  const unsigned grid = static_cast<unsigned>(batch < 0x7fffffff ? batch : 0x7fffffff);
  lu_det_kernel<T><<<grid, kThreads, 0, stream>>>(lu, ipiv, n, batch, out);
  GX_CHECK_LAUNCH();
}

#define GX_LAYOUT_INSTANTIATE(T)                                                                               \
  template void transpose_into_cuda<T>(const T*, int64_t, int64_t, T*, int64_t, int64_t, int64_t, Keep,         \
                                       cudaStream_t);                                                          \
  template void keep_triangle_cuda<T>(T*, int64_t, int64_t, Keep, cudaStream_t);                               \
  template void set_identity_cuda<T>(T*, int64_t, int64_t, cudaStream_t);                                      \
  template void lu_det_cuda<T>(const T*, const int*, int64_t, int64_t, T*, cudaStream_t);
GX_LAYOUT_INSTANTIATE(float)
GX_LAYOUT_INSTANTIATE(double)
#undef GX_LAYOUT_INSTANTIATE

}  // namespace gx::ops::linalg
