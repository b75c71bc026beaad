// CUDA implementations of amax and amin (reducers.h).
#include "cuda_reduce.cuh"
#include "reduce.h"

namespace gx::ops {

GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, amax, MaxReducer, kCNumeric)
GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, amin, MinReducer, kCNumeric)

}  // namespace gx::ops
