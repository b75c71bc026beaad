// cuDNN, loaded with dlopen when a CUDA convolution first runs (docs/DESIGN.md
// decision 7, as cuBLAS and cuSOLVER are: ops/linalg/cublas.h). No cuDNN
// header is needed to build: the few types, enum values and functions of the
// legacy convolution API used here are declared below as cuDNN 9 documents
// them (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h). test/nn-conv-cudnn.test.ts
// compiles this file against the real headers, where a machine has them, and
// checks every value and prototype (test/fixtures/cudnn_api_check.cpp).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gx::ops::cudnn {

using Handle = void*;            // cudnnHandle_t
using TensorDesc = void*;        // cudnnTensorDescriptor_t
using FilterDesc = void*;        // cudnnFilterDescriptor_t
using ConvDesc = void*;          // cudnnConvolutionDescriptor_t
using Status = int;              // cudnnStatus_t

constexpr Status kSuccess = 0;                // CUDNN_STATUS_SUCCESS
constexpr Status kNotSupported = 3000;        // CUDNN_STATUS_NOT_SUPPORTED; its sub-codes run to 3999
constexpr bool refused(Status s) { return s >= 3000 && s < 4000; }

// cudnnDataType_t
enum DataType : int { kDataFloat = 0, kDataDouble = 1, kDataHalf = 2, kDataBFloat16 = 9 };
// cudnnTensorFormat_t
constexpr int kNCHW = 0;
// cudnnConvolutionMode_t: torch's (and our) convolution is a cross-correlation.
constexpr int kCrossCorrelation = 1;
// cudnnMathType_t
enum MathType : int { kDefaultMath = 0, kTensorOpMath = 1, kTensorOpMathAllowConversion = 2, kFmaMath = 3 };

// The most algorithms a direction has (cuDNN 9: 8 forward, 6 backward data, 7 backward filter): the size of the
// perf arrays the Get/Find calls fill (they return how many they wrote).
constexpr int kMaxAlgos = 16;

// cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionBwdDataAlgoPerf_t and
// cudnnConvolutionBwdFilterAlgoPerf_t: one layout (the algo enums are ints).
struct AlgoPerf {
  int algo;
  Status status;
  float time;  // milliseconds (Find), -1 (heuristics)
  size_t memory;
  int determinism;  // cudnnDeterminism_t
  int mathType;     // cudnnMathType_t
  int reserved[3];
};

struct Api {
  size_t (*GetVersion)() = nullptr;
  const char* (*GetErrorString)(Status) = nullptr;
  Status (*Create)(Handle*) = nullptr;
  Status (*SetStream)(Handle, cudaStream_t) = nullptr;
  Status (*CreateTensorDescriptor)(TensorDesc*) = nullptr;
  Status (*SetTensor4dDescriptor)(TensorDesc, int format, int dtype, int n, int c, int h, int w) = nullptr;
  Status (*DestroyTensorDescriptor)(TensorDesc) = nullptr;
  Status (*CreateFilterDescriptor)(FilterDesc*) = nullptr;
  Status (*SetFilter4dDescriptor)(FilterDesc, int dtype, int format, int k, int c, int h, int w) = nullptr;
  Status (*DestroyFilterDescriptor)(FilterDesc) = nullptr;
  Status (*CreateConvolutionDescriptor)(ConvDesc*) = nullptr;
  Status (*SetConvolution2dDescriptor)(ConvDesc, int pad_h, int pad_w, int u, int v, int dilation_h, int dilation_w,
                                       int mode, int compute_type) = nullptr;
  Status (*SetConvolutionGroupCount)(ConvDesc, int groups) = nullptr;
  Status (*SetConvolutionMathType)(ConvDesc, int math_type) = nullptr;
  Status (*DestroyConvolutionDescriptor)(ConvDesc) = nullptr;

  Status (*GetConvolutionForwardAlgorithm_v7)(Handle, TensorDesc x, FilterDesc w, ConvDesc, TensorDesc y, int requested,
                                              int* returned, AlgoPerf*) = nullptr;
  Status (*FindConvolutionForwardAlgorithmEx)(Handle, TensorDesc x, const void* xp, FilterDesc w, const void* wp,
                                              ConvDesc, TensorDesc y, void* yp, int requested, int* returned,
                                              AlgoPerf*, void* workspace, size_t workspace_bytes) = nullptr;
  Status (*ConvolutionForward)(Handle, const void* alpha, TensorDesc x, const void* xp, FilterDesc w, const void* wp,
                               ConvDesc, int algo, void* workspace, size_t workspace_bytes, const void* beta,
                               TensorDesc y, void* yp) = nullptr;

  Status (*GetConvolutionBackwardDataAlgorithm_v7)(Handle, FilterDesc w, TensorDesc dy, ConvDesc, TensorDesc dx,
                                                   int requested, int* returned, AlgoPerf*) = nullptr;
  Status (*FindConvolutionBackwardDataAlgorithmEx)(Handle, FilterDesc w, const void* wp, TensorDesc dy,
                                                   const void* dyp, ConvDesc, TensorDesc dx, void* dxp, int requested,
                                                   int* returned, AlgoPerf*, void* workspace,
                                                   size_t workspace_bytes) = nullptr;
  Status (*ConvolutionBackwardData)(Handle, const void* alpha, FilterDesc w, const void* wp, TensorDesc dy,
                                    const void* dyp, ConvDesc, int algo, void* workspace, size_t workspace_bytes,
                                    const void* beta, TensorDesc dx, void* dxp) = nullptr;

  Status (*GetConvolutionBackwardFilterAlgorithm_v7)(Handle, TensorDesc x, TensorDesc dy, ConvDesc, FilterDesc dw,
                                                     int requested, int* returned, AlgoPerf*) = nullptr;
  Status (*FindConvolutionBackwardFilterAlgorithmEx)(Handle, TensorDesc x, const void* xp, TensorDesc dy,
                                                     const void* dyp, ConvDesc, FilterDesc dw, void* dwp,
                                                     int requested, int* returned, AlgoPerf*, void* workspace,
                                                     size_t workspace_bytes) = nullptr;
  Status (*ConvolutionBackwardFilter)(Handle, const void* alpha, TensorDesc x, const void* xp, TensorDesc dy,
                                      const void* dyp, ConvDesc, int algo, void* workspace, size_t workspace_bytes,
                                      const void* beta, FilterDesc dw, void* dwp) = nullptr;

  // Optional (cuDNN 9): the last error's message, for the refusals' reasons.
  void (*GetLastErrorString)(char* message, size_t max_size) = nullptr;
};

// The loaded library; throws a clear error (GX_CHECK) naming `what` when cuDNN cannot be found.
const Api& api(const char* what);

// This thread's handle for `device` (which must be current: an error otherwise), bound to `stream`.
Handle handle(const char* what, int device, cudaStream_t stream);

// Throws naming `what` and the call when `s` is not success.
void check(Status s, const char* what, const char* call);

// cuDNN's name and code for `s`, with its last error message when it has one.
std::string describe(Status s);

}  // namespace gx::ops::cudnn
