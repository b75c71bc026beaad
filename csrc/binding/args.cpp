// The checked argument readers of binding/args.h.
#include "binding/args.h"

#include <cmath>

#include "base/error.h"
#include "cuda/runtime.h"

namespace gx::core::js {
namespace {

[[noreturn]] void bad_arg(const char* fn, const char* name, const char* expected) {
  fail(ErrorKind::Type, fn, ": argument '", name, "' must be ", expected);
}

int64_t to_int(const Napi::Value& v, const char* fn, const char* name) {
  // One napi_typeof (each IsX() is a call of its own): this reads every op call's id.
  napi_valuetype type = napi_undefined;
  napi_typeof(v.Env(), v, &type);
  if (type == napi_bigint) {
    bool lossless = false;
    const int64_t x = v.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless) bad_arg(fn, name, "an integer that fits in int64");
    return x;
  }
  if (type != napi_number) bad_arg(fn, name, "an integer");
  const double d = v.As<Napi::Number>().DoubleValue();
  // NaN and the infinities fail the first test; within 2^53 the cast is exact, so it tests wholeness.
  if (!(std::fabs(d) <= 9007199254740991.0) || static_cast<double>(static_cast<int64_t>(d)) != d) {
    bad_arg(fn, name, "a safe integer");
  }
  return static_cast<int64_t>(d);
}

}  // namespace

int64_t arg_int(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  return to_int(info[i], fn, name);
}

double arg_double(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  if (!info[i].IsNumber()) bad_arg(fn, name, "a number");
  return info[i].As<Napi::Number>().DoubleValue();
}

std::vector<int64_t> arg_int_list(const Napi::CallbackInfo& info, size_t i, const char* fn,
                                  const char* name) {
  if (!info[i].IsArray()) bad_arg(fn, name, "an array of integers");
  Napi::Array a = info[i].As<Napi::Array>();
  const uint32_t n = a.Length();
  std::vector<int64_t> out(n);
  for (uint32_t k = 0; k < n; ++k) out[k] = to_int(a.Get(k), fn, name);
  return out;
}

std::string arg_string(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  if (!info[i].IsString()) bad_arg(fn, name, "a string");
  return info[i].As<Napi::String>().Utf8Value();
}

std::vector<std::string> arg_string_list(const Napi::CallbackInfo& info, size_t i, const char* fn,
                                         const char* name) {
  if (info[i].IsUndefined() || info[i].IsNull()) return {};
  if (!info[i].IsArray()) bad_arg(fn, name, "an array of strings");
  Napi::Array a = info[i].As<Napi::Array>();
  std::vector<std::string> out(a.Length());
  for (uint32_t k = 0; k < a.Length(); ++k) {
    Napi::Value v = a.Get(k);
    if (!v.IsString()) fail(ErrorKind::Type, fn, ": argument '", name, "'[", k, "] must be a string");
    out[k] = v.As<Napi::String>().Utf8Value();
  }
  return out;
}

std::string arg_path(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  std::string s = arg_string(info, i, fn, name);
  GX_CHECK_VALUE(!s.empty() && s.find('\0') == std::string::npos, fn, ": argument '", name, "' is not a path");
  return s;
}

uint64_t arg_pointer(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  if (!info[i].IsBigInt()) bad_arg(fn, name, "a bigint (a device address)");
  bool lossless = false;
  const uint64_t p = info[i].As<Napi::BigInt>().Uint64Value(&lossless);
  GX_CHECK_RANGE(lossless, fn, ": argument '", name, "' is not a valid address (must fit in 64 unsigned bits)");
  return p;
}

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
  bad_arg(fn, name, "a Uint8Array (or another ArrayBufferView / ArrayBuffer)");
}

DType dtype_of(int64_t code, const char* fn) {
  GX_CHECK_TYPE(is_valid_dtype(code), fn, ": unknown dtype code ", code);
  return static_cast<DType>(code);
}

DType arg_dtype(const Napi::CallbackInfo& info, size_t i, const char* fn) {
  return dtype_of(arg_int(info, i, fn, "dtype"), fn);
}

Device device_of(int64_t type, int64_t index, const char* fn) {
  if (type == GX_CPU) return Device::cpu();
  GX_CHECK_TYPE(type == GX_CUDA, fn, ": unknown device type ", type);
  cuda::check_device(static_cast<int>(index), fn);
  return Device::cuda(static_cast<int32_t>(index));
}

Device arg_device(const Napi::CallbackInfo& info, size_t i, const char* fn) {
  return device_of(arg_int(info, i, fn, "deviceType"), arg_int(info, i + 1, fn, "deviceIndex"), fn);
}

int arg_cuda_device(const Napi::CallbackInfo& info, size_t i, const char* fn) {
  const int64_t index = arg_int(info, i, fn, "device");
  cuda::check_device(static_cast<int>(index), fn);
  return static_cast<int>(index);
}

int arg_device_index(const Napi::CallbackInfo& info, size_t i, const char* fn) {
  const int64_t d = arg_int(info, i, fn, "device");
  GX_CHECK_RANGE(d >= 0 && d < kMaxCudaDevices, fn, ": device index ", d, " is out of range");
  return static_cast<int>(d);
}

}  // namespace gx::core::js
