// A floating value converted to an integer dtype, defined for every value,
// the same on the host and in CUDA code: the built-in ops' conversions
// (ops/common/hd.h's to<T>) and the core's kernels that write doubles
// (csrc/core/cpu_kernels.cpp, csrc/cuda/core_kernels.cu) call it.
//
// NOTE [ Floats out of an integer's range ]
// C++ leaves a float -> integer conversion undefined when the truncated value
// does not fit, and the two devices differ there: x86's conversion gives the
// "integer indefinite" (INT32_MIN or INT64_MIN, NaN too), CUDA's saturates
// (1e255 to int64 is INT64_MAX, and 255 once narrowed to uint8). So the same
// astype gave 0 on the CPU and 255 on CUDA. gx defines it as torch's CPU build
// computes it, on both devices:
// - int64: the truncated value when -2^63 <= v < 2^63, else INT64_MIN;
// - int32: the same within 32 bits, else INT32_MIN;
// - int8 and int16: through int32 as above, then its low bits (what x86 code
//   compiled from static_cast does): 300.7 is int8's 44, 1e10 is 0;
// - uint8: through int64, then its low byte, as torch's c10::convert does
//   for uint8 (so -5.5 is 251 and 3e9 + 5 is 5);
// - bool is v != 0, not an integer conversion (the callers' own case).
// The comparisons are written so that NaN fails them and takes the minimum.
#pragma once
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define GX_FLOAT_TO_INT_HD __host__ __device__ __forceinline__
#else
#define GX_FLOAT_TO_INT_HD inline
#endif

namespace gx {

// V is float or double; T one of int8_t, int16_t, int32_t, int64_t, uint8_t.
template <typename T, typename V>
GX_FLOAT_TO_INT_HD T float_to_int(V v) {
  static_assert(std::is_floating_point_v<V>, "float_to_int converts a float or a double");
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "float_to_int converts to an integer type");
  if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint8_t>) {
    // 2^63 is exact in both float and double; -2^63 fits.
    const int64_t i = v >= V(-9223372036854775808.0) && v < V(9223372036854775808.0) ? static_cast<int64_t>(v) : INT64_MIN;
    return static_cast<T>(i);  // uint8: the low byte (a conversion to unsigned is modular)
  } else {
    static_assert(sizeof(T) <= 4, "float_to_int: an unexpected integer type");
    // -2^31 - 1 < v < 2^31 in double; in float the bound -2^31 - 1 rounds to -2^31, whose truncation is INT32_MIN anyway.
    const int32_t i = v > V(-2147483649.0) && v < V(2147483648.0) ? static_cast<int32_t>(v) : INT32_MIN;
    return static_cast<T>(i);  // int8, int16: the low bits (modular, as C++20 defines and every compiler here does)
  }
}

}  // namespace gx
