// The CPU simulator of gx.jit.rawkernel (as Numba's CUDA simulator): the
// user's function itself runs once per thread with gx.jit's intrinsics bound
// to that thread. Where the kernel calls syncthreads() its source is turned
// into a generator that yields there, and the threads of a block are stepped
// in turns, one barrier at a time; shared arrays are per block, atomics
// exact (one thread runs at a time). Tensors are seen through proxies that
// check every index and throw with the thread's coordinates, so kernels are
// testable without a GPU and debuggable in the JS debugger.
import type * as acorn from 'acorn';

import { VALUE_ARRAY, type DType } from '../generated/dtypes';
import { tensor } from '../creation';
import { contiguousStrides } from '../shape';
import { Tensor } from '../tensor';
import { staticValueOf, type Lookup } from './closure';
import { INTRINSICS, sim, type AtomicOp, type Dim3Value, type SimHooks, type SimThread } from './intrinsics';
import { referencedNames, type ParsedFunction } from './source';

/** What a simulated array holds: its values (float16 as float32, int64 as bigint) in C order. */
interface ArrayState {
  label: string;
  dtype: DType;
  data: Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | BigInt64Array | Uint8Array;
  shape: number[];
  strides: number[];
  offset: number;
  /** Shared by an array and its rows: whether the kernel wrote it (then it is copied back). */
  flags: { written: boolean };
}

const STATE = Symbol('gx.jit.simulated');

function read(a: ArrayState, at: number): number | boolean {
  const v = a.data[at];
  if (a.dtype === 'bool') return v !== 0;
  return typeof v === 'bigint' ? Number(v) : v;
}

function write(a: ArrayState, at: number, v: unknown): void {
  a.flags.written = true;
  if (a.dtype === 'int64') {
    const n = Number(v);
    (a.data as BigInt64Array)[at] = Number.isFinite(n) ? BigInt(Math.trunc(n)) : 0n;
  } else if (a.dtype === 'bool') {
    a.data[at] = v ? 1 : 0;
  } else {
    (a.data as Float64Array)[at] = Number(v);
  }
}

/** The flat position of `idx` in `a`, every index checked. */
function position(a: ArrayState, idx: readonly number[]): number {
  if (idx.length !== a.shape.length) {
    throw new RangeError(`${a.label} has ${a.shape.length} dimension${a.shape.length === 1 ? '' : 's'}; indexed with ${idx.length}`);
  }
  let at = a.offset;
  for (let d = 0; d < idx.length; d++) {
    const i = idx[d];
    if (!Number.isInteger(i)) throw new RangeError(`index ${String(i)} of ${a.label} (dimension ${d}) is not an integer`);
    if (i < 0 || i >= a.shape[d]) throw new RangeError(`index ${i} is out of range for dimension ${d} of ${a.label} (size ${a.shape[d]})`);
    at += i * a.strides[d];
  }
  return at;
}

/** `a[i]`, `a[i][j]` and (from a rewritten `a[i, j]`) `a['i,j']`, read and written through a proxy. */
function arrayProxy(a: ArrayState): unknown {
  const rank = a.shape.length;
  const indexOf = (key: string): number[] | undefined => {
    if (key === '' || !/^-?[\d.e+-]+(,-?[\d.e+-]+)*$/i.test(key)) return undefined;
    return key.split(',').map(Number);
  };
  return new Proxy(Object.create(null) as object, {
    get(_, key) {
      if (key === STATE) return a;
      if (typeof key === 'symbol') return undefined;
      const idx = indexOf(key);
      if (idx !== undefined) {
        if (idx.length === rank) return read(a, position(a, idx));
        if (idx.length === 1 && rank > 1) {
          // a[i] of an n-d array: the (n-1)-d row, for a[i][j].
          position({ ...a, shape: [a.shape[0]], strides: [a.strides[0]] }, idx);
          const row: ArrayState = { ...a, shape: a.shape.slice(1), strides: a.strides.slice(1), offset: a.offset + idx[0] * a.strides[0] };
          return arrayProxy(row);
        }
        return position(a, idx);
      }
      switch (key) {
        case 'length': return a.shape[0];
        case 'ndim': return rank;
        case 'shape': return [...a.shape];
        case 'strides': return [...a.strides];
        default: throw new TypeError(`${a.label} has length, ndim, shape and strides, and elements ${a.label}[i]; not '${key}'`);
      }
    },
    set(_, key, value) {
      const idx = typeof key === 'string' ? indexOf(key) : undefined;
      if (idx === undefined) throw new TypeError(`only elements of ${a.label} can be written`);
      write(a, position(a, idx), value);
      return true;
    },
  });
}

function stateOf(array: unknown, fn: string): ArrayState {
  const s = array !== null && typeof array === 'object' ? (array as { [STATE]?: ArrayState })[STATE] : undefined;
  if (s === undefined) throw new TypeError(`gx.jit.${fn}: the first argument must be a tensor argument or a shared array of the kernel`);
  return s;
}

function newArray(label: string, shape: readonly number[], dtype: DType): ArrayState {
  const n = shape.reduce((x, y) => x * y, 1);
  return { label, dtype, data: new VALUE_ARRAY[dtype](n), shape: [...shape], strides: contiguousStrides(shape), offset: 0, flags: { written: false } };
}

function applyAtomic(op: AtomicOp, old: number, v: number, compare: number | undefined): number {
  switch (op) {
    case 'add': return old + v;
    case 'sub': return old - v;
    case 'min': return v < old ? v : old;
    case 'max': return v > old ? v : old;
    case 'exch': return v;
    case 'cas': return old === compare ? v : old;
    case 'and': return old & v;
    case 'or': return old | v;
    case 'xor': return old ^ v;
  }
}

/** A kernel's source as the simulator runs it: a generator when it waits at syncthreads(), with `a[i, j]` read as two indices. */
export interface SimulatedKernel {
  readonly generator: boolean;
  readonly fn: (...args: unknown[]) => unknown;
}

/** Rebuilds the user's function with its closure's values, rewritten for the simulator. */
export function simulatedKernel(f: ParsedFunction, lookup: Lookup, api: string): SimulatedKernel {
  const body = f.body;
  if (body.type !== 'BlockStatement') throw new TypeError(`${api}: a kernel needs a block body { ... }`);
  const edits: { start: number; end: number; text: string }[] = [];
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      n.forEach(visit);
      return;
    }
    if (n === null || typeof n !== 'object' || typeof (n as { type?: unknown }).type !== 'string') return;
    const node = n as acorn.AnyNode;
    if (node.type === 'CallExpression' && INTRINSICS.get(staticValueOf(node.callee, lookup))?.kind === 'syncthreads') {
      edits.push({ start: node.start, end: node.end, text: '(yield 0)' });
      return;
    }
    if (node.type === 'MemberExpression' && node.computed && node.property.type === 'SequenceExpression') {
      const p = node.property;
      edits.push({ start: p.start, end: p.start, text: '[' }, { start: p.end, end: p.end, text: ']' });
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'type') visit(v);
  };
  visit(body);
  let text = f.text.slice(body.start, body.end);
  for (const e of edits.sort((x, y) => y.start - x.start || y.end - x.end)) {
    text = text.slice(0, e.start - body.start) + e.text + text.slice(e.end - body.start);
  }
  const generator = edits.some((e) => e.text === '(yield 0)');
  const names = [...referencedNames(f)].filter((n) => lookup(n).found && /^[A-Za-z_$][\w$]*$/.test(n));
  // eslint-disable-next-line no-new-func
  const make = new Function(...names, `"use strict"; return function${generator ? '*' : ''} gx_simulated(${f.params.join(', ')}) ${text};`);
  return { generator, fn: make(...names.map((n) => lookup(n).value)) as (...args: unknown[]) => unknown };
}

const dim3 = (x: number, y: number, z: number): Dim3Value => ({ x, y, z });

/**
 * Runs `k` on grid x block threads with `args` (CPU tensors, numbers), as
 * the GPU would: tensors are read into arrays, the written ones copied back.
 */
export function simulate(k: SimulatedKernel, api: string, grid: readonly number[], block: readonly number[],
  params: readonly string[], args: readonly unknown[]): void {
  const states: (ArrayState | undefined)[] = [];
  const values = args.map((a, i) => {
    if (a instanceof Tensor) {
      const s: ArrayState = {
        label: params[i], dtype: a.dtype, data: a.toArraySync(), shape: [...a.shape], strides: contiguousStrides(a.shape), offset: 0, flags: { written: false },
      };
      states[i] = s;
      return arrayProxy(s);
    }
    return typeof a === 'bigint' ? Number(a) : a;
  });
  const gridDim = dim3(grid[0], grid[1], grid[2]);
  const blockDim = dim3(block[0], block[1], block[2]);
  let shared: ArrayState[] = [];
  let thread: SimThread & { sharedCalls: number } = { threadIdx: dim3(0, 0, 0), blockIdx: dim3(0, 0, 0), blockDim, gridDim, sharedCalls: 0 };
  const hooks: SimHooks = {
    get thread() { return thread; },
    sharedArray(shape, dtype) {
      const k = thread.sharedCalls++;
      shared[k] ??= newArray(`shared array ${k}`, shape, dtype);
      return arrayProxy(shared[k]);
    },
    localArray: (shape, dtype) => arrayProxy(newArray('local array', shape, dtype)),
    atomic(op, array, index, value, compare) {
      const s = stateOf(array, `atomic.${op}`);
      const at = position(s, typeof index === 'number' ? [index] : index);
      const old = read(s, at) as number;
      write(s, at, applyAtomic(op, old, Number(value), compare));
      return old;
    },
  } as SimHooks;
  const where = (): string =>
    `thread (${thread.threadIdx.x}, ${thread.threadIdx.y}, ${thread.threadIdx.z}) of block (${thread.blockIdx.x}, ${thread.blockIdx.y}, ${thread.blockIdx.z})`;
  const outer = sim.hooks;
  sim.hooks = hooks;
  try {
    for (let bz = 0; bz < grid[2]; bz++) for (let by = 0; by < grid[1]; by++) for (let bx = 0; bx < grid[0]; bx++) {
      shared = [];
      const blockIdx = dim3(bx, by, bz);
      const threads: (SimThread & { sharedCalls: number })[] = [];
      for (let tz = 0; tz < block[2]; tz++) for (let ty = 0; ty < block[1]; ty++) for (let tx = 0; tx < block[0]; tx++) {
        threads.push({ threadIdx: dim3(tx, ty, tz), blockIdx, blockDim, gridDim, sharedCalls: 0 });
      }
      try {
        if (!k.generator) {
          for (const t of threads) {
            thread = t;
            k.fn(...values);
          }
          continue;
        }
        let live = threads.map((t) => {
          thread = t;
          return { t, g: k.fn(...values) as Generator };
        });
        while (live.length > 0) {
          live = live.filter(({ t, g }) => {
            thread = t;
            return !g.next().done;
          });
        }
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        e.message = `${api}: ${where()}: ${e.message}`;
        throw e;
      }
    }
  } finally {
    sim.hooks = outer;
  }
  states.forEach((s, i) => {
    if (s === undefined || !s.flags.written) return;
    const t = args[i] as Tensor;
    using back = tensor(s.data as Float32Array, { dtype: t.dtype, shape: t.shape }) as Tensor;
    t.copy_(back);
  });
}
