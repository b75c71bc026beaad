// CUDA implementations of the binary ops of group math in ops/op-list.js (functors.h).
// The binary ops are split over several .cu files so the build compiles them in parallel.
#include "../common/cuda_loops.cuh"
#include "binary.h"

namespace gx::ops {

#define GX_OPS_BINARY_CUDA(name, F, S) GX_OPS_DEFINE_BINARY_ONE(CudaLoops, cuda, name, F, S)
GX_OPS_BINARY_MATH(GX_OPS_BINARY_CUDA)

}  // namespace gx::ops
