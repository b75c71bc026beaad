#include "binding/tensor_handle.h"

#include "binding/js_errors.h"

namespace gx::js {
namespace {

struct Box {
  TensorImpl* impl;
};

// Identifies gpuext tensor handles among all Externals (napi_type_tag_object).
constexpr napi_type_tag kHandleTag = {0x6770757874656e73ULL, 0x74656e736f726831ULL};

void finalize(napi_env, void* data, void*) {
  Box* box = static_cast<Box*>(data);
  if (box->impl != nullptr) box->impl->release();
  delete box;
}

// The box behind `v`, or nullptr when `v` is not a tensor handle.
Box* box_of(const Napi::Value& v) {
  if (!v.IsExternal()) return nullptr;
  napi_env env = v.Env();
  bool tagged = false;
  if (napi_check_object_type_tag(env, v, &kHandleTag, &tagged) != napi_ok || !tagged) return nullptr;
  void* data = nullptr;
  if (napi_get_value_external(env, v, &data) != napi_ok) return nullptr;
  return static_cast<Box*>(data);
}

}  // namespace

Napi::Value TensorHandle::Wrap(Napi::Env env, TensorImpl* impl) {
  Box* box = new Box{impl};
  napi_value ext = nullptr;
  if (napi_create_external(env, box, finalize, nullptr, &ext) != napi_ok) {
    delete box;
    impl->release();
    fail(ErrorKind::Internal, "could not create a tensor handle");
  }
  if (napi_type_tag_object(env, ext, &kHandleTag) != napi_ok) {
    fail(ErrorKind::Internal, "could not tag a tensor handle");  // the finalizer still frees it
  }
  return Napi::Value(env, ext);
}

TensorImpl& TensorHandle::From(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  return FromValue(info[i], fn, name);
}

TensorImpl& TensorHandle::FromValue(const Napi::Value& v, const char* fn, const char* name) {
  Box* box = box_of(v);
  if (box == nullptr) fail(ErrorKind::Type, fn, ": argument '", name, "' must be a Tensor");
  if (box->impl == nullptr) {
    fail(ErrorKind::Value, fn, ": argument '", name, "' is a disposed tensor; it cannot be used after dispose()");
  }
  return *box->impl;
}

bool TensorHandle::Dispose(const Napi::Value& v) {
  Box* box = box_of(v);
  if (box == nullptr) fail(ErrorKind::Type, "dispose: argument must be a tensor handle");
  if (box->impl == nullptr) return false;
  box->impl->release();
  box->impl = nullptr;
  return true;
}

bool TensorHandle::IsDisposed(const Napi::Value& v) {
  Box* box = box_of(v);
  if (box == nullptr) fail(ErrorKind::Type, "isDisposed: argument must be a tensor handle");
  return box->impl == nullptr;
}

namespace {
Napi::Value DisposeFn(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value { return Napi::Boolean::New(info.Env(), TensorHandle::Dispose(info[0])); });
}
Napi::Value IsDisposedFn(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value { return Napi::Boolean::New(info.Env(), TensorHandle::IsDisposed(info[0])); });
}
}  // namespace

void register_handle_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("dispose", Napi::Function::New<DisposeFn>(env, "dispose"));
  exports.Set("isDisposed", Napi::Function::New<IsDisposedFn>(env, "isDisposed"));
}

}  // namespace gx::js
