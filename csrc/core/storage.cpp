#include "core/storage.h"
#include "base/thread_local.h"

#include "core/capture.h"
#include "core/cpu_allocator.h"
#include "cuda/caching_allocator.h"
#include "cuda/pinned_allocator.h"

namespace gx::core {

Storage* Storage::allocate(Device device, size_t nbytes, bool pinned) {
  GX_CHECK_VALUE(!(pinned && device.is_cuda()), "pinned memory is host memory; ask for it on 'cpu', not ",
                 device.str());
  void* data = nullptr;
  cuda::Stream stream = nullptr;
  if (nbytes > 0) {
    if (device.is_cuda()) {
      stream = cuda::current_stream(device.index);
      data = cuda::device_alloc(device.index, nbytes, stream);
    } else if (pinned) {
      data = cuda::pinned_alloc(nbytes);
    } else {
      data = cpu_alloc(nbytes);
    }
  }
  Storage* storage = new Storage(device, data, nbytes, pinned);
  storage->alloc_stream_ = stream;
  if (device.is_cuda() && capture_keepalive() != nullptr) capture_keepalive()->keep(storage);
  return storage;
}

CaptureKeepAlive*& capture_keepalive() {
  GX_THREAD_LOCAL CaptureKeepAlive* current = nullptr;
  return current;
}

void Storage::release() noexcept {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

Storage::~Storage() {
  if (data_ == nullptr) return;
  if (device_.is_cuda()) {
    cuda::device_free(data_);
  } else if (pinned_) {
    cuda::pinned_free(data_, last_stream_);
  } else {
    cpu_free(data_, nbytes_);
  }
}

}  // namespace gx::core
