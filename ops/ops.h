// The built-in ops of gpuext (the gx_ops library): the families' lists and
// every entry point's declaration, both generated from the one list of the
// ops (ops/op-list.js, by scripts/gen.js) into generated/, with the
// registration of each (generated/registry.cpp).
//
// NOTE [ Calling convention of the built-in ops ]
// JS (lib/ops/) does the deciding: it checks the arguments, computes the
// broadcast shape and the dtypes with the one promotion table
// (lib/ops/promotion.ts), allocates the output or takes the caller's `out`,
// and calls the op through its generated typed call (lib/generated/ops.ts).
// Every op here writes into `out` and returns nothing (except the few whose
// result's size only the data decides, nonzero and masked_select: they
// count, allocate and return it, NOTE [ Compaction ] in index/select_iter.h):
//   name(Tensor self, Tensor other, ScalarType dtype, Tensor out) -> ()
//   name_scalar(Tensor self, float other, int other_int, bool reverse, ScalarType dtype, Tensor out) -> ()
// `dtype` is the common dtype the op computes in (its compute type: NOTE
// [ Compute types ] in common/hd.h); the output may be of another dtype (a
// comparison's bool, a caller's `out`) and is converted on store. A JS number
// operand arrives as `other` (its value as a double) and `other_int` (as an
// integer, for integer compute types), never as a tensor; `reverse` puts it
// on the left (2 - x). The C++ side re-checks what it relies on (shapes that
// broadcast to out, dtypes it has kernels for) and fails with GX_CHECK.
#pragma once
#include "generated/entry_points.h"
#include "generated/op_lists.h"
