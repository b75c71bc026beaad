// CPU implementations of the unary ops and where / clamp / astype (functors.h).
#include "../common/cpu_loops.h"
#include "unary.h"

namespace gx::ops {

#define GX_OPS_UNARY_CPU(name, F, S) GX_OPS_DEFINE_UNARY_ONE(CpuLoops, cpu, name, F, S)
GX_OPS_UNARY(GX_OPS_UNARY_CPU)
GX_OPS_DEFINE_SELECT(CpuLoops, cpu)

}  // namespace gx::ops
