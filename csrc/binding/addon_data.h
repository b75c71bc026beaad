// Per-environment state of the addon. Each Node.js environment (the main
// thread and every worker_thread) loads the addon separately and gets its own
// AddonData; the core's tensors, allocators and registry stay process-wide.
#pragma once
#include <napi.h>

namespace gx::js {

struct AddonData {
  Napi::FunctionReference tensor_ctor;

  static AddonData& of(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }
};

}  // namespace gx::js
