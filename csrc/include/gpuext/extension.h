// The one header an extension includes: tensors, checks, op registration
// (GX_LIBRARY) and, in .cu files, the CUDA helpers. Kept small: a one-op
// extension should build in about the time nvcc needs for its kernel. Dtype
// dispatch and the 16-bit float types are opt-in: gpuext/dispatch.h.
#pragma once
#include "gpuext/check.h"
#include "gpuext/library.h"
#include "gpuext/limits.h"
#include "gpuext/tensor.h"
#if defined(__CUDACC__)
#include "gpuext/cuda.h"
#endif
