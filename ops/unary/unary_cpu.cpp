// CPU implementations of the unary ops and where / clamp / astype / lerp (functors.h).
#include "../common/cpu_loops.h"
#include "unary.h"

namespace gx::ops {

#define GX_OPS_UNARY_CPU(name, F, S) GX_OPS_DEFINE_UNARY_ONE(CpuLoops, cpu, name, F, S)
GX_OPS_UNARY(GX_OPS_UNARY_CPU)
#define GX_OPS_UNARY_PARAMS_CPU(name, F, S, params, args) GX_OPS_DEFINE_UNARY_PARAMS_ONE(CpuLoops, cpu, name, F, S, params, args)
GX_OPS_UNARY_PARAMS(GX_OPS_UNARY_PARAMS_CPU)
GX_OPS_DEFINE_SELECT(CpuLoops, cpu)

}  // namespace gx::ops
