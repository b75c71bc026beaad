// What the run-time kernel functions (rtc_compile.cpp, rtc_modules.cpp,
// rtc_launch.cpp) share: the handles JS holds for a loaded module and for a
// kernel of one, and the guard that gives a missing NVRTC or driver its own
// error code. Apart so each of those files keeps one purpose.
#pragma once
#include <napi.h>

#include <cstdint>
#include <vector>

#include "binding/js_errors.h"
#include "rtc/rtc.h"

namespace gx::core::js {

struct ModuleBox {
  static constexpr napi_type_tag kTag = {0x677075786d6f6475ULL, 0x6c65000000000001ULL};
  static constexpr const char* kName = "module handle (from moduleLoad)";
  rtc::ModulePtr module;  // unloaded when the last holder (this or a FunctionBox) goes
};

struct FunctionBox {
  static constexpr napi_type_tag kTag = {0x6770757866756e63ULL, 0x74696f6e00000001ULL};
  static constexpr const char* kName = "kernel handle (from moduleGetFunction)";
  rtc::Function fn;  // holds its module
  // The C type of each parameter (binding/arg_kinds.h, NOTE [ Argument slots ]
  // in rtc_launch.cpp); has_kinds is false when the caller did not know them,
  // and such a handle cannot launch.
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

}  // namespace gx::core::js
