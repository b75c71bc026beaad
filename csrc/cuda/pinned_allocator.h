// A small caching pool of page-locked host memory (cudaHostAlloc), used for
// staging device->host readback and for tensors created with { pinned: true }.
// Blocks are cached by rounded size (powers of two from 4 KiB); a freed block
// is reused once the device work that last touched it is done (an event is
// recorded on free and queried before reuse).
#pragma once
#include <cstddef>

#include "base/memory_stats.h"
#include "cuda/runtime.h"

namespace gx::core::cuda {

// Page-locked host memory of at least `nbytes`. Throws gx::core::Error on failure.
void* pinned_alloc(size_t nbytes);
// `stream` is the stream of the last work that used the block (nullptr: none).
void pinned_free(void* ptr, Stream stream) noexcept;
void pinned_empty_cache();
MemoryStats pinned_stats();

}  // namespace gx::core::cuda
