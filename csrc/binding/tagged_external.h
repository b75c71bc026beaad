// Native objects handed to JS as type-tagged N-API Externals: cheaper than
// ObjectWrap instances (NOTE [ Handles are Externals ] in tensor_handle.h),
// and the type tag makes sure an External from elsewhere never passes for one
// of ours. The External owns its object; the finalizer deletes it.
#pragma once
#include <napi.h>

#include "base/error.h"

namespace gx::core::js {

// NOTE [ Finalizers inside the GC ]
// The core is built with NAPI_EXPERIMENTAL, and these finalizers take a
// node_api_basic_env: Node then runs them inside the garbage collection that
// found the External dead, instead of queueing them for a later turn of the
// event loop. Queued, they never ran inside a synchronous loop: 1,000
// forgotten 4 MiB tensors held 4 GiB until the loop ended (with the memory
// reported to V8 all along), and 2,000,000 `gx.empty([1]).dispose()` grew the
// RSS by 367 MiB of pending finalizer records. Run in the GC, the loop peaks
// at ~100 MiB and the records never pile up (CPU empty+dispose also went
// from ~5.4 to ~1.2-2.1 us here). Such a finalizer must not call into JS or
// V8: it only deletes the box, which releases core memory and counters.
//
// Each wrapped type T declares `static constexpr napi_type_tag kTag` and
// `static constexpr const char* kName` (used in errors).
template <typename T>
Napi::Value wrap_external(Napi::Env env, T* obj) {
  napi_value ext = nullptr;
  auto finalize = [](node_api_basic_env, void* data, void*) { delete static_cast<T*>(data); };
  if (napi_create_external(env, obj, finalize, nullptr, &ext) != napi_ok) {
    delete obj;
    fail(ErrorKind::Internal, "could not create a ", T::kName, " handle");
  }
  if (napi_type_tag_object(env, ext, &T::kTag) != napi_ok) {
    fail(ErrorKind::Internal, "could not tag a ", T::kName, " handle");  // the finalizer still frees it
  }
  return Napi::Value(env, ext);
}

// The T behind `v`, or nullptr when `v` is not one. napi_get_value_external
// refuses anything but an External, so no napi_typeof is asked first (it was
// one N-API call more per tensor argument of every op).
template <typename T>
T* try_unwrap_external(const Napi::Value& v) {
  void* data = nullptr;
  if (napi_get_value_external(v.Env(), v, &data) != napi_ok) return nullptr;
  bool tagged = false;
  if (napi_check_object_type_tag(v.Env(), v, &T::kTag, &tagged) != napi_ok || !tagged) return nullptr;
  return static_cast<T*>(data);
}

// The T behind `v`; a TypeError naming `fn` and `name` otherwise.
template <typename T>
T& unwrap_external(const Napi::Value& v, const char* fn, const char* name) {
  T* obj = try_unwrap_external<T>(v);
  if (obj == nullptr) fail(ErrorKind::Type, fn, ": argument '", name, "' must be a ", T::kName);
  return *obj;
}

}  // namespace gx::core::js
