// N-API functions over tensors: creation, views, copies, fills, readback.
// lib/core/native.ts declares their TypeScript types; keep the two in step.
#include <cmath>
#include <cstring>

#include "binding/bindings.h"
#include "binding/args.h"
#include "binding/js_errors.h"
#include "binding/promise_worker.h"
#include "binding/staging.h"
#include "binding/tensor_handle.h"
#include "core/tensor_ops.h"

namespace gx::core::js {
namespace {

// A new tensor's handle; its data address goes to the staging area (NOTE [ Staging area ]).
Napi::Value wrap_new(Napi::Env env, TensorImpl* t) {
  staging::set_last_address(t->data());
  return TensorHandle::Wrap(env, t);
}

Napi::Value Empty(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const auto sizes = arg_int_list(info, 0, "empty", "shape");
    const DType dtype = arg_dtype(info, 1, "empty");
    const Device device = arg_device(info, 2, "empty");
    const bool pinned = arg_flag(info, 4);
    return wrap_new(info.Env(), TensorImpl::empty(sizes, dtype, device, pinned));
  });
}

// emptyStaged(spare?): empty() with its request in the staging area (ndim,
// dtype, device type and index, the shape), checked as empty() checks its
// arguments; in `spare` when it is a disposed tensor's handle (NOTE [ Recycled handles ]).
Napi::Value EmptyStaged(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const double* area = staging::area();
    if (info.Length() > 0) TensorHandle::DropDeferred(info[0]);  // first, so its memory may carry the new tensor
    TensorImpl* t = staging::empty_from(area + staging::kEmpty, area + staging::kShape, "empty");
    return info.Length() > 0 ? TensorHandle::Refill(info.Env(), info[0], t, true) : TensorHandle::Wrap(info.Env(), t, true);
  });
}

// fromBytes(bytes: ArrayBufferView, shape, dtype, deviceType, deviceIndex)
Napi::Value FromBytes(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    GX_CHECK_TYPE(info[0].IsTypedArray() || info[0].IsDataView(), "tensor: data must be a typed array");
    const auto sizes = arg_int_list(info, 1, "tensor", "shape");
    const DType dtype = arg_dtype(info, 2, "tensor");
    const Device device = arg_device(info, 3, "tensor");
    Napi::TypedArray view = info[0].As<Napi::TypedArray>();
    const size_t nbytes = view.ByteLength();
    const int64_t numel = checked_numel(sizes, "tensor");
    GX_CHECK_VALUE(static_cast<size_t>(numel) * itemsize(dtype) == nbytes, "tensor: data holds ",
                   nbytes, " bytes but shape needs ", numel, " x ", itemsize(dtype), " bytes");
    const char* src = static_cast<const char*>(view.ArrayBuffer().Data()) + view.ByteOffset();
    TensorImpl* t = TensorImpl::empty(sizes, dtype, device);
    try {
      write_from_host(*t, src);
    } catch (...) {
      t->release();
      throw;
    }
    return TensorHandle::Wrap(info.Env(), t);
  });
}

// viewStaged(self, spare?): a view of self with the layout in the staging
// area (NOTE [ Staged views ] in staging.h); in `spare` when it is a disposed
// tensor's handle (NOTE [ Recycled handles ]).
Napi::Value ViewStaged(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    TensorImpl* t = staging::view_from(TensorHandle::From(info, 0, "view", "self"), "view");
    return info.Length() > 1 ? TensorHandle::Refill(info.Env(), info[1], t) : TensorHandle::Wrap(info.Env(), t);
  });
}

// alias(self): a view of self's whole layout, for autograd's saved tensors
// (no shape or strides to read through N-API).
Napi::Value Alias(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    return TensorHandle::Wrap(info.Env(), TensorImpl::alias(TensorHandle::From(info, 0, "alias", "self")));
  });
}

Napi::Value Copy(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    TensorImpl& dst = TensorHandle::From(info, 0, "copy_", "dst");
    const TensorImpl& src = TensorHandle::From(info, 1, "copy_", "src");
    copy_(dst, src, arg_flag(info, 2));
    return info.Env().Undefined();
  });
}

Napi::Value ToDevice(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const TensorImpl& src = TensorHandle::From(info, 0, "to", "self");
    const Device device = arg_device(info, 1, "to");
    return TensorHandle::Wrap(info.Env(), to_device(src, device, arg_flag(info, 3)));
  });
}

Napi::Value Contiguous(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    return TensorHandle::Wrap(info.Env(), contiguous(TensorHandle::From(info, 0, "contiguous", "self")));
  });
}

// fill(handle, bits: bigint): the dtype's bit pattern, computed in TS.
Napi::Value Fill(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    TensorImpl& t = TensorHandle::From(info, 0, "fill_", "self");
    GX_CHECK_TYPE(info[1].IsBigInt(), "fill_: argument 'bits' must be a bigint");
    bool lossless = false;
    const uint64_t bits = info[1].As<Napi::BigInt>().Uint64Value(&lossless);
    fill_(t, bits);
    return info.Env().Undefined();
  });
}

Napi::Value Arange(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    TensorImpl& t = TensorHandle::From(info, 0, "arange", "out");
    GX_CHECK_VALUE(t.is_contiguous(), "arange: out must be contiguous");
    arange_(t, arg_double(info, 1, "arange", "start"), arg_double(info, 2, "arange", "step"));
    return info.Env().Undefined();
  });
}

Napi::Value Linspace(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    TensorImpl& t = TensorHandle::From(info, 0, "linspace", "out");
    GX_CHECK_VALUE(t.is_contiguous(), "linspace: out must be contiguous");
    linspace_(t, arg_double(info, 1, "linspace", "start"), arg_double(info, 2, "linspace", "end"));
    return info.Env().Undefined();
  });
}

// The argument `i` that receives a readback of `nbytes`: an ArrayBuffer of
// exactly that size, or a typed array (toArray({ out })) whose bytes are.
// NOTE [ Readback buffers ]: JS allocates it (new ArrayBuffer), where a size
// V8 cannot give is a RangeError the caller can catch; an ArrayBuffer made
// here through N-API would end the process instead (V8's "Allocation failed -
// process out of memory").
struct Readback {
  Napi::Object holder;  // what the promise resolves with
  void* data;
};

Readback readback_buffer(const Napi::CallbackInfo& info, size_t i, const char* fn, size_t nbytes) {
  size_t have = 0;
  Readback r{};
  if (info[i].IsArrayBuffer()) {
    Napi::ArrayBuffer b = info[i].As<Napi::ArrayBuffer>();
    r = {b, b.Data()};
    have = b.ByteLength();
  } else if (info[i].IsTypedArray()) {
    Napi::TypedArray a = info[i].As<Napi::TypedArray>();
    r = {a, static_cast<char*>(a.ArrayBuffer().Data()) + a.ByteOffset()};
    have = a.ByteLength();
  } else {
    fail(ErrorKind::Type, fn, ": argument 'dst' must be an ArrayBuffer or a typed array");
  }
  GX_CHECK_VALUE(have == nbytes, fn, ": dst holds ", have, " bytes, the tensor ", nbytes);
  return r;
}

size_t nbytes_of(const TensorImpl& t) { return static_cast<size_t>(t.numel()) * t.itemsize(); }

// readSync(handle, dst): the elements in C order into dst (an ArrayBuffer or typed array).
Napi::Value ReadSync(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const TensorImpl& t = TensorHandle::From(info, 0, "toArraySync", "self");
    read_to_host(t, readback_buffer(info, 1, "toArraySync", nbytes_of(t)).data);
    return info.Env().Undefined();
  });
}

// NOTE [ Async readback ]
// On the JS thread: make the tensor contiguous, hold the destination
// ArrayBuffer (not yet visible to JS) and record an event on the current
// stream. On a libuv pool thread: wait for the event (the data is written),
// then copy device -> destination (through pinned staging when large: NOTE
// [ Staged readback ] in csrc/cuda/staged_copy.cpp).
// Back on the JS thread: resolve. The event loop never waits for the GPU; the
// source stays referenced until then, so its memory cannot be reused early.
class ReadWorker : public PromiseWorker {
 public:
  ReadWorker(Napi::Env env, TensorImpl* src, const Readback& dst, size_t nbytes)
      : PromiseWorker(env, "gpuext.toArray"), out_(Napi::Persistent(dst.holder)), src_(src), dst_(dst.data),
        nbytes_(nbytes) {}
  ~ReadWorker() override {
    cuda::destroy_event(event_);
    src_->release();
  }
  // On the JS thread, before queuing.
  void RecordEvent() { event_ = cuda::record_event(cuda::current_stream(src_->device().index)); }

 protected:
  void Run() override {
    cuda::wait_event(event_);
    cuda::copy_to_host_blocking(dst_, src_->data(), nbytes_);
  }
  Napi::Value Result() override { return out_.Value(); }

 private:
  Napi::Reference<Napi::Object> out_;  // keeps the destination's memory alive until the copy is done
  TensorImpl* src_;  // owned reference to the contiguous source
  void* dst_;
  size_t nbytes_;
  cuda::Event event_ = nullptr;
};

// read(handle, dst) -> Promise<dst>: dst (an ArrayBuffer or typed array), once it holds the elements in C order.
Napi::Value Read(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const TensorImpl& t = TensorHandle::From(info, 0, "toArray", "self");
    const size_t nbytes = nbytes_of(t);
    const Readback dst = readback_buffer(info, 1, "toArray", nbytes);
    if (t.device().is_cpu() || nbytes == 0) {
      auto deferred = Napi::Promise::Deferred::New(info.Env());
      read_to_host(t, dst.data);
      deferred.Resolve(dst.holder);
      return deferred.Promise();
    }
    auto* worker = new ReadWorker(info.Env(), contiguous(t), dst, nbytes);  // owns the copy
    return PromiseWorker::start(worker, [&] { worker->RecordEvent(); });
  });
}

// describe(handle) -> the core's view of the tensor, for tests and printing.
Napi::Value Describe(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const TensorImpl& t = TensorHandle::From(info, 0, "describe", "self");
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    Napi::Array sizes = Napi::Array::New(env, t.ndim()), strides = Napi::Array::New(env, t.ndim());
    for (int d = 0; d < t.ndim(); ++d) {
      sizes.Set(d, Napi::Number::New(env, static_cast<double>(t.sizes()[d])));
      strides.Set(d, Napi::Number::New(env, static_cast<double>(t.strides()[d])));
    }
    o.Set("shape", sizes);
    o.Set("strides", strides);
    o.Set("offset", Napi::Number::New(env, static_cast<double>(t.offset())));
    o.Set("dtype", Napi::Number::New(env, static_cast<int>(t.dtype())));
    o.Set("deviceType", Napi::Number::New(env, t.device().type));
    o.Set("deviceIndex", Napi::Number::New(env, t.device().index));
    o.Set("contiguous", Napi::Boolean::New(env, t.is_contiguous()));
    o.Set("pinned", Napi::Boolean::New(env, t.storage().pinned()));
    o.Set("storageBytes", Napi::Number::New(env, static_cast<double>(t.storage().nbytes())));
    o.Set("storagePtr", Napi::BigInt::New(env, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.storage().data()))));
    o.Set("dataPtr", Napi::BigInt::New(env, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.data()))));
    return o;
  });
}

// dataAddress(handle): the address of the first element as a number, for
// kernel arguments passed in a Float64Array (NOTE [ Argument slots ] in
// rtc_launch.cpp). Addresses are below 2^47 on the platforms CUDA runs on;
// one that a double cannot hold exactly is refused.
Napi::Value DataAddress(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const TensorImpl& t = TensorHandle::From(info, 0, "dataAddress", "self");
    const auto p = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.data()));
    GX_CHECK_RANGE(p <= (uint64_t{1} << 53), "dataAddress: the address ", p, " does not fit a double exactly");
    return Napi::Number::New(info.Env(), static_cast<double>(p));
  });
}

}  // namespace

void register_tensor_functions(Napi::Env env, Napi::Object exports) {
  register_handle_functions(env, exports);
  exports.Set("empty", Napi::Function::New<Empty>(env, "empty"));
  exports.Set("emptyStaged", Napi::Function::New<EmptyStaged>(env, "emptyStaged"));
  exports.Set("fromBytes", Napi::Function::New<FromBytes>(env, "fromBytes"));
  exports.Set("viewStaged", Napi::Function::New<ViewStaged>(env, "viewStaged"));
  exports.Set("alias", Napi::Function::New<Alias>(env, "alias"));
  exports.Set("copy", Napi::Function::New<Copy>(env, "copy"));
  exports.Set("toDevice", Napi::Function::New<ToDevice>(env, "toDevice"));
  exports.Set("contiguous", Napi::Function::New<Contiguous>(env, "contiguous"));
  exports.Set("fill", Napi::Function::New<Fill>(env, "fill"));
  exports.Set("arange", Napi::Function::New<Arange>(env, "arange"));
  exports.Set("linspace", Napi::Function::New<Linspace>(env, "linspace"));
  exports.Set("readSync", Napi::Function::New<ReadSync>(env, "readSync"));
  exports.Set("read", Napi::Function::New<Read>(env, "read"));
  exports.Set("describe", Napi::Function::New<Describe>(env, "describe"));
  exports.Set("dataAddress", Napi::Function::New<DataAddress>(env, "dataAddress"));
}

}  // namespace gx::core::js
