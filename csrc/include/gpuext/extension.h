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
#else
// In a file the host compiler builds, a launch check has no launch to check:
// say so at the user's line instead of "'GX_CHECK_LAUNCH' was not declared".
// (gpuext/cuda.h, included explicitly, defines the real one.)
#define GX_CHECK_LAUNCH()                                                                  \
  static_assert(sizeof(int) == 0, "GX_CHECK_LAUNCH() checks a CUDA kernel launch: it belongs " \
                                  "in a .cu file (compiled by nvcc), after the <<<...>>> launch")
#endif
