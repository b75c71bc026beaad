#include "core/cpu_allocator.h"

#include <atomic>
#include <cstdlib>

#include "core/error.h"

namespace gx {
namespace {
std::atomic<int64_t> g_allocated{0}, g_peak{0}, g_allocs{0}, g_frees{0};

void raise_peak(int64_t now) {
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}
}  // namespace

void* cpu_alloc(size_t nbytes) {
  constexpr size_t kAlign = 64;
  const size_t rounded = (nbytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (p == nullptr) fail(ErrorKind::OutOfMemory, "out of host memory: tried to allocate ", nbytes, " bytes on cpu");
  const int64_t now = g_allocated.fetch_add(static_cast<int64_t>(nbytes)) + static_cast<int64_t>(nbytes);
  raise_peak(now);
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void cpu_free(void* ptr, size_t nbytes) noexcept {
  std::free(ptr);
  g_allocated.fetch_sub(static_cast<int64_t>(nbytes));
  g_frees.fetch_add(1, std::memory_order_relaxed);
}

MemoryStats cpu_stats() {
  MemoryStats s;
  s.allocated_bytes = g_allocated.load();
  s.reserved_bytes = s.allocated_bytes;
  s.peak_allocated_bytes = g_peak.load();
  s.num_allocs = g_allocs.load();
  s.num_frees = g_frees.load();
  s.num_device_mallocs = s.num_allocs;
  s.num_device_frees = s.num_frees;
  return s;
}

}  // namespace gx
