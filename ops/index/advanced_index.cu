// CUDA index and index_put (NOTE [ Advanced indexing ] in advanced_index.h):
// a thread per position of the result, in a grid-stride loop, dividing
// positions in 32 bits where they fit. index_put with accumulate adds with
// atomics (atomics.cuh), in no fixed order; without, repeated positions keep
// any one of their values. Out of range index values are skipped, recorded
// and read back (index_launch.cuh: a sync per call).
#include "advanced_index.h"
#include "atomics.cuh"
#include "index_iter.h"
#include "index_launch.cuh"

namespace gx::ops {
namespace {

// C: the compute type for accumulate; void for a plain copy (index, or index_put without accumulate).
template <typename C, bool kPut, typename I>
__device__ __forceinline__ void adv_body(const AdvIter& it, ScalarType dtype, int64_t item, unsigned long long* bad) {
  const I stride = static_cast<I>(gridDim.x) * kThreads;
  const I n = static_cast<I>(it.numel);
  for (I l = static_cast<I>(blockIdx.x) * kThreads + threadIdx.x; l < n; l += stride) {
    int64_t o, s, v;
    int k;
    if (!it.offsets<I>(l, o, s, k, v)) {
      record_bad(bad, v, k);
      continue;
    }
    if constexpr (!kPut) copy_element(it.data[0] + o, it.data[1] + s, item);
    else if constexpr (std::is_void_v<C>) copy_element(it.data[1] + s, it.data[0] + o, item);
    else atomic_apply_as<C>(it.data[1] + s, dtype, load_as<C>(it.data[0] + o, dtype), ReduceSum{});
  }
}

template <typename C, bool kPut>
__global__ void __launch_bounds__(kThreads) adv_kernel(const __grid_constant__ AdvIter it, ScalarType dtype, int64_t item,
                                                       unsigned long long* bad) {
  if (it.numel <= 0x7fffffffll) adv_body<C, kPut, uint32_t>(it, dtype, item, bad);
  else adv_body<C, kPut, uint64_t>(it, dtype, item, bad);
}

}  // namespace

void index_cuda(const Tensor& self, const std::vector<Tensor>& indices, IntArrayRef sizes, IntArrayRef strides,
                IntArrayRef dims, const Tensor& out) {
  const AdvIter it = make_adv_iter(out, self, indices, sizes, strides, dims);
  if (it.numel == 0) return;
  const int64_t item = itemsize(self.dtype());
  const BadIndex b = run_checked(it.device, [&](cudaStream_t stream, unsigned long long* bad) {
    adv_kernel<void, false><<<blocks_for(it.numel), kThreads, 0, stream>>>(it, self.dtype(), item, bad);
  });
  if (b.found) throw_adv_out_of_range(sizes, dims, static_cast<int>(b.which), b.value);
}

void index_put_cuda(const Tensor& self, const std::vector<Tensor>& indices, IntArrayRef sizes, IntArrayRef strides,
                    IntArrayRef dims, const Tensor& values, bool accumulate) {
  const AdvIter it = make_adv_iter(values, self, indices, sizes, strides, dims);
  if (it.numel == 0) return;
  const ScalarType dtype = self.dtype();
  const int64_t item = itemsize(dtype);
  BadIndex b;
  if (!accumulate) {
    b = run_checked(it.device, [&](cudaStream_t stream, unsigned long long* bad) {
      adv_kernel<void, true><<<blocks_for(it.numel), kThreads, 0, stream>>>(it, dtype, item, bad);
    });
  } else {
    with_compute<kCNumeric>(dtype, [&](auto tag) {
      using C = typename decltype(tag)::type;
      b = run_checked(it.device, [&](cudaStream_t stream, unsigned long long* bad) {
        adv_kernel<C, true><<<blocks_for(it.numel), kThreads, 0, stream>>>(it, dtype, item, bad);
      });
    });
  }
  if (b.found) throw_adv_out_of_range(sizes, dims, static_cast<int>(b.which), b.value);
}

}  // namespace gx::ops
