// cumsum (ops/op-list.js has its schema; lib/ops/reduce/scan.ts calls it).
//
//   cumsum(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()
//     out (self's shape) = the inclusive prefix sums of self along axis
//     (NOTE [ Ops along one dimension ]), computed in dtype's compute type
//     (NOTE [ Compute types ]: integers and bool in int64 with wraparound,
//     float32/float16/bfloat16 in float, float64 in double; the CPU adds
//     floats in double, as torch's CPU cumsum does).
#pragma once
#include <gpuext/extension.h>

#include "../common/dim_iter.h"
#include "../common/dispatch.h"
#include "../ops.h"

namespace gx::ops {

template <typename A> GX_HD A scan_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) return wrap_add(a, b);
  else return a + b;
}

}  // namespace gx::ops
