// CPU implementations of the binary ops (functors.h, written once).
#include "../common/cpu_loops.h"
#include "binary.h"

namespace gx::ops {

#define GX_OPS_BINARY_CPU(name, F, S) GX_OPS_DEFINE_BINARY_ONE(CpuLoops, cpu, name, F, S)
GX_OPS_BINARY(GX_OPS_BINARY_CPU)

}  // namespace gx::ops
