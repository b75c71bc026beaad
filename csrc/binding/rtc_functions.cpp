// N-API functions for run-time kernels (lib/rtc): NVRTC compiles, driver
// modules and functions, kernel launches. The work is in csrc/rtc/; this file
// reads and checks arguments and builds the results.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "binding/bindings.h"
#include "binding/js_errors.h"
#include "binding/staging.h"
#include "binding/stream_box.h"
#include "binding/tagged_external.h"
#include "binding/tensor_handle.h"
#include "cache/cache_files.h"
#include "core/device.h"
#include "rtc/rtc.h"

namespace gx::js {
namespace {

struct ModuleBox {
  static constexpr napi_type_tag kTag = {0x677075786d6f6475ULL, 0x6c65000000000001ULL};
  static constexpr const char* kName = "module handle (from moduleLoad)";
  rtc::ModulePtr module;  // unloaded when the last holder (this or a FunctionBox) goes
};

struct FunctionBox {
  static constexpr napi_type_tag kTag = {0x6770757866756e63ULL, 0x74696f6e00000001ULL};
  static constexpr const char* kName = "kernel handle (from moduleGetFunction)";
  rtc::Function fn;  // holds its module
  // The C type of each parameter (NOTE [ Argument slots ]); has_kinds is
  // false when the caller did not know them, and such a handle cannot launch.
  std::vector<int8_t> kinds;
  bool has_kinds = false;
};

// A missing library gets a code of its own (NOTE [ Loaded when first used ] in rtc/rtc.h).
template <typename F>
auto rtc_guard(Napi::Env env, F&& f) -> decltype(f()) {
  return guard(env, [&]() -> decltype(f()) {
    try {
      return f();
    } catch (const rtc::LibraryMissing& e) {
      Napi::Error err = Napi::Error::New(env, e.what());
      err.Set("code", Napi::String::New(env, e.which() == rtc::LibraryMissing::Which::Nvrtc ? "GX_NVRTC_NOT_FOUND"
                                                                                             : "GX_DRIVER_NOT_FOUND"));
      throw err;
    }
  });
}

std::string arg_string(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  if (!info[i].IsString()) fail(ErrorKind::Type, fn, ": argument '", name, "' must be a string");
  return info[i].As<Napi::String>().Utf8Value();
}

std::vector<std::string> arg_string_list(const Napi::CallbackInfo& info, size_t i, const char* fn,
                                         const char* name) {
  if (info[i].IsUndefined() || info[i].IsNull()) return {};
  if (!info[i].IsArray()) fail(ErrorKind::Type, fn, ": argument '", name, "' must be an array of strings");
  Napi::Array a = info[i].As<Napi::Array>();
  std::vector<std::string> out(a.Length());
  for (uint32_t k = 0; k < a.Length(); ++k) {
    Napi::Value v = a.Get(k);
    if (!v.IsString()) fail(ErrorKind::Type, fn, ": argument '", name, "'[", k, "] must be a string");
    out[k] = v.As<Napi::String>().Utf8Value();
  }
  return out;
}

int arg_device(const Napi::CallbackInfo& info, size_t i, const char* fn) {
  const int64_t d = arg_int(info, i, fn, "device");
  GX_CHECK_RANGE(d >= 0 && d < kMaxCudaDevices, fn, ": device index ", d, " is out of range");
  return static_cast<int>(d);
}

uint64_t arg_pointer(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  if (!info[i].IsBigInt()) fail(ErrorKind::Type, fn, ": argument '", name, "' must be a bigint (a device address)");
  bool lossless = false;
  const uint64_t p = info[i].As<Napi::BigInt>().Uint64Value(&lossless);
  GX_CHECK_RANGE(lossless, fn, ": argument '", name, "' is not a valid address (must fit in 64 unsigned bits)");
  return p;
}

// The bytes of an ArrayBuffer or ArrayBufferView (typed array, DataView, Buffer).
void arg_bytes(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name, const uint8_t** data,
               size_t* size) {
  napi_env env = info.Env();
  napi_value v = info[i];
  bool is = false;
  void* p = nullptr;
  if (napi_is_typedarray(env, v, &is) == napi_ok && is) {
    napi_typedarray_type type;
    size_t length = 0, offset = 0;
    napi_value ab;
    if (napi_get_typedarray_info(env, v, &type, &length, &p, &ab, &offset) == napi_ok) {
      size_t item = 1;
      switch (type) {
        case napi_int16_array: case napi_uint16_array: item = 2; break;
        case napi_int32_array: case napi_uint32_array: case napi_float32_array: item = 4; break;
        case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: item = 8; break;
        default: item = 1; break;
      }
      *data = static_cast<const uint8_t*>(p);
      *size = length * item;
      return;
    }
  }
  if (napi_is_dataview(env, v, &is) == napi_ok && is) {
    size_t length = 0, offset = 0;
    napi_value ab;
    if (napi_get_dataview_info(env, v, &length, &p, &ab, &offset) == napi_ok) {
      *data = static_cast<const uint8_t*>(p);
      *size = length;
      return;
    }
  }
  if (napi_is_arraybuffer(env, v, &is) == napi_ok && is) {
    size_t length = 0;
    if (napi_get_arraybuffer_info(env, v, &p, &length) == napi_ok) {
      *data = static_cast<const uint8_t*>(p);
      *size = length;
      return;
    }
  }
  fail(ErrorKind::Type, fn, ": argument '", name, "' must be a Uint8Array (or another ArrayBufferView / ArrayBuffer)");
}

// --- info and compiling ---------------------------------------------------------------

Napi::Value RtcInfo(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const rtc::Availability a = rtc::availability();
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    if (a.nvrtc) {
      o.Set("nvrtc", Napi::String::New(env, str(a.nvrtc_major, ".", a.nvrtc_minor)));
      o.Set("nvrtcPath", Napi::String::New(env, a.nvrtc_path));
    } else {
      o.Set("nvrtc", env.Null());
      o.Set("nvrtcError", Napi::String::New(env, a.nvrtc_error));
    }
    o.Set("driver", Napi::Boolean::New(env, a.driver));
    if (!a.driver) o.Set("driverError", Napi::String::New(env, a.driver_error));
    return o;
  });
}

Napi::Value NvrtcCandidates(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const std::vector<std::string> c = rtc::nvrtc_candidates(/*load_driver=*/false);
    Napi::Array out = Napi::Array::New(info.Env(), c.size());
    for (size_t i = 0; i < c.size(); ++i) out.Set(static_cast<uint32_t>(i), Napi::String::New(info.Env(), c[i]));
    return out;
  });
}

// nvrtcFile(): [candidate, [size, mtimeSec, mtimeNsec, dev, ino]] of the first
// candidate that is a file, or null when a bare soname (which only dlopen's
// search can resolve) comes first. One call for the kernel cache's first
// lookup (NOTE [ NVRTC identity ] in lib/rtc/compiler.ts).
Napi::Value NvrtcFile(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    for (const std::string& c : rtc::nvrtc_candidates(/*load_driver=*/false)) {
      if (c.empty() || c[0] != '/') break;
      cache::FileStat st;
      if (!cache::stat_file(c, &st)) continue;
      Napi::Array out = Napi::Array::New(env, 2);
      out.Set(0u, Napi::String::New(env, c));
      out.Set(1u, file_stat_array(env, st));
      return out;
    }
    return env.Null();
  });
}

// nvrtcCompile(source, programName, options, nameExpressions, arch)
Napi::Value NvrtcCompile(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "nvrtcCompile";
    const std::string source = arg_string(info, 0, fn, "source");
    const std::string name = arg_string(info, 1, fn, "programName");
    const std::vector<std::string> options = arg_string_list(info, 2, fn, "options");
    const std::vector<std::string> names = arg_string_list(info, 3, fn, "nameExpressions");
    const std::string arch = arg_string(info, 4, fn, "arch");
    const rtc::CompileResult r = rtc::compile(fn, source, name, options, names, arch);

    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    o.Set("ok", Napi::Boolean::New(env, r.ok));
    o.Set("log", Napi::String::New(env, r.log));
    o.Set("ptx", Napi::Boolean::New(env, r.ptx));
    if (r.ok) {
      Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, r.image.size());
      std::memcpy(ab.Data(), r.image.data(), r.image.size());
      o.Set("image", Napi::Uint8Array::New(env, r.image.size(), ab, 0));
    }
    Napi::Object lowered = Napi::Object::New(env);
    for (const auto& [expr, low] : r.lowered_names) lowered.Set(expr, Napi::String::New(env, low));
    o.Set("loweredNames", lowered);
    return o;
  });
}

// The C type of a kernel argument (NOTE [ Argument slots ]); lib/rtc/raw.ts has the same codes.
enum Kind : int8_t {
  kTensor = 0, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF32, kF64, kBool, kPointer, kNumKinds
};
constexpr const char* kKindNames[kNumKinds] = {"tensor", "int8",   "int16",   "int32",   "int64",
                                               "uint8",  "uint16", "uint32",  "uint64",  "float32",
                                               "float64", "bool",  "pointer"};
constexpr int64_t kMin[kNumKinds] = {0, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN, 0, 0, 0, 0};
constexpr uint64_t kMax[kNumKinds] = {0,          INT8_MAX,   INT16_MAX,  INT32_MAX, INT64_MAX,
                                      UINT8_MAX,  UINT16_MAX, UINT32_MAX, UINT64_MAX};

// --- modules and functions ------------------------------------------------------------

Napi::Value ModuleLoad(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "moduleLoad";
    const int device = arg_device(info, 0, fn);
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
    const rtc::DeviceLimits& l = rtc::device_limits(arg_device(info, 0, fn), fn);
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

// --- launches ---------------------------------------------------------------------------
//
// NOTE [ Argument slots ]
// launchKernel(fn, stream, values?) launches `fn` with the extents, shared
// memory and arguments the caller wrote into this thread's staging area
// (NOTE [ Staging area ] in binding/staging.h); each argument's C type comes from the kinds
// given to moduleGetFunction. Each parameter gets its own 8-byte slot, its
// value in the slot's first bytes (little-endian), and cuLaunchKernel gets one
// pointer per slot: the driver copies as many bytes as the kernel's parameter
// declares, at the offset its ABI wants, so slots need not mimic the C layout.
// The arguments come in one of two forms:
// - numbers in the staging area (no N-API call per argument): tensors as
//   their device addresses (Tensor.address(), exact below 2^53), which the
//   caller has checked are alive and on the kernel's device (lib/rtc/raw.ts
//   does);
// - `values`, an array: tensor handles (checked here: alive, on the kernel's
//   device), numbers, bigints, booleans, null for a null pointer. For what a
//   double cannot hold (bigints beyond 2^53) and for more arguments than the
//   staging area has room for.
// Numbers are range-checked for their kind either way.

constexpr const char* kLaunch = "launchKernel";

// "args[i]" for error messages (TensorHandle wants a C string naming the
// argument before it knows whether it will fail): made once for the first 64.
const char* arg_name(size_t i, char (&buf)[32]) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int k = 0; k < 64; ++k) v.push_back("args[" + std::to_string(k) + "]");
    return v;
  }();
  if (i < names.size()) return names[i].c_str();
  std::snprintf(buf, sizeof(buf), "args[%zu]", i);
  return buf;
}

[[noreturn]] void scalar_range_error(const Napi::Value& v, size_t i, int kind) {
  fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", v.ToString().Utf8Value(), " is out of range for ",
       kKindNames[kind], " (", kMin[kind], "..", kMax[kind], ")");
}

[[noreturn]] void scalar_type_error(const Napi::Value& v, size_t i, int kind, const char* expected) {
  const std::string got = v.IsBigInt()    ? str("the bigint ", v.ToString().Utf8Value())
                          : v.IsNumber()  ? str("the number ", v.ToString().Utf8Value())
                          : v.IsBoolean() ? str("the boolean ", v.ToString().Utf8Value())
                          : v.IsString()  ? std::string("a string")
                          : v.IsNull()    ? std::string("null")
                          : v.IsUndefined() ? std::string("undefined")
                                            : std::string("an object");
  fail(ErrorKind::Type, kLaunch, ": args[", i, "] is declared ", kKindNames[kind], " and must be ", expected,
       ", got ", got);
}

// A number as argument i of kind `kind`, checked, as the bits its slot holds
// (NOTE [ Argument slots ]). Both argument forms read numbers through here.
uint64_t slot_of_number(double d, size_t i, int kind) {
  switch (kind) {
    case kTensor:
    case kPointer:  // an address (the caller checked the tensor); exact below 2^53
      if (!(d >= 0 && d <= 9007199254740991.0 && std::floor(d) == d)) {
        fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is not a device address");
      }
      return static_cast<uint64_t>(d);
    case kF32: {
      const float x = static_cast<float>(d);
      if (std::isfinite(d) && !std::isfinite(x)) {
        fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is out of range for float32 (|x| <= ", FLT_MAX, ")");
      }
      uint64_t slot = 0;
      std::memcpy(&slot, &x, sizeof(x));
      return slot;
    }
    case kF64: {
      uint64_t slot = 0;
      std::memcpy(&slot, &d, sizeof(d));
      return slot;
    }
    case kBool:
      if (d != 0 && d != 1) fail(ErrorKind::Type, kLaunch, ": args[", i, "] is declared bool and must be a boolean (or 0 / 1), got the number ", d);
      return d == 1 ? 1 : 0;
    default:
      break;
  }
  if (kind <= kTensor || kind > kU64) {
    fail(ErrorKind::Type, kLaunch, ": kinds[", i, "] = ", kind, " is not an argument kind (0..", kNumKinds - 1, ")");
  }
  if (!std::isfinite(d) || std::floor(d) != d) {
    if (std::isfinite(d)) fail(ErrorKind::Type, kLaunch, ": args[", i, "] is declared ", kKindNames[kind], " and must be an integer, got the number ", d);
    fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is not a finite integer for ", kKindNames[kind]);
  }
  if (std::fabs(d) > 9007199254740991.0) {
    fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is beyond 2^53 and may have lost precision; pass ",
         kKindNames[kind], " values this large as a bigint");
  }
  const int64_t x = static_cast<int64_t>(d);
  const bool is_signed = kind <= kI64;
  if (is_signed ? (x < kMin[kind] || x > static_cast<int64_t>(kMax[kind])) : (x < 0 || static_cast<uint64_t>(x) > kMax[kind])) {
    fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", d, " is out of range for ", kKindNames[kind], " (", kMin[kind], "..",
         kMax[kind], ")");
  }
  return static_cast<uint64_t>(x);
}

// A bigint as argument i of an integer kind, range-checked; returned as its bit pattern.
uint64_t slot_of_bigint(const Napi::Value& v, size_t i, int kind) {
  bool lossless = false;
  if (kind <= kI64) {
    const int64_t x = v.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless || x < kMin[kind] || x > static_cast<int64_t>(kMax[kind])) scalar_range_error(v, i, kind);
    return static_cast<uint64_t>(x);
  }
  const uint64_t x = v.As<Napi::BigInt>().Uint64Value(&lossless);
  if (!lossless || x > kMax[kind]) scalar_range_error(v, i, kind);
  return x;
}

// Argument i from the array form: a tensor handle, a number, a bigint, a boolean or null.
uint64_t slot_of_value(const Napi::Value& v, size_t i, int kind, int device) {
  if (kind == kTensor) {
    char buf[32];
    const TensorImpl& t = TensorHandle::FromValue(v, kLaunch, arg_name(i, buf));
    const Device d = t.device();
    if (!d.is_cuda() || d.index != device) {
      fail(ErrorKind::Value, kLaunch, ": args[", i, "] is a tensor on ", d.str(), " but the kernel is loaded on cuda:", device);
    }
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.data()));
  }
  if (kind == kPointer) {
    if (v.IsNull()) return 0;
    if (!v.IsBigInt()) scalar_type_error(v, i, kind, "a bigint (a device address) or null");
    bool lossless = false;
    const uint64_t p = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) {
      fail(ErrorKind::Range, kLaunch, ": args[", i, "] = ", v.ToString().Utf8Value(), " is not a valid address (must fit in 64 unsigned bits)");
    }
    return p;
  }
  if (v.IsNumber()) return slot_of_number(v.As<Napi::Number>().DoubleValue(), i, kind);
  if (kind == kBool) {
    if (!v.IsBoolean()) scalar_type_error(v, i, kind, "a boolean (or 0 / 1)");
    return v.As<Napi::Boolean>().Value() ? 1 : 0;
  }
  if (kind == kF32 || kind == kF64) scalar_type_error(v, i, kind, "a number");
  if (kind > kTensor && kind <= kU64) {
    if (!v.IsBigInt()) scalar_type_error(v, i, kind, "an integer (a number or a bigint)");
    return slot_of_bigint(v, i, kind);
  }
  fail(ErrorKind::Type, kLaunch, ": kinds[", i, "] = ", kind, " is not an argument kind (0..", kNumKinds - 1, ")");
}

// One grid or block extent: a positive integer (JS has checked the common
// cases; this guards the native boundary).
uint32_t read_extent(double d, const char* name, char axis) {
  if (!(d >= 1 && d <= 4294967295.0 && std::floor(d) == d)) {
    fail(ErrorKind::Range, kLaunch, ": ", name, ".", axis, " must be a positive integer, got ", d);
  }
  return static_cast<uint32_t>(d);
}

void check_launch_shape(rtc::Function& f, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_mem) {
  static constexpr char kAxis[3] = {'x', 'y', 'z'};
  const rtc::DeviceLimits& l = *f.limits;
  for (int k = 0; k < 3; ++k) {
    if (block[k] > static_cast<uint32_t>(l.max_block[k])) {
      fail(ErrorKind::Range, kLaunch, ": block.", kAxis[k], " = ", block[k], " is more than cuda:", f.device,
           " allows (", l.max_block[k], ")");
    }
    if (grid[k] > static_cast<uint32_t>(l.max_grid[k])) {
      fail(ErrorKind::Range, kLaunch, ": grid.", kAxis[k], " = ", grid[k], " is more than cuda:", f.device,
           " allows (", l.max_grid[k], ")");
    }
  }
  const uint64_t threads = static_cast<uint64_t>(block[0]) * block[1] * block[2];
  if (threads > static_cast<uint64_t>(f.max_threads)) {
    fail(ErrorKind::Range, kLaunch, ": block ", block[0], "x", block[1], "x", block[2], " = ", threads,
         " threads is more than this kernel's limit of ", f.max_threads, " threads per block",
         f.max_threads < l.max_threads_per_block
             ? str(" (below cuda:", f.device, "'s ", l.max_threads_per_block,
                   " because of the kernel's register use or __launch_bounds__)")
             : std::string());
  }
  if (shared_mem > static_cast<uint32_t>(f.max_dynamic_shared)) {
    f.max_dynamic_shared = rtc::query_max_dynamic_shared(kLaunch, f);  // another handle may have raised it
    if (shared_mem > static_cast<uint32_t>(f.max_dynamic_shared)) {
      fail(ErrorKind::Range, kLaunch, ": sharedMem = ", shared_mem,
           " bytes is more than this kernel's dynamic shared memory limit of ", f.max_dynamic_shared,
           " bytes; use setMaxDynamicSharedSize (opt-in up to ", l.max_shared_per_block_optin - f.static_shared,
           " bytes on cuda:", f.device, ")");
    }
  }
}

Napi::Value LaunchKernel(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    FunctionBox& box = unwrap_external<FunctionBox>(info[0], kLaunch, "function");
    rtc::Function& f = box.fn;
    GX_CHECK_TYPE(box.has_kinds, kLaunch, ": the kernel handle was made without its parameter kinds; pass them to moduleGetFunction");
    const double* dims = staging::area() + staging::kLaunchDims;
    uint32_t grid[3], block[3];
    static constexpr char kAxis[3] = {'x', 'y', 'z'};
    for (int k = 0; k < 3; ++k) grid[k] = read_extent(dims[k], "grid", kAxis[k]);
    for (int k = 0; k < 3; ++k) block[k] = read_extent(dims[3 + k], "block", kAxis[k]);
    const double s = dims[6];
    if (!(s >= 0 && s <= UINT32_MAX && std::floor(s) == s)) {
      fail(ErrorKind::Range, kLaunch, ": sharedMem must be a non-negative number of bytes, got ", s);
    }
    const uint32_t shared_mem = static_cast<uint32_t>(s);
    check_launch_shape(f, grid, block, shared_mem);

    cuda::Stream stream;
    if (info[1].IsUndefined() || info[1].IsNull()) {
      stream = cuda::current_stream(f.device);
    } else {
      const StreamBox* sb = &unwrap_external<StreamBox>(info[1], kLaunch, "stream");
      GX_CHECK_VALUE(sb->device == f.device, kLaunch, ": the stream is on cuda:", sb->device,
                     " but the kernel is loaded on cuda:", f.device);
      stream = sb->stream;
    }

    const size_t n = box.kinds.size();
    Napi::Array values;
    const bool staged = info[2].IsUndefined();
    if (staged) {
      GX_CHECK_RANGE(n <= staging::kMaxArgs, kLaunch, ": ", n, " arguments do not fit the staging area (", staging::kMaxArgs,
                     "); pass them as an array");
    } else {
      if (!info[2].IsArray()) fail(ErrorKind::Type, kLaunch, ": argument 'values' must be an array (or left out)");
      values = info[2].As<Napi::Array>();
      GX_CHECK_TYPE(values.Length() == n, kLaunch, ": the kernel takes ", n, " arguments but ", values.Length(), " were given");
    }

    constexpr size_t kInline = 32;
    uint64_t inline_slots[kInline];
    void* inline_ptrs[kInline];
    std::vector<uint64_t> heap_slots;
    std::vector<void*> heap_ptrs;
    uint64_t* slots = inline_slots;
    void** ptrs = inline_ptrs;
    if (n > kInline) {
      heap_slots.resize(n);
      heap_ptrs.resize(n);
      slots = heap_slots.data();
      ptrs = heap_ptrs.data();
    }
    const int8_t* kinds = box.kinds.data();
    const double* numbers = staging::area() + staging::kArgs;
    for (size_t i = 0; i < n; ++i) {
      slots[i] = staged ? slot_of_number(numbers[i], i, kinds[i])
                        : slot_of_value(values.Get(static_cast<uint32_t>(i)), i, kinds[i], f.device);
      ptrs[i] = &slots[i];
    }
    rtc::launch(kLaunch, f, grid, block, shared_mem, stream, n > 0 ? ptrs : nullptr);
    return info.Env().Undefined();
  });
}

// --- copies -------------------------------------------------------------------------------

Napi::Value MemcpyHtoD(const Napi::CallbackInfo& info) {
  return rtc_guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "memcpyHtoD";
    const int device = arg_device(info, 0, fn);
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
    const int device = arg_device(info, 0, fn);
    const uint64_t ptr = arg_pointer(info, 1, fn, "ptr");
    const int64_t size = arg_int(info, 2, fn, "size");
    GX_CHECK_RANGE(size >= 0, fn, ": size must be >= 0, got ", size);
    Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(info.Env(), static_cast<size_t>(size));
    rtc::memcpy_dtoh(fn, device, ab.Data(), ptr, static_cast<size_t>(size));
    return ab;
  });
}

}  // namespace

void register_rtc_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("rtcInfo", Napi::Function::New<RtcInfo>(env, "rtcInfo"));
  exports.Set("nvrtcCandidates", Napi::Function::New<NvrtcCandidates>(env, "nvrtcCandidates"));
  exports.Set("nvrtcFile", Napi::Function::New<NvrtcFile>(env, "nvrtcFile"));
  exports.Set("nvrtcCompile", Napi::Function::New<NvrtcCompile>(env, "nvrtcCompile"));
  exports.Set("moduleLoad", Napi::Function::New<ModuleLoad>(env, "moduleLoad"));
  exports.Set("moduleGetFunction", Napi::Function::New<ModuleGetFunction>(env, "moduleGetFunction"));
  exports.Set("moduleGetGlobal", Napi::Function::New<ModuleGetGlobal>(env, "moduleGetGlobal"));
  exports.Set("functionAttributes", Napi::Function::New<FunctionAttributes>(env, "functionAttributes"));
  exports.Set("functionSetMaxDynamicSharedSize",
              Napi::Function::New<FunctionSetMaxDynamicSharedSize>(env, "functionSetMaxDynamicSharedSize"));
  exports.Set("deviceLimits", Napi::Function::New<DeviceLimits>(env, "deviceLimits"));
  exports.Set("launchKernel", Napi::Function::New<LaunchKernel>(env, "launchKernel"));
  exports.Set("memcpyHtoD", Napi::Function::New<MemcpyHtoD>(env, "memcpyHtoD"));
  exports.Set("memcpyDtoH", Napi::Function::New<MemcpyDtoH>(env, "memcpyDtoH"));
}

}  // namespace gx::js
