// CUDA implementations of sum, prod and mean (reducers.h), the reductions of group sum in
// ops/op-list.js (generated/op_lists.h).
#include "cuda_reduce.cuh"
#include "reduce.h"

namespace gx::ops {

#define GX_OPS_REDUCE_CUDA(name, R, S) GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, name, R, S)
GX_OPS_REDUCE_SUM(GX_OPS_REDUCE_CUDA)

}  // namespace gx::ops
