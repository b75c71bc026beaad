// NOTE [ Graph memory ]
// A captured CUDA graph replays its kernels on the same addresses it saw
// during capture. So every CUDA storage allocated while a graph is being
// captured on this thread is also referenced by the graph: the memory stays
// allocated (and out of the cache) for as long as the graph lives, even when
// the tensors made during capture are disposed.
#pragma once
#include <vector>

#include "core/storage.h"

namespace gx::core {

class CaptureKeepAlive {
 public:
  CaptureKeepAlive() = default;
  CaptureKeepAlive(const CaptureKeepAlive&) = delete;
  CaptureKeepAlive& operator=(const CaptureKeepAlive&) = delete;
  ~CaptureKeepAlive() { clear(); }
  void clear() {
    for (Storage* s : storages_) s->release();
    storages_.clear();
  }
  void keep(Storage* s) {
    s->retain();
    storages_.push_back(s);
  }
  size_t size() const { return storages_.size(); }

 private:
  std::vector<Storage*> storages_;
};

// The keep-alive of the capture running on this thread, or nullptr.
CaptureKeepAlive*& capture_keepalive();

}  // namespace gx::core
