// The staging area: per-thread memory JS writes and reads as a Float64Array,
// for values that would otherwise cross N-API one call at a time.
//
// NOTE [ Staging area ]
// A launch used to pass its extents and arguments in typed arrays, and
// reading a typed array through N-API (napi_get_typedarray_info) cost more
// than the rest of the binding together (perf on the H100 host). Each thread
// has instead one area of doubles, exported once to its environment as a
// Float64Array over memory this addon owns (so nothing JS does to the array
// can free it). Its slots:
//   [0..6]  a launch's grid x y z, block x y z, dynamic shared memory bytes;
//   [7]     the data address of the tensor empty() made last (NaN when a
//           double cannot hold it), so a new tensor's address costs no call;
//   [8..]   a launch's arguments (NOTE [ Argument slots ] in rtc_launch.cpp);
//   [1032..1051] what emptyStaged() reads: ndim, dtype code, device type,
//           device index, then the shape (reading a JS array and four
//           numbers through N-API cost half a one-element allocation);
//   [1052..1075] an op call's result request: a flag, the same four numbers,
//           the flag of a spare handle for a returned tensor, the serial of
//           the disposed tensor the request's handle may still hold and the
//           serial the new one gets, then the shape (NOTE [ Recycled handles ]
//           and NOTE [ Deferred disposal ] in tensor_handle.h);
//   [1076..1123] a staged op call's scalars, three slots per schema argument
//           (NOTE [ Staged op calls ] in op_values.cpp).
//   [1124..1158] what viewStaged() reads: ndim, the strides' count, the
//           storage offset, then the shape and the strides (NOTE [ Staged views ]).
// JS writes the launch slots and calls launchKernel at once, and writes the
// shape and calls emptyStaged at once, with no JS in between that could use
// the area; it reads slot 7 right after an empty returns. The regions are
// listed once, in binding/staging_slots.h; lib/generated/staging.ts is made from it.
#pragma once
#include <napi.h>

#include <cstddef>

#include "binding/staging_slots.h"
#include "core/tensor.h"

namespace gx::core::js::staging {

// Offsets of the regions of binding/staging_slots.h: k<Name> is where a
// region starts, kSize the whole area, in doubles.
enum : size_t {
#define GX_STAGING_OFFSET(Name, slots) k##Name, k##Name##Last = k##Name + (slots)-1,
  GX_FORALL_STAGING_REGIONS(GX_STAGING_OFFSET)
#undef GX_STAGING_OFFSET
  kSize
};
constexpr size_t kMaxArgs = kArgsLast + 1 - kArgs;
constexpr size_t kMaxShape = kShapeLast + 1 - kShape;

// This thread's area (kSize doubles).
double* area();
// Records `address` in slot kLastAddress.
void set_last_address(const void* address);

// A staged op call's arguments: three slots per schema argument (value, tag,
// low 32 bits), for up to kMaxStagedOpArgs arguments (NOTE [ Staged op calls ]).
constexpr size_t kOpArgSlots = 3;
constexpr size_t kMaxStagedOpArgs = (kOpArgsLast + 1 - kOpArgs) / kOpArgSlots;

// A new (uninitialized) tensor as requested at `request` (ndim, dtype code,
// device type, device index) with its shape at `shape`, checked as empty()
// checks its arguments; errors name `fn`. Its address goes to kLastAddress.
TensorImpl* empty_from(const double* request, const double* shape, const char* fn);

// NOTE [ Staged views ]
// Every view (view, reshape, transpose, narrow, expand, permute, the internal
// asStrided) ends in one call that makes a TensorImpl over its base's
// storage. Reading its shape and strides as JS arrays, one element at a time
// through N-API, cost about a third of a small convolution's host time (V8
// profile of F.conv2d on a 1x1x6x6 CPU input). JS writes them into the View
// regions instead and calls viewStaged(base) at once; the count of strides
// travels apart from ndim so a mismatch is still refused here, not written
// past. JS writes at most kMaxShape values of each, and a longer list's
// length in ndim, which this refuses.

// A view of `base` with the layout staged in the View regions, each value
// checked to be a safe integer, then as TensorImpl::view checks a layout;
// errors name `fn`.
TensorImpl* view_from(const TensorImpl& base, const char* fn);

void register_functions(Napi::Env env, Napi::Object exports);

}  // namespace gx::core::js::staging
