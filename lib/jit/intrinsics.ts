// gx.jit's intrinsics as JavaScript values: what a kernel's source refers to
// (`jit.threadIdx.x`, `jit.grid(1)`, `jit.syncthreads()`, `jit.atomic.add`,
// `jit.sharedArray`), recognized by identity when a kernel is translated to
// CUDA, and the same values doing the work when the CPU simulator runs the
// kernel itself (they read the simulated thread from `sim`).
import type { DType } from '../generated/dtypes';

/** The simulated thread a kernel's code runs as (simulator.ts sets it before each step). */
export interface SimThread {
  readonly threadIdx: Dim3Value;
  readonly blockIdx: Dim3Value;
  readonly blockDim: Dim3Value;
  readonly gridDim: Dim3Value;
}
export interface Dim3Value {
  readonly x: number;
  readonly y: number;
  readonly z: number;
}

/** What the simulator provides while it runs a kernel's threads. */
export interface SimHooks {
  thread: SimThread;
  /** The block's k-th shared array of this thread's calls (made by the first thread that asks). */
  sharedArray(shape: readonly number[], dtype: DType): unknown;
  localArray(shape: readonly number[], dtype: DType): unknown;
  atomic(op: AtomicOp, array: unknown, index: number | readonly number[], value: number, compare?: number): number;
}

export const sim: { hooks: SimHooks | undefined } = { hooks: undefined };

function hooks(what: string): SimHooks {
  const h = sim.hooks;
  if (h === undefined) {
    throw new Error(`gx.jit.${what}: only has a meaning inside a kernel (gx.jit.rawkernel), which translates it or runs it on the simulator`);
  }
  return h;
}

/** A dim3 of the simulated thread (threadIdx, blockIdx, blockDim, gridDim), read by x / y / z. */
function dim3(name: keyof SimThread): Dim3Value {
  return Object.freeze({
    get x(): number { return hooks(`${name}.x`).thread[name].x; },
    get y(): number { return hooks(`${name}.y`).thread[name].y; },
    get z(): number { return hooks(`${name}.z`).thread[name].z; },
  });
}

export const threadIdx = dim3('threadIdx');
export const blockIdx = dim3('blockIdx');
export const blockDim = dim3('blockDim');
export const gridDim = dim3('gridDim');

/** The threads per warp. */
export const warpSize = 32;

const AXES = ['x', 'y', 'z'] as const;

function checkNdim(n: unknown, fn: string): asserts n is 1 | 2 | 3 {
  if (n !== 1 && n !== 2 && n !== 3) throw new RangeError(`gx.jit.${fn}: takes 1, 2 or 3 (the grid's dimensions), got ${String(n)}`);
}

/** The absolute index of this thread in the grid: a number for grid(1), [x, y] for grid(2), [x, y, z] for grid(3) (Numba's cuda.grid). */
export function grid(n: 1): number;
export function grid(n: 2): [number, number];
export function grid(n: 3): [number, number, number];
export function grid(n: 1 | 2 | 3): number | number[] {
  checkNdim(n, 'grid');
  const t = hooks('grid').thread;
  const at = AXES.slice(0, n).map((a) => t.blockIdx[a] * t.blockDim[a] + t.threadIdx[a]);
  return n === 1 ? at[0] : at;
}

/** The number of threads in the grid per dimension, as grid() (Numba's cuda.gridsize): the stride of a grid-stride loop. */
export function gridsize(n: 1): number;
export function gridsize(n: 2): [number, number];
export function gridsize(n: 3): [number, number, number];
export function gridsize(n: 1 | 2 | 3): number | number[] {
  checkNdim(n, 'gridsize');
  const t = hooks('gridsize').thread;
  const at = AXES.slice(0, n).map((a) => t.gridDim[a] * t.blockDim[a]);
  return n === 1 ? at[0] : at;
}

/**
 * Waits until every thread of the block has reached it (__syncthreads). The
 * simulator turns the kernel into a generator that yields here; called any
 * other way (from a device function on the simulator) it cannot wait.
 */
export function syncthreads(): void {
  hooks('syncthreads');
  throw new Error('gx.jit.syncthreads: the simulator can wait only at a syncthreads() written in the kernel itself, not in a device function it calls');
}

/** Orders this thread's memory writes before its later ones as all threads see them (__threadfence). */
export function threadfence(): void {
  hooks('threadfence');
}

/** Warp intrinsics have a meaning only in a kernel, which translates them or runs them on the simulator. */
function warpOnly(name: string): never {
  throw new Error(`gx.jit.${name}: only has a meaning inside a kernel (gx.jit.rawkernel), which translates it or runs it on the simulator`);
}

/** This thread's lane in its warp (0..31): its linear index in the block modulo warpSize. */
export function laneId(): number {
  return warpOnly('laneId');
}

export type ShflMode = 'down' | 'up' | 'xor' | 'sync';

function shflFn(mode: ShflMode): (value: number, n: number) => number {
  const f = (): number => warpOnly(`shfl.${mode}`);
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
  return warpOnly('ballot');
}

/** The lanes of the warp reaching this call, as bits (__activemask). */
export function activemask(): number {
  return warpOnly('activemask');
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
  return hooks('sharedArray').sharedArray(typeof shape === 'number' ? [shape] : shape, dtype);
}

/** A per-thread array of a static shape and dtype (Numba's cuda.local.array). */
export function localArray(shape: number | readonly [number], dtype: DType): Array1d;
export function localArray(shape: readonly [number, number], dtype: DType): Array2d;
export function localArray(shape: readonly [number, number, number], dtype: DType): Array3d;
export function localArray(shape: number | readonly number[], dtype: DType): unknown {
  return hooks('localArray').localArray(typeof shape === 'number' ? [shape] : shape, dtype);
}

export type AtomicOp = 'add' | 'sub' | 'min' | 'max' | 'exch' | 'cas' | 'and' | 'or' | 'xor';

/** An index of a 1-d array, or [i, j, ...] of an n-d one. */
export type AtomicIndex = number | readonly number[];

function atomicFn(op: Exclude<AtomicOp, 'cas'>): (array: unknown, index: AtomicIndex, value: number) => number {
  const f = (array: unknown, index: AtomicIndex, value: number): number => hooks(`atomic.${op}`).atomic(op, array, index, value);
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
    return hooks('atomic.cas').atomic('cas', array, index, value, compare);
  },
});

/** What the translator makes of a value a kernel refers to. */
export type Intrinsic =
  | { kind: 'dim3'; c: 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim' }
  | { kind: 'grid' | 'gridsize' | 'syncthreads' | 'threadfence' | 'sharedArray' | 'localArray' }
  | { kind: 'atomic'; op: AtomicOp }
  | { kind: 'laneId' | 'ballot' | 'activemask' }
  | { kind: 'shfl'; mode: ShflMode };

export const INTRINSICS = new Map<unknown, Intrinsic>([
  [threadIdx, { kind: 'dim3', c: 'threadIdx' }],
  [blockIdx, { kind: 'dim3', c: 'blockIdx' }],
  [blockDim, { kind: 'dim3', c: 'blockDim' }],
  [gridDim, { kind: 'dim3', c: 'gridDim' }],
  [grid, { kind: 'grid' }],
  [gridsize, { kind: 'gridsize' }],
  [syncthreads, { kind: 'syncthreads' }],
  [threadfence, { kind: 'threadfence' }],
  [sharedArray, { kind: 'sharedArray' }],
  [localArray, { kind: 'localArray' }],
  ...Object.entries(atomic).map(([op, f]): [unknown, Intrinsic] => [f, { kind: 'atomic', op: op as AtomicOp }]),
  [laneId, { kind: 'laneId' }],
  [ballot, { kind: 'ballot' }],
  [activemask, { kind: 'activemask' }],
  ...Object.entries(shfl).map(([mode, f]): [unknown, Intrinsic] => [f, { kind: 'shfl', mode: mode as ShflMode }]),
]);
