// CUDA implementations of where, clamp and astype (functors.h).
#include "../common/cuda_loops.cuh"
#include "unary.h"

namespace gx::ops {

GX_OPS_DEFINE_SELECT(CudaLoops, cuda)

}  // namespace gx::ops
