// CUDA implementations of the unary ops of group special in ops/op-list.js (functors.h).
#include "../common/cuda_loops.cuh"
#include "unary.h"

namespace gx::ops {

#define GX_OPS_UNARY_CUDA(name, F, S) GX_OPS_DEFINE_UNARY_ONE(CudaLoops, cuda, name, F, S)
GX_OPS_UNARY_SPECIAL(GX_OPS_UNARY_CUDA)
#define GX_OPS_UNARY_PARAMS_CUDA(name, F, S, params, args) GX_OPS_DEFINE_UNARY_PARAMS_ONE(CudaLoops, cuda, name, F, S, params, args)
GX_OPS_UNARY_PARAMS_SPECIAL(GX_OPS_UNARY_PARAMS_CUDA)

}  // namespace gx::ops
