// N-API functions for loaded CUDA modules (lib/rtc/raw.ts): loading an image
// on a device, looking up its kernels and globals, a kernel's attributes and
// limits, the device's launch limits, and plain copies to and from a device
// address (a module's globals). Launching is rtc_launch.cpp's; the driver
// calls are in csrc/rtc/driver.cpp.
#include <cstdint>
#include <memory>
#include <string>

#include "binding/arg_kinds.h"
#include "binding/args.h"
#include "binding/bindings.h"
#include "binding/rtc_boxes.h"
#include "binding/tagged_external.h"
#include "rtc/rtc.h"

namespace gx::core::js {
namespace {

Napi::Value ModuleLoad(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "moduleLoad";
    const int device = arg_device_index(info, 0, fn);
    const uint8_t* data = nullptr;
    size_t size = 0;
    arg_bytes(info, 1, fn, "image", &data, &size);
    return wrap_external(info.Env(), new ModuleBox{rtc::module_load(fn, device, data, size)});
  });
}

Napi::Value ModuleGetFunction(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "moduleGetFunction";
    ModuleBox& m = unwrap_external<ModuleBox>(info[0], fn, "module");
    const std::string name = arg_string(info, 1, fn, "name");
    auto box = std::make_unique<FunctionBox>();
    if (!info[2].IsUndefined()) {
      if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_int8_array) {
        fail(ErrorKind::Type, fn, ": argument 'kinds' must be an Int8Array");
      }
      const Napi::Int8Array kinds = info[2].As<Napi::Int8Array>();
      for (size_t i = 0; i < kinds.ElementLength(); ++i) {
        GX_CHECK_RANGE(kinds[i] >= 0 && kinds[i] < kNumKinds, fn, ": kinds[", i, "] = ", int{kinds[i]},
                       " is not an argument kind (0..", kNumKinds - 1, ")");
      }
      box->kinds.assign(kinds.Data(), kinds.Data() + kinds.ElementLength());
      box->has_kinds = true;
    }
    box->fn = rtc::get_function(fn, m.module, name);
    return wrap_external(info.Env(), box.release());
  });
}

Napi::Value ModuleGetGlobal(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "moduleGetGlobal";
    ModuleBox& m = unwrap_external<ModuleBox>(info[0], fn, "module");
    const std::string name = arg_string(info, 1, fn, "name");
    const rtc::Global g = rtc::module_global(fn, *m.module, name);
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("ptr", Napi::BigInt::New(info.Env(), g.ptr));
    o.Set("size", Napi::Number::New(info.Env(), static_cast<double>(g.size)));
    return o;
  });
}

Napi::Value FunctionAttributes(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "functionAttributes";
    FunctionBox& f = unwrap_external<FunctionBox>(info[0], fn, "function");
    const rtc::FunctionAttributes a = rtc::function_attributes(fn, f.fn);
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("numRegs", Napi::Number::New(env, a.num_regs));
    o.Set("maxThreadsPerBlock", Napi::Number::New(env, a.max_threads_per_block));
    o.Set("sharedSizeBytes", Napi::Number::New(env, a.shared_size_bytes));
    o.Set("constSizeBytes", Napi::Number::New(env, a.const_size_bytes));
    o.Set("localSizeBytes", Napi::Number::New(env, a.local_size_bytes));
    o.Set("maxDynamicSharedSizeBytes", Napi::Number::New(env, a.max_dynamic_shared_size_bytes));
    o.Set("ptxVersion", Napi::Number::New(env, a.ptx_version));
    o.Set("binaryVersion", Napi::Number::New(env, a.binary_version));
    return o;
  });
}

Napi::Value FunctionSetMaxDynamicSharedSize(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "functionSetMaxDynamicSharedSize";
    FunctionBox& f = unwrap_external<FunctionBox>(info[0], fn, "function");
    const int64_t bytes = arg_int(info, 1, fn, "bytes");
    GX_CHECK_RANGE(bytes >= 0 && bytes <= INT32_MAX, fn, ": bytes must be a non-negative 32-bit integer, got ", bytes);
    rtc::set_max_dynamic_shared(fn, f.fn, static_cast<int>(bytes));
    return info.Env().Undefined();
  });
}

Napi::Value DeviceLimits(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "deviceLimits";
    const rtc::DeviceLimits& l = rtc::device_limits(arg_device_index(info, 0, fn), fn);
    Napi::Env env = info.Env();
    auto triple = [&](const int v[3]) {
      Napi::Array a = Napi::Array::New(env, 3);
      for (uint32_t k = 0; k < 3; ++k) a.Set(k, Napi::Number::New(env, v[k]));
      return a;
    };
    Napi::Object o = Napi::Object::New(env);
    o.Set("maxThreadsPerBlock", Napi::Number::New(env, l.max_threads_per_block));
    o.Set("maxBlockDim", triple(l.max_block));
    o.Set("maxGridDim", triple(l.max_grid));
    o.Set("maxSharedMemoryPerBlock", Napi::Number::New(env, l.max_shared_per_block));
    o.Set("maxSharedMemoryPerBlockOptin", Napi::Number::New(env, l.max_shared_per_block_optin));
    o.Set("multiProcessorCount", Napi::Number::New(env, l.multiprocessors));
    Napi::Array cc = Napi::Array::New(env, 2);
    cc.Set(0u, Napi::Number::New(env, l.cc_major));
    cc.Set(1u, Napi::Number::New(env, l.cc_minor));
    o.Set("computeCapability", cc);
    return o;
  });
}

Napi::Value MemcpyHtoD(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "memcpyHtoD";
    const int device = arg_device_index(info, 0, fn);
    const uint64_t ptr = arg_pointer(info, 1, fn, "ptr");
    const uint8_t* data = nullptr;
    size_t size = 0;
    arg_bytes(info, 2, fn, "data", &data, &size);
    rtc::memcpy_htod(fn, device, ptr, data, size);
    return info.Env().Undefined();
  });
}

Napi::Value MemcpyDtoH(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "memcpyDtoH";
    const int device = arg_device_index(info, 0, fn);
    const uint64_t ptr = arg_pointer(info, 1, fn, "ptr");
    const int64_t size = arg_int(info, 2, fn, "size");
    GX_CHECK_RANGE(size >= 0, fn, ": size must be >= 0, got ", size);
    Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(info.Env(), static_cast<size_t>(size));
    rtc::memcpy_dtoh(fn, device, ab.Data(), ptr, static_cast<size_t>(size));
    return ab;
  });
}

}  // namespace

void register_rtc_module_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("moduleLoad", Napi::Function::New<ModuleLoad>(env, "moduleLoad"));
  exports.Set("moduleGetFunction", Napi::Function::New<ModuleGetFunction>(env, "moduleGetFunction"));
  exports.Set("moduleGetGlobal", Napi::Function::New<ModuleGetGlobal>(env, "moduleGetGlobal"));
  exports.Set("functionAttributes", Napi::Function::New<FunctionAttributes>(env, "functionAttributes"));
  exports.Set("functionSetMaxDynamicSharedSize",
              Napi::Function::New<FunctionSetMaxDynamicSharedSize>(env, "functionSetMaxDynamicSharedSize"));
  exports.Set("deviceLimits", Napi::Function::New<DeviceLimits>(env, "deviceLimits"));
  exports.Set("memcpyHtoD", Napi::Function::New<MemcpyHtoD>(env, "memcpyHtoD"));
  exports.Set("memcpyDtoH", Napi::Function::New<MemcpyDtoH>(env, "memcpyDtoH"));
}

}  // namespace gx::core::js
