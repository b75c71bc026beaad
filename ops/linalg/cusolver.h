// cuSOLVER (dense), loaded with dlopen when a CUDA SVD or decomposition
// first runs, like cuBLAS (cublas.h): the few functions used are declared
// here as cuSOLVER documents them; cusolverDn.h is not needed.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

namespace gx::ops::cusolver {

using Handle = void*;  // cusolverDnHandle_t
using Status = int;    // cusolverStatus_t; 0 is CUSOLVER_STATUS_SUCCESS

using GesvdjInfo = void*;  // gesvdjInfo_t
constexpr int kEigModeVector = 1;  // CUSOLVER_EIG_MODE_VECTOR
constexpr int kFillLower = 0, kFillUpper = 1;  // cublasFillMode_t
constexpr int kOpN = 0, kOpT = 1;              // cublasOperation_t

// The legacy 32-bit API's routines of the decompositions, for T = float (S) or
// double (D); the enums are passed as the ints above.
template <typename T>
struct Dense {
  Status (*geqrf_buffer_size)(Handle, int m, int n, T* A, int lda, int* lwork) = nullptr;
  Status (*geqrf)(Handle, int m, int n, T* A, int lda, T* tau, T* work, int lwork, int* info) = nullptr;
  Status (*orgqr_buffer_size)(Handle, int m, int n, int k, const T* A, int lda, const T* tau, int* lwork) = nullptr;
  Status (*orgqr)(Handle, int m, int n, int k, T* A, int lda, const T* tau, T* work, int lwork, int* info) = nullptr;
  Status (*potrf_buffer_size)(Handle, int uplo, int n, T* A, int lda, int* lwork) = nullptr;
  Status (*potrf)(Handle, int uplo, int n, T* A, int lda, T* work, int lwork, int* info) = nullptr;
  Status (*getrf_buffer_size)(Handle, int m, int n, T* A, int lda, int* lwork) = nullptr;
  Status (*getrf)(Handle, int m, int n, T* A, int lda, T* work, int* ipiv, int* info) = nullptr;
  Status (*getrs)(Handle, int trans, int n, int nrhs, const T* A, int lda, const int* ipiv, T* B, int ldb,
                  int* info) = nullptr;
  Status (*syevd_buffer_size)(Handle, int jobz, int uplo, int n, const T* A, int lda, const T* W, int* lwork) = nullptr;
  Status (*syevd)(Handle, int jobz, int uplo, int n, T* A, int lda, T* W, T* work, int lwork, int* info) = nullptr;
};

struct Api {
  Status (*Create)(Handle*) = nullptr;
  Status (*SetStream)(Handle, cudaStream_t) = nullptr;
  Status (*CreateGesvdjInfo)(GesvdjInfo*) = nullptr;
  Status (*DestroyGesvdjInfo)(GesvdjInfo) = nullptr;
  Status (*SgesvdjBufferSize)(Handle, int jobz, int econ, int m, int n, const float* A, int lda, const float* S,
                              const float* U, int ldu, const float* V, int ldv, int* lwork, GesvdjInfo) = nullptr;
  Status (*DgesvdjBufferSize)(Handle, int jobz, int econ, int m, int n, const double* A, int lda, const double* S,
                              const double* U, int ldu, const double* V, int ldv, int* lwork, GesvdjInfo) = nullptr;
  Status (*Sgesvdj)(Handle, int jobz, int econ, int m, int n, float* A, int lda, float* S, float* U, int ldu, float* V,
                    int ldv, float* work, int lwork, int* info, GesvdjInfo) = nullptr;
  Status (*Dgesvdj)(Handle, int jobz, int econ, int m, int n, double* A, int lda, double* S, double* U, int ldu,
                    double* V, int ldv, double* work, int lwork, int* info, GesvdjInfo) = nullptr;
  Dense<float> s;
  Dense<double> d;
  std::string dense_missing;  // the names of the Dense routines this cuSOLVER lacks, if any

  template <typename T>
  const Dense<T>& routines() const {
    if constexpr (std::is_same_v<T, double>) return d;
    else return s;
  }
};

// The loaded library; a clear error naming `what` when cuSOLVER cannot be found.
const Api& api(const char* what);

// The decompositions' routines for T (float or double); a clear error naming
// `what` when cuSOLVER cannot be loaded or lacks one of them.
template <typename T>
const Dense<T>& dense(const char* what);

// This thread's handle for `device` (which must be current: an error otherwise), bound to `stream`.
Handle handle(const char* what, int device, cudaStream_t stream);

void check(Status s, const char* what, const char* call);

}  // namespace gx::ops::cusolver
