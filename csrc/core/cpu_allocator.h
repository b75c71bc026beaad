// Host memory for cpu tensors: a caching allocator with statistics, the CPU
// twin of csrc/cuda/caching_allocator.h. One per process (decision 1 of docs/DESIGN.md).
//
// NOTE [ Host caching allocator ]
// A fresh large buffer costs more than the work done in it: the kernel maps
// its pages one fault at a time on first touch (zeroing each), and glibc
// returns buffers above its mmap threshold to the OS on free, so the next op
// of the same size pays again (gx.add of two 1e7 float32 tensors: 4.6 ms into
// `out`, 186 ms with the result allocated). So:
//   - requests below kLargeMin go to aligned_alloc (glibc's own bins cache
//     them well) and are counted, not cached;
//   - larger ones are rounded up to a size class (eight per power of two;
//     page multiples, and 2 MiB multiples from 2 MiB on) and mapped with mmap,
//     2 MiB-aligned with madvise(MADV_HUGEPAGE) from 2 MiB on, so the kernel
//     can back them with huge pages (one fault per 2 MiB; NumPy does the same);
//   - a freed large block is kept for the next request of its size class, up
//     to a cap on the cached bytes (GPUEXT_CPU_CACHE_BYTES; default an eighth
//     of physical memory, at most 2 GiB); past it the least recently freed
//     blocks are unmapped first;
//   - when mmap or aligned_alloc fails, the cache is released and the call
//     retried once; if it still fails, the OutOfMemory error names the size
//     and what the allocator holds.
// Statistics: allocated_bytes = bytes asked for by live storages (tests count
// them), reserved_bytes = allocated + cached (bytes of blocks kept for reuse),
// so emptyCache brings cached to 0. One mutex guards the cache and the
// counters; mmap/munmap run outside it.
#pragma once
#include <cstddef>

#include "base/memory_stats.h"

namespace gx::core {

void* cpu_alloc(size_t nbytes);  // throws gx::core::Error(OutOfMemory) with the size
void cpu_free(void* ptr, size_t nbytes) noexcept;
// Unmaps every cached block (gx.memory.emptyCache('cpu')).
void cpu_empty_cache() noexcept;
MemoryStats cpu_stats();
// The most bytes the cache keeps (NOTE [ Host caching allocator ]).
int64_t cpu_cache_limit();

}  // namespace gx::core
