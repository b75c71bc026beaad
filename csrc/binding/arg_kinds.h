// The one list of kernel-argument kinds: the C type of each parameter of a
// run-time kernel, as lib/rtc/raw.ts tells moduleGetFunction (an Int8Array of
// codes) and launchKernel packs it (NOTE [ Argument slots ] in
// binding/rtc_launch.cpp). A kind's code is its place in the list: append
// only, never reorder. lib/generated/arg-kinds.ts is generated from this file
// (scripts/gen/arg-kinds.js reads the rows; `npm run gen` regenerates, CI
// checks it is current).
//
// columns: (Enum, name, min, max)
//   name:     the kind's name in messages and in TypeScript
//   min, max: the range of an integer kind (0, 0 for the others)
//   tensor:   a tensor handle or a device address (what a `T*` parameter takes)
//   pointer:  a raw address as a bigint, or null
#pragma once
#include <cstdint>

#define GX_FORALL_ARG_KINDS(_)            \
  _(Tensor,  tensor,  0,         0)          \
  _(I8,      int8,    INT8_MIN,  INT8_MAX)   \
  _(I16,     int16,   INT16_MIN, INT16_MAX)  \
  _(I32,     int32,   INT32_MIN, INT32_MAX)  \
  _(I64,     int64,   INT64_MIN, INT64_MAX)  \
  _(U8,      uint8,   0,         UINT8_MAX)  \
  _(U16,     uint16,  0,         UINT16_MAX) \
  _(U32,     uint32,  0,         UINT32_MAX) \
  _(U64,     uint64,  0,         UINT64_MAX) \
  _(F32,     float32, 0,         0)          \
  _(F64,     float64, 0,         0)          \
  _(Bool,    bool,    0,         0)          \
  _(Pointer, pointer, 0,         0)

namespace gx::core::js {

enum Kind : int8_t {
#define GX_ARG_KIND_ENUM(Enum, name, min, max) k##Enum,
  GX_FORALL_ARG_KINDS(GX_ARG_KIND_ENUM)
#undef GX_ARG_KIND_ENUM
  kNumKinds
};

constexpr const char* kKindNames[kNumKinds] = {
#define GX_ARG_KIND_NAME(Enum, name, min, max) #name,
    GX_FORALL_ARG_KINDS(GX_ARG_KIND_NAME)
#undef GX_ARG_KIND_NAME
};
constexpr int64_t kKindMin[kNumKinds] = {
#define GX_ARG_KIND_MIN(Enum, name, min, max) static_cast<int64_t>(min),
    GX_FORALL_ARG_KINDS(GX_ARG_KIND_MIN)
#undef GX_ARG_KIND_MIN
};
constexpr uint64_t kKindMax[kNumKinds] = {
#define GX_ARG_KIND_MAX(Enum, name, min, max) static_cast<uint64_t>(max),
    GX_FORALL_ARG_KINDS(GX_ARG_KIND_MAX)
#undef GX_ARG_KIND_MAX
};

// The integer kinds are the contiguous run I8..U64, signed first (slot_of_number relies on it).
static_assert(kI8 == kTensor + 1 && kU64 == kI64 + 4, "integer kinds: I8..I64 then U8..U64");

}  // namespace gx::core::js
