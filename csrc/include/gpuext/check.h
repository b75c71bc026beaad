// Checks for extension code. Two tiers, both throw gx::OpError (never exit):
//   GX_CHECK(cond, msg...)            the caller's mistake: say what was expected and what came
//   GX_INTERNAL_ASSERT(cond, msg...)  a bug in the extension
// The core turns the error into a JS error that starts with the op's name.
//
// NOTE [ Light headers ]
// Every extension compiles these headers, through nvcc's front end and the
// host compiler, so they include almost nothing from the standard library:
// <string>, <vector>, <sstream>, <optional> and <tuple> each add 0.2-0.5 s to
// a compile. Messages are formatted into a fixed buffer; containers an op
// uses (std::vector, std::string, std::optional, std::tuple) come from the
// extension's own includes and are recognized by their members.
#pragma once
#include <cstdio>
#include <cstring>
#include <exception>
#include <type_traits>

#include "gpuext/abi.h"

namespace gx {

// A bounded message buffer: long messages are cut, never allocated.
struct Message {
  char text[1024] = {0};
  size_t len = 0;
  void append(const char* s, size_t n) {
    const size_t room = sizeof(text) - 1 - len;
    if (n > room) n = room;
    std::memcpy(text + len, s, n);
    len += n;
    text[len] = '\0';
  }
  void append(const char* s) { append(s, std::strlen(s)); }
};

class OpError : public std::exception {
 public:
  OpError(gx_status status, const Message& msg) : status_(status), msg_(msg) {}
  OpError(gx_status status, const char* msg) : status_(status) { msg_.append(msg); }
  const char* what() const noexcept override { return msg_.text; }
  gx_status status() const noexcept { return status_; }

 private:
  gx_status status_;
  Message msg_;
};

// How values print in messages; gpuext/tensor.h adds sizes, dtypes, devices.
inline void append_to(Message& m, const char* v) { m.append(v); }
inline void append_to(Message& m, char v) { m.append(&v, 1); }
inline void append_to(Message& m, bool v) { m.append(v ? "true" : "false"); }
template <typename T>
std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>>
append_to(Message& m, T v) {
  char buf[32];
  if constexpr (std::is_signed_v<T>) std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  else std::snprintf(buf, sizeof(buf), "%llu", static_cast<unsigned long long>(v));
  m.append(buf);
}
template <typename T>
std::enable_if_t<std::is_floating_point_v<T>> append_to(Message& m, T v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
  m.append(buf);
}
// Anything string-like (std::string, std::string_view) by its data() and size().
template <typename S>
auto append_to(Message& m, const S& s) -> decltype(m.append(s.data(), s.size())) {
  m.append(s.data(), s.size());
}

namespace detail {
template <typename... Args>
Message cat(const Args&... args) {
  Message m;
  (append_to(m, args), ...);
  return m;
}
// GX_CHECK(cond) with no message still says which condition failed.
inline Message check_message(const char* cond) { return cat("check failed: ", cond); }
template <typename... Args>
Message check_message(const char*, const Args&... args) {
  return cat(args...);
}
}  // namespace detail
}  // namespace gx

#define GX_CHECK(cond, ...)                                                            \
  do {                                                                                 \
    if (!(cond))                                                                       \
      throw ::gx::OpError(GX_ERR_INVALID_ARGUMENT,                                     \
                          ::gx::detail::check_message(#cond, ##__VA_ARGS__));          \
  } while (0)

#define GX_INTERNAL_ASSERT(cond, ...)                                                  \
  do {                                                                                 \
    if (!(cond))                                                                       \
      throw ::gx::OpError(GX_ERR_INTERNAL,                                             \
                          ::gx::detail::cat("internal assert failed at ", __FILE__, ":", \
                                            __LINE__, ": ", #cond, ". ", ##__VA_ARGS__)); \
  } while (0)
