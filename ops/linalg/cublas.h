// cuBLAS, loaded with dlopen when a CUDA matmul first runs (docs/DESIGN.md
// decision 7: optional CUDA libraries are loaded when first used, with an
// error that says what is missing). cublas_v2.h is not needed: the few
// functions and enums used are declared here as cuBLAS documents them.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace gx::ops::cublas {

using Handle = void*;  // cublasHandle_t
using Status = int;    // cublasStatus_t; 0 is CUBLAS_STATUS_SUCCESS

enum Operation : int { kOpN = 0, kOpT = 1 };
// cudaDataType_t
enum DataType : int { kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14 };
// cublasComputeType_t
enum ComputeType : int { kCompute32F = 68, kCompute32FFastTF32 = 77, kCompute64F = 70 };
constexpr int kGemmDefault = -1;  // CUBLAS_GEMM_DEFAULT

struct Api {
  Status (*Create)(Handle*) = nullptr;
  Status (*SetStream)(Handle, cudaStream_t) = nullptr;
  const char* (*GetStatusString)(Status) = nullptr;
  Status (*SetWorkspace)(Handle, void* workspace, size_t bytes) = nullptr;
  Status (*GemmEx)(Handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A, int Atype,
                   int lda, const void* B, int Btype, int ldb, const void* beta, void* C, int Ctype, int ldc,
                   int computeType, int algo) = nullptr;
  Status (*GemmStridedBatchedEx)(Handle, int transa, int transb, int m, int n, int k, const void* alpha,
                                 const void* A, int Atype, int lda, long long strideA, const void* B, int Btype,
                                 int ldb, long long strideB, const void* beta, void* C, int Ctype, int ldc,
                                 long long strideC, int batchCount, int computeType, int algo) = nullptr;
};

// The loaded library; throws a clear error (GX_CHECK) naming `what` when
// cuBLAS cannot be found.
const Api& api(const char* what);

// Workspace each handle gets (cuBLAS's guidance for Hopper: 32 MiB; with its
// small default it picks slower kernels for large GEMMs).
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

// This thread's handle for `device` (which must be current: an error otherwise), bound to `stream`, with its workspace.
Handle handle(const char* what, int device, cudaStream_t stream);

// Throws naming `what` and the call when `s` is not success.
void check(Status s, const char* what, const char* call);

}  // namespace gx::ops::cublas
