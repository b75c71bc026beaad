// cuSOLVER (dense), loaded with dlopen when a CUDA SVD first runs, like
// cuBLAS (cublas.h): the few functions used are declared here as cuSOLVER
// documents them; cusolverDn.h is not needed.
#pragma once
#include <cuda_runtime.h>

namespace gx::ops::cusolver {

using Handle = void*;  // cusolverDnHandle_t
using Status = int;    // cusolverStatus_t; 0 is CUSOLVER_STATUS_SUCCESS

using GesvdjInfo = void*;  // gesvdjInfo_t
constexpr int kEigModeVector = 1;  // CUSOLVER_EIG_MODE_VECTOR

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
};

// The loaded library; a clear error naming `what` when cuSOLVER cannot be found.
const Api& api(const char* what);

// This thread's handle for `device` (which must be current: an error otherwise), bound to `stream`.
Handle handle(const char* what, int device, cudaStream_t stream);

void check(Status s, const char* what, const char* call);

}  // namespace gx::ops::cusolver
