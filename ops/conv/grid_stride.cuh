// The launch shape the kernels of ops/conv/ share: a thread per work item,
// grid-striding past kMaxBlocks blocks, indices in 32 bits when every thread
// index (and the grid's overshoot) fits, else 64 (a 64-bit division chain per
// thread costs more than the loads of a small window: NOTE [ unfold at the
// memory limit ] in unfold.cu).
#pragma once
#include <gpuext/extension.h>

#include <algorithm>
#include <cstdint>

#include "../common/cuda_loops.cuh"
#include "../common/dispatch.h"

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

// Work item t of an (N, C, rows, cols) grid in C order as (b, ch, y, x): a kernel's per-thread divisions, in I.
template <typename I> struct PlanePosition { I b, ch, y, x; };
template <typename I> __device__ __forceinline__ PlanePosition<I> plane_position(I t, I rows, I cols, I c) {
  const I r = t / cols, x = t - r * cols, p = r / rows, y = r - p * rows;
  return {p / c, p % c, y, x};
}

// Launches a kernel over `total` work items of the floating `dtype` on `device`'s current stream, then checks
// the launch: launch(tag, itag, blocks, stream) makes it, with the storage type decltype(tag)::type and the index
// type decltype(itag) (with_index). The launchers of ops/conv/ differ only in their kernel and its arguments.
template <typename F> void launch_floating(ScalarType dtype, int device, int64_t total, F&& launch) {
  DeviceGuard guard(device);
  cudaStream_t s = current_stream(device);
  with_floating_storage(dtype, [&](auto tag) { with_index(total, [&](auto itag) { launch(tag, itag, blocks_for(total), s); }); });
  GX_CHECK_LAUNCH();
}

}  // namespace gx::ops
