// gx::Tensor for extensions: a reference-counted handle to a core tensor,
// read through the C ABI (gpuext/abi.h). Cheap to copy (a refcount bump).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "gpuext/api.h"
#include "gpuext/dtype_table.h"

namespace gx {

enum class ScalarType : int32_t {
#define GX_SCALAR_TYPE_ENUM(Enum, ...) Enum = GX_##Enum,
  GX_FORALL_DTYPES(GX_SCALAR_TYPE_ENUM)
#undef GX_SCALAR_TYPE_ENUM
};

#define GX_SCALAR_TYPE_CONSTANT(Enum, ...) \
  constexpr ScalarType k##Enum = ScalarType::Enum;
GX_FORALL_DTYPES(GX_SCALAR_TYPE_CONSTANT)
#undef GX_SCALAR_TYPE_CONSTANT

inline const char* to_string(ScalarType t) {
  const int32_t code = static_cast<int32_t>(t);
  return dtype_table::valid(code) ? dtype_table::kName[code] : "unknown";
}
inline void append_to(Message& m, ScalarType t) { m.append(to_string(t)); }

// Each dtype's item size and kind, from the dtype list (gpuext/dtype_table.h).
inline constexpr int64_t itemsize(ScalarType t) {
  const int32_t code = static_cast<int32_t>(t);
  return dtype_table::valid(code) ? dtype_table::kItemsize[code] : 1;
}
inline constexpr bool is_floating(ScalarType t) {
  const int32_t code = static_cast<int32_t>(t);
  return dtype_table::valid(code) && dtype_table::kFloating[code];
}
// Signed or unsigned integers; bool is neither floating nor integral.
inline constexpr bool is_integral(ScalarType t) { return !is_floating(t) && t != kBool; }

// The 16-bit float types are only named here (gpuext/half.h defines them: in
// CUDA code CUDA's own __half and __nv_bfloat16, which CUDA's headers declare
// the same way), so the dtype list can map every dtype to its C++ type without
// every extension paying for cuda_fp16.h (NOTE [ Light headers ]).
}  // namespace gx
#if defined(__CUDACC__)
struct __half;
struct __nv_bfloat16;
namespace gx {
using Half = __half;
using BFloat16 = __nv_bfloat16;
}  // namespace gx
#else
namespace gx {
struct Half;
struct BFloat16;
}  // namespace gx
#endif
namespace gx {

// The dtype of a C++ element type, for data_ptr<T>() and dispatch, from the
// list's C++ type column.
template <typename T> struct dtype_of;
#define GX_SCALAR_TYPE_OF(Enum, name, kind, size, storage, js_value, ctype, ...) \
  template <> struct dtype_of<ctype> { static constexpr ScalarType value = k##Enum; };
GX_FORALL_DTYPES(GX_SCALAR_TYPE_OF)
#undef GX_SCALAR_TYPE_OF

enum DeviceType : int32_t { kCPU = GX_CPU, kCUDA = GX_CUDA };

struct Device {
  DeviceType type = kCPU;
  int32_t index = 0;
  Device() = default;
  Device(DeviceType t, int32_t i = 0) : type(t), index(t == kCPU ? 0 : i) {}  // NOLINT
  bool is_cuda() const { return type == kCUDA; }
  bool is_cpu() const { return type == kCPU; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};
namespace detail {
// gx::kCUDA without an index is the calling thread's current device (torch's
// kCUDA too; NOTE [ Current device ] in the core), asked of the core when used
// (so not in a static initializer, which runs before the core's table is there).
inline Device device_of(DeviceType t) {
  if (t != kCUDA) return Device(t);
  const gx_device d = api().current_device();
  return Device(kCUDA, d.type == GX_CUDA ? d.index : 0);  // no GPU: cuda:0, refused where memory is needed
}
}  // namespace detail
inline void append_to(Message& m, const Device& d) {
  if (d.is_cpu()) {
    m.append("cpu");
  } else {
    m.append("cuda:");
    append_to(m, d.index);
  }
}

// A read-only view of sizes or strides; compares and prints like a list.
class IntArrayRef {
 public:
  IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  // Any contiguous container of int64_t (std::vector<int64_t>, std::array...).
  template <typename V, typename = std::enable_if_t<std::is_same_v<
                            decltype(static_cast<const V*>(nullptr)->data()), const int64_t*>>>
  IntArrayRef(const V& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  // Like PyTorch's ArrayRef: valid while the braced list lives, which for a
  // function argument is the whole call (gx::empty({n}, ...)).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  IntArrayRef(std::initializer_list<int64_t> l) : data_(l.begin()), size_(l.size()) {}  // NOLINT
#pragma GCC diagnostic pop
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  int64_t operator[](size_t i) const { return data_[i]; }
  bool operator==(const IntArrayRef& o) const {
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (data_[i] != o.data_[i]) return false;
    return true;
  }
  bool operator!=(const IntArrayRef& o) const { return !(*this == o); }

 private:
  const int64_t* data_;
  size_t size_;
};
inline void append_to(Message& m, IntArrayRef a) {
  m.append("[");
  for (size_t i = 0; i < a.size(); ++i) {
    if (i) m.append(", ");
    append_to(m, a[i]);
  }
  m.append("]");
}

class Tensor;
class TensorVector;

// What a new tensor is made as: a dtype and a device (torch::TensorOptions'
// two fields gpuext has). gx::zeros({n}, x.options()) makes one like x;
// x.options().dtype(gx::kInt64) the same on x's device in int64.
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}  // NOLINT: gx::empty({n}, gx::kFloat64)
  TensorOptions(Device device) : device_(device) {}   // NOLINT
  TensorOptions(DeviceType device) : device_(detail::device_of(device)) {}  // NOLINT: gx::empty({n}, gx::kCUDA)
  ScalarType dtype() const { return dtype_; }
  Device device() const { return device_; }
  TensorOptions dtype(ScalarType d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }

 private:
  ScalarType dtype_ = ScalarType::Float32;
  Device device_;
};

class Tensor {
 public:
  Tensor() = default;
  // Takes over an owned reference (as returned by gx_api.tensor_empty).
  explicit Tensor(gx_tensor* owned) : t_(owned) {}
  // A new reference to a tensor the caller does not own (an op argument).
  static Tensor borrow(gx_tensor* t) {
    if (t != nullptr) detail::api().tensor_retain(t);
    return Tensor(t);
  }
  Tensor(const Tensor& o) : t_(o.t_) {
    if (t_ != nullptr) detail::api().tensor_retain(t_);
  }
  Tensor(Tensor&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  Tensor& operator=(Tensor o) noexcept {
    std::swap(t_, o.t_);
    return *this;
  }
  ~Tensor() {
    if (t_ != nullptr) detail::api().tensor_release(t_);
  }

  bool defined() const { return t_ != nullptr; }
  int64_t dim() const { return detail::api().tensor_ndim(self()); }
  IntArrayRef sizes() const { return IntArrayRef(detail::api().tensor_sizes(self()), static_cast<size_t>(dim())); }
  IntArrayRef strides() const { return IntArrayRef(detail::api().tensor_strides(self()), static_cast<size_t>(dim())); }
  // Size of dimension d; negative d counts from the end.
  int64_t size(int64_t d) const {
    const int64_t n = dim();
    GX_CHECK(d >= -n && d < n, "size(", d, "): dimension out of range for a ", n, "-d tensor");
    return sizes()[static_cast<size_t>(d < 0 ? d + n : d)];
  }
  int64_t numel() const { return detail::api().tensor_numel(self()); }
  ScalarType dtype() const { return static_cast<ScalarType>(detail::api().tensor_dtype(self())); }
  ScalarType scalar_type() const { return dtype(); }
  Device device() const {
    const gx_device d = detail::api().tensor_device(self());
    return Device(static_cast<DeviceType>(d.type), d.index);
  }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_contiguous() const {
    int64_t expected = 1;
    const IntArrayRef s = sizes(), st = strides();
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == 0) return true;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] != 1 && st[i] != expected) return false;
      expected *= s[i];
    }
    return true;
  }

  void* data_ptr() const { return detail::api().tensor_data(self()); }
  // Typed pointer to element [0, ...]; checks that T matches the dtype.
  template <typename T>
  T* data_ptr() const {
    GX_CHECK(dtype() == dtype_of<T>::value, "data_ptr<", to_string(dtype_of<T>::value),
             ">() called on a tensor of dtype ", dtype());
    return static_cast<T*>(data_ptr());
  }

  // --- the methods below go through the core (gpuext/tensor_methods.h) ---------
  // Element offset of [0, ...] in the storage; views share the storage.
  int64_t storage_offset() const { return detail::api().tensor_storage_offset(self()); }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }

  // Views (no copy): the result shares this tensor's storage. Dimensions may
  // be negative (counted from the end); -1 in view/reshape/expand is inferred
  // (view, reshape) or kept (expand), as in torch.
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const;
  Tensor view(IntArrayRef sizes) const;           // refused when the strides do not allow it
  Tensor reshape(IntArrayRef sizes) const;        // a view when possible, else a contiguous copy
  Tensor flatten() const { return reshape({-1}); }
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;                               // 2-d transpose; 0-d and 1-d as they are
  Tensor permute(IntArrayRef dims) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  // Elements start, start + step, ... before end along dim (bounds clamped, negative ones from the end).
  Tensor slice(int64_t dim = 0, int64_t start = 0, int64_t end = INT64_MAX, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  TensorVector chunk(int64_t chunks, int64_t dim = 0) const;

  // Copies and conversions.
  Tensor clone() const;
  Tensor contiguous() const;                      // itself when contiguous
  Tensor to(ScalarType dtype) const;              // itself when of that dtype
  Tensor to(Device device) const;                 // itself when there
  Tensor to(DeviceType device) const { return to(detail::device_of(device)); }  // kCUDA: the current device
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }
  Tensor cpu() const { return to(Device(kCPU)); }
  // self <- src, src broadcast to self's sizes and converted to its dtype, any devices.
  const Tensor& copy_(const Tensor& src) const;
  const Tensor& fill_(double value) const;
  const Tensor& zero_() const;
  // The one element's value as T (an arithmetic type), converted as to() converts; waits for the device.
  template <typename T> T item() const;

  gx_tensor* get() const { return t_; }
  // The core's tensor, for the calls above: an undefined Tensor (default
  // constructed, or moved from) is the caller's mistake, never a crash.
  gx_tensor* self() const {
    GX_CHECK(t_ != nullptr, "a method was called on an undefined gx::Tensor (default-constructed or moved from)");
    return t_;
  }
  // Gives up ownership (for returning a new reference through the ABI).
  gx_tensor* release() {
    gx_tensor* t = t_;
    t_ = nullptr;
    return t;
  }

 private:
  gx_tensor* t_ = nullptr;
};

// A new contiguous tensor with uninitialized memory.
inline Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  gx_tensor* out = nullptr;
  detail::check_status(detail::api().tensor_empty(static_cast<int32_t>(sizes.size()), sizes.data(),
                                                  static_cast<gx_dtype>(dtype),
                                                  gx_device{device.type, device.index}, &out));
  return Tensor(out);
}
inline Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.dtype(), t.device()); }
// Sets every element of t to zero (on the current stream for CUDA tensors).
inline void zero_(const Tensor& t) { t.zero_(); }
inline Tensor zeros(IntArrayRef sizes, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  zero_(t);
  return t;
}
inline Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.dtype(), t.device()); }

// The same with options (torch's spelling: gx::zeros({n, m}, x.options())).
inline Tensor empty(IntArrayRef sizes, TensorOptions options = {}) {
  return empty(sizes, options.dtype(), options.device());
}
inline Tensor zeros(IntArrayRef sizes, TensorOptions options = {}) {
  return zeros(sizes, options.dtype(), options.device());
}
inline Tensor full(IntArrayRef sizes, double value, TensorOptions options = {}) {
  Tensor t = empty(sizes, options);
  t.fill_(value);
  return t;
}
inline Tensor ones(IntArrayRef sizes, TensorOptions options = {}) { return full(sizes, 1.0, options); }
inline Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.options()); }

// The calling thread's current device: the core's current CUDA device, or the
// CPU when there is no GPU (or the core was built without CUDA).
inline Device current_device() {
  const gx_device d = detail::api().current_device();
  return Device(static_cast<DeviceType>(d.type), d.index);
}

}  // namespace gx

#include "gpuext/tensor_methods.h"
