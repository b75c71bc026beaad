// CUDA gather and scatter (index_iter.h): a thread per index position, in a
// grid-stride loop. Out of range index values are skipped and the first one
// seen is recorded in a 2-element int64 scratch tensor (a flag and the
// value), which the host reads back after the kernel: a sync per call, the
// price of an error message instead of a device assert. scatter with
// reduce add uses atomicAdd (float32, float64, int32, int64); the order of
// the adds is unspecified, so float sums may differ in the last bits from
// run to run. Other dtypes are refused for add.
#include "../common/cuda_loops.cuh"
#include "index_iter.h"

namespace gx::ops {
namespace {

// Records k (the index value as read) once: the flag goes 0 -> 1 for the first.
__device__ void record_bad(unsigned long long* bad, int64_t k) {
  if (atomicCAS(bad, 0ull, 1ull) == 0ull) bad[1] = static_cast<unsigned long long>(k);
}

__global__ void __launch_bounds__(kThreads) gather_kernel(const __grid_constant__ IndexIter it, int64_t item,
                                                          unsigned long long* bad) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; l < it.numel; l += stride) {
    int64_t i, w, x;
    it.offsets(l, i, w, x);
    const int64_t k = it.value(i);
    if (!it.in_range(k)) {
      record_bad(bad, k);
      continue;
    }
    copy_element(it.walked + w, it.indexed + x + k * it.axis_stride, item);
  }
}

template <typename T> __device__ void atomic_add_to(char* dst, const char* src) {
  if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(dst), *reinterpret_cast<const unsigned long long*>(src));
  } else {
    atomicAdd(reinterpret_cast<T*>(dst), *reinterpret_cast<const T*>(src));
  }
}

// T: the element type for add (reduce add), void for assign.
template <typename T>
__global__ void __launch_bounds__(kThreads) scatter_kernel(const __grid_constant__ IndexIter it, int64_t item,
                                                           unsigned long long* bad) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; l < it.numel; l += stride) {
    int64_t i, w, x;
    it.offsets(l, i, w, x);
    const int64_t k = it.value(i);
    if (!it.in_range(k)) {
      record_bad(bad, k);
      continue;
    }
    char* dst = it.indexed + x + k * it.axis_stride;
    if constexpr (std::is_void_v<T>) copy_element(dst, it.walked + w, item);
    else atomic_add_to<T>(dst, it.walked + w);
  }
}

inline unsigned blocks_for(int64_t n) {
  const int64_t want = (n + kThreads - 1) / kThreads;
  constexpr int64_t kMaxGrid = 1 << 20;  // grid-stride beyond this
  return static_cast<unsigned>(want < 1 ? 1 : want > kMaxGrid ? kMaxGrid : want);
}

// Launches `launch(stream, bad)` over it and throws for a recorded bad index.
template <typename L> void run_checked(const IndexIter& it, L&& launch) {
  if (it.numel == 0) return;
  DeviceGuard guard(it.device);
  cudaStream_t stream = current_stream(it.device);
  Tensor bad = zeros({2}, kInt64, Device(kCUDA, it.device));
  auto* flag = static_cast<unsigned long long*>(bad.data_ptr());
  launch(stream, flag);
  GX_CHECK_LAUNCH();
  unsigned long long host[2] = {0, 0};
  GX_CHECK(cudaMemcpyAsync(host, flag, sizeof(host), cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
               cudaStreamSynchronize(stream) == cudaSuccess,
           "reading the index check back failed");
  if (host[0] != 0) throw_out_of_range(it, static_cast<int64_t>(host[1]));
}

}  // namespace

void gather_cuda(const Tensor& self, int64_t axis, const Tensor& index, bool wrap, const Tensor& out) {
  const IndexIter it = make_index_iter(index, axis, out, self, wrap);
  const int64_t item = itemsize(self.dtype());
  run_checked(it, [&](cudaStream_t stream, unsigned long long* bad) {
    gather_kernel<<<blocks_for(it.numel), kThreads, 0, stream>>>(it, item, bad);
  });
}

void scatter_cuda(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src, int64_t reduce) {
  const IndexIter it = make_index_iter(index, axis, src, self, false);
  const ScalarType dtype = self.dtype();
  const int64_t item = itemsize(dtype);
  GX_CHECK(reduce == kScatterAssign || reduce == kScatterAdd, "unknown reduction ", reduce);
  if (reduce == kScatterAdd) {
    GX_CHECK(dtype == kFloat32 || dtype == kFloat64 || dtype == kInt32 || dtype == kInt64,
             "adding on CUDA (atomics) supports float32, float64, int32 and int64, not ", dtype,
             "; convert with .astype() first");
  }
  run_checked(it, [&](cudaStream_t stream, unsigned long long* bad) {
    const unsigned blocks = blocks_for(it.numel);
    if (reduce == kScatterAssign) scatter_kernel<void><<<blocks, kThreads, 0, stream>>>(it, item, bad);
    else if (dtype == kFloat32) scatter_kernel<float><<<blocks, kThreads, 0, stream>>>(it, item, bad);
    else if (dtype == kFloat64) scatter_kernel<double><<<blocks, kThreads, 0, stream>>>(it, item, bad);
    else if (dtype == kInt32) scatter_kernel<int><<<blocks, kThreads, 0, stream>>>(it, item, bad);
    else scatter_kernel<int64_t><<<blocks, kThreads, 0, stream>>>(it, item, bad);
  });
}

}  // namespace gx::ops
