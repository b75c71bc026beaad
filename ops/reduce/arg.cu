// CUDA implementations of argmax and argmin (reducers.h).
#include "cuda_reduce.cuh"
#include "reduce.h"

namespace gx::ops {

GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, argmax, ArgMaxReducer, kCNumeric | kCNoBool)
GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, argmin, ArgMinReducer, kCNumeric | kCNoBool)

}  // namespace gx::ops
