// gx::launch<kernel>(grid, block, stream, args...): a kernel launched through
// the driver, as `kernel<<<grid, block, 0, stream>>>(args...)` does through
// the runtime, for less host time. Included by the .cu files that call it,
// not by gpuext/extension.h: <cuda.h> is large, and an extension's build
// time is mostly its headers'.
//
// NOTE [ Driver launches ]
// The runtime's launch (<<<>>>, cudaLaunchKernel) costs more than the
// driver's cuLaunchKernel of the same kernel: 4.13 against 3.75 µs per
// one-element launch on an H200's host (bench:calls, the C++ floor rows),
// most of what a one-element op spent over the launch floor. So the built-in
// elementwise and reduction kernels, and an extension's that asks for it,
// go through cuLaunchKernel with the function the runtime registered for
// them (cudaGetFuncBySymbol, which loads the kernel as the runtime's first
// launch would), looked up once per kernel and device. cuLaunchKernel comes
// from cudaGetDriverEntryPoint, in the runtime's default-stream mode, so the
// library links no libcuda and stream 0 means what it means to <<<>>>.
// Where either lookup fails the kernel is launched with <<<>>>; a failed
// launch throws as GX_CHECK_LAUNCH does. The arguments are converted to the
// kernel's parameter types as a call (and <<<>>>) converts them:
// cuLaunchKernel reads each parameter from an address, so each must be
// stored as its parameter's type first.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gpuext/api.h"
#include "gpuext/cuda.h"

namespace gx {

namespace detail::driver_launch {

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                              void**, void**);

// A driver function by name (cudaGetDriverEntryPoint, the runtime's default-stream mode), or null when there is none.
inline void* entry_point(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050  // the unversioned lookup is deprecated from 12.5; 12.0's ABI of these functions is today's
  const cudaError_t err = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t err = cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &found);
#endif
  const bool ok = err == cudaSuccess && found == cudaDriverEntryPointSuccess;
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

// The function the runtime registered for Kernel on `device` (the current one), cached per device; null when there is none.
template <auto Kernel>
CUfunction function_of(int device) {
  // One slot per device for this kernel (the function is per context); threads that look it up at once store the same value.
  static std::atomic<CUfunction> functions[kCachedDevices] = {};
  const bool cached = device >= 0 && device < kCachedDevices;
  CUfunction f = cached ? functions[device].load(std::memory_order_relaxed) : nullptr;
  if (f != nullptr) return f;
  cudaFunction_t registered = nullptr;
  if (cudaGetFuncBySymbol(&registered, reinterpret_cast<const void*>(Kernel)) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  f = reinterpret_cast<CUfunction>(registered);
  if (cached) functions[device].store(f, std::memory_order_relaxed);
  return f;
}

// Launches Kernel with its parameters at `addresses` (each stored as its parameter's type); where the driver's
// launch is not to be had, `run_with_runtime` launches it with <<<>>>.
template <auto Kernel, typename RuntimeLaunch>
void launch_stored(void** addresses, const RuntimeLaunch& run_with_runtime, dim3 grid, dim3 block, cudaStream_t stream, int device) {
  const LaunchFn launch_kernel = launch_fn();
  const CUfunction f = launch_kernel == nullptr ? nullptr : function_of<Kernel>(device);
  if (f == nullptr) {
    run_with_runtime();
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) throw OpError(GX_ERR_CUDA, cat("kernel launch failed: ", cudaGetErrorString(err)));
    return;
  }
  const CUresult r = launch_kernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, reinterpret_cast<CUstream>(stream),
                                   addresses, nullptr);
  if (r != CUDA_SUCCESS) {
    throw OpError(GX_ERR_CUDA, cat("kernel launch failed: ", error_name(r), " (cuLaunchKernel error ", static_cast<int>(r), ")"));
  }
}

// launch_stored with the parameters converted into a tuple.
template <auto Kernel, typename Tuple, size_t... I>
void launch_tuple(Tuple& params, dim3 grid, dim3 block, cudaStream_t stream, int device, std::index_sequence<I...>) {
  void* addresses[] = {static_cast<void*>(&std::get<I>(params))..., nullptr};
  launch_stored<Kernel>(addresses, [&] { Kernel<<<grid, block, 0, stream>>>(std::get<I>(params)...); }, grid, block, stream, device);
}

// Kernel's parameters made of `args`, then launched: read where they are when each has its parameter's type
// exactly (as the built-in ops pass them: no copy on the hot path), else converted as a call converts them.
template <auto Kernel, typename... P, typename... A>
void launch_on(void (*)(P...), dim3 grid, dim3 block, cudaStream_t stream, int device, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "gx::launch: give the kernel as many arguments as it has parameters");
  if constexpr ((std::is_same_v<std::decay_t<A>, std::decay_t<P>> && ...)) {
    void* addresses[] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};  // one more: a kernel may take none
    launch_stored<Kernel>(addresses, [&] { Kernel<<<grid, block, 0, stream>>>(args...); }, grid, block, stream, device);
  } else {
    std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
    launch_tuple<Kernel>(params, grid, block, stream, device, std::index_sequence_for<P...>{});
  }
}

}  // namespace detail::driver_launch

// Launches `Kernel` on `stream` of `device` (the current device, which a
// DeviceGuard makes when it is not), as Kernel<<<grid, block, 0, stream>>>(args...)
// would, through the driver (NOTE [ Driver launches ]). Throws gx::OpError
// (GX_ERR_CUDA) when the launch fails. Kernels with dynamic shared memory
// take <<<>>>.
template <auto Kernel, typename... A>
void launch_on_device(int device, dim3 grid, dim3 block, cudaStream_t stream, A&&... args) {
  detail::driver_launch::launch_on<Kernel>(Kernel, grid, block, stream, device, std::forward<A>(args)...);
}

// launch_on_device on the runtime's current device of this thread (what
// <<<>>> launches on): gx::launch<add_kernel>(gx::blocks(n), 256, gx::current_stream(), pa, pb, pc, n).
template <auto Kernel, typename... A>
void launch(dim3 grid, dim3 block, cudaStream_t stream, A&&... args) {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = -1;  // not cached: looked up on each launch, which still launches
  }
  launch_on_device<Kernel>(device, grid, block, stream, std::forward<A>(args)...);
}

}  // namespace gx
