#include "core/tensor_ops.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/cpu_kernels.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace gx::core {
namespace {

struct Ref {  // owns one reference to a TensorImpl
  TensorImpl* p;
  explicit Ref(TensorImpl* t) : p(t) {}
  ~Ref() { p->release(); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  TensorImpl* operator->() const { return p; }
  TensorImpl& operator*() const { return *p; }
};

std::vector<int64_t> shape_of(const TensorImpl& t) {
  return std::vector<int64_t>(t.sizes(), t.sizes() + t.ndim());
}

std::string shape_text(const TensorImpl& t) {
  std::string s = "[";
  for (int d = 0; d < t.ndim(); ++d) s += (d ? ", " : "") + std::to_string(t.sizes()[d]);
  return s + "]";
}

void check_same_shape(const TensorImpl& a, const TensorImpl& b, const char* what) {
  bool same = a.ndim() == b.ndim();
  for (int d = 0; same && d < a.ndim(); ++d) same = a.sizes()[d] == b.sizes()[d];
  GX_CHECK_VALUE(same, what, ": shapes differ: ", shape_text(a), " vs ", shape_text(b));
}

cuda::Stream stream_of(const TensorImpl& t) { return cuda::current_stream(t.device().index); }

// Host<->device copy of contiguous tensors.
void copy_host_device(TensorImpl& dst, const TensorImpl& src, bool non_blocking) {
  const size_t nbytes = static_cast<size_t>(src.numel()) * src.itemsize();
  if (dst.device().is_cuda()) {
    cuda::Stream s = stream_of(dst);
    cuda::memcpy_async(dst.data(), src.data(), nbytes, cuda::CopyKind::HostToDevice, s);
    if (src.storage().pinned()) {
      src.storage().set_last_stream(s);
    } else {
      // NOTE [ Pageable host -> device ]: cudaMemcpyAsync from pageable memory
      // returns once the data is staged, so the host buffer may be reused at once.
    }
  } else {
    cuda::Stream s = stream_of(src);
    cuda::memcpy_async(dst.data(), src.data(), nbytes, cuda::CopyKind::DeviceToHost, s);
    if (non_blocking && dst.storage().pinned()) {
      dst.storage().set_last_stream(s);  // the caller synchronizes before reading
      return;
    }
    // The host side sees the data only after the stream reaches the copy.
    cuda::synchronize_stream(s);
  }
}

}  // namespace

void copy_(TensorImpl& dst, const TensorImpl& src, bool non_blocking) {
  GX_CHECK_TYPE(dst.dtype() == src.dtype(), "copy: dtypes differ: ", dtype_name(dst.dtype()),
                " vs ", dtype_name(src.dtype()));
  check_same_shape(dst, src, "copy");
  if (dst.numel() == 0) return;
  const Device dd = dst.device(), sd = src.device();
  if (dd.is_cpu() && sd.is_cpu()) {
    cpu::strided_copy(dst.data(), dst.layout(), src.data(), src.layout(), src.itemsize(), src.numel());
    return;
  }
  if (dd.is_cuda() && sd.is_cuda()) {
    if (dd != sd) {
      // Different GPUs: copy contiguous buffers peer to peer, then lay out on
      // the destination device. NOTE [ Copies between GPUs ]: ordered on the
      // streams, not by the host (which would stall every GPU's queue behind
      // the source's): the destination's stream waits for the source's
      // producer (an event), copies, and the source's stream waits for the
      // copy, so the source's memory (its caching allocator reuses it in its
      // own stream's order) is not rewritten while the copy reads it. torch's
      // copy between devices joins the two streams the same way.
      // Peer access (NOTE [ Peer access ]) makes the copy one DMA between them.
      cuda::enable_peer_access(dd.index, sd.index);
      Ref s(contiguous(src));
      Ref d(contiguous(dst));  // dst itself when contiguous, else a staging buffer
      const cuda::Stream ss = stream_of(*s), ds = stream_of(*d);
      cuda::join_streams(ds, ss, sd.index);
      cuda::memcpy_async(d->data(), s->data(), static_cast<size_t>(s->numel()) * s->itemsize(),
                         cuda::CopyKind::DeviceToDevice, ds);
      cuda::join_streams(ss, ds, dd.index);
      if (d.p != &dst) copy_(dst, *d);
      return;
    }
    cuda::launch_strided_copy(dst.data(), dst.layout(), src.data(), src.layout(), src.itemsize(),
                              src.numel(), stream_of(dst));
    return;
  }
  // Host <-> device: DMA needs contiguous buffers; lay out on the side that is not.
  Ref s(contiguous(src));
  if (dst.is_contiguous()) {
    copy_host_device(dst, *s, non_blocking);
  } else {
    Ref staged(TensorImpl::empty(shape_of(dst), dst.dtype(), dd));
    copy_host_device(*staged, *s, /*non_blocking=*/false);
    copy_(dst, *staged);
  }
}

void fill_(TensorImpl& t, uint64_t bits) {
  if (t.device().is_cuda()) {
    cuda::launch_fill(t.data(), t.layout(), t.itemsize(), bits, t.numel(), stream_of(t));
  } else {
    cpu::fill(t.data(), t.layout(), t.itemsize(), bits, t.numel());
  }
}

// An int64 range of whole numbers counts in int64: past 2^53, float64's
// start + i * step is not exact (arange(2^53, 2^53 + 4) held 2^53 twice).
// Every value must fit int64; the last is checked without overflow.
static bool arange_int64_(TensorImpl& t, double start, double step) {
  // -2^63, exact as a double; its negation, 2^63, is the first double past int64's largest.
  constexpr double kInt64Min = static_cast<double>(std::numeric_limits<int64_t>::min());
  if (t.dtype() != DType::Int64 || std::trunc(start) != start || std::trunc(step) != step) return false;
  const int64_t n = t.numel();
  int64_t last = 0;
  const auto in_int64 = [](double v) { return v >= kInt64Min && v < -kInt64Min; };
  if (n == 0) return true;
  if (n == 1) step = 0;  // one value: the step is never taken (arange(0, 1, 1e30) is [0])
  const bool fits = in_int64(start) && in_int64(step) && !__builtin_mul_overflow(n - 1, static_cast<int64_t>(step), &last) &&
                    !__builtin_add_overflow(last, static_cast<int64_t>(start), &last);
  GX_CHECK_RANGE(fits, "arange: start ", start, " + ", n - 1, " steps of ", step, " goes beyond int64");
  auto* dst = static_cast<int64_t*>(t.data());
  if (t.device().is_cuda()) {
    cuda::launch_affine_int64(dst, n, static_cast<int64_t>(start), static_cast<int64_t>(step), stream_of(t));
  } else {
    cpu::affine_int64(dst, n, static_cast<int64_t>(start), static_cast<int64_t>(step));
  }
  return true;
}

void arange_(TensorImpl& t, double start, double step) {
  GX_CORE_INTERNAL_ASSERT(t.is_contiguous());
  if (arange_int64_(t, start, step)) return;
  if (t.device().is_cuda()) {
    cuda::launch_affine(t.data(), t.dtype(), t.numel(), start, step, stream_of(t));
  } else {
    cpu::affine(t.data(), t.dtype(), t.numel(), start, step);
  }
}

void linspace_(TensorImpl& t, double start, double end) {
  GX_CORE_INTERNAL_ASSERT(t.is_contiguous());
  if (t.device().is_cuda()) {
    cuda::launch_linspace(t.data(), t.dtype(), t.numel(), start, end, stream_of(t));
  } else {
    cpu::linspace(t.data(), t.dtype(), t.numel(), start, end);
  }
}

TensorImpl* contiguous(const TensorImpl& t) {
  if (t.is_contiguous()) {
    t.retain();
    return const_cast<TensorImpl*>(&t);
  }
  TensorImpl* out = TensorImpl::empty(shape_of(t), t.dtype(), t.device());
  try {
    copy_(*out, t);
  } catch (...) {
    out->release();
    throw;
  }
  return out;
}

TensorImpl* to_device(const TensorImpl& src, Device device, bool non_blocking) {
  TensorImpl* out = TensorImpl::empty(shape_of(src), src.dtype(), device, /*pinned=*/non_blocking && device.is_cpu() && src.device().is_cuda());
  try {
    copy_(*out, src, non_blocking);
  } catch (...) {
    out->release();
    throw;
  }
  return out;
}

void read_to_host(const TensorImpl& t, void* dst) {
  Ref c(contiguous(t));
  const size_t nbytes = static_cast<size_t>(c->numel()) * c->itemsize();
  if (nbytes == 0) return;
  if (c->device().is_cpu()) {
    std::memcpy(dst, c->data(), nbytes);
    return;
  }
  cuda::Stream s = stream_of(*c);
  if (cuda::staged_copy_pays(nbytes)) {
    cuda::synchronize_stream(s);  // the staged copy runs on the per-thread stream
    cuda::copy_to_host_staged(dst, c->data(), nbytes);
    return;
  }
  cuda::memcpy_async(dst, c->data(), nbytes, cuda::CopyKind::DeviceToHost, s);
  cuda::synchronize_stream(s);
}

void write_from_host(TensorImpl& t, const void* src) {
  GX_CORE_INTERNAL_ASSERT(t.is_contiguous());
  const size_t nbytes = static_cast<size_t>(t.numel()) * t.itemsize();
  if (nbytes == 0) return;
  if (t.device().is_cpu()) {
    std::memcpy(t.data(), src, nbytes);
    return;
  }
  // See NOTE [ Pageable host -> device ].
  cuda::memcpy_async(t.data(), src, nbytes, cuda::CopyKind::HostToDevice, stream_of(t));
}

}  // namespace gx::core
