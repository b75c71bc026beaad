// Storage: one reference-counted allocation on one device. Tensors (and views
// of them) share a Storage; the memory returns to its allocator when the last
// reference goes.
#pragma once
#include <atomic>
#include <cstddef>

#include "base/device.h"
#include "cuda/runtime.h"

namespace gx::core {

class Storage {
 public:
  // Allocates `nbytes` on `device` (refcount 1). CUDA memory comes from the
  // caching allocator on the device's current stream; `pinned` asks for
  // page-locked host memory (cpu only).
  static Storage* allocate(Device device, size_t nbytes, bool pinned);

  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept;
  // References now (tensors sharing this storage); a hint, racy across threads.
  int use_count() const noexcept { return refs_.load(std::memory_order_relaxed); }

  void* data() const noexcept { return data_; }
  size_t nbytes() const noexcept { return nbytes_; }
  Device device() const noexcept { return device_; }
  bool pinned() const noexcept { return pinned_; }
  // Pinned host memory is reused only after the last stream that touched it is done.
  void set_last_stream(cuda::Stream s) noexcept { last_stream_ = s; }
  // CUDA memory: the stream it was allocated on (the caching allocator frees it
  // to that stream's pool), and whether recordStream told the allocator that
  // other streams use it too. The tensor cache (NOTE [ Tensor cache ] in
  // core/tensor_cache.cpp) reuses only memory of the first kind, on its stream.
  cuda::Stream alloc_stream() const noexcept { return alloc_stream_; }
  bool stream_shared() const noexcept { return stream_shared_; }
  void mark_stream_shared() noexcept { stream_shared_ = true; }

 private:
  Storage(Device device, void* data, size_t nbytes, bool pinned)
      : device_(device), data_(data), nbytes_(nbytes), pinned_(pinned) {}
  ~Storage();

  std::atomic<int> refs_{1};
  Device device_;
  void* data_;
  size_t nbytes_;
  bool pinned_;
  cuda::Stream last_stream_ = nullptr;
  cuda::Stream alloc_stream_ = nullptr;
  bool stream_shared_ = false;
};

}  // namespace gx::core
