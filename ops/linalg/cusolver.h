// cuSOLVER (dense), loaded with dlopen when a CUDA SVD first runs, like
// cuBLAS (cublas.h): the few functions used are declared here as cuSOLVER
// documents them; cusolverDn.h is not needed.
#pragma once
#include <cuda_runtime.h>

namespace gx::ops::cusolver {

using Handle = void*;  // cusolverDnHandle_t
using Status = int;    // cusolverStatus_t; 0 is CUSOLVER_STATUS_SUCCESS

struct Api {
  Status (*Create)(Handle*) = nullptr;
  Status (*SetStream)(Handle, cudaStream_t) = nullptr;
  Status (*SgesvdBufferSize)(Handle, int m, int n, int* lwork) = nullptr;
  Status (*DgesvdBufferSize)(Handle, int m, int n, int* lwork) = nullptr;
  Status (*Sgesvd)(Handle, signed char jobu, signed char jobvt, int m, int n, float* A, int lda, float* S, float* U,
                   int ldu, float* VT, int ldvt, float* work, int lwork, float* rwork, int* info) = nullptr;
  Status (*Dgesvd)(Handle, signed char jobu, signed char jobvt, int m, int n, double* A, int lda, double* S,
                   double* U, int ldu, double* VT, int ldvt, double* work, int lwork, double* rwork,
                   int* info) = nullptr;
};

// The loaded library; a clear error naming `what` when cuSOLVER cannot be found.
const Api& api(const char* what);

// This thread's handle for the current device, bound to `stream`.
Handle handle(const char* what, cudaStream_t stream);

void check(Status s, const char* what, const char* call);

}  // namespace gx::ops::cusolver
