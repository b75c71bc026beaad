// CUDA unique (sort_keys.h): a device-wide radix sort of (key, index) pairs
// (radix_sort_pairs, sort.cu), a flag where each run of equal keys starts
// (every NaN starts its own), cub::DeviceScan::InclusiveSum of the flags
// (each element's run number + 1), then one kernel writes each run's first
// element (the first in input order: the sort is stable) to values, each
// element's run to inverse and each run's start, and another the counts at
// each run's end. The number of runs is read back: the op's one sync.
#include <cub/device/device_scan.cuh>

#include <climits>

#include "sort_cuda.cuh"
#include "unique_args.h"

namespace gx::ops {
namespace {

using sortkey::Codec;
using sortkey::load_bits;
using sortkey::store_bits;

template <typename K>
__global__ void __launch_bounds__(kThreads) run_flags_kernel(const Codec c, const K* __restrict__ keys, int64_t n,
                                                             int32_t* __restrict__ flags) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    flags[i] = (i == 0 || keys[i] != keys[i - 1] || c.nan(keys[i])) ? 1 : 0;
  }
}

__global__ void __launch_bounds__(kThreads) scatter_runs_kernel(const char* __restrict__ x, int64_t item, int64_t n,
                                                                const int32_t* __restrict__ perm,
                                                                const int32_t* __restrict__ flags,
                                                                const int32_t* __restrict__ ids, char* __restrict__ values,
                                                                int64_t* __restrict__ inverse, int32_t* __restrict__ starts) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const int32_t u = ids[i] - 1, p = perm[i];
    if (flags[i] != 0) {
      store_bits(values + u * item, item, load_bits(x + p * item, item));
      if (starts != nullptr) starts[u] = static_cast<int32_t>(i);
    }
    if (inverse != nullptr) inverse[p] = u;
  }
}

__global__ void __launch_bounds__(kThreads) run_counts_kernel(int64_t n, const int32_t* __restrict__ flags,
                                                              const int32_t* __restrict__ ids,
                                                              const int32_t* __restrict__ starts,
                                                              int64_t* __restrict__ counts) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    if (i + 1 == n || flags[i + 1] != 0) {
      const int32_t u = ids[i] - 1;
      counts[u] = i + 1 - starts[u];
    }
  }
}

template <typename K>
int64_t unique_run(const char* x, const Codec& c, int64_t n, char* values, int64_t* inverse, int64_t* counts, int device,
                   cudaStream_t stream) {
  Tensor kbuf = scratch(2 * n * static_cast<int64_t>(sizeof(K)), device);
  Tensor ibuf = scratch(5 * n * static_cast<int64_t>(sizeof(int32_t)), device);  // 2 payload halves, flags, ids, starts
  K* const keys[2] = {static_cast<K*>(kbuf.data_ptr()), static_cast<K*>(kbuf.data_ptr()) + n};
  int32_t* const base = static_cast<int32_t*>(ibuf.data_ptr());
  int32_t* const vals[2] = {base, base + n};
  int32_t* const flags = base + 2 * n;
  int32_t* const ids = base + 3 * n;
  int32_t* const starts = counts != nullptr ? base + 4 * n : nullptr;
  const unsigned grid = grid_for(n);
  sort_prep_kernel<K><<<grid, kThreads, 0, stream>>>(x, c, n, n, K(0), keys[0], vals[0]);
  GX_CHECK_LAUNCH();
  const int sel = radix_sort_pairs<K>(keys, vals, n, c.bits, device, stream);
  run_flags_kernel<K><<<grid, kThreads, 0, stream>>>(c, keys[sel], n, flags);
  GX_CHECK_LAUNCH();
  size_t bytes = 0;
  cub_check(cub::DeviceScan::InclusiveSum(nullptr, bytes, flags, ids, static_cast<int>(n), stream),
            "cub::DeviceScan::InclusiveSum");
  Tensor tmp = scratch(static_cast<int64_t>(bytes), device);
  cub_check(cub::DeviceScan::InclusiveSum(tmp.data_ptr(), bytes, flags, ids, static_cast<int>(n), stream),
            "cub::DeviceScan::InclusiveSum");
  scatter_runs_kernel<<<grid, kThreads, 0, stream>>>(x, c.item, n, vals[sel], flags, ids, values, inverse, starts);
  GX_CHECK_LAUNCH();
  if (counts != nullptr) {
    run_counts_kernel<<<grid, kThreads, 0, stream>>>(n, flags, ids, starts, counts);
    GX_CHECK_LAUNCH();
  }
  int32_t m = 0;
  GX_CHECK(cudaMemcpyAsync(&m, ids + n - 1, sizeof(m), cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
               cudaStreamSynchronize(stream) == cudaSuccess,
           "unique: reading the number of values back failed");
  return m;
}

}  // namespace

int64_t unique_cuda(const Tensor& self, const std::optional<Tensor>& inverse, const std::optional<Tensor>& counts,
                    const Tensor& values) {
  const int64_t n = unique_args::check(self, inverse, counts, values);
  if (n == 0) return 0;
  GX_CHECK(n <= INT_MAX, "unique: ", n, " elements are too many for CUDA (at most 2^31 - 1)");
  const int device = self.device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  const Codec c = sortkey::codec_of(self.dtype());
  const char* x = static_cast<const char*>(self.data_ptr());
  char* v = static_cast<char*>(values.data_ptr());
  auto* inv = inverse ? static_cast<int64_t*>(inverse->data_ptr()) : nullptr;
  auto* cnt = counts ? static_cast<int64_t*>(counts->data_ptr()) : nullptr;
  return c.item <= 4 ? unique_run<uint32_t>(x, c, n, v, inv, cnt, device, stream)
                     : unique_run<uint64_t>(x, c, n, v, inv, cnt, device, stream);
}

}  // namespace gx::ops
