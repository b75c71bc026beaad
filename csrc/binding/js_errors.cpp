#include "binding/js_errors.h"

#include <cmath>

namespace gx::js {

Napi::Error to_js_error(Napi::Env env, const Error& e) {
  Napi::Error err;
  const char* code = "GX_ERROR";
  switch (e.kind()) {
    case ErrorKind::Type: err = Napi::TypeError::New(env, e.what()); code = "GX_TYPE"; break;
    case ErrorKind::Range: err = Napi::RangeError::New(env, e.what()); code = "GX_RANGE"; break;
    case ErrorKind::Value: err = Napi::Error::New(env, e.what()); code = "GX_VALUE"; break;
    case ErrorKind::OutOfMemory: err = Napi::Error::New(env, e.what()); code = "GX_OUT_OF_MEMORY"; break;
    case ErrorKind::Cuda: err = Napi::Error::New(env, e.what()); code = "GX_CUDA"; break;
    case ErrorKind::NotCompiled: err = Napi::Error::New(env, e.what()); code = "GX_NO_CUDA"; break;
    case ErrorKind::Internal: err = Napi::Error::New(env, e.what()); code = "GX_INTERNAL"; break;
  }
  err.Set("code", Napi::String::New(env, code));
  return err;
}

namespace {
[[noreturn]] void bad_arg(const char* fn, const char* name, const char* expected) {
  fail(ErrorKind::Type, fn, ": argument '", name, "' must be ", expected);
}

int64_t to_int(const Napi::Value& v, const char* fn, const char* name) {
  if (v.IsBigInt()) {
    bool lossless = false;
    const int64_t x = v.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless) bad_arg(fn, name, "an integer that fits in int64");
    return x;
  }
  if (!v.IsNumber()) bad_arg(fn, name, "an integer");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 9007199254740991.0) {
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

}  // namespace gx::js
