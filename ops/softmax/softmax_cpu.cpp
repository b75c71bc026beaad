// CPU softmax, log_softmax and logsumexp (softmax.h). Softmax runs three
// passes over each line (max, sum of exp(x - max), output), in double for
// every floating dtype (as the CPU reductions widen float sums); logsumexp is
// a reducer over the CPU reduction loop.
#include "../common/cpu_loops.h"
#include "../reduce/cpu_reduce.h"
#include "softmax.h"

namespace gx::ops {
namespace {

template <bool Log> void softmax_lines(const DimIter& it) {
  const int64_t n = it.len, is = it.in_step, os = it.out_step;
  const ScalarType it_in = it.in_dtype, it_out = it.out_dtype;
  // Lines are independent: split them over threads (NOTE [ Threads in the CPU loops ]).
  for_lines_parallel(it, [&](const char* in, char* out) {
    double mx = lowest<double>();
    for (int64_t i = 0; i < n; ++i) {
      const double x = load_as<double>(in + i * is, it_in);
      if (x > mx) mx = x;
    }
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += m_exp(load_as<double>(in + i * is, it_in) - mx);
    const double log_sum = m_log(sum);
    for (int64_t i = 0; i < n; ++i)
      store_as(out + i * os, it_out, softmax_value<Log>(load_as<double>(in + i * is, it_in), mx, sum, log_sum));
  });
}

template <bool Log> void softmax_cpu_impl(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  const DimIter it = softmax_iter(self, dim, dtype, out);
  if (it.numel() == 0) return;
  softmax_lines<Log>(it);
}

}  // namespace

void softmax_cpu(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  softmax_cpu_impl<false>(self, dim, dtype, out);
}

void log_softmax_cpu(const Tensor& self, int64_t dim, ScalarType dtype, const Tensor& out) {
  softmax_cpu_impl<true>(self, dim, dtype, out);
}

void logsumexp_cpu(const Tensor& self, IntArrayRef dims, ScalarType dtype, const Tensor& out) {
  GX_CHECK(is_floating(dtype), "dtype ", dtype, " is not supported (logsumexp computes in a floating dtype)");
  const ReduceIter it = make_reduce(self, dims, out);
  if (it.out_numel == 0) return;
  CpuReduce::run(LogSumExpReducer<double>{}, it);  // every floating dtype in double on the CPU
}

}  // namespace gx::ops
