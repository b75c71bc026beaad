// N-API functions over files: reading a file range straight into a tensor's
// memory, for loading tensors (lib/io/readers.ts's FileRangeReader).
#include "binding/args.h"
#include "binding/bindings.h"
#include "binding/js_errors.h"
#include "binding/promise_worker.h"
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
class FileReadWorker : public PromiseWorker {
 public:
  FileReadWorker(Napi::Env env, int fd, int64_t offset, const TensorImpl& dst)
      : PromiseWorker(env, "gpuext.readFile"), fd_(fd), offset_(offset), dst_(&dst) {
    dst_->retain();
  }
  ~FileReadWorker() override {
    cuda::destroy_event(event_);
    dst_->release();
  }
  // On the JS thread, before queuing.
  void RecordEvent() {
    if (dst_->device().is_cuda()) event_ = cuda::record_event(cuda::current_stream(dst_->device().index));
  }

 protected:
  void Run() override {
    const size_t nbytes = static_cast<size_t>(dst_->numel()) * dst_->itemsize();
    if (dst_->device().is_cpu()) {
      read_file_range(fd_, offset_, dst_->data(), nbytes);
    } else {
      cuda::wait_event(event_);
      cuda::copy_file_to_device(dst_->device().index, fd_, offset_, dst_->data(), nbytes);
    }
  }

 private:
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
    return PromiseWorker::start(worker, [&] { worker->RecordEvent(); });
  });
}

}  // namespace

void register_file_functions(Napi::Env env, Napi::Object exports) {
  exports.Set("readFile", Napi::Function::New<ReadFile>(env, "readFile"));
}

}  // namespace gx::core::js
