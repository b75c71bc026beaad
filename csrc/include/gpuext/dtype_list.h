// The one list of gpuext dtypes. Everything else is generated from it: the C
// enum (gx_dtype), the C++ enum, names, item sizes, and the TypeScript union and
// typed-array mapping in lib/generated/dtypes.ts (scripts/gen/dtypes.js reads
// this file; `npm run gen` regenerates, CI checks it is current).
//
// The order fixes each dtype's code in the C ABI: append only, never reorder.
//
// columns: (Enum, name, kind, itemsize, storage typed array, value typed array, C++ type)
//   kind: f = floating, i = signed int, u = unsigned int, b = bool
//   storage typed array: how the raw bytes are viewed from JS
//   value typed array:   what toArray() returns (float16/bfloat16 decode to float32)
//   C++ type:            how C++ stores an element, named in namespace gx
//                        (gx::Half, gx::BFloat16: gpuext/half.h)
#pragma once

#define GX_FORALL_DTYPES(_)                                                       \
  _(Float32,  float32,  f, 4, Float32Array,  Float32Array,  float)                \
  _(Float64,  float64,  f, 8, Float64Array,  Float64Array,  double)               \
  _(Float16,  float16,  f, 2, Uint16Array,   Float32Array,  Half)                 \
  _(BFloat16, bfloat16, f, 2, Uint16Array,   Float32Array,  BFloat16)             \
  _(Int8,     int8,     i, 1, Int8Array,     Int8Array,     int8_t)               \
  _(Int16,    int16,    i, 2, Int16Array,    Int16Array,    int16_t)              \
  _(Int32,    int32,    i, 4, Int32Array,    Int32Array,    int32_t)              \
  _(Int64,    int64,    i, 8, BigInt64Array, BigInt64Array, int64_t)              \
  _(UInt8,    uint8,    u, 1, Uint8Array,    Uint8Array,    uint8_t)              \
  _(Bool,     bool,     b, 1, Uint8Array,    Uint8Array,    bool)
