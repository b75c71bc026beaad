// The launch shape the kernels of ops/conv/ share: a thread per work item,
// grid-striding past kMaxBlocks blocks, indices in 32 bits when every thread
// index (and the grid's overshoot) fits, else 64 (a 64-bit division chain per
// thread costs more than the loads of a small window: NOTE [ unfold at the
// memory limit ] in unfold.cu).
#pragma once
#include <algorithm>
#include <cstdint>

#include "../common/cuda_loops.cuh"

namespace gx::ops {

constexpr int64_t kMaxBlocks = 1 << 20;  // grid-stride beyond this many blocks

inline unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks)));
}

// Calls f(uint32_t{}) when the thread indices of `total` items fit in 32 bits, else f(uint64_t{}).
template <typename F> void with_index(int64_t total, F&& f) {
  if (total + static_cast<int64_t>(kThreads) * kMaxBlocks < (int64_t{1} << 32)) f(uint32_t{0});
  else f(uint64_t{0});
}

}  // namespace gx::ops
