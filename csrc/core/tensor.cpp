#include "core/tensor.h"

#include <limits>

namespace gx::core {
namespace {
std::atomic<int64_t> g_live[kMaxDeviceSlots];
}  // namespace

int64_t checked_numel(const int64_t* sizes, int64_t ndim, const char* what) {
  GX_CHECK_RANGE(ndim <= kMaxDims, what, ": a tensor has at most ", kMaxDims, " dimensions, got ", ndim);
  GX_CHECK_RANGE(ndim >= 0, what, ": ndim must be >= 0, got ", ndim);
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    GX_CHECK_RANGE(sizes[d] >= 0, what, ": dimension ", d, " has negative size ", sizes[d]);
    if (sizes[d] != 0 && n > std::numeric_limits<int64_t>::max() / sizes[d]) {
      fail(ErrorKind::Range, what, ": shape is too large (element count overflows int64)");
    }
    n *= sizes[d];
  }
  return n;
}

TensorImpl::TensorImpl(Storage* storage, Layout layout, int64_t offset, DType dtype)
    : storage_(storage), layout_(layout), offset_(offset), dtype_(dtype) {
  numel_ = 1;
  for (int d = 0; d < layout_.ndim; ++d) numel_ *= layout_.sizes[d];
  g_live[storage_->device().slot()].fetch_add(1, std::memory_order_relaxed);
}

TensorImpl::~TensorImpl() {
  g_live[storage_->device().slot()].fetch_sub(1, std::memory_order_relaxed);
  storage_->release();
}

void TensorImpl::release() const noexcept {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

void* TensorImpl::data() const noexcept {
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(itemsize());
}

int64_t TensorImpl::live_count(int slot) noexcept {
  return slot >= 0 && slot < kMaxDeviceSlots ? g_live[slot].load() : 0;
}

TensorImpl* TensorImpl::empty(const std::vector<int64_t>& sizes, DType dtype, Device device,
                              bool pinned) {
  return empty(sizes.data(), static_cast<int32_t>(sizes.size()), dtype, device, pinned);
}

TensorImpl* TensorImpl::empty(const int64_t* sizes, int32_t ndim, DType dtype, Device device, bool pinned) {
  const int64_t n = checked_numel(sizes, ndim, "empty");
  const int64_t item = static_cast<int64_t>(core::itemsize(dtype));
  GX_CHECK_RANGE(n <= std::numeric_limits<int64_t>::max() / item, "empty: shape is too large");
  const size_t nbytes = static_cast<size_t>(n * item);
  if (!pinned) {
    if (TensorImpl* cached = from_cache(sizes, ndim, n, dtype, device, nbytes)) return cached;
  }
  Storage* storage = nullptr;
  try {
    storage = Storage::allocate(device, nbytes, pinned);
  } catch (const Error& e) {
    // What the tensor cache holds counts as allocated: free it and try once more before giving up.
    if (e.kind() != ErrorKind::OutOfMemory || !flush_cache()) throw;
    storage = Storage::allocate(device, nbytes, pinned);
  }
  return new TensorImpl(storage, contiguous_layout(sizes, ndim), 0, dtype);
}

void TensorImpl::count_live(Device device, int64_t delta) noexcept {
  g_live[device.slot()].fetch_add(delta, std::memory_order_relaxed);
}

TensorImpl* TensorImpl::view(const TensorImpl& base, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                             int64_t offset) {
  const int64_t n = checked_numel(sizes, ndim, "view");
  GX_CHECK_RANGE(offset >= 0, "view: storage offset must be >= 0, got ", offset);
  Layout l;
  l.ndim = static_cast<int32_t>(ndim);
  int64_t last = offset;  // highest element index the view can reach
  for (int d = 0; d < l.ndim; ++d) {
    GX_CHECK_RANGE(strides[d] >= 0, "view: stride ", d, " must be >= 0, got ", strides[d]);
    l.sizes[d] = sizes[d];
    l.strides[d] = strides[d];
    int64_t reach = 0;
    if (n > 0 && (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
                  __builtin_add_overflow(last, reach, &last))) {
      fail(ErrorKind::Range, "view: strides reach beyond int64 element offsets");
    }
  }
  const int64_t capacity =
      static_cast<int64_t>(base.storage_->nbytes() / core::itemsize(base.dtype_));
  GX_CHECK_RANGE(n == 0 || last < capacity, "view: the view reaches element ", last,
                 " but the storage holds ", capacity, " elements");
  base.storage_->retain();
  return new TensorImpl(base.storage_, l, offset, base.dtype_);
}

TensorImpl* TensorImpl::alias(const TensorImpl& base) {
  base.storage_->retain();
  return new TensorImpl(base.storage_, base.layout_, base.offset_, base.dtype_);
}

}  // namespace gx::core
