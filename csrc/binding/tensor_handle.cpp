#include "binding/tensor_handle.h"

#include "binding/js_errors.h"
#include "binding/tagged_external.h"

namespace gx::core::js {
namespace {

// NOTE [ Memory pressure ]
// V8 cannot see tensor memory, so without help it collects forgotten handles
// rarely and their memory piles up. Each handle reports its storage's size as
// external memory while it holds it, and un-reports it when it lets go.
// Reports are deferred: changes gather in `tls_pending` and reach V8 when the
// next handle is made. So a tensor made and disposed before the next one (the
// common case) never reaches V8 at all (reporting 256 MiB up and down would
// start a collection each time), while forgotten tensors add up as they
// should. Finalizers only touch the counter: V8 is not to be called from
// inside a collection.
// Only a handle whose tensor is the storage's one user reports it: a view
// (transpose, reshape, the ops' own [batch, m, k] views of their operands)
// shares memory its base already reported. Reporting it again counted a
// 128 MiB matrix once per view, and the growth V8 saw started a collection
// inside gx.matmul (0.5-2.5 ms a call). A view that outlives its base goes
// unreported, so forgetting one puts less pressure on V8: dispose() it.
// The same holds for a second handle of one tensor (contiguous() of a
// contiguous tensor).
// Changes reach V8 only once they add up to kReportStep either way: the
// tensors of one training step or one L-BFGS evaluation (tens of MiB made and
// disposed) then never reach V8, where each round of them started a
// collection (about 0.1 ms per 4 MiB tensor at 10^6 elements). Forgotten
// tensors still add up and are reported, kReportStep at a time.
thread_local int64_t tls_pending = 0;
constexpr int64_t kReportStep = int64_t{128} << 20;

void report_pending(napi_env env) {
  if (tls_pending < kReportStep && tls_pending > -kReportStep) return;
  int64_t ignored = 0;
  napi_adjust_external_memory(env, tls_pending, &ignored);
  tls_pending = 0;
}

struct Box {
  static constexpr napi_type_tag kTag = {0x6770757874656e73ULL, 0x74656e736f726831ULL};
  static constexpr const char* kName = "Tensor";

  TensorImpl* impl;
  int64_t reported;  // bytes reported to V8 for this handle

  // Drops the reference; returns the bytes to un-report.
  int64_t drop() {
    if (impl == nullptr) return 0;
    impl->release();
    impl = nullptr;
    const int64_t r = reported;
    reported = 0;
    return r;
  }
  ~Box() { tls_pending -= drop(); }
};

}  // namespace

Napi::Value TensorHandle::Wrap(Napi::Env env, TensorImpl* impl) {
  const Storage& st = impl->storage();
  const int64_t bytes = st.use_count() == 1 && impl->use_count() == 1 ? static_cast<int64_t>(st.nbytes()) : 0;
  Box* box = new Box{impl, bytes};
  Napi::Value v = wrap_external(env, box);  // on failure it deletes the box, releasing impl
  report_pending(env);
  tls_pending += bytes;
  return v;
}

TensorImpl& TensorHandle::From(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name) {
  return FromValue(info[i], fn, name);
}

TensorImpl& TensorHandle::FromValue(const Napi::Value& v, const char* fn, const char* name) {
  Box& box = unwrap_external<Box>(v, fn, name);
  if (box.impl == nullptr) {
    fail(ErrorKind::Value, fn, ": argument '", name, "' is a disposed tensor; it cannot be used after dispose()");
  }
  return *box.impl;
}

bool TensorHandle::Dispose(const Napi::Value& v) {
  Box& box = unwrap_external<Box>(v, "dispose", "tensor");
  if (box.impl == nullptr) return false;
  tls_pending -= box.drop();
  return true;
}

bool TensorHandle::IsDisposed(const Napi::Value& v) {
  return unwrap_external<Box>(v, "isDisposed", "tensor").impl == nullptr;
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

}  // namespace gx::core::js
