// The caching CUDA device allocator. One per process (decision 1 of docs/DESIGN.md).
//
// NOTE [ Caching allocator ]
// cudaMalloc/cudaFree synchronize the device and cost tens of microseconds, so
// freed blocks are kept and handed out again:
//   - sizes are rounded up to 512 bytes; requests below 1 MiB are carved from
//     2 MiB segments, larger ones from segments rounded up to 2 MiB;
//   - a cached block is best-fit by size and split when much larger than the
//     request; neighbouring free pieces of a segment merge when freed;
//   - blocks are stream-aware: a block freed on stream S is reused only by
//     allocations on S, whose work is ordered after every earlier use (uses on
//     other streams are the caller's business: issue "recordStream");
//   - when cudaMalloc fails, every cached segment that is wholly free is
//     released and the call retried once; if it still fails, the error names
//     the requested size, the device's allocated/cached bytes and its free/total.
//   - an optional per-device limit makes allocations past it fail the same way.
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/memory_stats.h"
#include "cuda/runtime.h"

namespace gx::core::cuda {

// Returns device memory for `nbytes` (> 0) on `device`, ordered on `stream`.
// Throws gx::core::Error(OutOfMemory) with the sizes when it cannot.
void* device_alloc(int device, size_t nbytes, Stream stream);
// Returns a pointer from device_alloc to the cache. Never throws.
void device_free(void* ptr) noexcept;
// Declares that work on `stream` uses the block at `ptr` (not its allocation
// stream): on free it is reused only after that work (NOTE [ Cross-stream frees ]).
void device_record_stream(void* ptr, Stream stream);
// Releases every wholly free cached segment of `device` (all devices when -1).
void device_empty_cache(int device);
MemoryStats device_stats(int device);
// 0 removes the limit.
void device_set_limit(int device, int64_t bytes);

}  // namespace gx::core::cuda
