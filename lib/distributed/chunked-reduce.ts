// Reductions of a chunked tensor (chunked.ts): each block reduced on its
// device, then the partials moved to one device, stacked and reduced there
// (NOTE [ Chunk rules ]).
//
// NOTE [ Chunked max and min ]
// ChunkedTensor.max and min take gx.max's forms (NOTE [ The forms of max and
// min ]): with no axis the largest element, a 0-d tensor; along one axis
// `{ values, indices }`, each chunked as the tensor without that axis, the
// indices counted along the whole axis (a block's own index plus the block's
// start). Blocks lie in order along the axis, so gx.max of the stacked
// per-block maxima (the first one among equals, NaN counting as the
// largest) names the block holding the first maximum of the whole line, and
// that block's index is the line's first maximum: the result is gx.max's on
// the whole tensor, ties and NaN included. amax and amin are the values only
// (torch.amax's form).
import type { Device } from '../core/device';
import type { Tensor } from '../core/tensor';
import { full } from '../ops/creation/creation';
import { INTEGER_RANGE, type IntegerDType } from '../generated/dtypes';
import { BINARY, binaryOp } from '../ops/elementwise/elementwise';
import { gather } from '../ops/indexing/indexing';
import { squeeze, stack, unsqueeze } from '../ops/layout/layout';
import { sum } from '../ops/reduce/functions';
import { max, min } from '../ops/reduce/extremum';
import { amax, amin } from '../ops/reduce/statistics-nan';
import { gridIndices, offsetsOf } from './chunk-grid';
import type { ChunkedTensor } from './chunked';

export type ChunkedReduction = 'sum' | 'max' | 'min';

/** What a reduction along one axis gives: the blocks of the result, over the grid without that axis (C order). */
export interface AlongParts {
  shape: number[];
  chunks: (readonly number[])[];
  blocks: Tensor[];
}

const REDUCE: Record<ChunkedReduction, (t: Tensor, axis?: number) => Tensor> = { sum, max: amax, min: amin };

/** Partials moved to `device` (those moved, and the originals, disposed) and stacked along a new first axis. */
function stackOn(parts: readonly Tensor[], device: Device, fn: string): Tensor {
  const moved = parts.map((p) => (p.device.equals(device) ? p : p.toDevice(device, false, fn)));
  const stacked = stack(moved, 0);
  for (const p of new Set([...moved, ...parts])) p.dispose();
  return stacked;
}

/** The value max or min starts from in c's dtype: what a rank holding only empty blocks contributes (NOTE [ Empty blocks ]). */
function identityOf(c: ChunkedTensor, op: 'max' | 'min'): number | bigint | boolean {
  if (c.dtype === 'bool') return op === 'min';
  const range = (INTEGER_RANGE as Partial<Record<string, readonly [bigint, bigint]>>)[c.dtype as IntegerDType];
  if (range === undefined) return op === 'max' ? -Infinity : Infinity;
  return op === 'max' ? range[0] : range[1];
}

/** Refuses max / min over no elements, as the op on the whole tensor does (NOTE [ Empty blocks ]). */
function refuseEmpty(c: ChunkedTensor, op: ChunkedReduction, fn: string, axis?: number): void {
  const extent = (dims: readonly number[]): number => dims.reduce((a, b) => a * b, 1);
  const reduced = axis === undefined ? extent(c.shape) : c.shape[axis];
  const kept = axis === undefined ? 1 : extent(c.shape.filter((_, d) => d !== axis));
  if (op !== 'sum' && reduced === 0 && kept > 0) {
    throw new RangeError(`${fn}: cannot reduce zero elements (a chunked tensor of shape [${c.shape.join(', ')}]` +
      `${axis === undefined ? '' : `, axis ${axis}`}): ${op} has no identity`);
  }
}

/** The reduction of every element: a 0-d tensor on `home`; blocks of no elements are skipped (NOTE [ Empty blocks ]). */
export function reduceAllBlocks(c: ChunkedTensor, op: ChunkedReduction, home: Device, fn: string): Tensor {
  refuseEmpty(c, op, fn);
  const held = c.blocks.filter((b) => b.numel > 0);
  if (held.length === 0) {
    // Every block here is empty: sum's 0 from one of them, or (another rank holds the elements) max / min's identity.
    return op === 'sum' ? REDUCE.sum(c.blocks[0]) : full([], identityOf(c, op), { dtype: c.dtype, device: home });
  }
  using stacked = stackOn(held.map((b) => REDUCE[op](b)), home, fn);
  return REDUCE[op](stacked, 0);
}

/** The axis of a reduction, normalized; a RangeError naming `fn` outside [-ndim, ndim). */
export function reductionAxis(c: ChunkedTensor, axis: number, fn: string): number {
  const ax = axis < 0 ? axis + c.ndim : axis;
  if (!(Number.isInteger(ax) && ax >= 0 && ax < c.ndim)) throw new RangeError(`${fn}: axis ${axis} is out of range for ${c.ndim} dimensions`);
  return ax;
}

/**
 * Runs `reduceLine` on the blocks of every line of blocks along ax (in
 * order), giving one block each of the result: the blocks of extent 0 along
 * ax skipped, unless the axis has no other (NOTE [ Empty blocks ]); `at` is
 * each block's position along ax.
 */
function alongBlocks<T>(c: ChunkedTensor, ax: number, reduceLine: (line: Tensor[], at: number[]) => T): T[] {
  const keptGrid = c.grid.filter((_, d) => d !== ax);
  const nonEmpty = c.chunks[ax].flatMap((n, i) => (n > 0 ? [i] : []));
  const at = nonEmpty.length > 0 ? nonEmpty : [0];
  return gridIndices(keptGrid).map((kept) => reduceLine(at.map((i) => c.block(...kept.slice(0, ax), i, ...kept.slice(ax))), at));
}

const without = (c: ChunkedTensor, ax: number) => ({ shape: c.shape.filter((_, d) => d !== ax), chunks: c.chunks.filter((_, d) => d !== ax) });

/** sum / amax / amin along axis ax (normalized). */
export function reduceAlong(c: ChunkedTensor, op: ChunkedReduction, ax: number): AlongParts {
  const fn = `ChunkedTensor.${op === 'sum' ? 'sum' : op === 'max' ? 'amax' : 'amin'}`;
  refuseEmpty(c, op, fn, ax);
  const blocks = alongBlocks(c, ax, (line) => {
    const parts = line.map((b) => REDUCE[op](b, ax));
    using stacked = stackOn(parts, parts[0].device, fn);
    return REDUCE[op](stacked, 0);
  });
  return { ...without(c, ax), blocks };
}

/** max / min along axis ax (normalized) in gx.max's form: NOTE [ Chunked max and min ]. */
export function extremumAlong(c: ChunkedTensor, largest: boolean, ax: number): { values: AlongParts; indices: AlongParts } {
  const fn = `ChunkedTensor.${largest ? 'max' : 'min'}`;
  const starts = offsetsOf(c.chunks[ax]);
  const pick = largest ? max : min;
  refuseEmpty(c, largest ? 'max' : 'min', fn, ax);
  const pairs = alongBlocks(c, ax, (line, positions) => {
    const vs: Tensor[] = [], is: Tensor[] = [];
    line.forEach((b, j) => {
      const [v, k] = pick(b, ax);
      const start = starts[positions[j]];
      vs.push(v);
      is.push(start === 0 ? k : binaryOp(BINARY.add, k, start, fn));
      if (start !== 0) k.dispose();
    });
    const home = vs[0].device;
    using values = stackOn(vs, home, fn);
    using indices = stackOn(is, home, fn);
    const [best, which] = pick(values, 0);
    using where = unsqueeze(which, 0);
    using picked = gather(indices, 0, where);
    which.dispose();
    return { values: best, indices: squeeze(picked, 0) };
  });
  const shape = without(c, ax);
  return { values: { ...shape, blocks: pairs.map((p) => p.values) }, indices: { ...shape, blocks: pairs.map((p) => p.indices) } };
}
