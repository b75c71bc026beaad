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
