#include "binding/tensor_handle.h"

#include "binding/addon_data.h"
#include "binding/js_errors.h"

namespace gx::js {

Napi::Function TensorHandle::Define(Napi::Env env) {
  return DefineClass(env, "TensorHandle",
                     {InstanceMethod<&TensorHandle::Dispose>("dispose"),
                      InstanceMethod<&TensorHandle::IsDisposed>("isDisposed")});
}

TensorHandle::TensorHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TensorHandle>(info) {
  // Only Wrap() constructs handles, passing the TensorImpl as an External.
  if (info.Length() != 1 || !info[0].IsExternal()) {
    Napi::TypeError::New(info.Env(), "TensorHandle is created by gpuext, not by `new`")
        .ThrowAsJavaScriptException();
    return;
  }
  impl_ = info[0].As<Napi::External<TensorImpl>>().Data();
}

TensorHandle::~TensorHandle() {
  if (impl_ != nullptr) impl_->release();
}

Napi::Object TensorHandle::Wrap(Napi::Env env, TensorImpl* impl) {
  Napi::External<TensorImpl> ext = Napi::External<TensorImpl>::New(env, impl);
  Napi::Object obj;
  try {
    obj = AddonData::of(env).tensor_ctor.New({ext});
  } catch (...) {
    impl->release();
    throw;
  }
  return obj;
}

TensorImpl& TensorHandle::From(const Napi::CallbackInfo& info, size_t i, const char* fn,
                                 const char* name) {
  return FromValue(info[i], fn, name);
}

TensorImpl& TensorHandle::FromValue(const Napi::Value& v, const char* fn, const char* name) {
  if (!v.IsObject() || !v.As<Napi::Object>().InstanceOf(AddonData::of(v.Env()).tensor_ctor.Value())) {
    fail(ErrorKind::Type, fn, ": argument '", name, "' must be a Tensor");
  }
  TensorHandle* h = TensorHandle::Unwrap(v.As<Napi::Object>());
  if (h->impl_ == nullptr) {
    fail(ErrorKind::Value, fn, ": argument '", name, "' is a disposed tensor; it cannot be used after dispose()");
  }
  return *h->impl_;
}

Napi::Value TensorHandle::Dispose(const Napi::CallbackInfo& info) {
  const bool was_live = impl_ != nullptr;
  if (was_live) {
    impl_->release();
    impl_ = nullptr;
  }
  return Napi::Boolean::New(info.Env(), was_live);
}

Napi::Value TensorHandle::IsDisposed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), impl_ == nullptr);
}

}  // namespace gx::js
