// The core's gx_api table as seen from an extension. Set once by
// gx_extension_init_v1 (gpuext/extension_main.h) before any op runs.
// Extensions are built with -fvisibility=hidden, so each extension has its own.
#pragma once
#include "gpuext/abi.h"
#include "gpuext/check.h"

namespace gx::detail {

inline const gx_api*& api_slot() {
  static const gx_api* api = nullptr;
  return api;
}

inline const gx_api& api() { return *api_slot(); }

// Throws the core's message when a gx_api call fails.
inline void check_status(gx_status s) {
  if (s != GX_OK) throw OpError(s, api().last_error());
}

}  // namespace gx::detail
