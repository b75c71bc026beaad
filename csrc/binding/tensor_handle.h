// Tensor handles: the JS value that owns one reference to a TensorImpl.
//
// NOTE [ Handles are Externals ]
// A handle is an N-API External around a small box holding the TensorImpl
// pointer, tagged with a type tag so no other External passes for one.
// Externals cost a fraction of an ObjectWrap instance, and a handle is made
// for every tensor an op returns. dispose() empties the box and drops the
// reference at once; the External's finalizer is only a backstop for handles
// the program forgot (it may run late, or at exit).
//
// NOTE [ Recycled handles ]
// Making an External costs more than the rest of a one-element CPU op's
// native work, and its finalizer is most of what the garbage collector does
// in a loop of small ops. So a handle is reused where its lifetime is known:
// Tensor.dispose() (and so `using`, tidy and autograd's temporaries) empties
// the box and puts the External in a pool in JS (lib/core/handle-pool.ts); the
// next op result goes into one from there instead of a new one. Two ways in:
//  - a built-in op writes its result into a tensor argument `out` that JS
//    allocated. JS passes a pooled (empty) handle there and stages the
//    result's shape, dtype and device (staging::kResultRequest); the call
//    allocates it in the caching allocator as emptyStaged() would and fills
//    the handle before the op runs: one crossing instead of two, and no new
//    External. The request is good for one empty handle of one call.
//  - an op that returns a tensor (extension ops) takes a spare handle as its
//    last JS argument (flagged in staging::kResultSpare) and returns the
//    result in it.
// Only JS that owns a handle passes it, and Tensor.handle() refuses disposed
// tensors, so an empty handle reaching an op is a pooled one. The finalizer
// remains the backstop for tensors never disposed. What an explicit dispose
// lets go of may itself be reused: NOTE [ Tensor cache ] in core/tensor_cache.cpp.
//
// NOTE [ Deferred disposal ]
// Disposing was a crossing of its own: gx.mul(a, 2).dispose() made two
// N-API calls where the op needs one. So the disposal of a small tensor is
// carried by the next call that puts a new tensor in its handle. When a
// staged request or emptyStaged() fills a handle, the new tensor gets a
// serial (a per-thread count, exact in a double) in staging::kResultSerial,
// or 0 when its storage is over kDeferrableBytes. JS keeps it on the Tensor;
// its dispose() then puts the handle, tensor and all, on a short stack of
// deferred handles (lib/core/handle-pool.ts) instead of calling dispose. The
// next op result or new tensor takes a handle from that stack and stages its
// serial in staging::kResultReplace: FromArgument (or DropDeferred, for
// emptyStaged) drops the tensor the handle holds, as Dispose would (to the
// tensor cache, from which the new one is then allocated), only when the
// serials match. So no live tensor, a user's `out` among them, is ever taken
// for a deferred one. What deferred tensors hold is bounded (JS keeps at most
// MAX_DEFERRED of handle-pool.ts, each of at most kDeferrableBytes), and what counts live tensors or memory, or
// changes the allocators (gx.memory's functions, a graph capture, the
// profiler), first has JS dispose them. A call that fails before reaching the
// handle leaves it as it was, and JS then disposes it as usual.
#pragma once
#include <napi.h>

#include "core/tensor.h"

namespace gx::core::js {

class TensorHandle {
 public:
  // A new handle taking over the caller's reference to `impl`; `deferrable`: a new tensor
  // whose disposal JS may defer, given a serial (NOTE [ Deferred disposal ]).
  static Napi::Value Wrap(Napi::Env env, TensorImpl* impl, bool deferrable = false);
  // The live TensorImpl behind argument `i`; throws a TypeError naming `fn`
  // and `name` when it is not a handle, or an Error when it was disposed.
  static TensorImpl& From(const Napi::CallbackInfo& info, size_t i, const char* fn, const char* name);
  // The same for a value that is not a call argument (an array element...).
  static TensorImpl& FromValue(const Napi::Value& v, const char* fn, const char* name);
  // Drops the handle's reference now; false when it was already dropped.
  static bool Dispose(const Napi::Value& v);
  // The live TensorImpl behind an op's tensor argument; an empty (pooled) handle
  // gets a new tensor from the staged result request when `request` is not
  // null, which is then spent (set to null). nullptr when `v` is not a tensor
  // handle; a disposed one is an error, as in FromValue.
  static TensorImpl* TryFromArgument(Napi::Env env, const Napi::Value& v, const char* fn, const char* name,
                                     const double*& request);
  // Drops the disposed tensor `spare` still holds when its serial is the one staged in
  // staging::kResultReplace (NOTE [ Deferred disposal ]), which it clears; else nothing.
  static void DropDeferred(const Napi::Value& spare);
  // Puts `impl` (taking over the caller's reference) into the empty handle `spare`
  // and returns it; a new handle when `spare` is not an empty tensor handle.
  static Napi::Value Refill(Napi::Env env, const Napi::Value& spare, TensorImpl* impl, bool deferrable = false);
  static bool IsDisposed(const Napi::Value& v);
};

void register_handle_functions(Napi::Env env, Napi::Object exports);

}  // namespace gx::core::js
