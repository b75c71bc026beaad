// The one list of gpuext dtypes. Everything else is generated from it: the C
// enum (gx_dtype), the C++ enum, names, item sizes, and the TypeScript union and
// typed-array mapping in lib/generated/dtypes.ts (scripts/gen-dtypes.js reads
// this file; `npm run gen` regenerates, CI checks it is current).
//
// The order fixes each dtype's code in the C ABI: append only, never reorder.
//
// columns: (Enum, name, kind, itemsize, storage typed array, value typed array)
//   kind: f = floating, i = signed int, u = unsigned int, b = bool
//   storage typed array: how the raw bytes are viewed from JS
//   value typed array:   what toArray() returns (float16/bfloat16 decode to float32)
#pragma once

#define GX_FORALL_DTYPES(_)                                              \
  _(Float32,  float32,  f, 4, Float32Array,  Float32Array)               \
  _(Float64,  float64,  f, 8, Float64Array,  Float64Array)               \
  _(Float16,  float16,  f, 2, Uint16Array,   Float32Array)               \
  _(BFloat16, bfloat16, f, 2, Uint16Array,   Float32Array)               \
  _(Int8,     int8,     i, 1, Int8Array,     Int8Array)                  \
  _(Int16,    int16,    i, 2, Int16Array,    Int16Array)                 \
  _(Int32,    int32,    i, 4, Int32Array,    Int32Array)                 \
  _(Int64,    int64,    i, 8, BigInt64Array, BigInt64Array)              \
  _(UInt8,    uint8,    u, 1, Uint8Array,    Uint8Array)                 \
  _(Bool,     bool,     b, 1, Uint8Array,    Uint8Array)
