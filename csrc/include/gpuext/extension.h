// The one header an extension includes: tensors, checks, dtype dispatch, op
// registration (GX_LIBRARY) and, in .cu files, the CUDA helpers. Kept small:
// a one-op extension should build in about the time nvcc needs for its kernel.
#pragma once
#include "gpuext/check.h"
#include "gpuext/dispatch.h"
#include "gpuext/library.h"
#include "gpuext/tensor.h"
#if defined(__CUDACC__)
#include "gpuext/cuda.h"
#endif
