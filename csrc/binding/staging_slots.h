// The one list of the staging area's regions (NOTE [ Staging area ] in
// binding/staging.h), in order: each starts where the one before ends.
// binding/staging.h derives the C++ offsets from it, and
// lib/generated/staging.ts is generated from it (scripts/gen/staging.js reads
// the rows; `npm run gen` regenerates, CI checks it is current), so the two
// sides of the area never disagree on a slot.
//
// columns: (Name, slots); slots is a number or GX_MAX_DIMS (gpuext/limits.h)
#pragma once
#include "gpuext/limits.h"

#define GX_FORALL_STAGING_REGIONS(_)                                                        \
  _(LaunchDims,  7)            /* a launch's grid x y z, block x y z, dynamic shared bytes */ \
  _(LastAddress, 1)            /* the data address of the tensor empty() made last */      \
  _(Args,        1024)         /* a launch's arguments (NOTE [ Argument slots ]) */         \
  _(Empty,       4)            /* emptyStaged()'s ndim, dtype code, device type, index */   \
  _(Shape,       GX_MAX_DIMS)  /* emptyStaged()'s shape */                                \
  _(ResultPending, 1)          /* 1 while an op call's result request waits (NOTE [ Recycled handles ]) */ \
  _(ResultRequest, 4)          /* its ndim, dtype code, device type, device index (as Empty's) */ \
  _(ResultSpare,   1)          /* 1: the call's last JS argument is a spare handle for its returned tensor */ \
  _(ResultReplace, 1)          /* the serial of the disposed tensor the request's handle still holds, or 0 (NOTE [ Deferred disposal ]) */ \
  _(ResultSerial,  1)          /* the serial the request gave the new tensor, or 0: not to be deferred */ \
  _(ResultShape, GX_MAX_DIMS)  /* its shape */                                        \
  _(OpArgs,      48)           /* a staged op call's non-tensor arguments (NOTE [ Staged op calls ]) */ \
  _(View,        3)            /* viewStaged()'s ndim, strides count, storage offset (NOTE [ Staged views ]) */ \
  _(ViewShape,   GX_MAX_DIMS)  /* its shape */                                        \
  _(ViewStrides, GX_MAX_DIMS)  /* its strides */
