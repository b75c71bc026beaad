// N-API functions over devices and memory: device count, synchronize,
// properties, the current stream, memory statistics and limits, the C ABI
// table. (The CUDA runtime face they call is cuda/runtime.h.)
#include "binding/bindings.h"
#include "binding/args.h"
#include "binding/js_errors.h"
#include "core/abi.h"
#include "core/cpu_allocator.h"
#include "core/tensor.h"
#include "cuda/caching_allocator.h"
#include "cuda/pinned_allocator.h"
#include "cuda/runtime.h"

namespace gx::core::js {
namespace {

Napi::Object stats_object(Napi::Env env, const MemoryStats& s, const char* prefix = "") {
  Napi::Object o = Napi::Object::New(env);
  auto set = [&](const char* name, int64_t v) {
    o.Set(std::string(prefix) + name, Napi::Number::New(env, static_cast<double>(v)));
  };
  set("allocatedBytes", s.allocated_bytes);
  set("reservedBytes", s.reserved_bytes);
  set("cachedBytes", s.reserved_bytes - s.allocated_bytes);
  set("peakAllocatedBytes", s.peak_allocated_bytes);
  set("numAllocs", s.num_allocs);
  set("numFrees", s.num_frees);
  set("numCacheHits", s.num_cache_hits);
  set("numDeviceMallocs", s.num_device_mallocs);
  set("numDeviceFrees", s.num_device_frees);
  set("numOoms", s.num_ooms);
  set("limitBytes", s.limit_bytes);
  return o;
}

// memoryStats(deviceType, deviceIndex)
Napi::Value MemoryStatsFn(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    const Device device = arg_device(info, 0, "memory.stats");
    (void)TensorImpl::flush_cache();  // its tensors are disposed: the figures leave them out (NOTE [ Tensor cache ])
    Napi::Object o;
    if (device.is_cpu()) {
      o = stats_object(env, cpu_stats());
      o.Set("pinned", stats_object(env, cuda::pinned_stats()));
    } else {
      o = stats_object(env, cuda::device_stats(device.index));
    }
    o.Set("liveTensors", Napi::Number::New(env, static_cast<double>(TensorImpl::live_count(device.slot()))));
    return o;
  });
}

Napi::Value EmptyCache(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const int64_t device = arg_int(info, 0, "memory.emptyCache", "device");
    if (device >= 0) cuda::check_device(static_cast<int>(device), "memory.emptyCache");
    (void)TensorImpl::flush_cache();  // NOTE [ Tensor cache ]: what it holds goes back first
    if (device == -1) cpu_empty_cache();
    if (cuda::compiled()) {
      cuda::device_empty_cache(static_cast<int>(device));
      cuda::pinned_empty_cache();
    }
    return info.Env().Undefined();
  });
}

// The host side alone: cached cpu blocks and pinned blocks.
Napi::Value EmptyHostCache(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    (void)TensorImpl::flush_cache();
    cpu_empty_cache();
    if (cuda::compiled()) cuda::pinned_empty_cache();
    return info.Env().Undefined();
  });
}

Napi::Value SetMemoryLimit(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const int device = arg_cuda_device(info, 0, "memory.setLimit");
    const int64_t bytes = arg_int(info, 1, "memory.setLimit", "bytes");
    GX_CHECK_RANGE(bytes >= 0, "memory.setLimit: bytes must be >= 0, got ", bytes);
    (void)TensorImpl::flush_cache();
    cuda::device_set_limit(device, bytes);
    return info.Env().Undefined();
  });
}

Napi::Value DeviceCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), cuda::device_count());
}

// The calling thread's current CUDA device (NOTE [ Current device ] in cuda/runtime.h).
Napi::Value CurrentDevice(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), cuda::current_device());
}

Napi::Value SetDevice(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const int64_t index = arg_int(info, 0, "gx.cuda.setDevice", "device");
    GX_CHECK_RANGE(index >= 0 && index < (int64_t{1} << 30), "gx.cuda.setDevice: device index must be >= 0, got ", index);
    cuda::set_device(static_cast<int>(index), "gx.cuda.setDevice");
    return info.Env().Undefined();
  });
}

Napi::Value UnavailableReason(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), cuda::unavailable_reason());
}

Napi::Value Synchronize(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    cuda::synchronize_device(arg_cuda_device(info, 0, "cuda.synchronize"));
    return info.Env().Undefined();
  });
}

Napi::Value CurrentStream(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    cuda::Stream s = cuda::peek_current_stream(arg_cuda_device(info, 0, "cuda.currentStream"));
    return Napi::BigInt::New(info.Env(), static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s)));
  });
}

Napi::Value DeviceProps(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    const int device = arg_cuda_device(info, 0, "cuda.getDeviceProperties");
    const cuda::DeviceProps p = cuda::device_props(device);
    size_t free_bytes = 0, total_bytes = 0;
    cuda::mem_info(device, &free_bytes, &total_bytes);
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", Napi::String::New(env, p.name));
    o.Set("major", Napi::Number::New(env, p.major));
    o.Set("minor", Napi::Number::New(env, p.minor));
    o.Set("totalMemory", Napi::Number::New(env, static_cast<double>(p.total_memory)));
    o.Set("freeMemory", Napi::Number::New(env, static_cast<double>(free_bytes)));
    o.Set("multiProcessorCount", Napi::Number::New(env, p.multiprocessors));
    return o;
  });
}

// NVTX ranges for gx.profiler.range (NOTE [ NVTX ranges ] in csrc/cuda/runtime.cpp).
void NvtxRangePush(const Napi::CallbackInfo& info) {
  if (info.Length() != 1 || !info[0].IsString()) {
    throw Napi::TypeError::New(info.Env(), "nvtxRangePush: argument 'name' must be a string");
  }
  cuda::nvtx_range_push(info[0].As<Napi::String>().Utf8Value().c_str());
}

void NvtxRangePop(const Napi::CallbackInfo&) { cuda::nvtx_range_pop(); }

// The gx_api table, for extension loaders (csrc/include/gpuext/abi.h).
Napi::Value AbiTable(const Napi::CallbackInfo& info) {
  return Napi::External<gx_api>::New(info.Env(), const_cast<gx_api*>(abi_table()));
}

}  // namespace

void register_device_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("cudaCompiled", Napi::Boolean::New(env, cuda::compiled()));
  Napi::Array abi = Napi::Array::New(env, 2);
  abi.Set(0u, Napi::Number::New(env, GX_ABI_VERSION_MAJOR));
  abi.Set(1u, Napi::Number::New(env, GX_ABI_VERSION_MINOR));
  exports.Set("abiVersion", abi);
  exports.Set("nvtxRangePush", Napi::Function::New<NvtxRangePush>(env, "nvtxRangePush"));
  exports.Set("nvtxRangePop", Napi::Function::New<NvtxRangePop>(env, "nvtxRangePop"));
  exports.Set("memoryStats", Napi::Function::New<MemoryStatsFn>(env, "memoryStats"));
  exports.Set("emptyCache", Napi::Function::New<EmptyCache>(env, "emptyCache"));
  exports.Set("emptyHostCache", Napi::Function::New<EmptyHostCache>(env, "emptyHostCache"));
  exports.Set("setMemoryLimit", Napi::Function::New<SetMemoryLimit>(env, "setMemoryLimit"));
  exports.Set("cudaDeviceCount", Napi::Function::New<DeviceCount>(env, "cudaDeviceCount"));
  exports.Set("cudaCurrentDevice", Napi::Function::New<CurrentDevice>(env, "cudaCurrentDevice"));
  exports.Set("cudaSetDevice", Napi::Function::New<SetDevice>(env, "cudaSetDevice"));
  exports.Set("cudaUnavailableReason", Napi::Function::New<UnavailableReason>(env, "cudaUnavailableReason"));
  exports.Set("cudaSynchronize", Napi::Function::New<Synchronize>(env, "cudaSynchronize"));
  exports.Set("cudaCurrentStream", Napi::Function::New<CurrentStream>(env, "cudaCurrentStream"));
  exports.Set("cudaDeviceProperties", Napi::Function::New<DeviceProps>(env, "cudaDeviceProperties"));
  exports.Set("abiTable", Napi::Function::New<AbiTable>(env, "abiTable"));
}

}  // namespace gx::core::js
