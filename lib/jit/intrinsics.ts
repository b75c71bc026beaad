// gx.jit's intrinsics as JavaScript values: what a kernel's source refers to
// (`jit.threadIdx.x`, `jit.grid(1)`, `jit.syncthreads()`, `jit.atomic.add`,
// `jit.sharedArray`, `jit.shfl.down`), recognized by identity when a kernel is
// typed (typer-calls.ts), on CUDA and on the simulator alike. Called from
// plain JS they have no thread to speak of: each throws saying so.
import type { DType } from '../generated/dtypes';
import type { AtomicOp, IntrinsicName } from './ir';

export type { AtomicOp };

export interface Dim3Value {
  readonly x: number;
  readonly y: number;
  readonly z: number;
}

function outside(what: string): never {
  throw new Error(`gx.jit.${what}: only has a meaning inside a kernel (gx.jit.rawkernel), which translates it or runs it on the simulator`);
}

/** A dim3 of the current thread (threadIdx, blockIdx, blockDim, gridDim), read by x / y / z. */
function dim3(name: string): Dim3Value {
  return Object.freeze({
    get x(): number { return outside(`${name}.x`); },
    get y(): number { return outside(`${name}.y`); },
    get z(): number { return outside(`${name}.z`); },
  });
}

export const threadIdx = dim3('threadIdx');
export const blockIdx = dim3('blockIdx');
export const blockDim = dim3('blockDim');
export const gridDim = dim3('gridDim');

/** The threads per warp. */
export const warpSize = 32;

function checkNdim(n: unknown, fn: string): asserts n is 1 | 2 | 3 {
  if (n !== 1 && n !== 2 && n !== 3) throw new RangeError(`gx.jit.${fn}: takes 1, 2 or 3 (the grid's dimensions), got ${String(n)}`);
}

/** The absolute index of this thread in the grid: a number for grid(1), [x, y] for grid(2), [x, y, z] for grid(3) (Numba's cuda.grid). */
export function grid(n: 1): number;
export function grid(n: 2): [number, number];
export function grid(n: 3): [number, number, number];
export function grid(n: 1 | 2 | 3): number | number[] {
  checkNdim(n, 'grid');
  return outside('grid');
}

/** The number of threads in the grid per dimension, as grid() (Numba's cuda.gridsize): the stride of a grid-stride loop. */
export function gridsize(n: 1): number;
export function gridsize(n: 2): [number, number];
export function gridsize(n: 3): [number, number, number];
export function gridsize(n: 1 | 2 | 3): number | number[] {
  checkNdim(n, 'gridsize');
  return outside('gridsize');
}

/** Waits until every thread of the block has reached it (__syncthreads). */
export function syncthreads(): void {
  outside('syncthreads');
}

/** Orders this thread's memory writes before its later ones as all threads see them (__threadfence). */
export function threadfence(): void {
  outside('threadfence');
}

/** This thread's lane in its warp (0..31): its linear index in the block modulo warpSize. */
export function laneId(): number {
  return outside('laneId');
}

export type ShflMode = 'down' | 'up' | 'xor' | 'sync';

function shflFn(mode: ShflMode): (value: number, n: number) => number {
  const f = (): number => outside(`shfl.${mode}`);
  Object.defineProperty(f, 'name', { value: mode });
  return f;
}

/**
 * Warp shuffles (__shfl_*_sync over the lanes that reach them): each lane
 * gets `value` of another lane of its warp: down(value, d) from lane + d,
 * up(value, d) from lane - d, xor(value, m) from lane ^ m, sync(value, src)
 * from lane src; a lane whose source is outside the warp keeps its own. The
 * simulator steps a warp's lanes in lockstep to each shuffle.
 */
export const shfl = Object.freeze({ down: shflFn('down'), up: shflFn('up'), xor: shflFn('xor'), sync: shflFn('sync') });

/** The lanes of the warp (reaching this call) whose `predicate` is true, as bits (__ballot_sync). */
export function ballot(predicate: boolean | number): number {
  void predicate;
  return outside('ballot');
}

/** The lanes of the warp reaching this call, as bits (__activemask). */
export function activemask(): number {
  return outside('activemask');
}

/** What a kernel can ask of any array besides its elements. */
export interface ArrayMeta {
  readonly length: number;
  readonly ndim: number;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
}
/** A 1-d tensor as a kernel sees it: elements by index (x[i]), its length and shape. */
export interface Array1d extends ArrayMeta {
  [index: number]: number;
}
/** A 2-d tensor as a kernel sees it: x[i][j] (or x[i, j] in JavaScript). */
export interface Array2d extends ArrayMeta {
  [index: number]: Array1d;
}
/** A 3-d tensor as a kernel sees it: x[i][j][k]. */
export interface Array3d extends ArrayMeta {
  [index: number]: Array2d;
}
/** A block-wide array in shared memory of a static shape (numbers the kernel closes over or literals) and dtype. */
export function sharedArray(shape: number | readonly [number], dtype: DType): Array1d;
export function sharedArray(shape: readonly [number, number], dtype: DType): Array2d;
export function sharedArray(shape: readonly [number, number, number], dtype: DType): Array3d;
export function sharedArray(shape: number | readonly number[], dtype: DType): unknown {
  void shape;
  void dtype;
  return outside('sharedArray');
}

/** A per-thread array of a static shape and dtype (Numba's cuda.local.array). */
export function localArray(shape: number | readonly [number], dtype: DType): Array1d;
export function localArray(shape: readonly [number, number], dtype: DType): Array2d;
export function localArray(shape: readonly [number, number, number], dtype: DType): Array3d;
export function localArray(shape: number | readonly number[], dtype: DType): unknown {
  void shape;
  void dtype;
  return outside('localArray');
}


/** An index of a 1-d array, or [i, j, ...] of an n-d one. */
export type AtomicIndex = number | readonly number[];

function atomicFn(op: Exclude<AtomicOp, 'cas'>): (array: unknown, index: AtomicIndex, value: number) => number {
  const f = (): number => outside(`atomic.${op}`);
  Object.defineProperty(f, 'name', { value: op });
  return f;
}

/**
 * Atomic read-modify-write of one element of a tensor or shared array
 * (Numba's cuda.atomic): each returns the element's old value. add, sub, min,
 * max and exch work on int32, int64, float32 and float64 arrays; and, or, xor
 * on int32 and int64; cas(array, index, compare, value) writes value where
 * the element equals compare.
 */
export const atomic = Object.freeze({
  add: atomicFn('add'),
  sub: atomicFn('sub'),
  min: atomicFn('min'),
  max: atomicFn('max'),
  exch: atomicFn('exch'),
  and: atomicFn('and'),
  or: atomicFn('or'),
  xor: atomicFn('xor'),
  cas(array: unknown, index: AtomicIndex, compare: number, value: number): number {
    void [array, index, compare, value];
    return outside('atomic.cas');
  },
});

/** What the translator makes of a value a kernel refers to: its entry in intrinsic-table.ts and which of its kind (an axis, an atomic op, a shuffle's mode). */
export interface Intrinsic {
  name: IntrinsicName;
  variant?: string;
}

export const INTRINSICS = new Map<unknown, Intrinsic>([
  [threadIdx, { name: 'threadIdx' }],
  [blockIdx, { name: 'blockIdx' }],
  [blockDim, { name: 'blockDim' }],
  [gridDim, { name: 'gridDim' }],
  [grid, { name: 'grid' }],
  [gridsize, { name: 'gridsize' }],
  [syncthreads, { name: 'syncthreads' }],
  [threadfence, { name: 'threadfence' }],
  [sharedArray, { name: 'sharedArray' }],
  [localArray, { name: 'localArray' }],
  ...Object.entries(atomic).map(([op, f]): [unknown, Intrinsic] => [f, { name: 'atomic', variant: op }]),
  [laneId, { name: 'laneId' }],
  [ballot, { name: 'ballot' }],
  [activemask, { name: 'activemask' }],
  ...Object.entries(shfl).map(([mode, f]): [unknown, Intrinsic] => [f, { name: 'shfl', variant: mode }]),
]);
