// The host caching allocator: see NOTE [ Host caching allocator ] in
// cpu_allocator.h. Blocks are found again by size class alone (a freed
// block's class is recomputed from the byte count the storage kept), so live
// blocks need no table: the cache is an LRU list of free blocks plus, per
// size class, its entries in the order they were freed.
#include "core/cpu_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "base/human_size.h"

namespace gx::core {
namespace {

constexpr size_t kAlign = 64;                     // cache line: vector loads never split
constexpr size_t kLargeMin = 256 << 10;           // from here on: mmap'ed, cached blocks
constexpr size_t kPage = 4096;
constexpr size_t kHuge = 2 << 20;                 // x86-64 huge page
constexpr size_t kMaxRequest = size_t{1} << 56;   // past any address space; keeps rounding from overflowing

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

// Eight classes per power of two (at most 12.5% rounding), page multiples,
// 2 MiB multiples from 2 MiB on (so huge pages cover the whole block).
size_t size_class(size_t n) {
  const int lg = 63 - __builtin_clzll(static_cast<unsigned long long>(n));
  size_t step = size_t{1} << (lg - 3);
  const size_t floor = n >= kHuge ? kHuge : kPage;
  if (step < floor) step = floor;
  return round_up(n, step);
}

int64_t default_cache_limit() {
  if (const char* env = std::getenv("GPUEXT_CPU_CACHE_BYTES")) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end != env && *end == '\0' && v >= 0) return v;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const int64_t phys = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : int64_t{8} << 30;
  const int64_t cap = int64_t{2} << 30;
  return phys / 8 < cap ? phys / 8 : cap;
}

struct Cached {
  size_t size;
  void* ptr;
};
using Lru = std::list<Cached>;  // front: the most recently freed

struct State {
  std::mutex mu;
  Lru lru;
  std::unordered_map<size_t, std::deque<Lru::iterator>> by_size;  // per class, oldest first
  int64_t cached_bytes = 0;
  int64_t limit = default_cache_limit();
  MemoryStats stats;
};

// Deliberately leaked: storages may be freed from other translation units'
// static destructors; the OS reclaims everything at exit.
State& state() {
  static State* s = new State();
  return *s;
}

// A cached block of exactly `size` bytes (the most recently freed), or null.
void* take_cached(State& s, size_t size) {
  auto it = s.by_size.find(size);
  if (it == s.by_size.end()) return nullptr;
  Lru::iterator entry = it->second.back();
  it->second.pop_back();
  if (it->second.empty()) s.by_size.erase(it);
  void* p = entry->ptr;
  s.lru.erase(entry);
  s.cached_bytes -= static_cast<int64_t>(size);
  return p;
}

// Removes the least recently freed block from the cache and returns it.
Cached evict_oldest(State& s) {
  const Cached victim = s.lru.back();
  auto it = s.by_size.find(victim.size);
  it->second.pop_front();  // the oldest of its class is the globally oldest's entry
  if (it->second.empty()) s.by_size.erase(it);
  s.lru.pop_back();
  s.cached_bytes -= static_cast<int64_t>(victim.size);
  return victim;
}

// Takes every cached block out of the cache (the caller unmaps them unlocked).
std::vector<Cached> drain(State& s) {
  std::vector<Cached> out;
  out.reserve(s.lru.size());
  while (!s.lru.empty()) out.push_back(evict_oldest(s));
  s.stats.num_device_frees += static_cast<int64_t>(out.size());
  return out;
}

// A fresh mapping of `size` bytes (a size class), 2 MiB-aligned and marked for
// huge pages from 2 MiB on; null when the OS says no.
void* map_block(size_t size) {
  constexpr int kProt = PROT_READ | PROT_WRITE, kFlags = MAP_PRIVATE | MAP_ANONYMOUS;
  if (size < kHuge) {
    void* p = mmap(nullptr, size, kProt, kFlags, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  // Over-map by 2 MiB and trim both ends to a 2 MiB boundary: mmap only
  // promises page alignment, and a huge page needs an aligned 2 MiB range.
  const size_t span = size + kHuge;
  void* raw_p = mmap(nullptr, span, kProt, kFlags, -1, 0);
  if (raw_p == MAP_FAILED) return nullptr;
  char* raw = static_cast<char*>(raw_p);
  char* p = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(raw), kHuge));
  if (p > raw) munmap(raw, static_cast<size_t>(p - raw));
  const size_t tail = static_cast<size_t>(raw + span - (p + size));
  if (tail > 0) munmap(p + size, tail);
  (void)madvise(p, size, MADV_HUGEPAGE);  // a hint: EINVAL where THP is compiled out, and then no matter
  return p;
}

void* system_alloc(size_t nbytes) {
  if (nbytes < kLargeMin) return std::aligned_alloc(kAlign, round_up(nbytes, kAlign));
  return map_block(size_class(nbytes));
}

[[noreturn]] void throw_oom(State& s, size_t nbytes) {
  int64_t allocated, cached;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stats.num_ooms++;
    allocated = s.stats.allocated_bytes;
    cached = s.cached_bytes;
  }
  fail(ErrorKind::OutOfMemory, "out of host memory: tried to allocate ", human_size(nbytes), " (", nbytes,
       " bytes) on cpu; ", human_size(static_cast<uint64_t>(allocated)), " allocated by gpuext, ",
       human_size(static_cast<uint64_t>(cached)), " cached");
}

void count_alloc(State& s, size_t nbytes, bool hit) {
  MemoryStats& st = s.stats;
  st.allocated_bytes += static_cast<int64_t>(nbytes);
  if (st.allocated_bytes > st.peak_allocated_bytes) st.peak_allocated_bytes = st.allocated_bytes;
  st.num_allocs++;
  if (hit) st.num_cache_hits++;
  else st.num_device_mallocs++;
}

}  // namespace

void* cpu_alloc(size_t nbytes) {
  State& s = state();
  if (nbytes > kMaxRequest) throw_oom(s, nbytes);
  const bool large = nbytes >= kLargeMin;
  if (large) {
    std::lock_guard<std::mutex> lock(s.mu);
    if (void* p = take_cached(s, size_class(nbytes))) {
      count_alloc(s, nbytes, /*hit=*/true);
      return p;
    }
  }
  void* p = system_alloc(nbytes);
  if (p == nullptr) {
    // Whatever the cache holds may be what the OS lacks: give it back, retry once.
    cpu_empty_cache();
    p = system_alloc(nbytes);
    if (p == nullptr) throw_oom(s, nbytes);
  }
  std::lock_guard<std::mutex> lock(s.mu);
  count_alloc(s, nbytes, /*hit=*/false);
  return p;
}

void cpu_free(void* ptr, size_t nbytes) noexcept {
  if (ptr == nullptr) return;
  State& s = state();
  if (nbytes < kLargeMin) {
    std::free(ptr);
    std::lock_guard<std::mutex> lock(s.mu);
    s.stats.allocated_bytes -= static_cast<int64_t>(nbytes);
    s.stats.num_frees++;
    s.stats.num_device_frees++;
    return;
  }
  const size_t size = size_class(nbytes);
  bool keep = false;
  try {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stats.allocated_bytes -= static_cast<int64_t>(nbytes);
    s.stats.num_frees++;
    keep = static_cast<int64_t>(size) <= s.limit;  // a block larger than the whole cache goes straight back
    if (keep) {
      // Eviction unmaps under the lock: rare (the cache is full), and it keeps
      // this path free of allocations that could fail half-way.
      while (s.cached_bytes + static_cast<int64_t>(size) > s.limit) {
        const Cached victim = evict_oldest(s);
        munmap(victim.ptr, victim.size);
        s.stats.num_device_frees++;
      }
      std::deque<Lru::iterator>& same = s.by_size[size];
      s.lru.push_front(Cached{size, ptr});
      try {
        same.push_back(s.lru.begin());
      } catch (...) {
        s.lru.pop_front();
        if (same.empty()) s.by_size.erase(size);
        throw;
      }
      s.cached_bytes += static_cast<int64_t>(size);
    } else {
      s.stats.num_device_frees++;
    }
  } catch (...) {
    // std::bad_alloc from the cache's bookkeeping: unmap the block instead of
    // caching it (never terminate from a free).
    keep = false;
  }
  if (!keep) munmap(ptr, size);
}

void cpu_empty_cache() noexcept {
  State& s = state();
  std::vector<Cached> victims;
  try {
    std::lock_guard<std::mutex> lock(s.mu);
    victims = drain(s);
  } catch (...) {
    return;  // no memory for the list: the cache stays as it was
  }
  for (const Cached& b : victims) munmap(b.ptr, b.size);
}

MemoryStats cpu_stats() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  MemoryStats st = s.stats;
  st.reserved_bytes = st.allocated_bytes + s.cached_bytes;
  return st;
}

int64_t cpu_cache_limit() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.limit;
}

}  // namespace gx::core
