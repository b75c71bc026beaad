// TensorImpl: storage + sizes + strides + storage offset + dtype. Views share
// the storage. This is the object behind the C ABI's opaque gx_tensor and
// behind every JS Tensor handle.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "base/dtype.h"
#include "base/layout.h"
#include "core/storage.h"
#include "gpuext/abi.h"

// The C ABI's opaque type; TensorImpl derives from it so the ABI can cast.
struct gx_tensor {};

namespace gx::core {

class TensorImpl : public gx_tensor {
 public:
  // A new contiguous tensor with uninitialized memory (refcount 1).
  static TensorImpl* empty(const std::vector<int64_t>& sizes, DType dtype, Device device,
                           bool pinned = false);
  // The same from `ndim` sizes (no vector to make on the op path).
  static TensorImpl* empty(const int64_t* sizes, int32_t ndim, DType dtype, Device device, bool pinned = false);
  // A view of `base`'s storage (refcount 1). Checks that every element it can
  // reach lies inside the storage, so no view can read out of bounds.
  // `ndim` sizes and strides (ndim in [0, kMaxDims], checked).
  static TensorImpl* view(const TensorImpl& base, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                          int64_t offset);
  // Another tensor of base's very layout over the same storage (refcount 1):
  // a view that needs no checks and no shape to be passed in.
  static TensorImpl* alias(const TensorImpl& base);

  // The count is not part of the tensor's value, so const tensors can be shared.
  void retain() const noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() const noexcept;
  int use_count() const noexcept { return refs_.load(std::memory_order_relaxed); }

  const Layout& layout() const noexcept { return layout_; }
  int32_t ndim() const noexcept { return layout_.ndim; }
  const int64_t* sizes() const noexcept { return layout_.sizes; }
  const int64_t* strides() const noexcept { return layout_.strides; }
  int64_t numel() const noexcept { return numel_; }
  DType dtype() const noexcept { return dtype_; }
  size_t itemsize() const noexcept { return core::itemsize(dtype_); }
  Device device() const noexcept { return storage_->device(); }
  Storage& storage() const noexcept { return *storage_; }
  int64_t offset() const noexcept { return offset_; }
  bool is_contiguous() const noexcept { return layout_is_contiguous(layout_); }
  // Address of element [0, ...].
  void* data() const noexcept;

  // Live TensorImpls per device slot (Device::slot()), for leak tests.
  static int64_t live_count(int slot) noexcept;

  // NOTE [ Tensor cache ] (core/tensor_cache.cpp): `t`, the caller's one
  // reference to a tensor the program disposed, kept for the next empty() of
  // its byte size on this thread instead of freed; false when it does not
  // qualify (the caller then releases it as usual).
  static bool cache_disposed(TensorImpl* t) noexcept;
  // Frees what this thread's cache holds, so the allocators' figures (and
  // their free lists) count only live tensors; true when it held any.
  static bool flush_cache() noexcept;

 private:
  TensorImpl(Storage* storage, Layout layout, int64_t offset, DType dtype);
  ~TensorImpl();
  // A tensor from this thread's cache, made a new contiguous `sizes` x `dtype`, or null.
  static TensorImpl* from_cache(const int64_t* sizes, int32_t ndim, int64_t numel, DType dtype, Device device,
                                size_t nbytes) noexcept;
  static void count_live(Device device, int64_t delta) noexcept;
  // Gives a cached tensor back to the allocators.
  static void free_cached(TensorImpl* t) noexcept;

  mutable std::atomic<int> refs_{1};
  Storage* storage_;  // owned reference
  Layout layout_;
  int64_t offset_;
  int64_t numel_;
  DType dtype_;
};

// Checks dims (count, non-negative) and returns the element count, guarding
// against overflow. `what` names the caller in errors.
int64_t checked_numel(const int64_t* sizes, int64_t ndim, const char* what);
inline int64_t checked_numel(const std::vector<int64_t>& sizes, const char* what) {
  return checked_numel(sizes.data(), static_cast<int64_t>(sizes.size()), what);
}

}  // namespace gx::core
