// The CUDA side of matrix_layout.h: the same steps for a batch of matrices,
// each one launch on `stream` (the caller's device current). T is float or
// double; pointers are device memory.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "matrix_layout.h"

namespace gx::ops::linalg {

// transpose_into for `batch` matrices: src + b * src_batch -> dst + b * rows * cols.
template <typename T>
void transpose_into_cuda(const T* src, int64_t ld, int64_t src_batch, T* dst, int64_t rows, int64_t cols,
                         int64_t batch, Keep keep, cudaStream_t stream);

// keep_triangle for `batch` row-major n x n matrices, contiguous.
template <typename T>
void keep_triangle_cuda(T* a, int64_t n, int64_t batch, Keep keep, cudaStream_t stream);

// set_identity for `batch` n x n matrices, contiguous.
template <typename T>
void set_identity_cuda(T* a, int64_t n, int64_t batch, cudaStream_t stream);

// out[b] = lu_det of the b-th n x n factors (lu + b * n * n, ipiv + b * n).
template <typename T>
void lu_det_cuda(const T* lu, const int* ipiv, int64_t n, int64_t batch, T* out, cudaStream_t stream);

}  // namespace gx::ops::linalg
