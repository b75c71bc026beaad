// GX_LIBRARY: registering ops from one schema string each.
//
//   GX_LIBRARY(myops, m) {
//     m.def("add(Tensor a, Tensor b, float alpha=1) -> Tensor", "Adds alpha * b to a.")
//      .impl(gx::kCUDA, add_cuda)
//      .impl(gx::kCPU, add_cpu);
//   }
//
// NOTE [ Boxing ]
// The core converts JS arguments by the schema into gx_value arrays and calls
// one boxed function per implementation. impl() builds that function from the
// C++ signature at compile time (Boxed<R, Args...>::call), and passes the
// signature spelled in schema types ("Tensor,Tensor,float->Tensor") so the core
// can refuse, at load time, an implementation that does not match its schema.
#pragma once
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpuext/tensor.h"

namespace gx {
namespace detail {

// --- arguments: schema spelling and conversion from gx_value -----------------
template <typename T, typename = void> struct Arg;

template <> struct Arg<Tensor> {
  static std::string spelling() { return "Tensor"; }
  static Tensor get(const gx_value& v) { return Tensor::borrow(v.v.tensor); }
};
template <> struct Arg<std::optional<Tensor>> {
  static std::string spelling() { return "Tensor?"; }
  static std::optional<Tensor> get(const gx_value& v) {
    if (v.kind == GX_VALUE_NONE) return std::nullopt;
    return Tensor::borrow(v.v.tensor);
  }
};
template <> struct Arg<std::vector<Tensor>> {
  static std::string spelling() { return "Tensor[]"; }
  static std::vector<Tensor> get(const gx_value& v) {
    std::vector<Tensor> out;
    out.reserve(v.v.tensors.len);
    for (size_t i = 0; i < v.v.tensors.len; ++i) out.push_back(Tensor::borrow(v.v.tensors.data[i]));
    return out;
  }
};
template <typename T>
struct Arg<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static std::string spelling() { return "int"; }
  static T get(const gx_value& v) {
    GX_CHECK(v.v.i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                 v.v.i <= static_cast<int64_t>(std::numeric_limits<T>::max()),
             "integer argument ", v.v.i, " does not fit the implementation's parameter type");
    return static_cast<T>(v.v.i);
  }
};
template <typename T> struct Arg<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static std::string spelling() { return "float"; }
  static T get(const gx_value& v) { return static_cast<T>(v.v.f); }
};
template <> struct Arg<bool> {
  static std::string spelling() { return "bool"; }
  static bool get(const gx_value& v) { return v.v.b != 0; }
};
template <> struct Arg<std::string> {
  static std::string spelling() { return "str"; }
  static std::string get(const gx_value& v) { return std::string(v.v.str.data, v.v.str.len); }
};
template <> struct Arg<std::string_view> {
  static std::string spelling() { return "str"; }
  static std::string_view get(const gx_value& v) { return std::string_view(v.v.str.data, v.v.str.len); }
};
template <> struct Arg<std::vector<int64_t>> {
  static std::string spelling() { return "int[]"; }
  static std::vector<int64_t> get(const gx_value& v) {
    return std::vector<int64_t>(v.v.ints.data, v.v.ints.data + v.v.ints.len);
  }
};
template <> struct Arg<IntArrayRef> {
  static std::string spelling() { return "int[]"; }
  static IntArrayRef get(const gx_value& v) { return IntArrayRef(v.v.ints.data, v.v.ints.len); }
};
template <> struct Arg<ScalarType> {
  static std::string spelling() { return "ScalarType"; }
  static ScalarType get(const gx_value& v) { return static_cast<ScalarType>(v.v.dtype); }
};
// Optional scalars: "int?", "float?", ...; None arrives as GX_VALUE_NONE.
template <typename T> struct Arg<std::optional<T>, std::enable_if_t<!std::is_same_v<T, Tensor>>> {
  static std::string spelling() { return Arg<T>::spelling() + "?"; }
  static std::optional<T> get(const gx_value& v) {
    if (v.kind == GX_VALUE_NONE) return std::nullopt;
    return Arg<T>::get(v);
  }
};

// --- returns: schema spelling and conversion to gx_value ---------------------
// Strings and tensor lists returned to the core must outlive the boxed call
// until the core has copied them; the core does so before the thread's next call.
inline std::string& returned_string() { thread_local std::string s; return s; }

template <typename T, typename = void> struct Ret;
template <> struct Ret<Tensor> {
  static std::string spelling() { return "Tensor"; }
  static void set(Tensor&& t, gx_value* out) {
    GX_CHECK(t.defined(), "returned an undefined Tensor");
    out->kind = GX_VALUE_TENSOR;
    out->v.tensor = t.release();
  }
};
template <> struct Ret<std::optional<Tensor>> {
  static std::string spelling() { return "Tensor?"; }
  static void set(std::optional<Tensor>&& t, gx_value* out) {
    if (!t || !t->defined()) { out->kind = GX_VALUE_NONE; return; }
    Ret<Tensor>::set(std::move(*t), out);
  }
};
template <> struct Ret<std::vector<Tensor>> {
  static std::string spelling() { return "Tensor[]"; }
  static void set(std::vector<Tensor>&& ts, gx_value* out) {
    thread_local std::vector<gx_tensor*> owned;
    owned.clear();
    for (Tensor& t : ts) owned.push_back(t.release());
    out->kind = GX_VALUE_TENSOR_LIST;
    out->v.tensors.data = owned.data();
    out->v.tensors.len = owned.size();
  }
};
template <typename T>
struct Ret<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static std::string spelling() { return "int"; }
  static void set(T v, gx_value* out) { out->kind = GX_VALUE_INT; out->v.i = static_cast<int64_t>(v); }
};
template <typename T> struct Ret<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static std::string spelling() { return "float"; }
  static void set(T v, gx_value* out) { out->kind = GX_VALUE_FLOAT; out->v.f = static_cast<double>(v); }
};
template <> struct Ret<bool> {
  static std::string spelling() { return "bool"; }
  static void set(bool v, gx_value* out) { out->kind = GX_VALUE_BOOL; out->v.b = v ? 1 : 0; }
};
template <> struct Ret<std::string> {
  static std::string spelling() { return "str"; }
  static void set(std::string&& v, gx_value* out) {
    returned_string() = std::move(v);
    out->kind = GX_VALUE_STR;
    out->v.str.data = returned_string().data();
    out->v.str.len = returned_string().size();
  }
};

template <typename R> struct Returns {  // a single value
  static constexpr int count = 1;
  static std::string spelling() { return Ret<R>::spelling(); }
  static void set(R&& r, gx_value* rets) { Ret<R>::set(std::move(r), rets); }
};
template <typename... Ts> struct Returns<std::tuple<Ts...>> {
  static constexpr int count = sizeof...(Ts);
  static std::string spelling() {
    std::string s = "(";
    ((s += Ret<Ts>::spelling() + ","), ...);
    if (s.size() > 1) s.pop_back();
    return s + ")";
  }
  static void set(std::tuple<Ts...>&& r, gx_value* rets) {
    set_each(std::move(r), rets, std::index_sequence_for<Ts...>{});
  }
  template <size_t... I>
  static void set_each(std::tuple<Ts...>&& r, gx_value* rets, std::index_sequence<I...>) {
    (Ret<Ts>::set(std::move(std::get<I>(r)), rets + I), ...);
  }
};

template <typename T> using Bare = std::remove_cv_t<std::remove_reference_t<T>>;

inline gx_status report(gx_status s, const char* msg) {
  api().set_error(s, msg);
  return s;
}

template <typename R, typename... Args>
struct Boxed {
  using Fn = R (*)(Args...);

  static std::string signature() {
    std::string s;
    ((s += Arg<Bare<Args>>::spelling() + ","), ...);
    if (!s.empty()) s.pop_back();
    if constexpr (std::is_void_v<R>) return s + "->()";
    else return s + "->" + Returns<R>::spelling();
  }

  static gx_status call(void* ctx, const gx_value* args, int32_t nargs, gx_value* rets,
                        int32_t nrets) noexcept {
    try {
      GX_INTERNAL_ASSERT(nargs == static_cast<int32_t>(sizeof...(Args)), "argument count");
      Fn fn = *static_cast<Fn*>(ctx);
      invoke(fn, args, rets, nrets, std::index_sequence_for<Args...>{});
      return GX_OK;
    } catch (const OpError& e) {
      return report(e.status(), e.what());
    } catch (const std::exception& e) {
      return report(GX_ERR_INTERNAL, e.what());
    } catch (...) {
      return report(GX_ERR_INTERNAL, "unknown C++ exception");
    }
  }

  template <size_t... I>
  static void invoke(Fn fn, const gx_value* args, gx_value* rets, int32_t nrets,
                     std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      fn(Arg<Bare<Args>>::get(args[I])...);
    } else {
      GX_INTERNAL_ASSERT(nrets == Returns<R>::count, "return count");
      Returns<R>::set(fn(Arg<Bare<Args>>::get(args[I])...), rets);
    }
  }
};

// Implementation function pointers live here for the library's lifetime; a
// deque keeps their addresses stable as more are added.
inline std::deque<void (*)()>& fn_slots() {
  static std::deque<void (*)()> slots;
  return slots;
}

}  // namespace detail

class Library;

class OpBuilder {
 public:
  OpBuilder(gx_registrar* reg, int32_t op) : reg_(reg), op_(op) {}

  // Registers `fn` as the implementation for `device` (kCPU or kCUDA).
  template <typename R, typename... Args>
  OpBuilder& impl(DeviceType device, R (*fn)(Args...)) {
    using B = detail::Boxed<R, Args...>;
    detail::fn_slots().push_back(reinterpret_cast<void (*)()>(fn));
    void* ctx = &detail::fn_slots().back();
    const std::string sig = B::signature();
    detail::check_status(detail::api().impl_op(reg_, op_, static_cast<gx_device_type>(device),
                                               &B::call, ctx, sig.c_str()));
    return *this;
  }
  // Captureless lambdas: .impl(gx::kCPU, [](const gx::Tensor& a) { ... })
  template <typename F, typename = std::enable_if_t<std::is_class_v<F>>>
  OpBuilder& impl(DeviceType device, F f) {
    return impl(device, +f);
  }

 private:
  gx_registrar* reg_;
  int32_t op_;
};

class Library {
 public:
  Library(const char* ns, gx_registrar* reg) : ns_(ns), reg_(reg) {}
  // Defines an op from its schema; doc becomes the generated function's JSDoc.
  OpBuilder def(const char* schema, const char* doc = "") {
    int32_t op = -1;
    detail::check_status(detail::api().def_op(reg_, ns_, schema, doc, &op));
    return OpBuilder(reg_, op);
  }

 private:
  const char* ns_;
  gx_registrar* reg_;
};

namespace detail {
struct LibraryRegistration {
  const char* ns;
  void (*body)(Library&);
};
inline std::vector<LibraryRegistration>& registrations() {
  static std::vector<LibraryRegistration> r;
  return r;
}
struct RegisterLibrary {
  RegisterLibrary(const char* ns, void (*body)(Library&)) { registrations().push_back({ns, body}); }
};
}  // namespace detail
}  // namespace gx

#define GX_CONCAT_INNER(a, b) a##b
#define GX_CONCAT(a, b) GX_CONCAT_INNER(a, b)

// Defines the ops of namespace `ns` (an identifier); `m` is the gx::Library.
#define GX_LIBRARY(ns, m)                                                            \
  static void GX_CONCAT(gx_library_body_, ns)(::gx::Library & m);                   \
  static const ::gx::detail::RegisterLibrary GX_CONCAT(gx_library_registration_, ns)( \
      #ns, &GX_CONCAT(gx_library_body_, ns));                                        \
  static void GX_CONCAT(gx_library_body_, ns)(::gx::Library & m)
