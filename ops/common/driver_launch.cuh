// A built-in kernel launched through the driver: launch<kernel>(grid, threads, stream, device, args...).
//
// NOTE [ Driver launches ]
// The runtime's launch (<<<>>>, cudaLaunchKernel) costs more than the
// driver's cuLaunchKernel of the same kernel: 4.13 against 3.75 µs per
// one-element launch on an H200's host (bench:calls, the C++ floor rows),
// most of what a one-element op spent over the launch floor. So the
// elementwise and reduction kernels go through cuLaunchKernel with the function the
// runtime registered for them (cudaGetFuncBySymbol, which loads the kernel
// as the runtime's first launch would), looked up once per kernel and device.
// cuLaunchKernel comes from cudaGetDriverEntryPoint, in the runtime's
// default-stream mode, so the library links no libcuda and stream 0 means
// what it means to <<<>>>. Where either lookup fails the kernel is launched
// with <<<>>>; a failed launch throws as GX_CHECK_LAUNCH does.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <type_traits>

#include "gpuext/cuda.h"

namespace gx::ops {

namespace driver_launch {

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                              void**, void**);

// A driver function by name (cudaGetDriverEntryPoint, the runtime's default-stream mode), or null when there is none.
inline void* entry_point(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const bool ok = cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &found) == cudaSuccess && found == cudaDriverEntryPointSuccess;
  (void)cudaGetLastError();
  return ok ? p : nullptr;
}

// cuLaunchKernel, or null when the runtime cannot give it (then every launch takes <<<>>>).
inline LaunchFn launch_fn() {
  static const LaunchFn fn = reinterpret_cast<LaunchFn>(entry_point("cuLaunchKernel"));
  return fn;
}

// The driver's name for a launch error (cuGetErrorString, asked for only when a launch fails).
inline const char* error_name(CUresult r) {
  const char* name = nullptr;
  if (void* p = entry_point("cuGetErrorString")) (void)reinterpret_cast<CUresult (*)(CUresult, const char**)>(p)(r, &name);
  return name == nullptr ? "unknown error" : name;
}

constexpr int kCachedDevices = 64;

}  // namespace driver_launch

// Launches `Kernel` (a __global__ function) with `args`, which must be its
// parameters' types exactly (cuLaunchKernel reads each from its address), on
// `stream` of `device` (the current device: the caller's DeviceGuard).
template <auto Kernel, typename... A>
void launch(dim3 grid, unsigned threads, cudaStream_t stream, int device, const A&... args) {
  static_assert(std::is_same_v<decltype(Kernel), void (*)(A...)>, "launch: the arguments must have the kernel's parameter types");
  // One slot per device for this kernel (the function is per context); threads that look it up at once store the same value.
  static std::atomic<CUfunction> functions[driver_launch::kCachedDevices] = {};
  const driver_launch::LaunchFn launch_kernel = driver_launch::launch_fn();
  const bool cached = device >= 0 && device < driver_launch::kCachedDevices;
  CUfunction f = cached ? functions[device].load(std::memory_order_relaxed) : nullptr;
  if (f == nullptr && launch_kernel != nullptr) {
    cudaFunction_t registered = nullptr;
    if (cudaGetFuncBySymbol(&registered, reinterpret_cast<const void*>(Kernel)) == cudaSuccess) {
      f = reinterpret_cast<CUfunction>(registered);
      if (cached) functions[device].store(f, std::memory_order_relaxed);
    } else {
      (void)cudaGetLastError();
    }
  }
  if (f == nullptr || launch_kernel == nullptr) {
    Kernel<<<grid, threads, 0, stream>>>(args...);
    GX_CHECK_LAUNCH();
    return;
  }
  void* params[] = {const_cast<void*>(static_cast<const void*>(&args))...};
  const CUresult r = launch_kernel(f, grid.x, grid.y, grid.z, threads, 1, 1, 0, reinterpret_cast<CUstream>(stream), params, nullptr);
  if (r != CUDA_SUCCESS) {
    throw ::gx::OpError(GX_ERR_CUDA, ::gx::detail::cat("kernel launch failed: ", driver_launch::error_name(r), " (cuLaunchKernel error ",
                                                       static_cast<int>(r), ")"));
  }
}

}  // namespace gx::ops
