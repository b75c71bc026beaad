// Native tensor handles reused where a tensor's lifetime is known (NOTE
// [ Recycled handles ] in csrc/binding/tensor_handle.h): Tensor.dispose()
// gives its emptied handle back here, and the next op result goes into one
// from here (a staged result request for a built-in op's `out`, a spare
// handle for an extension op's returned tensor) instead of a new External,
// whose creation and finalizer cost more than a one-element CPU op. Views
// go into one too, their layout staged (NOTE [ Staged views ] in
// csrc/binding/staging.h). The tensor behind the handle is reused one level
// down: a disposed small tensor, memory and all, carries the next one of its
// byte size (NOTE [ Tensor cache ] in csrc/core/tensor_cache.cpp). A small
// op result's disposal itself is left to the next op call that takes its
// handle (NOTE [ Deferred disposal ] in csrc/binding/tensor_handle.h): one
// crossing per op, not two.
import type { Device } from './device';
import { native, type NativeTensor } from './native';
import { MAX_DIMS } from './shape';
import { stagingArea } from './staging';
import {
  STAGED_LAST_ADDRESS, STAGED_RESULT_PENDING as PENDING, STAGED_RESULT_REPLACE as REPLACE, STAGED_RESULT_REQUEST as REQUEST,
  STAGED_RESULT_SERIAL, STAGED_RESULT_SHAPE, STAGED_RESULT_SPARE as SPARE, STAGED_VIEW, STAGED_VIEW_SHAPE, STAGED_VIEW_STRIDES,
} from '../generated/staging';

// Enough for the temporaries of a step of small ops; a handle beyond it is left to the collector.
const MAX_POOLED = 1024;
// Disposals left to later op calls: at most this many, each no larger than the core's kDeferrableBytes.
const MAX_DEFERRED = 256;

const pool: NativeTensor[] = [];
// Handles still holding a disposed tensor, and its serial (NOTE [ Deferred disposal ]).
const deferred: NativeTensor[] = [];
const deferredSerials: number[] = [];
// The serial the next stageResult names: that of the deferred handle resultHandle() gave last, or 0.
let replacing = 0;
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
 * @internal Leaves the disposal of the tensor with this (nonzero) serial in
 * `h` to the op call that takes h next (NOTE [ Deferred disposal ] in
 * csrc/binding/tensor_handle.h); false when it must be disposed now.
 */
export function deferDisposal(h: NativeTensor, serial: number): boolean {
  if (!recycling || deferred.length >= MAX_DEFERRED) return false;
  deferred.push(h);
  deferredSerials.push(serial);
  return true;
}

/**
 * @internal A handle for a new tensor: one still holding a disposed tensor,
 * which the call that fills it drops (named by the next stageResult or
 * stageReplace), or an emptied one; undefined when there is neither.
 */
export function resultHandle(): NativeTensor | undefined {
  const h = deferred.pop();
  if (h === undefined) return pool.pop();
  replacing = deferredSerials.pop() as number;
  return h;
}

/**
 * @internal Disposes the tensors whose disposal was deferred, so that what
 * the core counts (live tensors, memory) or frees is as the program left it.
 * gx.memory's functions call it first, as do graph capture and the profiler.
 */
export function flushDeferred(): void {
  // Oldest first, so that the most recently disposed handle is the next one reused, as without the deferral.
  for (const h of deferred) {
    native.dispose(h);
    recycle(h);
  }
  deferred.length = 0;
  deferredSerials.length = 0;
}

/**
 * @internal Turns reuse off (emptying the pool) or back on. gx.profiler turns
 * it off while it records: it knows handles by identity, and records the
 * arguments the core receives.
 */
export function setRecycling(on: boolean): void {
  if (!on) flushDeferred();
  recycling = on;
  if (!on) pool.length = 0;
}

/**
 * @internal Stages a new tensor of this shape, dtype and device for the next
 * op call's tensor argument in the handle resultHandle() gave (empty, or
 * holding the disposed tensor it names). Staged last, right before the call:
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
  stageReplace();
  st[PENDING] = 1;
}

/** @internal Names the disposed tensor the handle resultHandle() gave still holds (0: none), for the call that fills it. */
export function stageReplace(): void {
  stagingArea()[REPLACE] = replacing;
  replacing = 0;
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
  st[REPLACE] = 0;
  return undefined;
}

/** @internal After a spent request or emptyStaged(): the new tensor's serial for deferDisposal, or 0 (its disposal may not wait). */
export function lastSerial(): number {
  return stagingArea()[STAGED_RESULT_SERIAL];
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
