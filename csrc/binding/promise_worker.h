// A job for a libuv pool thread that settles a Promise: waits on the GPU and
// copies off the JS thread (NOTE [ Async waits ], NOTE [ Async readback ],
// file reads). A subclass's Run() does the work on the pool thread (an
// exception becomes the rejection) and Result() gives what the promise
// resolves with, back on the JS thread.
#pragma once

#include <napi.h>

#include <exception>

namespace gx::core::js {

class PromiseWorker : public Napi::AsyncWorker {
 public:
  // Runs `before` on the JS thread (what must happen in stream order, such as
  // recording an event), then queues `w`; returns its promise. If either
  // throws, `w` is deleted, so its destructor releases what it acquired.
  template <typename Before>
  static Napi::Promise start(PromiseWorker* w, Before before) {
    Napi::Promise p = w->deferred_.Promise();
    try {
      before();
      w->Queue();
    } catch (...) {
      delete w;
      throw;
    }
    return p;
  }

 protected:
  PromiseWorker(Napi::Env env, const char* name)
      : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)) {}
  virtual void Run() = 0;
  virtual Napi::Value Result() { return Env().Undefined(); }

 private:
  void Execute() final {
    try {
      Run();
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() final { deferred_.Resolve(Result()); }
  void OnError(const Napi::Error& e) final { deferred_.Reject(e.Value()); }

  Napi::Promise::Deferred deferred_;
};

}  // namespace gx::core::js
