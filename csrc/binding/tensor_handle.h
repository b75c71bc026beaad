// Tensor handles: the JS value that owns one reference to a TensorImpl.
//
// NOTE [ Handles are Externals ]
// A handle is an N-API External around a small box holding the TensorImpl
// pointer, tagged with a type tag so no other External passes for one.
// Externals cost a fraction of an ObjectWrap instance, and a handle is made
// for every tensor an op returns. dispose() empties the box and drops the
// reference at once; the External's finalizer is only a backstop for handles
// the program forgot (it may run late, or at exit).
#pragma once
#include <napi.h>

#include "core/tensor.h"

namespace gx::core::js {

class TensorHandle {
 public:
  // A new handle taking over the caller's reference to `impl`.
  static Napi::Value Wrap(Napi::Env env, TensorImpl* impl);
  // The live TensorImpl behind argument `i`; throws a TypeError naming `fn`
  // and `name` when it is not a handle, or an Error when it was disposed.
  static TensorImpl& From(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
  // The same for a value that is not a call argument (an array element...).
  static TensorImpl& FromValue(const Napi::Value& v, const char* fn, const char* name);
  // Drops the handle's reference now; false when it was already dropped.
  static bool Dispose(const Napi::Value& v);
  static bool IsDisposed(const Napi::Value& v);
};

void register_handle_functions(Napi::Env env, Napi::Object exports);

}  // namespace gx::core::js
