// Host memory for cpu tensors: 64-byte aligned (vector loads), counted so
// gx.memory.stats('cpu') can show live bytes. No caching: malloc already does.
#pragma once
#include <cstddef>

#include "core/memory_stats.h"

namespace gx {

void* cpu_alloc(size_t nbytes);  // throws gx::Error(OutOfMemory) with the size
void cpu_free(void* ptr, size_t nbytes) noexcept;
MemoryStats cpu_stats();

}  // namespace gx
