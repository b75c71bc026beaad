#include "binding/js_errors.h"

namespace gx::core::js {

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

}  // namespace gx::core::js
