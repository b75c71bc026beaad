// The built-in CPU factorizations the decompositions fall back on when no
// LAPACK is loaded (dense_cpu.h picks): LAPACK's semantics (column-major with
// leading dimension lda, 1-based pivots, info as LAPACK returns it) in double
// precision, so float32 inputs are factored more accurately than they are
// stored. Unblocked textbook algorithms, O(n^3) as LAPACK's, meant for the
// modest sizes a machine without LAPACK is asked for.
#pragma once
#include <cstdint>

namespace gx::ops::builtin {

// Householder QR of the m x n matrix a: R on and above the diagonal, the
// reflectors' vectors below it (v(0) = 1 implied) and their scalars in tau
// [min(m, n)], H(j) = I - tau(j) v v^T, exactly as ?geqrf stores them.
void geqrf(int64_t m, int64_t n, double* a, int64_t lda, double* tau);

// The m x n matrix Q with orthonormal columns (m >= n >= k) from the first k
// reflectors of geqrf, overwriting a, as ?orgqr.
void orgqr(int64_t m, int64_t n, int64_t k, double* a, int64_t lda, const double* tau);

// Cholesky of the symmetric positive-definite n x n matrix whose upper (or
// lower) triangle a holds: U^T U with U upper (A = L L^T with L lower),
// written over that triangle, the other left alone. Returns 0, or the order
// of the first leading minor that is not positive-definite, as ?potrf.
int64_t potrf(bool upper, int64_t n, double* a, int64_t lda);

// LU with partial pivoting of the n x n matrix a, P A = L U (unit L below the
// diagonal, U on and above it), row i swapped with row ipiv[i] - 1. Returns 0,
// or i + 1 for the first exactly zero U(i, i) (the factorization completes),
// as ?getrf.
int64_t getrf(int64_t n, double* a, int64_t lda, int* ipiv);

// Solves A X = B (trans: A^T X = B) for the n x nrhs matrix b in place, from
// getrf's a and ipiv, as ?getrs.
void getrs(bool trans, int64_t n, int64_t nrhs, const double* a, int64_t lda, const int* ipiv, double* b,
           int64_t ldb);

// Eigenvalues (w [n], ascending) and orthonormal eigenvectors (the columns of
// a, overwriting it) of the symmetric matrix whose upper (or lower) triangle a
// holds, by cyclic Jacobi rotations. Returns 0, or 1 when the rotations did
// not converge (not seen in practice), as ?syevd's info.
int64_t syevd(bool upper, int64_t n, double* a, int64_t lda, double* w);

}  // namespace gx::ops::builtin
