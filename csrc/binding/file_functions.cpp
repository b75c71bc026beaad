// N-API functions over files: reading a file range straight into a tensor's
// memory, for loading tensors (lib/io/readers.ts's FileRangeReader).
#include "binding/args.h"
#include "binding/bindings.h"
#include "binding/js_errors.h"
#include "binding/tensor_handle.h"
#include "base/file_read.h"
#include "cuda/runtime.h"

namespace gx::core::js {
namespace {

// On the JS thread: hold the destination and, for a CUDA one, record an event
// on the current stream (its memory may have been freed by work still queued
// there). On a libuv pool thread: wait for the event, then read the file into
// the tensor (NOTE [ File reads ], NOTE [ Staged file reads ]). Back on the JS
// thread: resolve. The tensor is new and not yet visible to JS, so nothing
// else touches it meanwhile; the caller keeps the file open until then.
class FileReadWorker : public Napi::AsyncWorker {
 public:
  FileReadWorker(Napi::Env env, int fd, int64_t offset, const TensorImpl& dst)
      : Napi::AsyncWorker(env, "gpuext.readFile"), deferred_(Napi::Promise::Deferred::New(env)), fd_(fd),
        offset_(offset), dst_(&dst) {
    dst_->retain();
  }
  // Queues the read. If it throws, delete the worker: the destructor releases what was acquired.
  void Start() {
    if (dst_->device().is_cuda()) event_ = cuda::record_event(cuda::current_stream(dst_->device().index));
    Queue();
  }
  ~FileReadWorker() override {
    cuda::destroy_event(event_);
    dst_->release();
  }
  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  void Execute() override {
    try {
      const size_t nbytes = static_cast<size_t>(dst_->numel()) * dst_->itemsize();
      if (dst_->device().is_cpu()) {
        read_file_range(fd_, offset_, dst_->data(), nbytes);
      } else {
        cuda::wait_event(event_);
        cuda::copy_file_to_device(dst_->device().index, fd_, offset_, dst_->data(), nbytes);
      }
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(Env().Undefined()); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  int fd_;
  int64_t offset_;
  const TensorImpl* dst_;  // owned reference
  cuda::Event event_ = nullptr;
};

// readFile(fd, offset, dst) -> Promise<void>: fills the contiguous tensor dst
// (CPU or CUDA) with the bytes at `offset` of the open file `fd`, as many as
// it holds. A file that ends first rejects (and dst is left partly written).
Napi::Value ReadFile(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    constexpr const char* fn = "readFile";
    const int64_t fd = arg_int(info, 0, fn, "fd");
    GX_CHECK_RANGE(fd >= 0 && fd <= INT32_MAX, fn, ": argument 'fd' must be an open file descriptor, got ", fd);
    const int64_t offset = arg_int(info, 1, fn, "offset");
    GX_CHECK_RANGE(offset >= 0, fn, ": argument 'offset' must be >= 0, got ", offset);
    const TensorImpl& dst = TensorHandle::From(info, 2, fn, "dst");
    GX_CHECK_VALUE(dst.is_contiguous(), fn, ": argument 'dst' must be contiguous");
    auto* worker = new FileReadWorker(info.Env(), static_cast<int>(fd), offset, dst);
    Napi::Promise p = worker->Promise();
    try {
      worker->Start();
    } catch (...) {
      delete worker;
      throw;
    }
    return p;
  });
}

}  // namespace

void register_file_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("readFile", Napi::Function::New<ReadFile>(env, "readFile"));
}

}  // namespace gx::core::js
