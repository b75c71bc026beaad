// CUDA implementations of sum, prod and mean (reducers.h).
#include "cuda_reduce.cuh"
#include "reduce.h"

namespace gx::ops {

GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, sum, SumReducer, kCNumeric)
GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, prod, ProdReducer, kCNumeric)
GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, mean, MeanReducer, kCFloating)

}  // namespace gx::ops
