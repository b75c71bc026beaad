// The one list of gpuext dtypes. Everything else is generated from it: the C
// enum (gx_dtype), the C++ enum, names, item sizes, and the TypeScript union and
// typed-array mapping in lib/generated/dtypes.ts (scripts/gen/dtypes.js reads
// this file; `npm run gen` regenerates, CI checks it is current).
//
// The order fixes each dtype's code in the C ABI: append only, never reorder.
//
// columns: (Enum, name, kind, itemsize, storage typed array, value typed array, C++ type, kernel C type)
//   kind: f = floating, i = signed int, u = unsigned int, b = bool
//   storage typed array: how the raw bytes are viewed from JS
//   value typed array:   what toArray() returns (float16/bfloat16 decode to float32)
//   C++ type:            how C++ stores an element, named in namespace gx
//                        (gx::Half, gx::BFloat16: gpuext/half.h)
//   kernel C type:       the element's type in run-time kernels' CUDA source
//                        (lib/rtc: no <cstdint> there; cuda_fp16.h / cuda_bf16.h)
#pragma once

#define GX_FORALL_DTYPES(_)                                                                   \
  _(Float32,  float32,  f, 4, Float32Array,  Float32Array,  float, float)                     \
  _(Float64,  float64,  f, 8, Float64Array,  Float64Array,  double, double)                   \
  _(Float16,  float16,  f, 2, Uint16Array,   Float32Array,  Half, __half)                     \
  _(BFloat16, bfloat16, f, 2, Uint16Array,   Float32Array,  BFloat16, __nv_bfloat16)          \
  _(Int8,     int8,     i, 1, Int8Array,     Int8Array,     int8_t, signed char)              \
  _(Int16,    int16,    i, 2, Int16Array,    Int16Array,    int16_t, short)                   \
  _(Int32,    int32,    i, 4, Int32Array,    Int32Array,    int32_t, int)                     \
  _(Int64,    int64,    i, 8, BigInt64Array, BigInt64Array, int64_t, long long)               \
  _(UInt8,    uint8,    u, 1, Uint8Array,    Uint8Array,    uint8_t, unsigned char)           \
  _(Bool,     bool,     b, 1, Uint8Array,    Uint8Array,    bool, bool)
