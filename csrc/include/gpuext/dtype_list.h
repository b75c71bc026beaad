// The one list of gpuext dtypes. Everything else is generated from it: the C
// enum (gx_dtype), the C++ enum, names, item sizes, and the TypeScript union and
// typed-array mapping in lib/generated/dtypes.ts (scripts/gen/dtypes.js reads
// this file; `npm run gen` regenerates, CI checks it is current).
//
// The order fixes each dtype's code in the C ABI: append only, never reorder.
//
// columns: (Enum, name, kind, itemsize, storage typed array, value typed array, C++ type, kernel C type,
//           compute type, npy typestr, safetensors name, NCCL type)
//   kind: f = floating, i = signed int, u = unsigned int, b = bool
//   storage typed array: how the raw bytes are viewed from JS
//   value typed array:   what toArray() returns (float16/bfloat16 decode to float32)
//   C++ type:            how C++ stores an element, named in namespace gx
//                        (gx::Half, gx::BFloat16: gpuext/half.h)
//   kernel C type:       the element's type in run-time kernels' CUDA source
//                        (lib/rtc: no <cstdint> there; cuda_fp16.h / cuda_bf16.h)
//   compute type:        the C++ type the built-in ops compute an element in
//                        (NOTE [ Compute types ] in ops/common/hd.h): 16-bit
//                        floats in float, integers and bool in int64_t
//   npy typestr:         NumPy's typestr (lib/io/npy.ts); none: NumPy has no such type
//   safetensors name:    the dtype in a .safetensors header (lib/io/safetensors.ts)
//   NCCL type:           the ncclDataType_t a collective sends it as (ops/dist/nccl.cu);
//                        none: NCCL has no such type (bool travels as uint8)
//
// Macros that read only leading columns take the rest as `...`, so a new
// column does not touch them.
#pragma once

#define GX_FORALL_DTYPES(_)                                                                                             \
  _(Float32,  float32,  f, 4, Float32Array,  Float32Array,  float, float, float,   <f4,  F32,  ncclFloat32)             \
  _(Float64,  float64,  f, 8, Float64Array,  Float64Array,  double, double, double,  <f8,  F64,  ncclFloat64)           \
  _(Float16,  float16,  f, 2, Uint16Array,   Float32Array,  Half, __half, float,   <f2,  F16,  ncclFloat16)             \
  _(BFloat16, bfloat16, f, 2, Uint16Array,   Float32Array,  BFloat16, __nv_bfloat16, float,   none, BF16, ncclBfloat16) \
  _(Int8,     int8,     i, 1, Int8Array,     Int8Array,     int8_t, signed char, int64_t, |i1,  I8,   ncclInt8)         \
  _(Int16,    int16,    i, 2, Int16Array,    Int16Array,    int16_t, short, int64_t, <i2,  I16,  none)                  \
  _(Int32,    int32,    i, 4, Int32Array,    Int32Array,    int32_t, int, int64_t, <i4,  I32,  ncclInt32)               \
  _(Int64,    int64,    i, 8, BigInt64Array, BigInt64Array, int64_t, long long, int64_t, <i8,  I64,  ncclInt64)         \
  _(UInt8,    uint8,    u, 1, Uint8Array,    Uint8Array,    uint8_t, unsigned char, int64_t, |u1,  U8,   ncclUint8)     \
  _(Bool,     bool,     b, 1, Uint8Array,    Uint8Array,    bool, bool, int64_t, |b1,  BOOL, ncclUint8)
