// CUDA scatter_reduce (index_iter.h walks the index as scatter's does):
// every index position combines src's element into self's with the
// reduction's atomic (atomics.cuh: an instruction where the hardware has
// one, else a compare-and-swap loop), so the order among repeated indices is
// unspecified: float sums and products may differ in the last bits from run
// to run; the max and min are exact. Out of range index values are recorded
// and read back (index_launch.cuh).
#include "atomics.cuh"
#include "index_iter.h"
#include "index_launch.cuh"

namespace gx::ops {
namespace {

template <typename I, typename C, typename Op>
__device__ __forceinline__ void scatter_reduce_body(const IndexIter& it, ScalarType dtype, Op op, unsigned long long* bad) {
  const I stride = static_cast<I>(gridDim.x) * kThreads;
  const I n = static_cast<I>(it.numel);
  for (I l = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; l < n; l += stride) {
    int64_t i, w, x;
    it.offsets<I>(l, i, w, x);
    const int64_t k = it.value(i);
    if (!it.in_range(k)) {
      record_bad(bad, k);
      continue;
    }
    atomic_apply_as<C>(it.indexed + x + k * it.axis_stride, dtype, load_as<C>(it.walked + w, dtype), op);
  }
}

template <typename C, typename Op>
__global__ void __launch_bounds__(kThreads) scatter_reduce_kernel(const __grid_constant__ IndexIter it, ScalarType dtype,
                                                                  Op op, unsigned long long* bad) {
  if (it.numel <= 0x7fffffffll) scatter_reduce_body<uint32_t, C>(it, dtype, op, bad);
  else scatter_reduce_body<uint64_t, C>(it, dtype, op, bad);
}

}  // namespace

void scatter_reduce_cuda(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src, int64_t reduce) {
  const IndexIter it = make_index_iter(index, axis, src, self, false);
  const ScalarType dtype = self.dtype();
  with_reduction(reduce, [&](auto op) {
    with_compute<kCNumeric>(dtype, [&](auto tag) {
      using C = typename decltype(tag)::type;
      if (it.numel == 0) return;
      const BadIndex b = run_checked(it.device, [&](cudaStream_t stream, unsigned long long* bad) {
        scatter_reduce_kernel<C><<<blocks_for(it.numel), kThreads, 0, stream>>>(it, dtype, op, bad);
      });
      if (b.found) throw_out_of_range(it, b.value);
    });
  });
}

}  // namespace gx::ops
