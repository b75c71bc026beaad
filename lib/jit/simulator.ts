// The CPU simulator of gx.jit.rawkernel (as Numba's CUDA simulator): the
// kernel's typed IR, compiled by interpret.ts, runs once per thread. Where
// the kernel waits at syncthreads() the threads of a block are stepped in
// turns, one barrier at a time; shared arrays are per block, atomics exact
// (one thread runs at a time). Every index is checked (an error names the
// thread); a launch is bounded (MAX_THREADS, STEP_BUDGET) so a kernel that
// does not end, or a grid no CPU can run, is an error naming the kernel. A
// tensor passed twice (or two views of the same elements) is one array, as
// on the GPU. In { debug: true } kernels, a read of a shared slot another
// thread of the block wrote since the last barrier is reported (race.ts).
import { INTEGER_RANGE, VALUE_ARRAY, type DType } from '../generated/dtypes';
import { tensor } from '../ops/creation/creation';
import { contiguousStrides } from '../core/shape';
import { copyValues, Tensor } from '../core/tensor';
import type { CompiledKernel, SimArray, SimBlock, SimState, SimThread, WarpRequest } from './interpret';
import { RaceCheck } from './race';

/** The most threads one simulated launch runs. */
export const MAX_THREADS = 2 ** 24;
/** The most loop iterations (all threads together) one simulated launch runs. */
export const STEP_BUDGET = 2 ** 27;

/** An array over `data` (C order, `shape`); `strides` is what the kernel reads as x.strides. */
export function simArray(label: string, dtype: DType, data: SimArray['d'], shape: readonly number[], strides = contiguousStrides(shape)): SimArray {
  const N = shape.map(BigInt);
  const cs = contiguousStrides(shape);
  const check = (i: bigint, d: number): number => {
    if (i < 0n || i >= N[d]) throw new RangeError(`index ${i} is out of range for dimension ${d} of ${label} (size ${N[d]})`);
    return Number(i);
  };
  const at = shape.length === 1 ? (i: bigint): number => check(i, 0)
    : (...idx: bigint[]): number => {
      let off = 0;
      for (let d = 0; d < idx.length; d++) off += check(idx[d], d) * cs[d];
      return off;
    };
  return { label, dtype, d: data, N, S: strides.map(BigInt), at };
}

const newArray = (label: string, dtype: DType, extents: readonly number[]): SimArray =>
  simArray(label, dtype, new VALUE_ARRAY[dtype](extents.reduce((a, b) => a * b, 1)), extents);

const [INT64_MIN, INT64_MAX] = INTEGER_RANGE.int64;

/** An integer argument as the kernel's int64, refused out of its range as CUDA's launch refuses it (it wrapped here). */
function int64Arg(v: bigint, api: string, name: string, shown: number | bigint): bigint {
  if (v < INT64_MIN || v > INT64_MAX) {
    throw new RangeError(`${api}: argument '${name}' is int64 but ${String(shown)} is out of its range [${INT64_MIN}, ${INT64_MAX}]`);
  }
  return v;
}

/** The tensors' elements as arrays, one per distinct layout of memory (an aliased tensor is one array). */
function readArgs(api: string, params: readonly string[], args: readonly unknown[]): { values: unknown[]; back: [Tensor, SimArray['d']][] } {
  const seen: { t: Tensor; data: SimArray['d'] }[] = [];
  const back: [Tensor, SimArray['d']][] = [];
  const values = args.map((a, i) => {
    if (!(a instanceof Tensor)) {
      if (typeof a === 'number' && Number.isInteger(a)) return int64Arg(BigInt(a), api, params[i], a);
      return typeof a === 'bigint' ? int64Arg(a, api, params[i], a) : a;
    }
    const same = seen.find((s) => s.t === a || (s.t.dtype === a.dtype && s.t.address() === a.address() && sameLayout(s.t, a)));
    let data = same?.data;
    if (data === undefined) {
      data = a.toArraySync() as SimArray['d'];
      seen.push({ t: a, data });
      back.push([a, data]);
    }
    return simArray(params[i], a.dtype, data, a.shape, [...a.strides]);
  });
  return { values, back };
}

const sameLayout = (a: Tensor, b: Tensor): boolean =>
  a.shape.length === b.shape.length && a.shape.every((n, d) => n === b.shape[d] && a.strides[d] === b.strides[d]);

/** A thread of a block as the scheduler steps it: waiting at a barrier, at a warp operation, or runnable. */
interface Lane {
  readonly t: SimThread;
  readonly id: number;
  readonly g: ReturnType<CompiledKernel>;
  done: boolean;
  wait: undefined | 'barrier' | WarpRequest;
  /** The line where it waits. */
  line: number;
  result: unknown;
}

/**
 * Steps a block's threads: each runs until it waits (a barrier, a warp
 * operation) or ends; a warp whose live lanes all wait at one warp operation
 * gets its results (lockstep); when every live thread waits at a barrier, all
 * go on (a barrier phase).
 */
function runBlock(lanes: Lane[], setCurrent: (t: SimThread) => void, race: RaceCheck | undefined): void {
  for (;;) {
    for (const l of lanes) {
      if (l.done || l.wait !== undefined) continue;
      setCurrent(l.t);
      const r = l.g.next(l.result);
      l.result = undefined;
      if (r.done === true) l.done = true;
      else if (typeof r.value === 'number') {
        l.wait = 'barrier';
        l.line = r.value;
      } else {
        l.wait = r.value;
        l.line = r.value.line;
      }
    }
    const alive = lanes.filter((l) => !l.done);
    if (alive.length === 0) return;
    let progressed = false;
    for (let w = 0; w < lanes.length; w += 32) {
      const warp = lanes.slice(w, w + 32).filter((l) => !l.done);
      if (warp.length > 0 && warp.every((l) => l.wait !== undefined && l.wait !== 'barrier')) {
        resolveWarp(warp, setCurrent);
        progressed = true;
      }
    }
    if (progressed) continue;
    if (alive.every((l) => l.wait === 'barrier')) {
      for (const l of alive) l.wait = undefined;
      race?.barrier();
      continue;
    }
    const atWarp = alive.find((l) => l.wait !== 'barrier') as Lane;
    const atBarrier = alive.find((l) => l.wait === 'barrier' && Math.floor(l.id / 32) === Math.floor(atWarp.id / 32)) ?? alive.find((l) => l.wait === 'barrier') as Lane;
    setCurrent(atWarp.t);
    throw new Error(`waits at a warp operation (line ${atWarp.line}) that thread (${atBarrier.t.tx}, ${atBarrier.t.ty}, ${atBarrier.t.tz}) ` +
      `never reaches (it waits at syncthreads(), line ${atBarrier.line}): every live lane of a warp must reach its warp operations`);
  }
}

/** The results of one warp operation for the warp's live lanes (all waiting at it). */
function resolveWarp(warp: Lane[], setCurrent: (t: SimThread) => void): void {
  const first = warp[0].wait as WarpRequest;
  const byLane = new Map<number, Lane>(warp.map((l) => [l.id % 32, l]));
  let mask = 0n;
  for (const l of warp) {
    if ((l.wait as WarpRequest).site !== first.site) {
      setCurrent(l.t);
      throw new Error(`the lanes of a warp diverge: this one waits at the warp operation of line ${l.line}, ` +
        `lane ${warp[0].id % 32} at line ${first.line}; every live lane must reach the same one`);
    }
    mask |= 1n << BigInt(l.id % 32);
  }
  for (const l of warp) {
    const q = l.wait as WarpRequest;
    const lane = l.id % 32;
    if (q.op === 'activemask') l.result = mask;
    else if (q.op === 'ballot') {
      let bits = 0n;
      for (const [k, o] of byLane) if ((o.wait as WarpRequest).v === true) bits |= 1n << BigInt(k);
      l.result = bits;
    } else {
      const n = q.n ?? 0;
      const src = q.op === 'down' ? lane + n : q.op === 'up' ? lane - n : q.op === 'xor' ? lane ^ n : n & 31;
      if (src < 0 || src > 31) l.result = q.v;
      else {
        const o = byLane.get(src);
        if (o === undefined) {
          setCurrent(l.t);
          throw new Error(`shfl.${q.op} at line ${q.line} reads lane ${src}, which is not at it (it has ended, or is beyond the block)`);
        }
        l.result = (o.wait as WarpRequest).v;
      }
    }
  }
  for (const l of warp) l.wait = undefined;
}

const where = (t: SimThread): string => `thread (${t.tx}, ${t.ty}, ${t.tz}) of block (${t.bx}, ${t.by}, ${t.bz})`;

/**
 * Runs `k` on grid x block threads with `args` (CPU tensors, numbers), as
 * the GPU would: tensors are read into arrays, then written back.
 */
export function simulate(k: CompiledKernel, api: string, text: string, grid: readonly number[], block: readonly number[],
  params: readonly string[], args: readonly unknown[], debug: boolean): void {
  const threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2];
  if (threads > MAX_THREADS) {
    throw new RangeError(`${api}: the CPU simulator runs at most ${MAX_THREADS} threads; this launch has ${threads} ` +
      `(grid [${grid.join(', ')}], block [${block.join(', ')}]); run it on CUDA, or launch fewer threads`);
  }
  const { values, back } = readArgs(api, params, args);
  const race = debug ? new RaceCheck(text, block) : undefined;
  let current: SimThread = { tx: 0, ty: 0, tz: 0, bx: 0n, by: 0n, bz: 0n };
  const S: SimState = {
    bd: [block[0], block[1], block[2]],
    gd: [BigInt(grid[0]), BigInt(grid[1]), BigInt(grid[2])],
    steps: STEP_BUDGET,
    over(): never {
      throw new RangeError(`the simulator stopped after ${STEP_BUDGET} loop iterations (a loop that never ends?)`);
    },
    local: (dtype, extents, label) => newArray(label, dtype, extents),
    rd: (a, off, at) => (race === undefined ? off : race.read(a, off, at, current)),
    wr: (a, off, at) => (race === undefined ? off : race.write(a, off, at, current)),
  };
  for (let bz = 0; bz < grid[2]; bz++) for (let by = 0; by < grid[1]; by++) for (let bx = 0; bx < grid[0]; bx++) {
    const shared = new Map<number, SimArray>();
    const B: SimBlock = {
      shared: (id, dtype, extents, label) => {
        let a = shared.get(id);
        if (a === undefined) shared.set(id, (a = newArray(label, dtype, extents)));
        return a;
      },
    };
    const ts: SimThread[] = [];
    for (let tz = 0; tz < block[2]; tz++) for (let ty = 0; ty < block[1]; ty++) for (let tx = 0; tx < block[0]; tx++) {
      ts.push({ tx, ty, tz, bx: BigInt(bx), by: BigInt(by), bz: BigInt(bz) });
    }
    race?.block();
    try {
      runBlock(ts.map((t, id) => ({ t, id, g: k(t, S, B, values), done: false, wait: undefined, line: 0, result: undefined })),
        (t) => { current = t; }, race);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      e.message = `${api}: ${where(current)}: ${e.message}`;
      throw e;
    }
  }
  for (const [t, data] of back) {
    using b = tensor(data as Float32Array, { dtype: t.dtype, shape: t.shape }) as Tensor;
    copyValues(t, b, api);
  }
}
