// Turning core errors into JS errors (argument readers: binding/args.h).
// Every binding entry point runs inside guard(): a gx::core::Error becomes a JS
// TypeError / RangeError / Error with a `code`, any other C++ exception an
// Error, so nothing escapes into N-API as a C++ exception it cannot handle.
#pragma once
#include <napi.h>

#include <string>

#include "base/error.h"

namespace gx::core::js {

Napi::Error to_js_error(Napi::Env env, const Error& e);

template <typename F>
auto guard(Napi::Env env, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Napi::Error&) {
    throw;
  } catch (const Error& e) {
    throw to_js_error(env, e);
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, std::string("gpuext internal error: ") + e.what());
  }
}

}  // namespace gx::core::js
