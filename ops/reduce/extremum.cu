// CUDA implementations of max and min (reducers.h), the reductions of group extremum in
// ops/op-list.js (generated/op_lists.h).
#include "cuda_reduce.cuh"
#include "reduce.h"

namespace gx::ops {

#define GX_OPS_REDUCE_CUDA(name, R, S) GX_OPS_DEFINE_REDUCE_ONE(CudaReduce, cuda, name, R, S)
GX_OPS_REDUCE_EXTREMUM(GX_OPS_REDUCE_CUDA)

}  // namespace gx::ops
