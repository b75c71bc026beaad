// The dense factorizations the CPU decompositions are written in (qr_cpu.cpp,
// lu_cpu.cpp, symmetric_cpu.cpp), with LAPACK's semantics: column-major with
// leading dimension lda, 1-based pivots, info as LAPACK returns it. Each runs
// the loaded LAPACK's routine (blas::lapack<T>(): OpenBLAS, MKL, ...) when
// there is one and the sizes fit its 32-bit integers, else the built-in one
// (builtin.h) on a double-precision copy. T is float or double.
#pragma once
#include <cstdint>

namespace gx::ops::dense {

template <typename T>
void geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau);

template <typename T>
void orgqr(int64_t m, int64_t n, int64_t k, T* a, int64_t lda, const T* tau);

// upper: the factor U^T U of the upper triangle, else L L^T of the lower. Returns info.
template <typename T>
int64_t potrf(bool upper, int64_t n, T* a, int64_t lda);

// ipiv [n]. Returns info.
template <typename T>
int64_t getrf(int64_t n, T* a, int64_t lda, int* ipiv);

// trans: solves A^T X = B, else A X = B.
template <typename T>
void getrs(bool trans, int64_t n, int64_t nrhs, const T* a, int64_t lda, const int* ipiv, T* b, int64_t ldb);

// Eigenvalues ascending into w, eigenvectors into a's columns; upper: the triangle a holds. Returns info.
template <typename T>
int64_t syevd(bool upper, int64_t n, T* a, int64_t lda, T* w);

}  // namespace gx::ops::dense
