// The built-in kernels' launch: launch<kernel>(grid, threads, stream, device, args...),
// gpuext/launch.h's driver launch (NOTE [ Driver launches ]), the one extensions call
// as gx::launch, in the ops' argument order.
#pragma once
#include <utility>

#include "gpuext/launch.h"

namespace gx::ops {

// Launches `Kernel` with `args` on `stream` of `device` (the current device: the caller's DeviceGuard).
template <auto Kernel, typename... A>
void launch(dim3 grid, unsigned threads, cudaStream_t stream, int device, A&&... args) {
  ::gx::launch_on_device<Kernel>(device, grid, dim3(threads), stream, std::forward<A>(args)...);
}

}  // namespace gx::ops
