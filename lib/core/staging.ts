// This thread's staging area: native memory seen as a Float64Array, for
// values that would otherwise cross N-API one call at a time (NOTE [ Staging
// area ] in csrc/binding/staging.h; the layout, listed once in
// csrc/binding/staging_slots.h: launch extents, the last new tensor's
// address, launch arguments, emptyStaged's request).
import { native } from './native';

import * as slots from '../generated/staging';

// The slots come from the one list of regions (csrc/binding/staging_slots.h).
// Copied into constants of this module rather than re-exported: CommonJS
// re-exports are getters, and tensor creation reads these on every call.
/** Slot of the data address of the tensor native.empty() made last (NaN when a double cannot hold it). */
export const STAGED_LAST_ADDRESS = slots.STAGED_LAST_ADDRESS;
/** How many slots a launch's extents take, from slot 0: grid x, y, z, block x, y, z, dynamic shared memory. */
export const STAGED_DIMS = slots.STAGED_LAUNCH_DIMS_SLOTS;
/** Where a launch's arguments start (after the extents and shared memory, and the address slot). */
export const STAGED_ARGS = slots.STAGED_ARGS;
/** How many launch arguments the area holds (from STAGED_ARGS on). */
export const STAGED_MAX_ARGS = slots.STAGED_ARGS_SLOTS;
/** Where native.emptyStaged() reads its request: ndim, dtype code, device type, device index, then the shape (MAX_DIMS slots). */
export const STAGED_EMPTY = slots.STAGED_EMPTY;
export const STAGED_SHAPE = slots.STAGED_SHAPE;

let area: Float64Array | undefined;

/** @internal This thread's staging area, asked of the core once. */
export function stagingArea(): Float64Array {
  return (area ??= native.stagingArea());
}

/** Where a staged op call's arguments start: three slots per schema argument (NOTE [ Staged op calls ] in csrc/binding/op_values.cpp). */
export const STAGED_OP_ARGS = slots.STAGED_OP_ARGS;

const INT64_MIN = -(2n ** 63n), INT64_MAX = 2n ** 63n - 1n;
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER), SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * @internal Stages an int argument at slot `k` (its value, tag and low word):
 * a number as it is (the core checks it is an integer within 2^53), a bigint
 * within 2^53 as a number, beyond it as two 32-bit halves, beyond int64 as
 * a tag the core refuses; absent (undefined, null) as tag 0: the default.
 */
export function stageInt(st: Float64Array, k: number, v: number | bigint | null | undefined): void {
  if (typeof v === 'number') {
    st[k] = v;
    st[k + 1] = 1;
  } else if (typeof v !== 'bigint') {
    st[k + 1] = 0;
  } else if (v >= SAFE_MIN && v <= SAFE_MAX) {
    st[k] = Number(v);
    st[k + 1] = 1;
  } else if (v < INT64_MIN || v > INT64_MAX) {
    st[k + 1] = 3;
  } else {
    st[k] = Number(v >> 32n);
    st[k + 2] = Number(BigInt.asUintN(32, v));
    st[k + 1] = 2;
  }
}

/** @internal Stages an optional (`T?`) or defaulted argument at slot `k`: tag 0 when absent, else its value. */
export function stageOptional(st: Float64Array, k: number, v: number | bigint | boolean | null | undefined): void {
  if (typeof v === 'bigint') stageInt(st, k, v);
  else if (v === null || v === undefined) st[k + 1] = 0;
  else {
    st[k] = typeof v === 'boolean' ? (v ? 1 : 0) : v;
    st[k + 1] = 1;
  }
}
