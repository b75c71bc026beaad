// gx::Tensor's views, copies and conversions (declared in gpuext/tensor.h,
// which includes this at its end), and the machinery that calls registered
// ops from C++ (gx::ops in gpuext/ops.h is built on it).
//
// NOTE [ Ops from C++ ]
// An extension never links the built-in ops library (docs/DESIGN.md decision 2: the C++ API
// grows through the ABI table). It finds an op once by its qualified name
// (gx_api.find_op("gx_ops::add"), kept in a function-local static: a cached
// handle) and calls it through gx_api.call_op with boxed gx_values; the core
// checks them against the schema, dispatches on the tensors' device and calls
// the implementation exactly as a call from JS (core/op_call.h). A failure
// comes back as a gx::OpError naming the op as C++ spells it (gx::ops::add).
// Views are the other half: a view is sizes + strides + a storage offset over
// the same storage (gx_api.tensor_view, which refuses one that reaches beyond
// it), computed here as torch computes them.
#pragma once
#include "gpuext/limits.h"
#include "gpuext/tensor.h"

namespace gx {
namespace detail {
// A container of Elem with push_back (std::vector<Elem>), recognized by its
// members (NOTE [ Light headers ]).
template <typename T, typename Elem, typename = void> struct is_list_of : std::false_type {};
template <typename T, typename Elem>
struct is_list_of<T, Elem, std::void_t<decltype(std::declval<T&>().push_back(std::declval<Elem>()))>>
    : std::is_same<typename T::value_type, Elem> {};
}  // namespace detail

// A list of tensors an op takes (torch's TensorList): a braced list
// ({a, b}: valid for the call, as IntArrayRef) or any contiguous container of
// gx::Tensor (std::vector<gx::Tensor>, gx::TensorVector). Not owning.
class TensorList {
 public:
  TensorList(const Tensor* data, size_t size) : data_(data), size_(size) {}
  template <typename V, typename = std::enable_if_t<std::is_same_v<
                            decltype(static_cast<const V*>(nullptr)->data()), const Tensor*>>>
  TensorList(const V& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  TensorList(std::initializer_list<Tensor> l) : data_(l.begin()), size_(l.size()) {}  // NOLINT
#pragma GCC diagnostic pop
  const Tensor* begin() const { return data_; }
  const Tensor* end() const { return data_ + size_; }
  const Tensor* data() const { return data_; }
  size_t size() const { return size_; }
  const Tensor& operator[](size_t i) const { return data_[i]; }

 private:
  const Tensor* data_;
  size_t size_;
};

// An owned list of tensors, as chunk() returns (torch returns a
// std::vector<Tensor>; NOTE [ Light headers ] keeps <vector> out of here).
// Converts to any container of gx::Tensor with push_back (std::vector).
class TensorVector {
 public:
  TensorVector() = default;
  explicit TensorVector(size_t n) : data_(n ? new Tensor[n] : nullptr), size_(n) {}
  TensorVector(const TensorVector& o) : TensorVector(o.size_) {
    for (size_t i = 0; i < size_; ++i) data_[i] = o.data_[i];
  }
  TensorVector(TensorVector&& o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  TensorVector& operator=(TensorVector o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~TensorVector() { delete[] data_; }
  Tensor* begin() const { return data_; }
  Tensor* end() const { return data_ + size_; }
  const Tensor* data() const { return data_; }
  size_t size() const { return size_; }
  Tensor& operator[](size_t i) const { return data_[i]; }
  template <typename V, typename = std::enable_if_t<detail::is_list_of<V, Tensor>::value>>
  operator V() const {  // NOLINT: std::vector<gx::Tensor> parts = x.chunk(3, 1);
    V v;
    for (size_t i = 0; i < size_; ++i) v.push_back(data_[i]);
    return v;
  }

 private:
  Tensor* data_ = nullptr;
  size_t size_ = 0;
};

namespace detail {

// --- calling ops (NOTE [ Ops from C++ ]) -------------------------------------

// The core's message, with the registry's name of a built-in op ("gx_ops::add")
// spelled as C++ calls it ("gx::ops::add").
[[noreturn]] inline void throw_op_error(gx_status s) {
  const char* msg = api().last_error();
  Message m;
  if (std::strncmp(msg, "gx_ops::", 8) == 0) {
    m.append("gx::ops::");
    msg += 8;
  }
  m.append(msg);
  throw OpError(s, m);
}

inline const gx_op* find_op(const char* qualified_name) {
  const gx_op* op = nullptr;
  const gx_status s = api().find_op(qualified_name, &op);
  if (s != GX_OK) throw_op_error(s);
  return op;
}

inline void call_op(const gx_op* op, const gx_value* args, int32_t nargs, gx_value* rets, int32_t nrets) {
  const gx_status s = api().call_op(op, args, nargs, rets, nrets);
  if (s != GX_OK) throw_op_error(s);
}

// Boxing for call_op: one gx_value per schema argument.
inline gx_value box(const Tensor& t) {
  gx_value v{};
  v.kind = GX_VALUE_TENSOR;
  v.v.tensor = t.get();
  return v;
}
// Tensor?: nullptr (or an undefined Tensor) is None.
inline gx_value box(const Tensor* t) {
  if (t == nullptr || !t->defined()) return gx_value{};
  return box(*t);
}
inline gx_value box(double f) {
  gx_value v{};
  v.kind = GX_VALUE_FLOAT;
  v.v.f = f;
  return v;
}
inline gx_value box(int64_t i) {
  gx_value v{};
  v.kind = GX_VALUE_INT;
  v.v.i = i;
  return v;
}
inline gx_value box(bool b) {
  gx_value v{};
  v.kind = GX_VALUE_BOOL;
  v.v.b = b ? 1 : 0;
  return v;
}
inline gx_value box(ScalarType d) {
  gx_value v{};
  v.kind = GX_VALUE_DTYPE;
  v.v.dtype = static_cast<int32_t>(d);
  return v;
}
inline gx_value box(IntArrayRef ints) {
  gx_value v{};
  v.kind = GX_VALUE_INT_LIST;
  v.v.ints.data = ints.data();
  v.v.ints.len = ints.size();
  return v;
}
inline gx_value box(const char* s) {
  gx_value v{};
  v.kind = GX_VALUE_STR;
  v.v.str.data = s;
  v.v.str.len = std::strlen(s);
  return v;
}
// float? with no value.
inline gx_value box_none() { return gx_value{}; }

// A Tensor[] argument: the list's gx_tensor pointers, on the stack for a few.
class BoxedTensors {
 public:
  explicit BoxedTensors(TensorList l) : n_(l.size()) {
    if (n_ > kInline) data_ = new gx_tensor*[n_];
    for (size_t i = 0; i < n_; ++i) data_[i] = l[i].get();
  }
  ~BoxedTensors() {
    if (data_ != inline_) delete[] data_;
  }
  BoxedTensors(const BoxedTensors&) = delete;
  BoxedTensors& operator=(const BoxedTensors&) = delete;
  gx_value value() const {
    gx_value v{};
    v.kind = GX_VALUE_TENSOR_LIST;
    v.v.tensors.data = data_;
    v.v.tensors.len = n_;
    return v;
  }

 private:
  static constexpr size_t kInline = 16;
  gx_tensor* inline_[kInline];
  gx_tensor** data_ = inline_;
  size_t n_;
};

// --- dimension helpers ------------------------------------------------------

// d counted from the end when negative, checked against [0, ndim) (or [0,
// ndim] for an inserted dimension); `what` names the method in the message.
inline int64_t wrap_dim(int64_t d, int64_t ndim, const char* what, bool inserting = false) {
  const int64_t n = inserting ? ndim + 1 : ndim;
  GX_CHECK(n > 0 ? (d >= -n && d < n) : (d == 0 || d == -1), what, ": dimension ", d,
           " is out of range for a ", ndim, "-d tensor");
  return d < 0 ? (n > 0 ? d + n : 0) : d;
}

struct Dims {
  int64_t v[kMaxDims];
  size_t n = 0;
  IntArrayRef ref() const { return IntArrayRef(v, n); }
};

inline Dims dims_of(IntArrayRef a) {
  Dims d;
  GX_CHECK(a.size() <= static_cast<size_t>(kMaxDims), "a tensor has at most ", kMaxDims, " dimensions, got ", a.size());
  for (size_t i = 0; i < a.size(); ++i) d.v[i] = a[i];
  d.n = a.size();
  return d;
}

// sizes with one -1 inferred from numel (view, reshape).
Dims infer_sizes(IntArrayRef sizes, int64_t numel, const char* what);
// The strides a view of (sizes, strides) as new_sizes needs, as torch's
// computeStride; false when no view can do it (the data would have to move).
bool view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes, Dims& out);

inline Dims infer_sizes(IntArrayRef sizes, int64_t numel, const char* what) {
  Dims d = dims_of(sizes);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < d.n; ++i) {
    if (d.v[i] == -1) {
      GX_CHECK(infer < 0, what, "(", sizes, "): only one dimension can be -1");
      infer = static_cast<int64_t>(i);
    } else {
      GX_CHECK(d.v[i] >= 0, what, "(", sizes, "): invalid size ", d.v[i]);
      known *= d.v[i];
    }
  }
  if (infer >= 0) {
    GX_CHECK(known != 0 && numel % known == 0, what, "(", sizes, "): shape is invalid for ", numel, " elements");
    d.v[infer] = numel / known;
  } else {
    GX_CHECK(known == numel, what, "(", sizes, "): shape is invalid for ", numel, " elements");
  }
  return d;
}

inline bool view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes, Dims& out) {
  out.n = new_sizes.size();
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (sizes.size() == 0 || numel == 0) {  // any strides do: contiguous ones
    int64_t st = 1;
    for (size_t i = out.n; i-- > 0;) {
      out.v[i] = st;
      st *= new_sizes[i] > 0 ? new_sizes[i] : 1;
    }
    return true;
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides[sizes.size() - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    // A chunk of dimensions that are contiguous with each other ends here.
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out.v[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

inline const gx_op* astype_op() {
  static const gx_op* const op = find_op("gx_ops::astype");
  return op;
}

}  // namespace detail

// --- views ------------------------------------------------------------------

inline Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const {
  GX_CHECK(sizes.size() == strides.size(), "as_strided: ", sizes.size(), " sizes but ", strides.size(), " strides");
  gx_tensor* out = nullptr;
  detail::check_status(detail::api().tensor_view(self(), static_cast<int32_t>(sizes.size()), sizes.data(),
                                                 strides.data(), offset, &out));
  return Tensor(out);
}

inline Tensor Tensor::view(IntArrayRef sizes) const {
  const detail::Dims want = detail::infer_sizes(sizes, numel(), "view");
  detail::Dims st;
  GX_CHECK(detail::view_strides(this->sizes(), strides(), want.ref(), st), "view(", sizes,
           "): the tensor's strides ", strides(), " do not allow this view of sizes ", this->sizes(),
           "; use .reshape(...) (which copies) instead");
  return as_strided(want.ref(), st.ref(), storage_offset());
}

inline Tensor Tensor::reshape(IntArrayRef sizes) const {
  const detail::Dims want = detail::infer_sizes(sizes, numel(), "reshape");
  detail::Dims st;
  if (detail::view_strides(this->sizes(), strides(), want.ref(), st)) {
    return as_strided(want.ref(), st.ref(), storage_offset());
  }
  return contiguous().view(want.ref());
}

inline Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  const int64_t n = dim();
  const int64_t a = detail::wrap_dim(dim0, n, "transpose"), b = detail::wrap_dim(dim1, n, "transpose");
  if (n == 0) return as_strided(sizes(), strides(), storage_offset());
  detail::Dims sz = detail::dims_of(sizes()), st = detail::dims_of(strides());
  std::swap(sz.v[a], sz.v[b]);
  std::swap(st.v[a], st.v[b]);
  return as_strided(sz.ref(), st.ref(), storage_offset());
}

inline Tensor Tensor::t() const {
  GX_CHECK(dim() <= 2, "t(): expects a tensor with at most 2 dimensions, got ", dim(), " (use transpose)");
  return dim() < 2 ? transpose(0, 0) : transpose(0, 1);
}

inline Tensor Tensor::permute(IntArrayRef dims) const {
  const int64_t n = dim();
  GX_CHECK(static_cast<int64_t>(dims.size()) == n, "permute(", dims, "): needs ", n, " dimensions for a tensor of sizes ",
           sizes());
  detail::Dims sz, st;
  sz.n = st.n = dims.size();
  bool seen[kMaxDims] = {};
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = detail::wrap_dim(dims[i], n, "permute");
    GX_CHECK(!seen[d], "permute(", dims, "): dimension ", d, " appears twice");
    seen[d] = true;
    sz.v[i] = sizes()[d];
    st.v[i] = strides()[d];
  }
  return as_strided(sz.ref(), st.ref(), storage_offset());
}

inline Tensor Tensor::narrow(int64_t dim_, int64_t start, int64_t length) const {
  GX_CHECK(dim() > 0, "narrow(): cannot narrow a 0-d tensor");
  const int64_t d = detail::wrap_dim(dim_, dim(), "narrow");
  const int64_t size = sizes()[d];
  if (start < 0 && start >= -size) start += size;
  GX_CHECK(start >= 0 && length >= 0 && start <= size - length, "narrow(dim=", dim_, ", start=", start, ", length=",
           length, "): beyond size ", size, " of dimension ", d);
  detail::Dims sz = detail::dims_of(sizes());
  sz.v[d] = length;
  return as_strided(sz.ref(), strides(), storage_offset() + start * strides()[d]);
}

inline Tensor Tensor::slice(int64_t dim_, int64_t start, int64_t end, int64_t step) const {
  GX_CHECK(dim() > 0, "slice(): cannot slice a 0-d tensor");
  GX_CHECK(step > 0, "slice(): step must be positive, got ", step);
  const int64_t d = detail::wrap_dim(dim_, dim(), "slice");
  const int64_t size = sizes()[d];
  auto clamp = [size](int64_t i) {
    if (i < 0) i += size;
    return i < 0 ? 0 : (i > size ? size : i);
  };
  start = clamp(start);
  end = clamp(end);
  const int64_t n = end > start ? (end - start + step - 1) / step : 0;
  detail::Dims sz = detail::dims_of(sizes()), st = detail::dims_of(strides());
  sz.v[d] = n;
  st.v[d] *= step;
  return as_strided(sz.ref(), st.ref(), storage_offset() + (n > 0 ? start * strides()[d] : 0));
}

inline Tensor Tensor::select(int64_t dim_, int64_t index) const {
  GX_CHECK(dim() > 0, "select(): cannot select from a 0-d tensor");
  const int64_t d = detail::wrap_dim(dim_, dim(), "select");
  const int64_t size = sizes()[d];
  GX_CHECK(index >= -size && index < size, "select(dim=", dim_, ", index=", index, "): out of range for size ", size);
  if (index < 0) index += size;
  detail::Dims sz, st;
  for (int64_t i = 0; i < dim(); ++i) {
    if (i == d) continue;
    sz.v[sz.n++] = sizes()[i];
    st.v[st.n++] = strides()[i];
  }
  return as_strided(sz.ref(), st.ref(), storage_offset() + index * strides()[d]);
}

inline Tensor Tensor::expand(IntArrayRef want) const {
  const int64_t n = static_cast<int64_t>(want.size()), have = dim();
  GX_CHECK(n >= have, "expand(", want, "): fewer dimensions than the tensor's sizes ", sizes());
  detail::Dims sz = detail::dims_of(want), st;
  st.n = sz.n;
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t j = i - (n - have);  // the tensor's dimension aligned with i, from the right
    const int64_t cur = j >= 0 ? sizes()[j] : 1;
    if (sz.v[i] == -1) {
      GX_CHECK(j >= 0, "expand(", want, "): -1 is not allowed for a new leading dimension");
      sz.v[i] = cur;
    }
    GX_CHECK(sz.v[i] >= 0, "expand(", want, "): invalid size ", sz.v[i]);
    if (j >= 0 && cur == sz.v[i]) {
      st.v[i] = strides()[j];
    } else {
      GX_CHECK(cur == 1, "expand(", want, "): the size ", cur, " of dimension ", j, " (sizes ", sizes(),
               ") must match ", sz.v[i], " or be 1");
      st.v[i] = 0;
    }
  }
  return as_strided(sz.ref(), st.ref(), storage_offset());
}

inline Tensor Tensor::unsqueeze(int64_t dim_) const {
  const int64_t d = detail::wrap_dim(dim_, dim(), "unsqueeze", true);
  detail::Dims sz, st;
  for (int64_t i = 0; i <= dim(); ++i) {
    if (i == d) {
      sz.v[sz.n++] = 1;
      st.v[st.n++] = i < dim() ? sizes()[i] * strides()[i] : 1;
    }
    if (i < dim()) {
      sz.v[sz.n++] = sizes()[i];
      st.v[st.n++] = strides()[i];
    }
  }
  return as_strided(sz.ref(), st.ref(), storage_offset());
}

inline Tensor Tensor::squeeze(int64_t dim_) const {
  if (dim() == 0) return as_strided(sizes(), strides(), storage_offset());
  const int64_t d = detail::wrap_dim(dim_, dim(), "squeeze");
  if (sizes()[d] != 1) return as_strided(sizes(), strides(), storage_offset());  // torch leaves it
  return select(d, 0);
}

inline TensorVector Tensor::chunk(int64_t chunks, int64_t dim_) const {
  GX_CHECK(chunks > 0, "chunk(", chunks, "): the number of chunks must be positive");
  GX_CHECK(dim() > 0, "chunk(): cannot chunk a 0-d tensor");
  const int64_t d = detail::wrap_dim(dim_, dim(), "chunk");
  const int64_t size = sizes()[d];
  const int64_t step = (size + chunks - 1) / chunks;  // torch: ceil(size / chunks) each, the last smaller
  const int64_t n = step == 0 ? 1 : (size + step - 1) / step;
  TensorVector out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = i * step;
    out[static_cast<size_t>(i)] = narrow(d, start, step == 0 ? 0 : (size - start < step ? size - start : step));
  }
  return out;
}

// --- copies and conversions --------------------------------------------------

inline Tensor Tensor::contiguous() const {
  gx_tensor* out = nullptr;
  detail::check_status(detail::api().tensor_contiguous(self(), &out));
  return Tensor(out);
}

inline Tensor Tensor::clone() const {
  Tensor out = empty(sizes(), options());
  out.copy_(*this);
  return out;
}

inline Tensor Tensor::to(ScalarType d) const {
  if (d == dtype()) return *this;
  Tensor out = empty(sizes(), options().dtype(d));
  const gx_value args[2] = {detail::box(*this), detail::box(out)};
  detail::call_op(detail::astype_op(), args, 2, nullptr, 0);
  return out;
}

inline Tensor Tensor::to(Device d) const {
  if (d == device()) return *this;
  gx_tensor* out = nullptr;
  detail::check_status(detail::api().tensor_to_device(self(), gx_device{d.type, d.index}, &out));
  return Tensor(out);
}

inline const Tensor& Tensor::copy_(const Tensor& src) const {
  GX_CHECK(src.defined(), "copy_(): src is an undefined Tensor");
  const Tensor from = src.sizes() == sizes() ? src : src.expand(sizes());
  if (from.dtype() == dtype()) {
    detail::check_status(detail::api().tensor_copy_(self(), from.get()));
  } else if (from.device() == device()) {
    const gx_value args[2] = {detail::box(from), detail::box(*this)};
    detail::call_op(detail::astype_op(), args, 2, nullptr, 0);
  } else {  // convert where src is, then move
    const Tensor converted = from.to(dtype());
    detail::check_status(detail::api().tensor_copy_(self(), converted.get()));
  }
  return *this;
}

inline const Tensor& Tensor::fill_(double value) const {
  detail::check_status(detail::api().tensor_fill_(self(), value));
  return *this;
}

inline const Tensor& Tensor::zero_() const {
  detail::check_status(detail::api().tensor_zero_(self()));
  return *this;
}

template <typename T>
T Tensor::item() const {
  static_assert(std::is_arithmetic_v<T>, "item<T>(): T must be an arithmetic type (float, double, int64_t, bool, ...)");
  GX_CHECK(numel() == 1, "item(): the tensor has ", numel(), " elements (sizes ", sizes(), "), not one");
  using Read = std::conditional_t<std::is_same_v<T, bool>, bool,
                                  std::conditional_t<std::is_floating_point_v<T>, double, int64_t>>;
  const Tensor host = to(dtype_of<Read>::value).cpu();
  return static_cast<T>(*static_cast<const Read*>(host.data_ptr()));
}

}  // namespace gx
