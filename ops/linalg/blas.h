// A system BLAS (and LAPACK) for the CPU matmul and SVD, loaded with dlopen
// when first used, as cuBLAS is on CUDA (docs/DESIGN.md decision 7). Nothing links
// against it: without one, matmul uses the built-in kernel (gemm_cpu.h) and
// the SVD the Jacobi one (svd_cpu.cpp).
//
// NOTE [ Which BLAS ]
// Tried in order: $GPUEXT_BLAS (a path or a soname; "none" turns BLAS and
// LAPACK off), libopenblas.so.0, libopenblas.so, libmkl_rt.so.2,
// libmkl_rt.so, libblis.so.4, libflexiblas.so.3, libblas.so.3. A library is
// taken when it has cblas_sgemm and cblas_dgemm, or else the Fortran sgemm_
// and dgemm_. Only the LP64 (32-bit integer) interface is used: the ILP64
// builds' suffixed symbols (cblas_sgemm64_) are never looked up, an OpenBLAS
// whose configuration says USE64BITINT is refused, and a 2 x 2 product is
// checked once before the library is trusted. LAPACK's gesdd comes from the
// same library when it has it (OpenBLAS, MKL, FlexiBLAS do), else from
// liblapack.so.3; $GPUEXT_LAPACK names another. The decompositions' routines
// (Lapack below) come from the library gesdd came from.
#pragma once
#include <cstdint>
#include <string>

namespace gx::ops::blas {

// Row-major C[m, n] = op(A) op(B) (alpha 1, beta 0) through the loaded BLAS.
// op(X) is X, or X^T when trans_x; lda, ldb, ldc are row-major leading
// dimensions as cblas_?gemm takes them. Every size must fit in an int and
// each ld be at least max(1, columns of the stored matrix): the caller
// (matmul_cpu.cpp) checks. Returns false (nothing done) when no BLAS is in use.
bool sgemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
           int ldc);
bool dgemm(bool trans_a, bool trans_b, int m, int n, int k, const double* a, int lda, const double* b, int ldb,
           double* c, int ldc);

// LAPACK ?gesdd_ (column-major, jobz 'A' or 'S'), when loaded; nullptr when not.
using SgesddFn = void (*)(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
                          const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork,
                          int* info, size_t jobz_len);
using DgesddFn = void (*)(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
                          double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
                          int* iwork, int* info, size_t jobz_len);
SgesddFn sgesdd();
DgesddFn dgesdd();

// The LAPACK routines of gx.linalg's decompositions (qr, cholesky, solve, inv,
// det, eigh), from the library gesdd came from, for T = float (s...) or
// double (d...): column-major, every argument by reference, a trailing hidden
// length per character argument (gfortran's convention; C implementations
// ignore them). A member is nullptr when the library lacks that routine.
template <typename T>
struct Lapack {
  void (*geqrf)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork,
                int* info) = nullptr;
  void (*orgqr)(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work,
                const int* lwork, int* info) = nullptr;
  void (*potrf)(const char* uplo, const int* n, T* a, const int* lda, int* info, size_t uplo_len) = nullptr;
  void (*getrf)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info) = nullptr;
  void (*getrs)(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b,
                const int* ldb, int* info, size_t trans_len) = nullptr;
  void (*syevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work,
                const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len) = nullptr;
};

// The loaded LAPACK's routines for T, or nullptr when there is no LAPACK or
// it is turned off (set_enabled(false)), as sgesdd() and dgesdd() are.
template <typename T>
const Lapack<T>* lapack();

// Whether matmul may use the loaded BLAS (default true; tests turn it off to
// reach the built-in kernel in the same process). Also gates LAPACK.
void set_enabled(bool on);
bool enabled();

// What is in use, for gx.backends(): "<path> (cblas)" or "built-in kernel
// (<why>)", and the LAPACK path or "Jacobi (built-in)".
std::string gemm_description();
std::string lapack_description();

}  // namespace gx::ops::blas
