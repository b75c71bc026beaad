// Native tensor handles reused where a tensor's lifetime is known (NOTE
// [ Recycled handles ] in csrc/binding/tensor_handle.h): Tensor.dispose()
// gives its emptied handle back here, and the next op result goes into one
// from here (a staged result request for a built-in op's `out`, a spare
// handle for an extension op's returned tensor) instead of a new External,
// whose creation and finalizer cost more than a one-element CPU op. Views
// go into one too, their layout staged (NOTE [ Staged views ] in
// csrc/binding/staging.h). The tensor behind the handle is reused one level
// down: a disposed small tensor, memory and all, carries the next one of its
// byte size (NOTE [ Tensor cache ] in csrc/core/tensor_cache.cpp).
import type { Device } from './device';
import { native, type NativeTensor } from './native';
import { MAX_DIMS } from './shape';
import { stagingArea } from './staging';
import {
  STAGED_LAST_ADDRESS, STAGED_RESULT, STAGED_RESULT_SHAPE, STAGED_VIEW, STAGED_VIEW_SHAPE, STAGED_VIEW_STRIDES,
} from '../generated/staging';

// Enough for the temporaries of a step of small ops; a handle beyond it is left to the collector.
const MAX_POOLED = 1024;
// Slots of the result region (csrc/binding/staging.h: kResultPending, kResultRequest, kResultSpare).
const PENDING = STAGED_RESULT, REQUEST = STAGED_RESULT + 1, SPARE = STAGED_RESULT + 5;

const pool: NativeTensor[] = [];
let recycling = true;

/** @internal Takes a disposed tensor's (emptied) handle for reuse. */
export function recycle(h: NativeTensor): void {
  if (recycling && pool.length < MAX_POOLED) pool.push(h);
}

/** @internal An emptied handle to put a new tensor in, or undefined when none is pooled. */
export function pooledHandle(): NativeTensor | undefined {
  return pool.pop();
}

/**
 * @internal Turns reuse off (emptying the pool) or back on. gx.profiler turns
 * it off while it records: it knows handles by identity, and records the
 * arguments the core receives.
 */
export function setRecycling(on: boolean): void {
  recycling = on;
  if (!on) pool.length = 0;
}

/**
 * @internal Stages a new tensor of this shape, dtype and device for the next
 * op call's empty (pooled) tensor argument. Staged last, right before the call:
 * nothing in between may call an op with an empty handle.
 */
export function stageResult(shape: readonly number[], dtypeCode: number, device: Device): void {
  const st = stagingArea();
  const ndim = shape.length;
  st[REQUEST] = ndim;
  st[REQUEST + 1] = dtypeCode;
  st[REQUEST + 2] = device.typeCode;
  st[REQUEST + 3] = device.index;
  for (let d = 0; d < ndim && d < MAX_DIMS; d++) st[STAGED_RESULT_SHAPE + d] = shape[d];
  st[PENDING] = 1;
}

/**
 * @internal After the call: the new tensor's data address when the request
 * was spent (NaN when a double cannot hold it), undefined when no call took
 * it. Clears the request either way.
 */
export function spentResult(): number | undefined {
  const st = stagingArea();
  if (st[PENDING] === 0) return st[STAGED_LAST_ADDRESS];
  st[PENDING] = 0;
  return undefined;
}

/** @internal Flags `spare` as the next op call's last argument, for its returned tensor. */
export function stageSpare(): void {
  stagingArea()[SPARE] = 1;
}

/**
 * @internal A view of `base`'s storage with this layout, checked by the core
 * (its errors name 'view'): the layout goes through the staging area, and the
 * view into a pooled handle when one is free (NOTE [ Staged views ] in
 * csrc/binding/staging.h). At most MAX_DIMS values of each list are written; a
 * longer one's length is, which the core refuses. A non-number entry is
 * staged as NaN, which the core refuses too (a Float64Array would coerce it).
 */
export function stagedView(base: NativeTensor, shape: readonly number[], strides: readonly number[], offset: number): NativeTensor {
  const st = stagingArea();
  const ndim = shape.length, nstrides = strides.length;
  st[STAGED_VIEW] = ndim;
  st[STAGED_VIEW + 1] = nstrides;
  st[STAGED_VIEW + 2] = typeof offset === 'number' ? offset : NaN;
  for (let d = 0; d < ndim && d < MAX_DIMS; d++) {
    const s = shape[d];
    st[STAGED_VIEW_SHAPE + d] = typeof s === 'number' ? s : NaN;
  }
  for (let d = 0; d < nstrides && d < MAX_DIMS; d++) {
    const s = strides[d];
    st[STAGED_VIEW_STRIDES + d] = typeof s === 'number' ? s : NaN;
  }
  const spare = pool.pop();
  return spare === undefined ? native.viewStaged(base) : native.viewStaged(base, spare);
}
