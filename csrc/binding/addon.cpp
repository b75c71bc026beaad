// Entry point of the core addon (gpuext_core.node). Runs once per Node.js
// environment: the main thread and each worker_thread.
#include <napi.h>

#include "binding/bindings.h"
#include "binding/staging.h"
#include "cuda/runtime.h"

namespace gx::core::js {
namespace {

// Each environment runs JS on its own thread, so the streams this thread
// created (NOTE [ Current stream ]) go when its environment ends.
void cleanup_thread(void*) { cuda::release_thread_streams(); }

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  register_tensor_functions(env, exports);
  register_device_functions(env, exports);
  register_op_functions(env, exports);
  register_stream_functions(env, exports);
  register_rtc_compile_functions(env, exports);
  register_rtc_module_functions(env, exports);
  register_rtc_launch_functions(env, exports);
  register_cache_functions(env, exports);
  register_file_functions(env, exports);
  staging::register_functions(env, exports);
  if (napi_add_env_cleanup_hook(env, cleanup_thread, nullptr) != napi_ok) {
    throw Napi::Error::New(env, "gpuext: could not register the environment cleanup hook");
  }
  return exports;
}

}  // namespace gx::core::js

// The macro pastes its argument into an identifier: it needs an unqualified name.
static Napi::Object InitCore(Napi::Env env, Napi::Object exports) { return gx::core::js::Init(env, exports); }
NODE_API_MODULE(gpuext_core, InitCore)
