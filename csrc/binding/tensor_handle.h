// TensorHandle: the JS object that owns one reference to a TensorImpl.
// dispose() drops the reference at once; the finalizer is only a backstop for
// handles the program forgot (it may run late, or at exit).
#pragma once
#include <napi.h>

#include "core/tensor.h"

namespace gx::js {

class TensorHandle : public Napi::ObjectWrap<TensorHandle> {
 public:
  static Napi::Function Define(Napi::Env env);
  // Wraps `impl`, taking over the caller's reference.
  static Napi::Object Wrap(Napi::Env env, TensorImpl* impl);
  // The live TensorImpl behind argument `i`; throws a TypeError naming `fn`
  // and `name` when it is not a handle, or an Error when it was disposed.
  static TensorImpl& From(const Napi::CallbackInfo& info, size_t i, const char* fn,
                            const char* name);

  // The same for a value that is not a call argument (an array element...).
  static TensorImpl& FromValue(const Napi::Value& v, const char* fn, const char* name);

  explicit TensorHandle(const Napi::CallbackInfo& info);
  ~TensorHandle() override;

 private:
  Napi::Value Dispose(const Napi::CallbackInfo& info);
  Napi::Value IsDisposed(const Napi::CallbackInfo& info);

  TensorImpl* impl_ = nullptr;
};

}  // namespace gx::js
