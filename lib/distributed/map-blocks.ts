// gx.mapBlocks (Dask's da.map_blocks): a function, or a kernel launch plan
// (block-launch.ts), called on matching blocks of chunked inputs
// (NOTE [ Chunk rules ] in chunked.ts), with the blocks on more than one GPU
// running at once.
//
// NOTE [ Block tables ]
// What mapBlocks works out from its inputs alone (that their chunks line up,
// which input block and which device go with each output block, which
// arguments must be copied to a block's device, where each block starts) does
// not change while the same inputs come again, and a program calls mapBlocks
// on the same chunked tensors over and over. So it is kept, per first chunked
// argument with the most dimensions (a key found without reading any chunks;
// the output's shape, chunks and ranks are in the table), in a table that the
// next call with the same arguments (the same objects, numbers of the same
// value) takes as it is. Working it out again took 55 µs of host time per
// call on a lent H200 host, before the first block could start: V8 runs a
// function called a few dozen times unoptimized, and mapBlocks is called far
// fewer times than its blocks. A table holds its arguments through WeakRefs
// and the blocks by their position, so it keeps no input alive; the copies
// between devices and every check of a block's result are made on every call
// (a replicated input has its copies already: NOTE [ Replicated blocks ]).
import type { Device } from '../core/device';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { Tensor } from '../core/tensor';
import { currentStream, Stream, withStream } from '../core/stream';
import { ownedTensors } from '../core/tidy';
import type { DType } from '../generated/dtypes';
import { launcherFor, type BlockLaunch } from './block-launch';
import { gridIndices, offsetsOf } from './chunk-grid';
import { ChunkedTensor, type RankPlacement } from './chunked';

export interface MapBlocksOptions {
  /** The output's dtype, checked on every block (default: whatever the function returns, the same for every block). */
  dtype?: DType;
  /** Append { index, offset, device } of the block to the function's arguments. */
  blockInfo?: boolean;
  /** Blocks on one GPU take turns over this many streams of it, so their kernels overlap (default 1: the current stream). */
  streams?: number;
}

const MAP_KEYS = optionKeys<MapBlocksOptions>({ dtype: true, blockInfo: true, streams: true });

/** Streams mapBlocks reuses, per device (made once: creating a stream costs more than a small kernel). */
const streamPools = new Map<string, Stream[]>();

function streamPool(device: Device, n: number): Stream[] {
  const key = String(device);
  const pool = streamPools.get(key) ?? [];
  while (pool.length < n) pool.push(new Stream({ device }));
  streamPools.set(key, pool);
  return pool.slice(0, n);
}

/** Runs blocks in turn over `n` streams of each GPU (NOTE [ Chunk rules ]); with n = 1 mapBlocks calls them directly. */
class BlockLanes {
  private readonly used = new Map<string, { current: Stream; lanes: Stream[]; next: number; joined: Set<Stream> }>();

  constructor(private readonly n: number) {}

  run<T extends Tensor>(device: Device, body: () => T): T {
    const key = String(device);
    let d = this.used.get(key);
    if (d === undefined) this.used.set(key, (d = { current: currentStream(device), lanes: streamPool(device, this.n), next: 0, joined: new Set() }));
    const lane = d.lanes[d.next++ % d.lanes.length];
    lane.waitStream(d.current);  // after the inputs (and their copies to this device) are ready
    d.joined.add(lane);
    const out = withStream(lane, body);
    if (out instanceof Tensor && out.device.equals(device)) out.recordStream(d.current);
    return out;
  }

  /** The callers' current streams wait for every stream used. */
  join(): void {
    for (const d of this.used.values()) for (const lane of d.joined) d.current.waitStream(lane);
  }
}

/** Whether two lists of chunk extents are equal (compared in place). */
function sameExtents(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether `shape` is the block at `idx` of a grid of `chunks` (compared in place: this runs per block). */
function blockShaped(shape: readonly number[], chunks: readonly (readonly number[])[], idx: readonly number[]): boolean {
  if (shape.length !== idx.length) return false;
  for (let d = 0; d < idx.length; d++) if (shape[d] !== chunks[d][idx[d]]) return false;
  return true;
}

/** Where a block is: its index in the grid, its first element's position in the whole tensor, its device. */
export interface BlockInfo {
  index: number[];
  offset: number[];
  device: Device;
}

type MapArg = ChunkedTensor | Tensor | number;

/** One output block's part of a table: undefined in a table's rows where another rank holds the block. */
interface BlockRow {
  index: readonly number[];
  offset: readonly number[];
  device: Device;
  /** Per argument: the position of its block (a chunked input), or -1 (passed whole). */
  at: Int32Array;
  /** Per argument: which copy of its block is on the block's device (a replicated input; NOTE [ Replicated blocks ]), or -1. */
  copy: Int32Array;
  /** The arguments that are on another device than the block's, copied to it on every call. */
  moves: readonly number[];
}

/** An argument as a table keeps it: an object (or function) by WeakRef, any other value as it is. */
type Kept = { ref: WeakRef<object> } | { value: unknown };

/** What mapBlocks worked out from its arguments (NOTE [ Block tables ]). */
interface BlockTable {
  args: readonly Kept[];
  /** The output's shape, chunks and ranks: the broadcast of the inputs' (NOTE [ Chunk rules ]). */
  shape: readonly number[];
  chunks: readonly (readonly number[])[];
  placement: RankPlacement | undefined;
  /** The output's dtype when it has no block. */
  dtype: DType;
  rows: readonly (BlockRow | undefined)[];
}

function keep(a: unknown): Kept {
  return (typeof a === 'object' && a !== null) || typeof a === 'function' ? { ref: new WeakRef(a) } : { value: a };
}

/** Tables by the first chunked argument with the most dimensions: a key only, found without looking at chunks (NOTE [ Block tables ]). */
const tables = new WeakMap<ChunkedTensor, BlockTable>();

function tableHolds(t: BlockTable, args: readonly MapArg[]): boolean {
  if (t.args.length !== args.length) return false;
  for (let i = 0; i < args.length; i++) {
    const kept = t.args[i], a: unknown = args[i];
    // The same object, or a value equal by SameValueZero (NaN is NaN, as a number passed again is).
    if ('ref' in kept ? kept.ref.deref() !== a : kept.value !== a && !(kept.value !== kept.value && a !== a)) return false;
  }
  return true;
}

/** Whether dimension d of a chunked input is broadcast: one element in one block (Dask's rule). */
const broadcastAlong = (a: ChunkedTensor, d: number): boolean => a.shape[d] === 1 && a.chunks[d].length === 1;

/**
 * The output's shape and chunks: the broadcast of the chunked inputs', aligned
 * from the right, each dimension from the first input not broadcast along it;
 * every other input must have the same chunks there (NOTE [ Chunk rules ]).
 */
function broadcastChunks(api: string, args: readonly MapArg[], nd: number): { shape: number[]; chunks: (readonly number[])[] } {
  const shape: number[] = new Array(nd).fill(1);
  const chunks: (readonly number[])[] = new Array(nd).fill([1]);
  const from: number[] = new Array(nd).fill(-1);
  args.forEach((a, i) => {
    if (!(a instanceof ChunkedTensor)) return;
    const lead = nd - a.ndim;
    a.chunks.forEach((c, d) => {
      if (broadcastAlong(a, d)) return;
      const o = d + lead;
      if (from[o] < 0) {
        [from[o], shape[o], chunks[o]] = [i, a.shape[d], c];
      } else if (!sameExtents(c, chunks[o])) {
        throw new RangeError(`${api}: the chunks of argument ${i + 1} do not line up with the output's along dimension ${o}: ` +
          `(${c.join(', ')}) vs (${chunks[o].join(', ')}) (argument ${from[o] + 1}'s); rechunk one of them`);
      }
    });
  });
  return { shape, chunks };
}

/** The number of blocks of a grid. */
const blockCount = (grid: readonly number[]): number => grid.reduce((a, b) => a * b, 1);

/**
 * The chunked input whose blocks place the output's (NOTE [ Chunk rules ]):
 * the one with the most blocks, then the most dimensions, then the first.
 */
function placingInput(chunked: readonly ChunkedTensor[]): ChunkedTensor {
  let best = chunked[0], n = blockCount(best.grid);
  for (const c of chunked) {
    const m = blockCount(c.grid);
    if (m > n || (m === n && c.ndim > best.ndim)) [best, n] = [c, m];
  }
  return best;
}

/** Broadcasts the inputs' chunks to the output's and works out every block's arguments and device (NOTE [ Chunk rules ]). */
function makeTable(api: string, args: readonly MapArg[], chunkedArgs: readonly ChunkedTensor[]): BlockTable {
  const nd = Math.max(...chunkedArgs.map((c) => c.ndim));
  const { shape, chunks } = broadcastChunks(api, args, nd);
  const grid = chunks.map((c) => c.length);
  const placer = placingInput(chunkedArgs);
  const whole = blockCount(placer.grid) === blockCount(grid);  // its grid is the output's (each of its dimensions has the output's blocks or is broadcast)
  const spread = chunkedArgs.find((c) => c.placement !== undefined);
  if (!whole && spread !== undefined) {
    const grids = args.flatMap((a, i) => (a instanceof ChunkedTensor ? [`argument ${i + 1} [${a.grid.join(', ')}]`] : []));
    throw new RangeError(`${api}: argument ${args.indexOf(spread) + 1} is spread over ranks, but no chunked input has the output's block grid ` +
      `[${grid.join(', ')}] (${grids.join(', ')}), so no input's owners can be the output's; ` +
      'give one input the output\'s blocks (NOTE [ Chunks over ranks ])');
  }
  // Inputs spread over ranks must be spread over the output's group; one held whole by this process (as every rank holds it) goes with any.
  if (chunkedArgs.some((c) => c.placement !== undefined && c.placement.group !== placer.placement?.group)) {
    throw new TypeError(`${api}: the chunked inputs spread over ranks must be spread over the same process group as the output ` +
      `(argument ${args.indexOf(placer) + 1}, which has the most blocks) (NOTE [ Chunks over ranks ])`);
  }
  // Each chunked input's block position for an output block index, in C order from the output's index.
  const pickers = args.map((a, i) => {
    if (!(a instanceof ChunkedTensor)) return undefined;
    const lead = nd - a.ndim;
    const grid = a.grid;
    const broadcast = grid.map((_, d) => broadcastAlong(a, d));
    return (idx: readonly number[]): { k: number; block: Tensor } => {
      let k = 0;
      for (let d = 0; d < grid.length; d++) k = k * grid[d] + (broadcast[d] ? 0 : idx[d + lead]);
      const block = a.blockAt(k);
      if (block !== undefined) return { k, block };
      const at = grid.map((_, d) => (broadcast[d] ? 0 : idx[d + lead]));
      throw new RangeError(`${api}: block [${at.join(', ')}] of argument ${i + 1} is held by rank ${a.owner(...at)}, but output block [${idx.join(', ')}] by rank ${a.placement?.group.rank}; ` +
        'give the inputs the same chunks so matching blocks are on the same rank');
    };
  });
  const placerAt = args.indexOf(placer);
  const offsets = chunks.map(offsetsOf);
  const rows = gridIndices(grid).map((index, k): BlockRow | undefined => {
    if (placer.placement !== undefined && placer.blockAt(k) === undefined) return undefined;  // another rank's (NOTE [ Chunks over ranks ])
    const at = new Int32Array(args.length).fill(-1), copy = new Int32Array(args.length).fill(-1);
    const blocks = args.map((a, i) => {
      const picked = pickers[i]?.(index);
      if (picked !== undefined) at[i] = picked.k;
      return picked !== undefined ? picked.block : a;
    });
    const device = (blocks[placerAt] as Tensor).device;
    // A replicated input's block is read where it already is (NOTE [ Replicated blocks ]).
    args.forEach((a, i) => {
      if (!(a instanceof ChunkedTensor) || at[i] < 0 || (blocks[i] as Tensor).device.equals(device)) return;
      copy[i] = a.copyOn(at[i], device);
      if (copy[i] >= 0) blocks[i] = a.copyAt(at[i], copy[i]);
    });
    const moves = blocks.flatMap((t, i) => (t instanceof Tensor && !t.device.equals(device) ? [i] : []));
    return { index, offset: index.map((i, d) => offsets[d][i]), device, at, copy, moves };
  });
  return { args: args.map(keep), shape, chunks, placement: placer.placement, dtype: placer.dtype, rows };
}

/** The block's arguments for this call: the inputs' blocks (or their copies there), on the block's device (copied there once per call and device). */
function blockArgsOf(row: BlockRow, args: readonly MapArg[], onDevice: (t: Tensor, dev: Device) => Tensor, info: boolean): unknown[] {
  const out: unknown[] = new Array(args.length);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const k = row.at[i];
    out[i] = k < 0 ? a : row.copy[i] < 0 ? (a as ChunkedTensor).blockAt(k) : (a as ChunkedTensor).copyAt(k, row.copy[i]);
  }
  for (const i of row.moves) out[i] = onDevice(out[i] as Tensor, row.device);
  if (info) out.push({ index: [...row.index], offset: [...row.offset], device: row.device } satisfies BlockInfo);
  return out;
}

/**
 * Calls `fn` on matching blocks of the chunked inputs (Dask's map_blocks):
 * the output's shape and chunks are the broadcast of the inputs' (aligned
 * from the right; a dimension of one element in one block broadcasts), in
 * any order of the inputs (NOTE [ Chunk rules ]). `fn` gets the blocks (on
 * the output block's device) and returns the output block.
 * @example
 * const z = gx.mapBlocks((xb, yb) => { const out = gx.emptyLike(xb); kernel.launch(grid, block, [xb, yb, out, ...]); return out; }, x, y);
 * A RawKernel launched on each block may be given as a launch plan instead,
 * checked on the first block only (NOTE [ Block launch plans ]):
 * gx.mapBlocks({ kernel, grid: (xb) => [xb.shape[1] / 32, xb.shape[0] / 32], block: [32, 32], args: (xb, yb, zb) => [xb, yb, zb, n], out: 2 }, x, y, z)
 */
export function mapBlocks(fn: ((...args: never[]) => Tensor) | BlockLaunch, ...rest: (MapArg | MapBlocksOptions)[]): ChunkedTensor {
  const api = 'gx.mapBlocks';
  if (typeof fn !== 'function' && (fn === null || typeof fn !== 'object')) {
    throw new TypeError(`${api}: the first argument must be the function to call on each block, or a kernel launch plan ({ kernel, grid, block, args, out })`);
  }
  const launcher = typeof fn === 'function' ? undefined : launcherFor(fn, api);
  const last = rest[rest.length - 1];
  const opts: MapBlocksOptions = last !== undefined && typeof last === 'object' && !(last instanceof Tensor) && !(last instanceof ChunkedTensor)
    ? checkOptions<MapBlocksOptions>(rest.pop(), api, MAP_KEYS) : {};
  const args = rest as MapArg[];
  let key: ChunkedTensor | undefined;
  for (const a of args) if (a instanceof ChunkedTensor && (key === undefined || a.ndim > key.ndim)) key = a;
  if (key === undefined) throw new TypeError(`${api}: needs at least one chunked input (gx.chunked(t, { chunks }))`);
  let table = tables.get(key);
  if (table === undefined || !tableHolds(table, args)) {
    table = makeTable(api, args, args.filter((a): a is ChunkedTensor => a instanceof ChunkedTensor));
    tables.set(key, table);
  }
  const chunks = table.chunks;
  const copies = new Map<Tensor, Map<string, Tensor>>();
  const onDevice = (t: Tensor, dev: Device): Tensor => {
    let m = copies.get(t);
    if (m === undefined) copies.set(t, (m = new Map()));
    let c = m.get(String(dev));
    if (c === undefined) m.set(String(dev), (c = t.toDevice(dev, false, api)));
    return c;
  };
  let dtype = opts.dtype;
  booleanOption(api, 'blockInfo', opts.blockInfo, false);  // 1 was read as false
  const nStreams = opts.streams ?? 1;
  if (!(Number.isInteger(nStreams) && nStreams >= 1)) throw new RangeError(`${api}: streams must be a positive integer, got ${String(opts.streams)}`);
  const lanes = new BlockLanes(nStreams);
  const blocks: (Tensor | undefined)[] = [];
  const call = launcher !== undefined ? (dev: Device, a: unknown[]): unknown => launcher.run(dev, a) : (_: Device, a: unknown[]): unknown => (fn as (...b: unknown[]) => Tensor)(...a);
  // A plan's staged launches wait for the end of the call, where each device's go out together (NOTE [ Block graphs ]); not on lanes of streams.
  launcher?.begin(nStreams === 1);
  let finished = false;
  try {
    // Every block's arguments first, then the calls: a copy to another device
    // waits for the source's stream, so copying while blocks run would hold
    // that device back until the blocks queued before the copy finish.
    const blockArgs = table.rows.map((row) => (row === undefined ? undefined : blockArgsOf(row, args, onDevice, opts.blockInfo === true)));
    for (let k = 0; k < table.rows.length; k++) {
      const row = table.rows[k], a = blockArgs[k];
      if (row === undefined || a === undefined) {
        blocks.push(undefined);
        continue;
      }
      const dev = row.device, idx = row.index;
      const out = nStreams === 1 || dev.type !== 'cuda' ? call(dev, a) : lanes.run(dev, () => call(dev, a) as Tensor);
      if (!(out instanceof Tensor)) throw new TypeError(`${api}: the function returned ${typeof out} for block [${idx.join(', ')}]; it must return the block's Tensor`);
      blocks.push(out);
      if (!blockShaped(out.shape, chunks, idx)) {
        throw new RangeError(`${api}: block [${idx.join(', ')}] came back as [${out.shape.join(', ')}]; the output block is [${idx.map((i, d) => chunks[d][i]).join(', ')}]`);
      }
      dtype ??= out.dtype;
      if (out.dtype !== dtype) throw new TypeError(`${api}: block [${idx.join(', ')}] came back ${out.dtype}, not ${dtype}`);
    }
    finished = true;
    launcher?.finish();
  } catch (e) {
    if (!finished) launcher?.abandon();
    // The blocks made so far are the caller's only if the whole call succeeds (an input passed through is kept).
    const inputs = new Set<Tensor>(args.flatMap((a) => (a instanceof ChunkedTensor ? [...a[ownedTensors]()] : a instanceof Tensor ? [a] : [])));
    for (const b of blocks) if (b !== undefined && !inputs.has(b) && !b.isDisposed) b.dispose();
    throw e;
  } finally {
    lanes.join();
    // A copy the function returned as its block is the caller's (the blocks of a failed call are disposed already).
    for (const m of copies.values()) for (const c of m.values()) if (!c.isDisposed && !blocks.includes(c)) c.dispose();
  }
  return new ChunkedTensor(table.shape, chunks, dtype ?? table.dtype, blocks, table.placement);
}
