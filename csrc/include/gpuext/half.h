// gx::Half and gx::BFloat16: the 16-bit float element types. In CUDA
// translation units they are CUDA's own __half and __nv_bfloat16; in host-only
// ones, small structs with float conversions (round to nearest even).
// Not part of gpuext/extension.h (cuda_fp16.h and cuda_bf16.h cost most of a
// second per compile): include it, or gpuext/dispatch.h, where needed.
#pragma once
#include "gpuext/tensor.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
namespace gx {
using Half = __half;
using BFloat16 = __nv_bfloat16;
}  // namespace gx
#else
#include "gpuext/half_types.h"
#endif

// dtype_of<Half> and dtype_of<BFloat16> come with the others from the dtype
// list (gpuext/tensor.h).
