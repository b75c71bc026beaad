// The caching pool of page-locked host memory: see pinned_allocator.h.
//
// cudaHostAlloc/cudaFreeHost are slow (they map pages for the device and
// synchronize), so freed blocks are kept in lists by size class (powers of two
// from 4 KiB) and handed out again. A block may still be read or written by an
// asynchronous copy when it is freed, so pinned_free records an event on the
// stream of that copy, and the block is reused (or released) only once the
// event has completed. Events are checked lazily, when a block of that class is
// wanted, and come from a per-device pool so that they are not created and
// destroyed on every free.
//
// One mutex guards everything; the addon runs on several worker_threads.
#include "cuda/pinned_allocator.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/device.h"
#include "base/error.h"
#include "cuda/cuda_check.h"
#include "base/human_size.h"

namespace gx::core::cuda {
namespace {

constexpr int kMinClass = 12;  // 4 KiB
constexpr int kMaxClass = 62;  // larger requests cannot be rounded up to a power of two
constexpr int kNumClasses = kMaxClass + 1;

struct CachedBlock {
  void* ptr;
  cudaEvent_t event;  // nullptr: reusable now
  int event_device;   // the device whose pool `event` goes back to
};

struct State {
  std::mutex mu;
  std::unordered_map<void*, int> live;          // handed-out block -> size class
  std::vector<CachedBlock> cached[kNumClasses];  // per class, oldest first
  std::vector<cudaEvent_t> events[kMaxCudaDevices];  // idle events, per device
  MemoryStats stats;
};

// Leaked on purpose, as the device allocator's state: see caching_allocator.cpp.
State& state() {
  static State* s = new State();
  return *s;
}

int size_class(size_t nbytes) {
  int c = kMinClass;
  while ((size_t{1} << c) < nbytes) ++c;
  return c;
}

// Whether the device work recorded by `b.event` is done; throws when the
// query itself fails (the context is broken, so reporting it is all we can do).
bool ready(const CachedBlock& b) {
  if (!b.event) return true;
  const cudaError_t err = cudaEventQuery(b.event);
  if (err == cudaSuccess) return true;
  if (err == cudaErrorNotReady) return false;
  GX_CUDA_CHECK(err);
  return false;  // unreachable: GX_CUDA_CHECK threw
}

void recycle_event(State& s, const CachedBlock& b) {
  if (b.event) s.events[b.event_device].push_back(b.event);
}

// The device `stream` belongs to. Before CUDA 12.8 there is no way to ask, so
// we assume the caller's current device, which is where its streams live.
cudaError_t stream_device(Stream stream, int* device) {
#if CUDART_VERSION >= 12080
  return cudaStreamGetDevice(static_cast<cudaStream_t>(stream), device);
#else
  (void)stream;
  return cudaGetDevice(device);
#endif
}

// Records an event on `stream` into `out`, taking it from the pool of the
// stream's device (an event must be recorded on a stream of its own device).
// Never throws: returns false when any CUDA call fails.
bool record_event(State& s, Stream stream, CachedBlock* out) {
  int device = 0, prev = 0;
  if (stream_device(stream, &device) != cudaSuccess || device < 0 ||
      device >= kMaxCudaDevices || cudaGetDevice(&prev) != cudaSuccess)
    return false;
  if (prev != device && cudaSetDevice(device) != cudaSuccess) return false;

  std::vector<cudaEvent_t>& pool = s.events[device];
  cudaEvent_t event = nullptr;
  if (!pool.empty()) {
    event = pool.back();
    pool.pop_back();
  } else if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
    event = nullptr;
  }
  bool ok = event && cudaEventRecord(event, static_cast<cudaStream_t>(stream)) == cudaSuccess;
  if (ok) {
    out->event = event;
    out->event_device = device;
  } else if (event) {
    pool.push_back(event);
  }
  if (prev != device) (void)cudaSetDevice(prev);
  return ok;
}

// Frees every cached block whose last use is done, in all classes.
void release_ready(State& s) {
  for (int c = kMinClass; c < kNumClasses; ++c) {
    std::vector<CachedBlock>& list = s.cached[c];
    for (size_t i = 0; i < list.size();) {
      if (!ready(list[i])) {
        ++i;
        continue;
      }
      GX_CUDA_CHECK(cudaFreeHost(list[i].ptr));
      recycle_event(s, list[i]);
      s.stats.reserved_bytes -= static_cast<int64_t>(size_t{1} << c);
      s.stats.num_device_frees++;
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

[[noreturn]] void throw_oom(State& s, size_t nbytes) {
  s.stats.num_ooms++;
  fail(ErrorKind::OutOfMemory, "out of pinned host memory: tried to allocate ", human_size(nbytes),
       "; ", human_size(s.stats.allocated_bytes), " allocated by gpuext, ",
       human_size(s.stats.reserved_bytes - s.stats.allocated_bytes), " cached");
}

}  // namespace

void* pinned_alloc(size_t nbytes) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (nbytes > (size_t{1} << kMaxClass)) throw_oom(s, nbytes);
  const int c = size_class(nbytes);
  const size_t size = size_t{1} << c;

  void* ptr = nullptr;
  std::vector<CachedBlock>& list = s.cached[c];
  for (size_t i = 0; i < list.size(); ++i) {
    if (!ready(list[i])) continue;
    ptr = list[i].ptr;
    recycle_event(s, list[i]);
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    s.stats.num_cache_hits++;
    break;
  }

  if (!ptr) {
    cudaError_t err = cudaHostAlloc(&ptr, size, cudaHostAllocDefault);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it, give back what is idle, retry
      release_ready(s);
      err = cudaHostAlloc(&ptr, size, cudaHostAllocDefault);
      if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        throw_oom(s, size);
      }
    }
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      throw Error(ErrorKind::Cuda, cuda_error_message(err, "cudaHostAlloc", __FILE__, __LINE__));
    }
    s.stats.reserved_bytes += static_cast<int64_t>(size);
    s.stats.num_device_mallocs++;
  }

  s.live.emplace(ptr, c);
  s.stats.allocated_bytes += static_cast<int64_t>(size);
  if (s.stats.allocated_bytes > s.stats.peak_allocated_bytes)
    s.stats.peak_allocated_bytes = s.stats.allocated_bytes;
  s.stats.num_allocs++;
  return ptr;
}

void pinned_free(void* ptr, Stream stream) noexcept {
  if (!ptr) return;
  try {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.live.find(ptr);
    if (it == s.live.end()) return;  // not ours, or freed twice
    const int c = it->second;

    CachedBlock block{ptr, nullptr, 0};
    if (stream && !record_event(s, stream, &block)) {
      // Without an event we cannot tell when the stream is done with the
      // block, so wait for it here; if even that fails the context is broken
      // and nothing will touch the block again.
      (void)cudaGetLastError();
      (void)cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      (void)cudaGetLastError();
    }
    s.cached[c].push_back(block);
    s.live.erase(it);
    s.stats.allocated_bytes -= static_cast<int64_t>(size_t{1} << c);
    s.stats.num_frees++;
  } catch (...) {
    // Only std::bad_alloc / std::system_error can get here; the block stays
    // counted as allocated rather than terminating the process.
  }
}

void pinned_empty_cache() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  release_ready(s);
  // Idle events are part of the cache too.
  for (std::vector<cudaEvent_t>& pool : s.events) {
    while (!pool.empty()) {
      GX_CUDA_CHECK(cudaEventDestroy(pool.back()));
      pool.pop_back();
    }
  }
}

MemoryStats pinned_stats() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.stats;
}

}  // namespace gx::core::cuda
