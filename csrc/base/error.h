// Errors in the core. Two tiers, both throw (nothing here exits or aborts):
//   GX_CHECK_*(cond, ...)               the caller's mistake: say what was expected and what came
//   GX_CORE_INTERNAL_ASSERT(cond, ...)  our bug
// They throw gx::core::Error. Extensions and the built-in ops have their own
// pair, GX_CHECK and GX_INTERNAL_ASSERT (gpuext/check.h), which throw
// gx::OpError across the C ABI: distinct names, so a file never wonders which
// it has.
// The N-API binding turns gx::core::Error into a JS error of the matching class
// (TypeError, RangeError, Error); the C ABI turns it into a gx_status.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace gx::core {

enum class ErrorKind {
  Type,         // wrong kind of value: dtype, argument type   -> TypeError
  Range,        // value out of range: dims, device index       -> RangeError
  Value,        // well-typed but invalid: shapes that differ   -> Error
  OutOfMemory,  // allocation failed after freeing the cache   -> Error (code GX_OOM)
  Cuda,         // a CUDA call failed                           -> Error (code GX_CUDA)
  NotCompiled,  // core built without CUDA                      -> Error
  Internal      // our bug                                      -> Error
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
inline void append(std::ostringstream&) {}
template <typename T, typename... Rest>
void append(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  append(os, rest...);
}
}  // namespace detail

template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  detail::append(os, args...);
  return os.str();
}

template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, const Args&... args) {
  throw Error(kind, str(args...));
}

}  // namespace gx::core

#define GX_CHECK_KIND(kind, cond, ...)                    \
  do {                                                    \
    if (!(cond)) ::gx::core::fail(::gx::core::ErrorKind::kind, __VA_ARGS__); \
  } while (0)

#define GX_CHECK_TYPE(cond, ...) GX_CHECK_KIND(Type, cond, __VA_ARGS__)
#define GX_CHECK_RANGE(cond, ...) GX_CHECK_KIND(Range, cond, __VA_ARGS__)
#define GX_CHECK_VALUE(cond, ...) GX_CHECK_KIND(Value, cond, __VA_ARGS__)

#define GX_CORE_INTERNAL_ASSERT(cond, ...)                                              \
  do {                                                                             \
    if (!(cond))                                                                   \
      ::gx::core::fail(::gx::core::ErrorKind::Internal, "gpuext internal error at ", __FILE__, \
                 ":", __LINE__, ": `" #cond "` failed. " __VA_ARGS__);             \
  } while (0)
