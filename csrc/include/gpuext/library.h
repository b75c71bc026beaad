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
#include <type_traits>
#include <utility>

#include "gpuext/tensor.h"

namespace gx {

// The C++ side of a schema's `Handle` (NOTE [ Handles and devices in schemas ]
// in the core's schema.h): 64 bits an op returns for a later call of its
// library to take back, e.g. an index into a table the library keeps. JS
// holds it as an object it cannot read or make, so nothing else stands in for
// it. (A schema's `Device` is gx::Device.)
struct Handle {
  uint64_t value = 0;
};

namespace detail {

// --- recognizing the standard containers an op signature may use ------------
// (NOTE [ Light headers ]: matched by their members, so this header needs
// none of <vector>, <string>, <optional>, <tuple>).
template <typename T, typename = void> struct is_optional : std::false_type {};
template <typename T>
struct is_optional<T, std::void_t<typename T::value_type, decltype(std::declval<const T&>().has_value())>>
    : std::true_type {};

// is_list_of<T, Elem>: gpuext/tensor_methods.h.

template <typename T, typename = void> struct is_string : std::false_type {};
template <typename T>
struct is_string<T, std::enable_if_t<std::is_same_v<typename T::value_type, char> &&
                                     std::is_constructible_v<T, const char*, size_t> &&
                                     !is_list_of<T, int64_t>::value>>
    : std::true_type {};

template <typename T, typename = void> struct is_tuple : std::false_type {};
template <typename T>
struct is_tuple<T, std::void_t<decltype(std::tuple_size<T>::value)>> : std::true_type {};

// Lets `get<I>(t)` parse as a template call in C++17; argument-dependent
// lookup then finds std::get for the user's std::tuple.
struct no_get {};
template <size_t I> void get(no_get);

template <typename T> constexpr bool always_false = false;

// --- arguments: schema spelling and conversion from gx_value -----------------
template <typename T> struct Arg {
  static const char* spelling() {
    if constexpr (std::is_same_v<T, Tensor>) return "Tensor";
    else if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_integral_v<T>) return "int";
    else if constexpr (std::is_floating_point_v<T>) return "float";
    else if constexpr (std::is_same_v<T, ScalarType>) return "ScalarType";
    else if constexpr (std::is_same_v<T, Handle>) return "Handle";
    else if constexpr (std::is_same_v<T, Device>) return "Device";
    else if constexpr (std::is_same_v<T, IntArrayRef> || is_list_of<T, int64_t>::value) return "int[]";
    else if constexpr (is_list_of<T, Tensor>::value) return "Tensor[]";
    else if constexpr (is_string<T>::value) return "str";
    else if constexpr (is_optional<T>::value) {
      using V = typename T::value_type;
      if constexpr (std::is_same_v<V, Tensor>) return "Tensor?";
      else if constexpr (std::is_same_v<V, bool>) return "bool?";
      else if constexpr (std::is_integral_v<V>) return "int?";
      else if constexpr (std::is_floating_point_v<V>) return "float?";
      else if constexpr (std::is_same_v<V, ScalarType>) return "ScalarType?";
      else if constexpr (std::is_same_v<V, Handle>) return "Handle?";
      else if constexpr (std::is_same_v<V, Device>) return "Device?";
      else if constexpr (is_list_of<V, int64_t>::value) return "int[]?";
      else if constexpr (is_string<V>::value) return "str?";
      else static_assert(always_false<T>, "unsupported optional parameter type in an op implementation");
    } else {
      static_assert(always_false<T>, "unsupported parameter type in an op implementation");
    }
    return "";
  }

  static T get(const gx_value& v) {
    if constexpr (std::is_same_v<T, Tensor>) {
      return Tensor::borrow(v.v.tensor);
    } else if constexpr (std::is_same_v<T, bool>) {
      return v.v.b != 0;
    } else if constexpr (std::is_integral_v<T>) {
      GX_CHECK(static_cast<int64_t>(static_cast<T>(v.v.i)) == v.v.i && (v.v.i < 0) == (static_cast<T>(v.v.i) < 0),
               "integer argument ", v.v.i, " does not fit the implementation's parameter type");
      return static_cast<T>(v.v.i);
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(v.v.f);
    } else if constexpr (std::is_same_v<T, ScalarType>) {
      return static_cast<ScalarType>(v.v.dtype);
    } else if constexpr (std::is_same_v<T, Handle>) {
      return Handle{v.v.handle};
    } else if constexpr (std::is_same_v<T, Device>) {
      return Device(static_cast<DeviceType>(v.v.device.type), v.v.device.index);
    } else if constexpr (std::is_same_v<T, IntArrayRef>) {
      return IntArrayRef(v.v.ints.data, v.v.ints.len);
    } else if constexpr (is_list_of<T, int64_t>::value) {
      return T(v.v.ints.data, v.v.ints.data + v.v.ints.len);
    } else if constexpr (is_list_of<T, Tensor>::value) {
      T out;
      for (size_t i = 0; i < v.v.tensors.len; ++i) out.push_back(Tensor::borrow(v.v.tensors.data[i]));
      return out;
    } else if constexpr (is_string<T>::value) {
      return T(v.v.str.data, v.v.str.len);
    } else {
      static_assert(is_optional<T>::value, "unsupported parameter type");
      if (v.kind == GX_VALUE_NONE) return T();
      return T(Arg<typename T::value_type>::get(v));
    }
  }
};

// --- returns: schema spelling and conversion to gx_value ---------------------
// Strings and tensor lists returned to the core are kept in thread-local
// storage until the core copies them, before the thread's next call.
struct ReturnScratch {
  Message text;
  gx_tensor* tensors[256];
};
inline ReturnScratch& return_scratch() {
  thread_local ReturnScratch s;
  return s;
}

template <typename T> struct Ret {
  static const char* spelling() {
    if constexpr (std::is_same_v<T, Tensor>) return "Tensor";
    else if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_integral_v<T>) return "int";
    else if constexpr (std::is_floating_point_v<T>) return "float";
    else if constexpr (std::is_same_v<T, Handle>) return "Handle";
    else if constexpr (std::is_same_v<T, Device>) return "Device";
    else if constexpr (is_list_of<T, Tensor>::value) return "Tensor[]";
    else if constexpr (is_string<T>::value) return "str";
    else if constexpr (is_optional<T>::value && std::is_same_v<typename T::value_type, Tensor>) return "Tensor?";
    else static_assert(always_false<T>, "unsupported return type in an op implementation");
    return "";
  }

  static void set(T&& r, gx_value* out) {
    if constexpr (std::is_same_v<T, Tensor>) {
      GX_CHECK(r.defined(), "returned an undefined Tensor");
      out->kind = GX_VALUE_TENSOR;
      out->v.tensor = r.release();
    } else if constexpr (std::is_same_v<T, bool>) {
      out->kind = GX_VALUE_BOOL;
      out->v.b = r ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      out->kind = GX_VALUE_INT;
      out->v.i = static_cast<int64_t>(r);
    } else if constexpr (std::is_floating_point_v<T>) {
      out->kind = GX_VALUE_FLOAT;
      out->v.f = static_cast<double>(r);
    } else if constexpr (std::is_same_v<T, Handle>) {
      out->kind = GX_VALUE_HANDLE;
      out->v.handle = r.value;
    } else if constexpr (std::is_same_v<T, Device>) {
      out->kind = GX_VALUE_DEVICE;
      out->v.device = gx_device{static_cast<int32_t>(r.type), r.index};
    } else if constexpr (is_list_of<T, Tensor>::value) {
      ReturnScratch& s = return_scratch();
      GX_CHECK(r.size() <= sizeof(s.tensors) / sizeof(s.tensors[0]), "returned more than 256 tensors");
      size_t n = 0;
      for (Tensor& t : r) s.tensors[n++] = t.release();
      out->kind = GX_VALUE_TENSOR_LIST;
      out->v.tensors.data = s.tensors;
      out->v.tensors.len = n;
    } else if constexpr (is_string<T>::value) {
      Message& m = return_scratch().text;
      m = Message();
      m.append(r.data(), r.size());
      out->kind = GX_VALUE_STR;
      out->v.str.data = m.text;
      out->v.str.len = m.len;
    } else {
      if (!r.has_value() || !r->defined()) {
        out->kind = GX_VALUE_NONE;
        return;
      }
      Ret<Tensor>::set(std::move(*r), out);
    }
  }
};

// A single value, or a std::tuple of them ("-> (Tensor, Tensor)").
template <typename R, bool = is_tuple<R>::value> struct Returns {
  static constexpr int count = 1;
  static void spell(Message& m) { m.append(Ret<R>::spelling()); }
  static void set(R&& r, gx_value* rets) { Ret<R>::set(std::move(r), rets); }
};
template <typename R> struct Returns<R, true> {
  static constexpr int count = static_cast<int>(std::tuple_size<R>::value);
  static void spell(Message& m) {
    m.append("(");
    spell_each(m, std::make_index_sequence<count>{});
    m.append(")");
  }
  template <size_t... I>
  static void spell_each(Message& m, std::index_sequence<I...>) {
    ((m.append(I ? "," : ""), m.append(Ret<std::tuple_element_t<I, R>>::spelling())), ...);
  }
  static void set(R&& r, gx_value* rets) { set_each(std::move(r), rets, std::make_index_sequence<count>{}); }
  template <size_t... I>
  static void set_each(R&& r, gx_value* rets, std::index_sequence<I...>) {
    (Ret<std::tuple_element_t<I, R>>::set(std::move(get<I>(r)), rets + I), ...);
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

  static Message signature() {
    Message m;
    size_t i = 0;
    ((m.append(i++ ? "," : ""), m.append(Arg<Bare<Args>>::spelling())), ...);
    m.append("->");
    if constexpr (std::is_void_v<R>) m.append("()");
    else Returns<R>::spell(m);
    return m;
  }

  static gx_status call(void* ctx, const gx_value* args, int32_t nargs, gx_value* rets,
                        int32_t nrets) noexcept {
    try {
      GX_INTERNAL_ASSERT(nargs == static_cast<int32_t>(sizeof...(Args)), "argument count");
      Fn fn = reinterpret_cast<Fn>(ctx);
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

}  // namespace detail

class Library;

class OpBuilder {
 public:
  OpBuilder(gx_registrar* reg, int32_t op) : reg_(reg), op_(op) {}

  // Declares the op's derivative beside its schema (NOTE [ Derivatives beside
  // a user's schema ] in lib/tape/schema-derivative.ts), as torch's
  // derivatives.yaml writes one: which inputs' gradients another op of this
  // library computes, from the forward's arguments, its results (by their
  // schema names, or result0, result1 ...) and the results' gradients (grad,
  // or grad0, grad1 ...):
  //   m.def("cube(Tensor x) -> Tensor").impl(gx::kCPU, cube).derivative("x: cube_backward(grad, x)");
  // Several clauses are joined by ';'. The generated binding then records on
  // autograd's tape with no JS registration.
  OpBuilder& derivative(const char* formula) {
    detail::check_status(detail::api().set_derivative(reg_, op_, formula));
    return *this;
  }

  // Registers `fn` as the implementation for `device` (kCPU or kCUDA).
  template <typename R, typename... Args>
  OpBuilder& impl(DeviceType device, R (*fn)(Args...)) {
    using B = detail::Boxed<R, Args...>;
    // The function itself is the context (a function pointer fits in a void*
    // on every platform with dlopen, which POSIX requires for dlsym).
    void* ctx = reinterpret_cast<void*>(fn);
    const Message sig = B::signature();
    detail::check_status(detail::api().impl_op(reg_, op_, static_cast<gx_device_type>(device),
                                               &B::call, ctx, sig.text));
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
// GX_LIBRARY blocks, in a list built during static initialization.
struct LibraryRegistration {
  const char* ns;
  void (*body)(Library&);
  LibraryRegistration* next;
};
inline LibraryRegistration*& registrations() {
  static LibraryRegistration* head = nullptr;
  return head;
}
struct RegisterLibrary {
  LibraryRegistration node;
  RegisterLibrary(const char* ns, void (*body)(Library&)) : node{ns, body, nullptr} {
    LibraryRegistration** tail = &registrations();
    while (*tail != nullptr) tail = &(*tail)->next;  // keep source order
    *tail = &node;
  }
};
}  // namespace detail
}  // namespace gx

#define GX_CONCAT_INNER(a, b) a##b
#define GX_CONCAT(a, b) GX_CONCAT_INNER(a, b)

// Defines the ops of namespace `ns` (an identifier); `m` is the gx::Library.
#define GX_LIBRARY(ns, m)                                                            \
  static void GX_CONCAT(gx_library_body_, ns)(::gx::Library & m);                   \
  static ::gx::detail::RegisterLibrary GX_CONCAT(gx_library_registration_, ns)(       \
      #ns, &GX_CONCAT(gx_library_body_, ns));                                        \
  static void GX_CONCAT(gx_library_body_, ns)(::gx::Library & m)
