// The caching CUDA device allocator: see NOTE [ Caching allocator ] in
// caching_allocator.h. Modelled on PyTorch's CUDACachingAllocator (block pools,
// splitting, merging, stream-aware reuse) and tinygrad's LRUAllocator (free on
// OOM and retry), reduced to what gpuext needs.
//
// Layout: every cudaMalloc'd region is a "segment". A segment is cut into
// blocks that form a doubly linked list in address order (prev/next). Free
// blocks sit in one of two ordered sets per device, small and large, sorted by
// (stream, size, address) so the first entry not below (stream, size, 0) is the
// best fit on that stream. Allocated blocks are found by pointer in `live`.
//
// One mutex guards everything: the addon runs on several worker_threads, and
// the hot path (a cache hit) is a set lookup, short enough not to need finer
// locks. cudaMalloc/cudaFree run under the lock too, like PyTorch.
#include "cuda/caching_allocator.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/device.h"
#include "base/error.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "base/human_size.h"

namespace gx::core::cuda {
namespace {

constexpr size_t kMinBlockSize = 512;             // every size is a multiple of this
constexpr size_t kSmallSize = 1 << 20;            // requests below this use the small pool
constexpr size_t kSmallSegment = 2 << 20;         // small-pool segments are this size
constexpr size_t kLargeRound = 2 << 20;           // large-pool segments round up to this
constexpr size_t kMaxRequest = SIZE_MAX / 2;      // keeps the rounding below from overflowing

size_t round_up(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

struct Block {
  Block(char* p, size_t sz, Stream st, int dev, bool sm) : ptr(p), size(sz), stream(st), device(dev), small(sm) {}
  char* ptr;
  size_t size;
  Stream stream;      // the stream it was allocated on; reused only there
  int device;
  bool small;         // which pool it belongs to
  bool allocated = false;
  Block* prev = nullptr;  // neighbours in the same segment, in address order
  Block* next = nullptr;
  std::vector<Stream> uses;  // other streams that used it (device_record_stream)

  bool whole_segment() const { return prev == nullptr && next == nullptr; }
};

struct BlockLess {
  bool operator()(const Block* a, const Block* b) const {
    auto key = [](const Block* x) {
      return std::make_tuple(reinterpret_cast<uintptr_t>(x->stream), x->size,
                             reinterpret_cast<uintptr_t>(x->ptr));
    };
    return key(a) < key(b);
  }
};
using FreeSet = std::set<Block*, BlockLess>;

struct DevicePool {
  FreeSet small_free;
  FreeSet large_free;
  MemoryStats stats;

  FreeSet& free_set(bool small) { return small ? small_free : large_free; }
};

// A freed block that other streams used: it returns to its pool once the
// events recorded on those streams at free time have completed.
struct PendingFree {
  Block* block;
  std::vector<cudaEvent_t> events;
};

struct State {
  std::mutex mu;
  DevicePool pools[kMaxCudaDevices];
  std::unordered_map<void*, Block*> live;  // allocated blocks by pointer, all devices
  std::vector<PendingFree> pending;        // see NOTE [ Cross-stream frees ]
};

// Deliberately leaked: blocks may be freed from static destructors of other
// translation units, and freeing device memory after the CUDA runtime has shut
// down at exit would fail anyway; the driver reclaims everything then.
State& state() {
  static State* s = new State();
  return *s;
}


void check_index(int device, const char* what) {
  GX_CHECK_RANGE(device >= 0 && device < kMaxCudaDevices, what, ": CUDA device index must be in [0, ",
                 kMaxCudaDevices, "), got ", device);
}

// Returns every cached segment of `device` that is wholly free to the driver.
// Leaves the pool consistent if a cudaFree fails part-way (then throws).
void release_free_segments(DevicePool& pool, int device) {
  std::vector<Block*> victims;
  for (FreeSet* set : {&pool.small_free, &pool.large_free})
    for (Block* b : *set)
      if (b->whole_segment()) victims.push_back(b);
  if (victims.empty()) return;

  CoreDeviceGuard guard(device);
  for (Block* b : victims) {
    GX_CUDA_CHECK(cudaFree(b->ptr));
    pool.free_set(b->small).erase(b);
    pool.stats.reserved_bytes -= static_cast<int64_t>(b->size);
    pool.stats.num_device_frees++;
    delete b;
  }
}

// The OutOfMemory error, with what we and the driver know about the device.
[[noreturn]] void throw_oom(DevicePool& pool, int device, size_t size) {
  pool.stats.num_ooms++;
  const MemoryStats& st = pool.stats;
  std::string driver = "free memory unknown";
  try {
    CoreDeviceGuard guard(device);
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
      driver = human_size(free_bytes) + " free of " + human_size(total_bytes);
    else
      (void)cudaGetLastError();
  } catch (const Error&) {
    // Keep the OOM as the error the caller sees; the device state is secondary.
  }
  fail(ErrorKind::OutOfMemory, "CUDA out of memory on cuda:", device, ": tried to allocate ",
       human_size(size), "; ", human_size(st.allocated_bytes), " allocated by gpuext, ",
       human_size(st.reserved_bytes - st.allocated_bytes), " cached, ", driver,
       " (limit: ", st.limit_bytes ? human_size(st.limit_bytes) : std::string("none"), ")");
}

// Best fit among the free blocks of `stream` in `set`, removed from the set.
Block* take_cached(FreeSet& set, Stream stream, size_t size) {
  Block probe{nullptr, size, stream, 0, false};
  auto it = set.lower_bound(&probe);
  if (it == set.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  set.erase(it);
  return b;
}

// A new segment from cudaMalloc holding at least `size` bytes, as one free
// block (not in any set). Frees the cache and retries once when the driver or
// the limit says no; throws OutOfMemory when that is not enough.
Block* malloc_segment(DevicePool& pool, int device, size_t size, bool small, Stream stream) {
  const size_t seg = small ? kSmallSegment : round_up(size, kLargeRound);
  const int64_t limit = pool.stats.limit_bytes;
  auto over_limit = [&] {
    return limit > 0 && pool.stats.reserved_bytes + static_cast<int64_t>(seg) > limit;
  };
  if (over_limit()) {
    release_free_segments(pool, device);
    if (over_limit()) throw_oom(pool, device, size);
  }

  CoreDeviceGuard guard(device);
  void* ptr = nullptr;
  cudaError_t err = cudaMalloc(&ptr, seg);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // OOM is not sticky: clear it before retrying
    release_free_segments(pool, device);
    err = cudaMalloc(&ptr, seg);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw_oom(pool, device, size);
    }
  }
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(ErrorKind::Cuda, cuda_error_message(err, "cudaMalloc", __FILE__, __LINE__));
  }
  pool.stats.reserved_bytes += static_cast<int64_t>(seg);
  pool.stats.num_device_mallocs++;
  return new Block{static_cast<char*>(ptr), seg, stream, device, small};
}

// Whether cutting `size` bytes off `b` leaves a remainder worth keeping: any
// remainder in the small pool, but only more than a small request in the large
// pool (smaller pieces there would only serve large requests badly).
bool should_split(const Block* b, size_t size) {
  const size_t rest = b->size - size;
  return b->small ? rest >= kMinBlockSize : rest > kSmallSize;
}

// Cuts `b` to `size` bytes; the rest becomes a free block after it.
void split(DevicePool& pool, Block* b, size_t size) {
  Block* rest = new Block{b->ptr + size, b->size - size, b->stream, b->device, b->small};
  rest->prev = b;
  rest->next = b->next;
  if (b->next) b->next->prev = rest;
  b->next = rest;
  b->size = size;
  pool.free_set(b->small).insert(rest);
}

// Absorbs `b`'s free neighbour `n` (prev or next) into `b`.
void merge(FreeSet& set, Block* b, Block* n) {
  if (!n || n->allocated) return;
  set.erase(n);
  if (n == b->prev) {
    b->ptr = n->ptr;
    b->prev = n->prev;
    if (n->prev) n->prev->next = b;
  } else {
    b->next = n->next;
    if (n->next) n->next->prev = b;
  }
  b->size += n->size;
  delete n;
}

// Puts a freed block back in its pool, merged with free neighbours.
void return_to_pool(DevicePool& pool, Block* b) {
  pool.stats.allocated_bytes -= static_cast<int64_t>(b->size);
  pool.stats.num_frees++;
  b->allocated = false;
  b->uses.clear();
  FreeSet& set = pool.free_set(b->small);
  merge(set, b, b->prev);
  merge(set, b, b->next);
  set.insert(b);
}

// NOTE [ Cross-stream frees ]
// A block is reused only by allocations on its own stream, whose work is
// ordered after everything earlier on that stream. When the program declared
// (recordStream) that other streams used it too, their work is not ordered:
// on free, an event is recorded on each of those streams, and the block stays
// out of the pool until all of them have completed. Checked lazily, on the
// next allocation; emptyCache waits for them.
void process_pending(State& s, bool wait) {
  for (size_t i = 0; i < s.pending.size();) {
    PendingFree& p = s.pending[i];
    bool done = true;
    for (cudaEvent_t e : p.events) {
      const cudaError_t err = wait ? cudaEventSynchronize(e) : cudaEventQuery(e);
      if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        done = false;
        break;
      }
      if (err != cudaSuccess) (void)cudaGetLastError();  // a failed event: treat as done
    }
    if (!done) {
      ++i;
      continue;
    }
    for (cudaEvent_t e : p.events) cudaEventDestroy(e);
    return_to_pool(s.pools[p.block->device], p.block);
    s.pending[i] = s.pending.back();
    s.pending.pop_back();
  }
}

}  // namespace

void device_record_stream(void* ptr, Stream stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.live.find(ptr);
  GX_CHECK_VALUE(it != s.live.end(), "recordStream: the tensor's memory is not from the CUDA caching allocator");
  Block* b = it->second;
  if (stream == b->stream) return;
  for (Stream u : b->uses)
    if (u == stream) return;
  b->uses.push_back(stream);
}

void* device_alloc(int device, size_t nbytes, Stream stream) {
  check_index(device, "device_alloc");
  GX_CORE_INTERNAL_ASSERT(nbytes > 0, "device_alloc of 0 bytes");
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  DevicePool& pool = s.pools[device];
  if (nbytes > kMaxRequest) throw_oom(pool, device, nbytes);

  if (!s.pending.empty()) process_pending(s, /*wait=*/false);
  const size_t size = round_up(nbytes, kMinBlockSize);
  const bool small = size < kSmallSize;
  Block* b = take_cached(pool.free_set(small), stream, size);
  if (b)
    pool.stats.num_cache_hits++;
  else
    b = malloc_segment(pool, device, size, small, stream);
  if (should_split(b, size)) split(pool, b, size);

  b->allocated = true;
  s.live.emplace(b->ptr, b);
  MemoryStats& st = pool.stats;
  st.allocated_bytes += static_cast<int64_t>(b->size);
  if (st.allocated_bytes > st.peak_allocated_bytes) st.peak_allocated_bytes = st.allocated_bytes;
  st.num_allocs++;
  return b->ptr;
}

void device_free(void* ptr) noexcept {
  if (!ptr) return;
  try {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.live.find(ptr);
    if (it == s.live.end()) return;  // not ours, or freed twice: nothing safe to do
    Block* b = it->second;
    s.live.erase(it);
    DevicePool& pool = s.pools[b->device];
    if (b->uses.empty()) {
      return_to_pool(pool, b);
      return;
    }
    PendingFree p{b, {}};
    int prev_device = 0;
    const bool switched = cudaGetDevice(&prev_device) == cudaSuccess && prev_device != b->device &&
                          cudaSetDevice(b->device) == cudaSuccess;
    for (Stream u : b->uses) {
      cudaEvent_t e = nullptr;
      if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess &&
          cudaEventRecord(e, static_cast<cudaStream_t>(u)) == cudaSuccess) {
        p.events.push_back(e);
      } else {
        // Could not record: wait for that stream instead, so the block is safe.
        (void)cudaGetLastError();
        if (e) cudaEventDestroy(e);
        (void)cudaStreamSynchronize(static_cast<cudaStream_t>(u));
      }
    }
    if (switched) (void)cudaSetDevice(prev_device);
    if (p.events.empty()) {
      return_to_pool(pool, b);
    } else {
      s.pending.push_back(std::move(p));
    }
  } catch (...) {
    // Only std::bad_alloc / std::system_error can get here; losing one cached
    // block is better than terminating the process from a destructor path.
  }
}

void device_empty_cache(int device) {
  if (device != -1) check_index(device, "device_empty_cache");
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  process_pending(s, /*wait=*/true);
  const int first = device == -1 ? 0 : device;
  const int last = device == -1 ? kMaxCudaDevices - 1 : device;
  for (int d = first; d <= last; ++d) release_free_segments(s.pools[d], d);
}

MemoryStats device_stats(int device) {
  check_index(device, "device_stats");
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.pools[device].stats;
}

void device_set_limit(int device, int64_t bytes) {
  check_index(device, "device_set_limit");
  GX_CHECK_RANGE(bytes >= 0, "device_set_limit: the limit must be >= 0 bytes (0 = none), got ",
                 bytes);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.pools[device].stats.limit_bytes = bytes;
}

}  // namespace gx::core::cuda
