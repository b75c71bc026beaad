// Moving matrices between the row-major tensors gx.linalg returns and the
// column-major ones LAPACK and cuSOLVER factor, and the small steps around a
// factorization (zeroing a triangle, an identity, a determinant from an LU):
// the host versions here, the CUDA ones in matrix_layout_cuda.h, with one
// meaning for both.
//
// A row-major rows x cols matrix is, read column-major, its transpose (cols x
// rows, leading dimension cols); so `transpose_into` both reads a
// column-major factor out into a row-major result and writes a row-major
// operand into the column-major workspace a solver takes.
#pragma once
#include <cmath>
#include <cstdint>

#include "../common/hd.h"

namespace gx::ops::linalg {

// Which part of a result matrix is kept; the rest is written as zero (R of a
// QR, a Cholesky factor).
enum class Keep : int { kAll, kUpper, kLower };

GX_HD bool kept(Keep keep, int64_t i, int64_t j) {
  return keep == Keep::kAll || (keep == Keep::kUpper ? j >= i : j <= i);
}

// dst (row-major rows x cols, contiguous) = the column-major rows x cols
// matrix src with leading dimension ld: dst[i][j] = src[i + j * ld], zero
// where !kept(keep, i, j).
template <typename T>
void transpose_into(const T* src, int64_t ld, T* dst, int64_t rows, int64_t cols, Keep keep) {
  constexpr int64_t kBlock = 32;  // blocks of both, so the strided side stays in cache
  for (int64_t i0 = 0; i0 < rows; i0 += kBlock) {
    for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
      const int64_t i1 = i0 + kBlock < rows ? i0 + kBlock : rows, j1 = j0 + kBlock < cols ? j0 + kBlock : cols;
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) dst[i * cols + j] = kept(keep, i, j) ? src[i + j * ld] : T(0);
      }
    }
  }
}

// Zeroes the part of the row-major n x n matrix a that is not kept, in place.
template <typename T>
void keep_triangle(T* a, int64_t n, Keep keep) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (!kept(keep, i, j)) a[i * n + j] = T(0);
    }
  }
}

// The n x n identity into a (either layout).
template <typename T>
void set_identity(T* a, int64_t n) {
  for (int64_t i = 0; i < n * n; ++i) a[i] = T(0);
  for (int64_t i = 0; i < n; ++i) a[i * n + i] = T(1);
}

// det(A) from getrf's column-major n x n factors (ld n) and 1-based pivots:
// the product of U's diagonal, negated once per row swap (det of a transpose
// is the same, so either layout of A works), accumulated in double. An exactly
// zero U(i, i) (a singular A) makes it exactly 0, whatever a factorization that
// went on past that pivot left in the rest of U.
template <typename T>
double lu_det(const T* lu, int64_t n, const int* ipiv) {
  double p = 1;
  bool negate = false, zero = false;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(lu[i * n + i]);
    p *= d;
    zero = zero || d == 0;
    if (ipiv[i] != i + 1) negate = !negate;
  }
  return zero ? 0.0 : negate ? -p : p;
}

}  // namespace gx::ops::linalg
