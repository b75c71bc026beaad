// This thread's staging area: native memory seen as a Float64Array, for
// values that would otherwise cross N-API one call at a time (NOTE [ Staging
// area ] in csrc/binding/staging.h, which has the layout: launch extents,
// the last new tensor's address, launch arguments, emptyStaged's request).
import { native } from './native';

/** Slot of the data address of the tensor native.empty() made last (NaN when a double cannot hold it). */
export const STAGED_LAST_ADDRESS = 7;
/** Where a launch's arguments start (after the extents and shared memory, and the address slot). */
export const STAGED_ARGS = 8;
/** How many launch arguments the area holds (from STAGED_ARGS on). */
export const STAGED_MAX_ARGS = 1024;
/** Where native.emptyStaged() reads its request: ndim, dtype code, device type, device index, then the shape (MAX_DIMS slots). */
export const STAGED_EMPTY = STAGED_ARGS + STAGED_MAX_ARGS;
export const STAGED_SHAPE = STAGED_EMPTY + 4;

let area: Float64Array | undefined;

/** @internal This thread's staging area, asked of the core once. */
export function stagingArea(): Float64Array {
  return (area ??= native.stagingArea());
}
