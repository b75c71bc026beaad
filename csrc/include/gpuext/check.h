// Checks for extension code. Two tiers, both throw gx::OpError (never exit):
//   GX_CHECK(cond, msg...)            the caller's mistake: say what was expected and what came
//   GX_INTERNAL_ASSERT(cond, msg...)  a bug in the extension
// The core turns the error into a JS error that starts with the op's name.
#pragma once
#include <exception>
#include <sstream>
#include <string>

#include "gpuext/abi.h"

namespace gx {

class OpError : public std::exception {
 public:
  OpError(gx_status status, std::string msg) : status_(status), msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  gx_status status() const noexcept { return status_; }

 private:
  gx_status status_;
  std::string msg_;
};

namespace detail {
inline void cat_into(std::ostringstream&) {}
template <typename T, typename... Rest>
void cat_into(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  cat_into(os, rest...);
}
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  cat_into(os, args...);
  return os.str();
}
// GX_CHECK(cond) with no message still says which condition failed.
inline std::string check_message(const char* cond) { return cat("check failed: ", cond); }
template <typename... Args>
std::string check_message(const char*, const Args&... args) {
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
