// CPU implementations of the reductions (reducers.h).
#include "cpu_reduce.h"
#include "reduce.h"

namespace gx::ops {

#define GX_OPS_REDUCE_CPU(name, R, S) GX_OPS_DEFINE_REDUCE_ONE(CpuReduce, cpu, name, R, S)
GX_OPS_REDUCE(GX_OPS_REDUCE_CPU)

}  // namespace gx::ops
