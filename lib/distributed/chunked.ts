// Chunked tensors (Dask's da.from_array(x, chunks=...)): a tensor split into
// blocks placed over devices (the GPUs of this process, or the CPU) or over
// the ranks of a process group, with mapBlocks (da.map_blocks) calling a user
// function on matching blocks, reductions across blocks, rechunking,
// gathering back to one tensor (.compute(), or await .gather() across ranks),
// and a tall-skinny SVD of a row-chunked matrix (chunked-svd.ts).
//
// NOTE [ Chunk rules ]
// A tensor's chunks are, per dimension, the sizes of its blocks along it
// (summing to the extent). mapBlocks aligns its inputs' dimensions from the
// right, as broadcasting does, and the output's shape and chunks are the
// broadcast of the chunked inputs', whatever their order: along each output
// dimension, those of the inputs that have it and are not broadcast there
// (extent 1 in one block: broadcast, Dask's rule), which must all have the
// same chunks (Dask's unify_chunks would rechunk them; we ask the caller to).
// Plain tensors are passed whole to every block (copied once to each device
// that needs them), numbers as they are.
// Each output block goes to the device of its block of one input, the placing
// input: the chunked input with the most blocks (then the most dimensions,
// then the first). When some input has the output's whole grid, that is one
// such input, each output block on its own block's device (and over ranks,
// its owners are the output's). When none has (x of [4, 1] by y of [1, 6],
// each chunked along its long dimension), the placing input's blocks are
// broadcast too: the output blocks meeting one of its blocks share its device,
// so the blocks still spread over as many devices as any input's do, and the
// others' blocks are copied there. Over ranks that is refused: an output
// block's owner must hold every input block it meets, which only an input
// with the whole grid gives (NOTE [ Chunks over ranks ]).
// A block's function runs with the block's device's tensors, so blocks on
// different GPUs run at once (launches are asynchronous). With { streams: n },
// blocks on one GPU take turns over n streams of that device, so the kernels
// of small blocks overlap too: each stream first waits for the caller's
// current stream (the inputs are ready), each output block is marked as used
// by the current stream (tensor.recordStream), and the current stream waits
// for every stream used before mapBlocks returns, so the result is ordered
// like any other op's.
//
// NOTE [ Chunks over ranks ]
// With { group }, block k belongs to rank k % worldSize: every rank knows the
// whole block grid, holds only its own blocks (on its devices) and runs
// mapBlocks' function on those only, so matching blocks of the inputs must
// belong to the same rank (the same chunks and group ensure it; an input
// every rank holds whole, such as a broadcast 1-d one, goes with any). What needs
// other ranks' blocks is asynchronous and is called by every rank in the same
// order, like any collective: gather() (each block broadcast by its owner),
// reduceAll() (partials all-reduced) and svdAsync() (TSQR: each rank's R
// factors broadcast, the small SVD done on every rank).
//
// NOTE [ Replicated blocks ]
// A block that mapBlocks passes to blocks on other GPUs (y's one block in
// the article's add_broadcast, broadcast to every block of x) is copied to
// each of them on every call: on the lent x2 H200 host that copy (an event,
// a wait, the memcpy, an event, a wait, and its tensor) was 14 of the 34 µs
// of host time a call of eight blocks took. gx.chunked(y, { chunks,
// devices, replicate: true }) copies each block once to every device of
// `devices` (Dask's client.scatter(y, broadcast=True), torch DTensor's
// Replicate placement), and mapBlocks takes the copy on the block's device.
// The copies are made once, when the chunked tensor is: they hold memory as
// long as it lives (devices x its size), and a kernel writing one of them
// (as a mapBlocks function may write any argument) leaves the others as they
// were, so a replicated tensor is for inputs read by every block. Nothing
// cheaper can see such a write: a RawKernel writes through raw pointers and
// counts no version, so mapBlocks cannot keep a copy of an ordinary block
// across calls on its own. compute(), rechunk(), reductions and the SVD read
// the blocks (the first copy of each, placed as without replicate); their
// results are not replicated. Not with { group }: each rank holds only its
// own blocks.
import { parseDevice, type Device, type DeviceLike } from '../core/device';
import { empty } from '../ops/creation/creation';
import { booleanOption, checkOptions, optionKeys, tooManyArguments } from '../core/options';
import { describeValue } from '../core/shape';
import { copyValues, Tensor } from '../core/tensor';
import { ownedTensors, type TensorOwner } from '../core/tidy';
import { cat } from '../ops/layout/layout';
import { named, type Named } from '../ops/named';
import { gridIndices, offsetsOf, region } from './chunk-grid';
import { extremumAlong, reduceAlong, reduceAllBlocks, reductionAxis, type AlongParts, type ChunkedReduction } from './chunked-reduce';
import { ProcessGroup, type ReduceOp } from './group';
import { defaultGroup } from './index';
import type { ChunkedSvd, ChunkedSvdOptions, SvdParts } from './chunked-svd';
import { lazyModule } from '../platform/lazy';

// The chunked SVD (QR and the linear-algebra helpers under it) loads with the first ChunkedTensor.svd (NOTE [ Lazy entry ] in lib/README.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const chunkedSvd = lazyModule(() => require('./chunked-svd') as typeof import('./chunked-svd'));
import type { DType } from '../generated/dtypes';

export type { BlockLaunch } from './block-launch';

const CHUNK_KEYS = optionKeys<ChunkOptions>({ chunks: true, devices: true, group: true, replicate: true });
const RECHUNK_KEYS = optionKeys<{ devices?: readonly DeviceLike[] }>({ devices: true });
const SVD_KEYS = optionKeys<ChunkedSvdOptions>({ factor: true, gram: true });

/** Per dimension: one block size (the last block takes the rest), or the sizes of every block. */
export type ChunksSpec = number | readonly (number | readonly number[])[];

export interface ChunkOptions {
  /** Block sizes (NOTE [ Chunk rules ]). */
  chunks: ChunksSpec;
  /** The devices blocks go to, in turn over the (this rank's) blocks in C order (default: the tensor's). */
  devices?: readonly DeviceLike[];
  /** Spread the blocks over the ranks of this process group (true: the default one; NOTE [ Chunks over ranks ]). */
  group?: ProcessGroup | true;
  /** Copy every block to every device of `devices` too, for mapBlocks to read where its blocks run (NOTE [ Replicated blocks ]). */
  replicate?: boolean;
}

/** Which rank holds each block, for a chunked tensor over the ranks of a group. */
export interface RankPlacement {
  group: ProcessGroup;
  /** The owning rank of every block, in C order. */
  owners: readonly number[];
}

/** ChunkedTensor.max / min along one axis: gx.max's `{ values, indices }` (also `[values, indices]`), each chunked. */
export type ChunkedExtremum = Named<{ values: ChunkedTensor; indices: ChunkedTensor }, [ChunkedTensor, ChunkedTensor]>;

function normalizeChunks(shape: readonly number[], spec: ChunksSpec, fn: string): number[][] {
  const per = typeof spec === 'number' ? shape.map(() => spec) : spec;
  if (!Array.isArray(per) || per.length !== shape.length) {
    throw new TypeError(`${fn}: chunks must be a number or one entry per dimension (${shape.length}), got ${JSON.stringify(spec)}`);
  }
  return shape.map((n, d) => {
    const c = per[d];
    if (typeof c === 'number') {
      if (!(Number.isInteger(c) && c >= 1)) throw new RangeError(`${fn}: the block size of dimension ${d} must be a positive integer, got ${c}`);
      if (n === 0) return [0];
      return Array.from({ length: Math.ceil(n / c) }, (_, k) => Math.min(c, n - k * c));
    }
    const sizes = [...(c as readonly number[])];
    if (sizes.length === 0) {
      // Every dimension has a block (an extent of 0 has one empty block): a grid of no blocks had no device for its results.
      throw new RangeError(`${fn}: the chunks of dimension ${d} must list at least one block (an extent of 0 is [0]), got []`);
    }
    const total = sizes.reduce((a, b) => a + b, 0);
    if (sizes.some((s) => !(Number.isInteger(s) && s >= 0)) || total !== n) {
      throw new RangeError(`${fn}: the chunks of dimension ${d} must be non-negative integers summing to its extent ${n}, got [${sizes.join(', ')}]`);
    }
    return sizes;
  });
}

/** The devices blocks go to: `given` (a non-empty array), else `fallback` ([] placed every block on the default device). */
function devicesOf(given: unknown, fallback: () => Device[], fn: string): Device[] {
  if (given === undefined) return fallback();
  if (!Array.isArray(given)) throw new TypeError(`${fn}: devices must be an array of devices (e.g. ['cuda:0', 'cuda:1']), got ${describeValue(given)}`);
  if (given.length === 0) throw new TypeError(`${fn}: devices is empty`);
  return given.map((d: DeviceLike) => parseDevice(d, fn));
}

/** The group of { group }: a ProcessGroup, true for the default one, or none (false or a string spread the blocks over no rank). */
function groupOf(given: unknown, fn: string): ProcessGroup | undefined {
  if (given === undefined) return undefined;
  if (given === true) return defaultGroup(fn);
  if (given instanceof ProcessGroup) return given;
  throw new TypeError(`${fn}: group must be a ProcessGroup, or true for the default group, got ${describeValue(given)}` +
    ' (a DeviceGroup\'s GPUs take blocks by { devices })');
}

/** Refuses options a chunked reduction does not take (keepdims and dtype were dropped without a word). */
function noOptions(fn: string): never {
  throw new TypeError(`${fn}: takes (axis?) only; keepdims, dtype and other options are not supported on chunked ` +
    'tensors (reduce, then reshape or astype the result; or compute() first)');
}

/** A tensor split into blocks over devices (or over the ranks of a process group). */
export class ChunkedTensor implements TensorOwner {
  /** This process's blocks, in C order over the block grid (every block unless it is spread over ranks). */
  readonly blocks: readonly Tensor[];
  /** Every block in C order; undefined where another rank holds it. */
  readonly #all: readonly (Tensor | undefined)[];
  /** Per block in C order, its copies on the other devices of a replicated tensor (NOTE [ Replicated blocks ]); else empty. */
  readonly #copies: readonly (readonly Tensor[])[];

  /** @internal Use gx.chunked or gx.mapBlocks. */
  constructor(readonly shape: readonly number[], readonly chunks: readonly (readonly number[])[], readonly dtype: DType,
    blocks: readonly (Tensor | undefined)[], readonly placement?: RankPlacement, copies: readonly (readonly Tensor[])[] = []) {
    this.#all = blocks;
    this.blocks = blocks.filter((b): b is Tensor => b !== undefined);
    this.#copies = copies;
  }

  /** Whether every block is also on every other device it was given (gx.chunked's replicate; NOTE [ Replicated blocks ]). */
  get replicated(): boolean {
    return this.#copies.length > 0;
  }

  /** @internal Which copy of block k (in C order) is on `device`, or -1 (none, or not replicated). */
  copyOn(k: number, device: Device): number {
    const c = this.#copies[k];
    if (c !== undefined) for (let j = 0; j < c.length; j++) if (c[j].device.equals(device)) return j;
    return -1;
  }

  /** @internal Copy j of block k (copyOn's index). */
  copyAt(k: number, j: number): Tensor {
    return this.#copies[k][j];
  }

  /** Blocks per dimension. */
  get grid(): number[] {
    return this.chunks.map((c) => c.length);
  }

  get ndim(): number {
    return this.shape.length;
  }

  /** The position in C order of a grid index. */
  #flat(index: readonly number[], fn: string): number {
    const g = this.grid;
    if (index.length !== g.length || index.some((i, d) => !(Number.isInteger(i) && i >= 0 && i < g[d]))) {
      throw new RangeError(`${fn}: index [${index.join(', ')}] is outside the block grid [${g.join(', ')}]`);
    }
    return index.reduce((acc, i, d) => acc * g[d] + i, 0);
  }

  /** The block at a grid index (one this process holds). */
  block(...index: number[]): Tensor {
    const fn = 'ChunkedTensor.block';
    const b = this.#all[this.#flat(index, fn)];
    if (b === undefined) throw new RangeError(`${fn}: block [${index.join(', ')}] is held by rank ${this.owner(...index)}, not this one (rank ${this.placement?.group.rank})`);
    return b;
  }

  /** The rank holding the block at a grid index (this rank's, when not spread over ranks). */
  owner(...index: number[]): number {
    const k = this.#flat(index, 'ChunkedTensor.owner');
    return this.placement === undefined ? 0 : this.placement.owners[k];
  }

  /** @internal The block at position k in C order, or undefined when another rank holds it. */
  blockAt(k: number): Tensor | undefined {
    return this.#all[k];
  }

  /** The devices of this process's blocks, in block order. */
  get devices(): Device[] {
    return this.blocks.map((b) => b.device);
  }

  /** Throws for a tensor spread over ranks, naming what to call instead. */
  #localOnly(fn: string, instead: string): void {
    if (this.placement !== undefined) {
      throw new TypeError(`${fn}: this chunked tensor is spread over ${this.placement.group.worldSize} ranks; every rank calls ${instead} instead (NOTE [ Chunks over ranks ])`);
    }
  }

  /** The whole tensor on one device (default: the first block's), as Dask's compute(). */
  compute(device?: DeviceLike): Tensor {
    const fn = 'ChunkedTensor.compute';
    if (arguments.length > 1) tooManyArguments(fn, '(device?)', arguments.length - 1, arguments[1]);
    this.#localOnly(fn, 'await x.gather()');
    const dev = device === undefined ? this.blocks[0]?.device ?? parseDevice('cpu', fn) : parseDevice(device, fn);
    const out = empty(this.shape as number[], { dtype: this.dtype, device: dev });
    const offsets = this.chunks.map(offsetsOf);
    gridIndices(this.grid).forEach((idx, k) => {
      using r = region(out, idx.map((i, d) => offsets[d][i]), idx.map((i, d) => this.chunks[d][i]));
      copyValues(r, this.#all[k] as Tensor, fn);
    });
    return out;
  }

  /** The same values in blocks of other sizes (and devices), each new block copied from the old ones it overlaps. */
  rechunk(chunks: ChunksSpec, options: { devices?: readonly DeviceLike[] } = {}): ChunkedTensor {
    const fn = 'ChunkedTensor.rechunk';
    if (arguments.length > 2) tooManyArguments(fn, '(chunks, { devices }?)', arguments.length - 2, arguments[2]);
    this.#localOnly(fn, 'await x.gather() and gx.chunked again');
    const opts = checkOptions<{ devices?: readonly DeviceLike[] }>(options, fn, RECHUNK_KEYS);
    const next = normalizeChunks(this.shape, chunks, fn);
    const devices = devicesOf(opts.devices, () => this.blocks.map((b) => b.device), fn);
    const oldOff = this.chunks.map(offsetsOf);
    const newOff = next.map(offsetsOf);
    const oldIdx = gridIndices(this.grid);
    const blocks = gridIndices(next.map((c) => c.length)).map((idx, k) => {
      const start = idx.map((i, d) => newOff[d][i]);
      const size = idx.map((i, d) => next[d][i]);
      const b = empty(size, { dtype: this.dtype, device: devices[k % devices.length] });
      oldIdx.forEach((o, j) => {
        const lo = o.map((i, d) => Math.max(oldOff[d][i], start[d]));
        const hi = o.map((i, d) => Math.min(oldOff[d][i] + this.chunks[d][i], start[d] + size[d]));
        if (lo.some((l, d) => l >= hi[d])) return;
        using from = region(this.#all[j] as Tensor, lo.map((l, d) => l - oldOff[d][o[d]]), lo.map((l, d) => hi[d] - l));
        using to = region(b, lo.map((l, d) => l - start[d]), lo.map((l, d) => hi[d] - l));
        copyValues(to, from, fn);
      });
      return b;
    });
    return new ChunkedTensor(this.shape, next, this.dtype, blocks);
  }

  /** A reduction of every element, or along one axis (a chunked tensor without it). */
  #reduce(op: ChunkedReduction, axis: number | undefined, fn: string): Tensor | ChunkedTensor {
    this.#localOnly(fn, `await x.reduceAll('${op}')`);
    if (axis === undefined) return reduceAllBlocks(this, op, this.blocks[0].device, fn);
    return this.#fromParts(reduceAlong(this, op, reductionAxis(this, axis, fn)));
  }

  #fromParts(p: AlongParts): ChunkedTensor {
    return new ChunkedTensor(p.shape, p.chunks, p.blocks[0]?.dtype ?? this.dtype, p.blocks);
  }

  /** gx.max / gx.min's forms on blocks (NOTE [ Chunked max and min ] in chunked-reduce.ts). */
  #extremum(largest: boolean, axis: number | undefined): Tensor | ChunkedExtremum {
    const fn = `ChunkedTensor.${largest ? 'max' : 'min'}`;
    this.#localOnly(fn, `await x.reduceAll('${largest ? 'max' : 'min'}')`);
    if (axis === undefined) return reduceAllBlocks(this, largest ? 'max' : 'min', this.blocks[0].device, fn);
    const r = extremumAlong(this, largest, reductionAxis(this, axis, fn));
    return named({ values: this.#fromParts(r.values), indices: this.#fromParts(r.indices) }, ['values', 'indices']);
  }

  /** Sum over every element (a 0-d tensor on the first block's device), or over one axis (a chunked tensor without it). */
  sum(axis?: number): Tensor | ChunkedTensor {
    if (arguments.length > 1) noOptions('ChunkedTensor.sum');
    return this.#reduce('sum', axis, 'ChunkedTensor.sum');
  }

  /**
   * As gx.max: the largest element (a 0-d tensor on the first block's device; NaN when there is one), or along one
   * axis `{ values, indices }` (also `[values, indices]`), chunked as x without the axis, the indices counted along
   * the whole axis (the first maximum; NaN counts as the maximum).
   * @example const [v, i] = c.max(1); i.compute() // as gx.max(c.compute(), 1).indices
   */
  max(): Tensor;
  max(axis: number): ChunkedExtremum;
  max(axis?: number): Tensor | ChunkedExtremum;
  max(axis?: number): Tensor | ChunkedExtremum {
    if (arguments.length > 1) noOptions('ChunkedTensor.max');
    return this.#extremum(true, axis);
  }

  /** As gx.min (see max): the smallest element, or `{ values, indices }` along one axis. @example c.min(0).indices */
  min(): Tensor;
  min(axis: number): ChunkedExtremum;
  min(axis?: number): Tensor | ChunkedExtremum;
  min(axis?: number): Tensor | ChunkedExtremum {
    if (arguments.length > 1) noOptions('ChunkedTensor.min');
    return this.#extremum(false, axis);
  }

  /** As gx.amax: the largest element (a 0-d tensor), or the values only along one axis (a chunked tensor without it). */
  amax(): Tensor;
  amax(axis: number): ChunkedTensor;
  amax(axis?: number): Tensor | ChunkedTensor;
  amax(axis?: number): Tensor | ChunkedTensor {
    if (arguments.length > 1) noOptions('ChunkedTensor.amax');
    return this.#reduce('max', axis, 'ChunkedTensor.amax');
  }

  /** As gx.amin: the smallest element, or the values only along one axis. */
  amin(): Tensor;
  amin(axis: number): ChunkedTensor;
  amin(axis?: number): Tensor | ChunkedTensor;
  amin(axis?: number): Tensor | ChunkedTensor {
    if (arguments.length > 1) noOptions('ChunkedTensor.amin');
    return this.#reduce('min', axis, 'ChunkedTensor.amin');
  }

  /**
   * The thin SVD of a matrix chunked along its rows only, as a tall-skinny
   * QR (TSQR; chunked-svd.ts): U chunked like the rows, S and Vh on the
   * first block's device. `factor` picks how each block is reduced first.
   */
  svd(opts: ChunkedSvdOptions = {}): ChunkedSvd {
    if (arguments.length > 1) tooManyArguments('ChunkedTensor.svd', '({ factor, gram }?)', arguments.length - 1, arguments[1]);
    this.#localOnly('ChunkedTensor.svd', 'await x.svdAsync()');
    return this.#svdResult(chunkedSvd().svdLocal(this, checkOptions<ChunkedSvdOptions>(opts, 'ChunkedTensor.svd', SVD_KEYS)));
  }

  #svdResult({ blocks, S, Vh }: SvdParts): ChunkedSvd {
    const k = S.shape[0];
    return { U: new ChunkedTensor([this.shape[0], k], [this.chunks[0], [k]], this.dtype, blocks, this.placement), S, Vh };
  }

  /** svd() for a tensor spread over ranks (every rank gets S and Vh, and its own blocks of U), or any other. */
  async svdAsync(opts: ChunkedSvdOptions = {}): Promise<ChunkedSvd> {
    if (arguments.length > 1) tooManyArguments('ChunkedTensor.svdAsync', '({ factor, gram }?)', arguments.length - 1, arguments[1]);
    const o = checkOptions<ChunkedSvdOptions>(opts, 'ChunkedTensor.svdAsync', SVD_KEYS);
    return this.#svdResult(this.placement === undefined ? chunkedSvd().svdLocal(this, o) : await chunkedSvd().svdOverRanks(this, this.placement, o));
  }

  /**
   * The whole tensor on `device` (default: the first block's), on every rank
   * when spread over ranks (each block broadcast by its owner).
   */
  async gather(device?: DeviceLike): Promise<Tensor> {
    const fn = 'ChunkedTensor.gather';
    if (arguments.length > 1) tooManyArguments(fn, '(device?)', arguments.length - 1, arguments[1]);
    const p = this.placement;
    if (p === undefined) return this.compute(device);
    const dev = device === undefined ? this.home(fn) : parseDevice(device, fn);
    const out = empty(this.shape as number[], { dtype: this.dtype, device: dev });
    const offsets = this.chunks.map(offsetsOf);
    try {
      for (const [k, idx] of gridIndices(this.grid).entries()) {
        const size = idx.map((i, d) => this.chunks[d][i]);
        const mine = this.#all[k];
        // The collective runs on this rank's device; the result is then copied to `dev`.
        using buf = mine !== undefined ? mine.contiguous() : empty(size, { dtype: this.dtype, device: this.home(fn) });
        await p.group.broadcast(buf, p.owners[k]);
        using r = region(out, idx.map((i, d) => offsets[d][i]), size);
        copyValues(r, buf, fn);
      }
    } catch (e) {
      out.dispose();
      throw e;
    }
    return out;
  }

  /** The sum / max / min of every element, on every rank when spread over ranks (a 0-d tensor on this rank's first block's device). */
  async reduceAll(op: 'sum' | 'max' | 'min'): Promise<Tensor> {
    const fn = 'ChunkedTensor.reduceAll';
    if (arguments.length > 1) tooManyArguments(fn, '(op)', arguments.length - 1, arguments[1]);
    if (!['sum', 'max', 'min'].includes(op)) throw new TypeError(`${fn}: op must be 'sum', 'max' or 'min', got ${String(op)}`);
    const p = this.placement;
    if (p === undefined) return reduceAllBlocks(this, op, this.blocks[0].device, fn);
    const partial = reduceAllBlocks(this, op, this.home(fn), fn);
    try {
      await p.group.allReduce(partial, op as ReduceOp);
    } catch (e) {
      partial.dispose();
      throw e;
    }
    return partial;
  }

  /** @internal This rank's device for collectives: its first block's (every rank must hold a block). */
  home(fn: string): Device {
    const b = this.blocks[0];
    if (b === undefined) throw new RangeError(`${fn}: rank ${this.placement?.group.rank} holds no block; give the tensor at least as many blocks as ranks`);
    return b.device;
  }

  /** Disposes the blocks and their copies (those another chunked tensor shares, as mapBlocks' output may, only once). */
  dispose(): void {
    for (const b of this[ownedTensors]()) if (!b.isDisposed) b.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** This process's blocks and their copies: gx.tidy keeps them when fn returns the chunked tensor (NOTE [ Owned tensors ] in core/tidy.ts). */
  [ownedTensors](): readonly Tensor[] {
    return this.#copies.length === 0 ? this.blocks : [...this.blocks, ...this.#copies.flat()];
  }

  /**
   * A summary (the values stay where they are: compute() gathers them):
   * shape, dtype, the block sizes per dimension, and where the blocks are.
   * @example String(gx.chunked(x, { chunks: [2, 3] })) // 'ChunkedTensor(shape [4, 3], float32, chunks [[2, 2], [3]], 2 blocks on cpu)'
   */
  toString(): string {
    const chunks = `[${this.chunks.map((c) => `[${c.join(', ')}]`).join(', ')}]`;
    const held = this.blocks.filter((b) => !b.isDisposed);
    const devices = [...new Set(held.map((b) => b.device.toString()))].join(', ');
    const where = held.length < this.blocks.length ? 'disposed'
      : `${held.length} block${held.length === 1 ? '' : 's'}${held.length > 0 ? ` on ${devices}` : ''}`;
    const ranks = this.placement === undefined ? '' : `, over ${this.placement.group.worldSize} ranks (this rank holds ${held.length})`;
    const copies = this.#copies.flat();
    const replicas = copies.length === 0 ? '' : `, copied to ${[...new Set(copies.map((c) => c.device.toString()))].join(', ')}`;
    return `ChunkedTensor(shape [${this.shape.join(', ')}], ${this.dtype}, chunks ${chunks}, ${where}${replicas}${ranks})`;
  }
}

// util.inspect (console.log) prints the summary, as Tensor's does its values (NOTE [ Self-sufficient declarations ]).
Object.defineProperty(ChunkedTensor.prototype, Symbol.for('nodejs.util.inspect.custom'), {
  value(this: ChunkedTensor): string {
    return this.toString();
  },
  writable: true, configurable: true, enumerable: false,
});

/**
 * Splits `t` into blocks (Dask's da.from_array(x, chunks=...)), placed in
 * turn over `devices` (default: t's device); with `replicate`, each block is
 * also copied to every other device of `devices`, for mapBlocks to read
 * there without a copy per call (NOTE [ Replicated blocks ]).
 * @example
 * const x = gx.chunked(gx.randn([4096, 1024]), { chunks: [1024, 512], devices: ['cuda:0', 'cuda:1'] });
 * const y = gx.chunked(gx.randn([1024]), { chunks: [1024], devices: ['cuda:0', 'cuda:1'], replicate: true });
 */
export function chunked(t: Tensor, opts: ChunkOptions): ChunkedTensor {
  const fn = 'gx.chunked';
  if (!(t instanceof Tensor)) throw new TypeError(`${fn}: expected a Tensor`);
  if (arguments.length > 2) tooManyArguments(fn, '(t, { chunks, devices, group, replicate })', arguments.length - 2, arguments[2]);
  checkOptions<ChunkOptions>(opts, fn, CHUNK_KEYS);
  if (opts === undefined || opts.chunks === undefined) throw new TypeError(`${fn}: pass { chunks }, e.g. { chunks: [1024, 512] }`);
  const chunks = normalizeChunks(t.shape, opts.chunks, fn);
  const devices = devicesOf(opts.devices, () => [t.device], fn);
  const group = groupOf(opts.group, fn);
  const replicate = booleanOption(fn, 'replicate', opts.replicate, false);
  if (replicate && group !== undefined) {
    throw new TypeError(`${fn}: replicate copies blocks to this process's devices; with { group } each rank holds only its own blocks (NOTE [ Replicated blocks ])`);
  }
  const offsets = chunks.map(offsetsOf);
  const grid = gridIndices(chunks.map((c) => c.length));
  // NOTE [ Chunks over ranks ]: block k is rank k % worldSize's; a rank's own blocks take its devices in turn.
  const owners = grid.map((_, k) => (group === undefined ? 0 : k % group.worldSize));
  const me = group?.rank ?? 0;
  let held = 0;
  const blocks = grid.map((idx, k) => {
    if (owners[k] !== me) return undefined;
    const size = idx.map((i, d) => chunks[d][i]);
    using view = region(t, idx.map((i, d) => offsets[d][i]), size);
    return copyValues(empty(size, { dtype: t.dtype, device: devices[held++ % devices.length] }), view, fn);
  });
  const copies: Tensor[][] = [];
  try {
    if (replicate) for (const b of blocks) copies.push(replicas(b as Tensor, devices, fn));
  } catch (e) {
    for (const c of [...blocks, ...copies.flat()]) c?.dispose();  // none is the caller's yet
    throw e;
  }
  return new ChunkedTensor(t.shape, chunks, t.dtype, blocks, group === undefined ? undefined : { group, owners }, copies);
}

/** Copies of `block` on each device of `devices` other than its own (each device once). */
function replicas(block: Tensor, devices: readonly Device[], fn: string): Tensor[] {
  const out: Tensor[] = [];
  try {
    for (const d of devices) {
      if (d.equals(block.device) || out.some((c) => c.device.equals(d))) continue;
      const c = empty(block.shape as number[], { dtype: block.dtype, device: d });
      out.push(c);
      copyValues(c, block, fn);
    }
  } catch (e) {
    for (const c of out) c.dispose();
    throw e;
  }
  return out;
}
