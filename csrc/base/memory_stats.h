// Statistics every allocator keeps, reported per device by gx.memory.stats().
#pragma once
#include <cstdint>

namespace gx::core {

struct MemoryStats {
  int64_t allocated_bytes = 0;       // handed out to storages, not yet freed
  int64_t reserved_bytes = 0;        // held from the driver/OS: allocated + cached
  int64_t peak_allocated_bytes = 0;
  int64_t num_allocs = 0;            // allocate() calls that succeeded
  int64_t num_frees = 0;
  int64_t num_cache_hits = 0;        // allocations served without a driver call
  int64_t num_device_mallocs = 0;    // cudaMalloc / cudaHostAlloc / malloc calls
  int64_t num_device_frees = 0;
  int64_t num_ooms = 0;              // allocations that failed even after freeing the cache
  int64_t limit_bytes = 0;           // 0 = no limit
};

}  // namespace gx::core
