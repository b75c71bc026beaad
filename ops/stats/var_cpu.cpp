// CPU var and std: VarReducer (var.h, NOTE [ Shifted Welford ]) in double
// over the CPU reduction loop.
#include "../reduce/cpu_reduce.h"
#include "var.h"

namespace gx::ops {
namespace {

void var_cpu_impl(const Tensor& self, IntArrayRef dims, double correction, ScalarType dtype, const Tensor& out,
                  bool take_sqrt) {
  check_var_dtype(dtype);
  const ReduceIter it = make_reduce(self, dims, out);
  if (it.out_numel == 0) return;
  VarReducer<double> r;
  r.correction = correction;
  r.take_sqrt = take_sqrt;
  CpuReduce::run(r, it);
}

}  // namespace

void var_cpu(const Tensor& self, IntArrayRef dims, double correction, ScalarType dtype, const Tensor& out) {
  var_cpu_impl(self, dims, correction, dtype, out, false);
}

void std_cpu(const Tensor& self, IntArrayRef dims, double correction, ScalarType dtype, const Tensor& out) {
  var_cpu_impl(self, dims, correction, dtype, out, true);
}

}  // namespace gx::ops
