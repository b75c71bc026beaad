// What the CUDA kernels of ops/index/ share: grid sizes, and the check of
// their index values (NOTE [ Walking an index ] in index_iter.h): a kernel
// skips a value out of range and records the first one it sees in a small
// int64 record, [flag, value, which index], which the host reads back after
// the kernel (a sync per call: the price of an error message naming the
// value instead of a device assert).
#pragma once
#include <vector>

#include "../common/cuda_loops.cuh"

namespace gx::ops {

// Records the bad value k of index `which` once: the flag goes 0 -> 1 for the first.
__device__ __forceinline__ void record_bad(unsigned long long* bad, int64_t k, int which = 0) {
  if (atomicCAS(bad, 0ull, 1ull) == 0ull) {
    bad[1] = static_cast<unsigned long long>(k);
    bad[2] = static_cast<unsigned long long>(which);
  }
}

// Blocks of kThreads for n elements, one per thread, grid-stride beyond 2^20 blocks.
inline unsigned blocks_for(int64_t n) {
  const int64_t want = (n + kThreads - 1) / kThreads;
  constexpr int64_t kMaxGrid = 1 << 20;
  return static_cast<unsigned>(want < 1 ? 1 : want > kMaxGrid ? kMaxGrid : want);
}

// A recorded bad index value: what the kernel saw and which index it was.
struct BadIndex {
  bool found = false;
  int64_t value = 0;
  int64_t which = 0;
};

// The record of each device, for this thread: 3 int64 in device memory
// (zero between calls) and their pinned host mirror, made on first use and
// kept for the process (a few bytes; nothing to allocate or clear per call).
struct CheckRecord {
  unsigned long long* dev = nullptr;
  unsigned long long* host = nullptr;
  bool pinned = false;
};
inline CheckRecord& check_record(int device) {
  thread_local std::vector<CheckRecord> records;
  if (static_cast<int>(records.size()) <= device) records.resize(static_cast<size_t>(device) + 1);
  CheckRecord& r = records[static_cast<size_t>(device)];
  if (r.dev == nullptr) {
    GX_CHECK(cudaMalloc(reinterpret_cast<void**>(&r.dev), 3 * sizeof(unsigned long long)) == cudaSuccess &&
                 cudaMemset(r.dev, 0, 3 * sizeof(unsigned long long)) == cudaSuccess,
             "allocating the index check's record failed");
    r.pinned = cudaMallocHost(reinterpret_cast<void**>(&r.host), 3 * sizeof(unsigned long long)) == cudaSuccess;
    if (!r.pinned) {
      cudaGetLastError();  // pageable memory then
      r.host = new unsigned long long[3];
    }
  }
  return r;
}

// Runs `launch(stream, bad)` on `device` and reads the record back (one
// small copy and a stream sync; the record is cleared again only after a
// bad value).
template <typename L> BadIndex run_checked(int device, L&& launch) {
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  CheckRecord& r = check_record(device);
  launch(stream, r.dev);
  GX_CHECK_LAUNCH();
  GX_CHECK(cudaMemcpyAsync(r.host, r.dev, 3 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
               cudaStreamSynchronize(stream) == cudaSuccess,
           "reading the index check back failed");
  BadIndex b{r.host[0] != 0, static_cast<int64_t>(r.host[1]), static_cast<int64_t>(r.host[2])};
  if (b.found) {
    GX_CHECK(cudaMemsetAsync(r.dev, 0, 3 * sizeof(unsigned long long), stream) == cudaSuccess &&
                 cudaStreamSynchronize(stream) == cudaSuccess,
             "clearing the index check failed");
  }
  return b;
}

}  // namespace gx::ops
