// The exported entry point of an extension. `gpuext build` compiles this
// header, alone, into every extension (exactly once): it runs every
// GX_LIBRARY block of the extension against the core's registrar.
#pragma once
#include "gpuext/library.h"

// The ABI version the extension was built against; the core refuses a
// different major version, or a newer minor than its own, before calling init.
extern "C" __attribute__((visibility("default"))) const uint32_t gx_extension_abi_version[2] = {
    GX_ABI_VERSION_MAJOR, GX_ABI_VERSION_MINOR};

extern "C" __attribute__((visibility("default"))) gx_status gx_extension_init_v1(
    const gx_api* api, gx_registrar* reg) {
  ::gx::detail::api_slot() = api;
  try {
    for (auto* r = ::gx::detail::registrations(); r != nullptr; r = r->next) {
      ::gx::Library lib(r->ns, reg);
      r->body(lib);
    }
    return GX_OK;
  } catch (const ::gx::OpError& e) {
    api->set_error(e.status(), e.what());
    return e.status();
  } catch (const std::exception& e) {
    api->set_error(GX_ERR_INTERNAL, e.what());
    return GX_ERR_INTERNAL;
  }
}
