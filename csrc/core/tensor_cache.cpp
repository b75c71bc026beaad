// NOTE [ Tensor cache ]
// A one-element op's result is allocated and, a line later, disposed: on an
// H200's host the caching allocator's two calls (a lock each, a hash-map node
// and a free-set node made and dropped), a Storage and a TensorImpl made and
// deleted cost about as much as the op's own dispatch. So a tensor the program
// disposes (Tensor.dispose(), `using`, tidy, autograd's temporaries: the
// handle's explicit drop, never a finalizer) is kept here, whole, when it is
// small and owns its memory alone, and the next empty() of the same byte size
// on this thread, device and stream gets it back with its new shape and dtype:
// no allocator call, no allocation. It qualifies when
//  - nothing else holds the TensorImpl or its Storage (no view, no alias, no
//    graph capture keeping it, no autograd node that saved it);
//  - it is the contiguous whole of its storage, of at most kMaxBytes, not pinned;
//  - on CUDA, no recordStream marked its memory as used by other streams (the
//    allocator would wait for those streams before reusing it; the cache
//    does not wait), and it is taken back only on its allocation stream, whose
//    order keeps the next writer behind the last reader as the allocator's
//    own reuse does;
//  - no graph capture is running (a capture's allocations must stay alive
//    with the graph: they go to the allocator).
// A cached tensor is not live: the live-tensor counts drop when it comes in
// and rise when it goes out. Its memory still counts as allocated, so what
// reads or changes the allocators' state empties this thread's cache first:
// gx.memory.stats, emptyCache, setLimit, and an allocation the allocator
// refuses (out of memory, or over the limit), which is retried once after.
// The cache is per thread, so it takes no lock; other threads' caches (at
// most kMaxCachedBytes each) are freed when those threads end. It holds up to
// kMaxEntries tensors and kMaxCachedBytes bytes: a tidy's temporaries all come
// back at its end, and the next run of the same code takes them all again
// (at 64 entries, a chain of 100 one-element ops in a tidy sent a third of
// its tensors through the allocator on every run, +0.5 us an op on an H200's
// host). A lookup reads only the kScanDepth most recently disposed entries,
// so a miss costs what it did at 64 entries; the older ones come within reach
// as the newer are taken, which is the order a tidy's run takes them in. When
// a disposed tensor would pass either bound, the older half is freed: what a
// run of other work left behind (a tidy's CPU temporaries before CUDA ops)
// cannot keep it full of misses.
// GPUEXT_TENSOR_CACHE=0 turns it off, so a tool that checks memory accesses
// (compute-sanitizer's memcheck) sees every dispose as a free.
#include <cstdint>
#include "base/thread_local.h"
#include <cstdlib>
#include <cstring>

#include "core/capture.h"
#include "core/tensor.h"

namespace gx::core {
namespace {

constexpr size_t kMaxBytes = size_t{64} << 10;  // the largest tensor cached
constexpr int kMaxEntries = 1024;
constexpr size_t kMaxCachedBytes = size_t{16} << 20;  // what one thread's cache holds at most, over all devices
constexpr int kScanDepth = 64;

// A cached tensor with what a lookup compares, so a miss reads no TensorImpl or Storage.
struct Entry {
  TensorImpl* tensor;
  size_t nbytes;
  Device device;
  cuda::Stream stream;
};

// Oldest first.
struct Cache {
  Entry entries[kMaxEntries] = {};
  int size = 0;
  size_t bytes = 0;  // the entries' nbytes summed
  ~Cache() { (void)TensorImpl::flush_cache(); }  // the thread ends: its cached tensors go back to the allocators
};

Cache& cache() {
  GX_THREAD_LOCAL Cache c;
  return tls_once(c);  // NOTE [ Thread-locals of the core ]: one address per caller, not one per use
}

bool capturing() { return capture_keepalive() != nullptr; }

bool enabled() {
  static const bool on = [] {
    const char* e = std::getenv("GPUEXT_TENSOR_CACHE");
    return e == nullptr || std::strcmp(e, "0") != 0;
  }();
  return on;
}

}  // namespace

void TensorImpl::free_cached(TensorImpl* t) noexcept {
  count_live(t->device(), 1);  // the cache counted it out of the live ones; its destructor does that again
  t->release();
}

bool TensorImpl::cache_disposed(TensorImpl* t) noexcept {
  if (!enabled() || capturing() || t->use_count() != 1) return false;
  const Storage& st = t->storage();
  const size_t nbytes = st.nbytes();
  if (st.use_count() != 1 || nbytes == 0 || nbytes > kMaxBytes || st.pinned() || st.stream_shared()) return false;
  if (t->offset_ != 0 || !t->is_contiguous() || static_cast<size_t>(t->numel_) * t->itemsize() != nbytes) return false;
  Cache& c = cache();
  if (c.size == kMaxEntries || c.bytes + nbytes > kMaxCachedBytes) {
    // The older half, and more of the oldest while the bytes would still pass their bound.
    int evict = (c.size + 1) / 2;
    size_t freed = 0;
    for (int i = 0; i < evict; ++i) freed += c.entries[i].nbytes;
    while (evict < c.size && c.bytes - freed + nbytes > kMaxCachedBytes) freed += c.entries[evict++].nbytes;
    for (int i = 0; i < evict; ++i) free_cached(c.entries[i].tensor);
    c.bytes -= freed;
    for (int i = evict; i < c.size; ++i) c.entries[i - evict] = c.entries[i];
    c.size -= evict;
  }
  count_live(st.device(), -1);
  c.entries[c.size++] = Entry{t, nbytes, st.device(), st.alloc_stream()};
  c.bytes += nbytes;
  return true;
}

TensorImpl* TensorImpl::from_cache(const int64_t* sizes, int32_t ndim, int64_t numel, DType dtype, Device device,
                                   size_t nbytes) noexcept {
  Cache& c = cache();
  if (c.size == 0 || nbytes == 0 || nbytes > kMaxBytes || capturing()) return nullptr;
  cuda::Stream stream = nullptr;
  if (device.is_cuda()) {
    try {
      stream = cuda::current_stream(device.index);
    } catch (...) {
      return nullptr;  // the allocator's path reports what is wrong with the device
    }
  }
  const int oldest = c.size > kScanDepth ? c.size - kScanDepth : 0;
  for (int i = c.size - 1; i >= oldest; --i) {  // the most recently disposed first
    const Entry& e = c.entries[i];
    if (e.nbytes != nbytes || e.device != device || e.stream != stream) continue;
    TensorImpl* t = e.tensor;
    for (int k = i + 1; k < c.size; ++k) c.entries[k - 1] = c.entries[k];  // keeps the order: usually none to move
    --c.size;
    c.bytes -= nbytes;
    t->layout_ = contiguous_layout(sizes, ndim);
    t->offset_ = 0;
    t->numel_ = numel;
    t->dtype_ = dtype;
    count_live(device, 1);
    return t;
  }
  return nullptr;
}

bool TensorImpl::flush_cache() noexcept {
  Cache& c = cache();
  const bool held = c.size > 0;
  while (c.size > 0) {
    free_cached(c.entries[--c.size].tensor);
  }
  c.bytes = 0;
  return held;
}

}  // namespace gx::core
