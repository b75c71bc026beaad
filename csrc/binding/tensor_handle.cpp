#include "binding/tensor_handle.h"
#include "base/thread_local.h"

#include "binding/js_errors.h"
#include "binding/staging.h"
#include "binding/tagged_external.h"

namespace gx::core::js {
namespace {

// NOTE [ Memory pressure ]
// V8 cannot see tensor memory, so without help it collects forgotten handles
// rarely and their memory piles up. Each handle reports its storage's size as
// external memory while it holds it, and un-reports it when it lets go.
// Reports are deferred: changes gather in counters and reach V8 when the
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
// While a program frees its tensors itself (dispose, tidy), new handles reach
// V8 only once their bytes add up to kReportStep: the tensors of one training
// step or one L-BFGS evaluation (tens of MiB made and disposed before that)
// then never reach V8, where each round of them started a collection (about
// 0.1 ms per 4 MiB tensor at 10^6 elements). Once a finalizer frees one (a
// forgotten tensor: the program relies on collections), every handle is
// reported at once again, as V8 needs to keep forgotten memory bounded
// (reported in steps, 4 GiB piled up in a loop that yields where 1 GiB did);
// kExplicitRun explicit disposals in a row switch the steps back on. A handle
// let go before its bytes were reported takes them back from the unreported
// sum; one let go after is un-reported at the next handle.
// Steps alone did not hold for steps larger than kReportStep (a batch of
// 16384 x 1024 activations: 64 MiB each, hundreds of MiB live at the peak of
// each training step): each step reported its peak and un-reported it at the
// end, and V8 ran a full collection per step (1.5-2 ms, half the step's host
// time on an H200). So while disposals are explicit, reported bytes that are
// let go stay reported as headroom (Pressure::slack), and a new handle that fits in
// it takes its bytes from there instead of reporting them: what V8 sees is
// the peak of live tensor bytes, flat from step to step. A finalizer freeing
// a tensor ends the explicit run and un-reports the headroom at once.
// One thread's counts, reached through one reference per function (NOTE [ Thread-locals of the core ]).
struct Pressure {
  int64_t unreported = 0;    // bytes of live handles made since the last report
  int64_t released = 0;      // reported bytes let go since (<= 0)
  uint64_t epoch = 0;        // reports of `unreported` so far
  int64_t explicit_run = 0;  // explicit disposals since a finalizer last freed a tensor
  int64_t slack = 0;         // reported bytes let go during an explicit run, kept reported (>= 0)
};
GX_THREAD_LOCAL Pressure tls_pressure;
constexpr int64_t kReportStep = int64_t{128} << 20;
constexpr int64_t kExplicitRun = 4096;
constexpr uint64_t kReported = ~uint64_t{0};  // a Box's epoch when its bytes came from the headroom (reported)

bool explicit_run(const Pressure& p) { return p.explicit_run >= kExplicitRun; }

void report_pending(napi_env env, Pressure& p) {
  int64_t change = p.released;
  if (!explicit_run(p) && p.slack > 0) {
    change -= p.slack;
    p.slack = 0;
  }
  const int64_t step = explicit_run(p) ? kReportStep : 1;
  if (p.unreported >= step) {
    change += p.unreported;
    p.unreported = 0;
    ++p.epoch;
  }
  p.released = 0;
  if (change == 0) return;
  int64_t ignored = 0;
  napi_adjust_external_memory(env, change, &ignored);
}

struct Box {
  static constexpr napi_type_tag kTag = {0x6770757874656e73ULL, 0x74656e736f726831ULL};
  static constexpr const char* kName = "Tensor";

  TensorImpl* impl;
  int64_t bytes;   // this handle's share of tensor memory (0 for a view)
  uint64_t epoch;  // the thread's Pressure::epoch when it was made: unreported while they are equal (kReported: taken from the headroom)
  uint64_t serial = 0;  // NOTE [ Deferred disposal ]: what JS names impl by when it defers its disposal; 0: it may not

  // Drops the reference and takes its bytes out of the pressure V8 sees (or will).
  // `by_finalizer`: the handle was forgotten (collected, never disposed).
  void drop(bool by_finalizer) {
    if (impl == nullptr) return;
    Pressure& p = tls_once(tls_pressure);
    if (by_finalizer) p.explicit_run = 0;
    else if (p.explicit_run < kExplicitRun) ++p.explicit_run;
    // A disposed tensor may go to the tensor cache (NOTE [ Tensor cache ] in core/tensor_cache.cpp);
    // a finalizer's never does: it may run on a collection long after the program forgot the tensor.
    if (by_finalizer || !TensorImpl::cache_disposed(impl)) impl->release();
    impl = nullptr;
    serial = 0;
    if (epoch == p.epoch) p.unreported -= bytes;
    else if (explicit_run(p)) p.slack += bytes;
    else p.released -= bytes;
    bytes = 0;
  }
  ~Box() { drop(true); }
};

// Makes `box` (empty) hold `impl`, counting its bytes as a new handle's (NOTE [ Memory pressure ]).
void fill(napi_env env, Box& box, TensorImpl* impl) {
  const Storage& st = impl->storage();
  const int64_t bytes = st.use_count() == 1 && impl->use_count() == 1 ? static_cast<int64_t>(st.nbytes()) : 0;
  Pressure& p = tls_once(tls_pressure);
  report_pending(env, p);
  box.impl = impl;
  box.bytes = bytes;
  if (bytes > 0 && explicit_run(p) && p.slack >= bytes) {
    p.slack -= bytes;
    box.epoch = kReported;
    return;
  }
  box.epoch = p.epoch;
  p.unreported += bytes;
}

// NOTE [ Deferred disposal ]: a new result's serial, when its memory is small enough to be let go late.
GX_THREAD_LOCAL uint64_t tls_last_serial = 0;
constexpr size_t kDeferrableBytes = size_t{8} << 10;

void give_serial(Box& box) {
  const bool deferrable = box.impl->storage().nbytes() <= kDeferrableBytes;
  box.serial = deferrable ? ++tls_last_serial : 0;
  staging::area()[staging::kResultSerial] = static_cast<double>(box.serial);  // serials stay below 2^53
}

}  // namespace

Napi::Value TensorHandle::Wrap(Napi::Env env, TensorImpl* impl, bool deferrable) {
  Box* box = new Box{nullptr, 0, 0, 0};
  fill(env, *box, impl);
  if (deferrable) give_serial(*box);
  return wrap_external(env, box);  // on failure it deletes the box, releasing impl and taking its bytes back
}

void TensorHandle::DropDeferred(const Napi::Value& spare) {
  double* area = staging::area();
  const double replace = area[staging::kResultReplace];
  if (replace == 0) return;
  area[staging::kResultReplace] = 0;
  Box* box = try_unwrap_external<Box>(spare);
  if (box != nullptr && box->impl != nullptr && box->serial != 0 && static_cast<double>(box->serial) == replace) box->drop(false);
}

Napi::Value TensorHandle::Refill(Napi::Env env, const Napi::Value& spare, TensorImpl* impl, bool deferrable) {
  Box* box = try_unwrap_external<Box>(spare);
  if (box == nullptr || box->impl != nullptr) return Wrap(env, impl, deferrable);
  fill(env, *box, impl);
  if (deferrable) give_serial(*box);
  return spare;
}

TensorImpl* TensorHandle::TryFromArgument(Napi::Env env, const Napi::Value& v, const char* fn, const char* name,
                                          const double*& request) {
  Box* found = try_unwrap_external<Box>(v);
  if (found == nullptr) return nullptr;
  Box& box = *found;
  if (request != nullptr) {
    double* area = staging::area();
    // NOTE [ Deferred disposal ]: the handle may still hold the disposed tensor JS names by its serial (never 0).
    const bool replaces = box.impl != nullptr && box.serial != 0 && static_cast<double>(box.serial) == area[staging::kResultReplace];
    if (box.impl == nullptr || replaces) {
      const double* r = request;
      request = nullptr;
      area[staging::kResultPending] = 0;  // spent, even when the call fails later
      area[staging::kResultReplace] = 0;
      if (replaces) box.drop(false);  // what Tensor.dispose() left for this call: an explicit disposal
      fill(env, box, staging::empty_from(r, area + staging::kResultShape, fn));
      give_serial(box);
    }
  }
  if (box.impl == nullptr) {
    fail(ErrorKind::Value, fn, ": argument '", name, "' is a disposed tensor; it cannot be used after dispose()");
  }
  return box.impl;
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
  box.drop(false);
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
