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

/** The reduction of every element: a 0-d tensor on `home`. */
export function reduceAllBlocks(c: ChunkedTensor, op: ChunkedReduction, home: Device): Tensor {
  using stacked = stackOn(c.blocks.map((b) => REDUCE[op](b)), home, `ChunkedTensor.${op}`);
  return REDUCE[op](stacked, 0);
}

/** The axis of a reduction, normalized; a RangeError naming `fn` outside [-ndim, ndim). */
export function reductionAxis(c: ChunkedTensor, axis: number, fn: string): number {
  const ax = axis < 0 ? axis + c.ndim : axis;
  if (!(Number.isInteger(ax) && ax >= 0 && ax < c.ndim)) throw new RangeError(`${fn}: axis ${axis} is out of range for ${c.ndim} dimensions`);
  return ax;
}

/** Runs `reduceLine` on the blocks of every line of blocks along ax (in order), giving one block each of the result. */
function alongBlocks<T>(c: ChunkedTensor, ax: number, reduceLine: (line: Tensor[], kept: number[]) => T): T[] {
  const keptGrid = c.grid.filter((_, d) => d !== ax);
  return gridIndices(keptGrid).map((kept) => {
    const line = Array.from({ length: c.grid[ax] }, (_, i) => c.block(...kept.slice(0, ax), i, ...kept.slice(ax)));
    return reduceLine(line, kept);
  });
}

const without = (c: ChunkedTensor, ax: number) => ({ shape: c.shape.filter((_, d) => d !== ax), chunks: c.chunks.filter((_, d) => d !== ax) });

/** sum / amax / amin along axis ax (normalized). */
export function reduceAlong(c: ChunkedTensor, op: ChunkedReduction, ax: number): AlongParts {
  const fn = `ChunkedTensor.${op === 'sum' ? 'sum' : op === 'max' ? 'amax' : 'amin'}`;
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
  const pairs = alongBlocks(c, ax, (line) => {
    const vs: Tensor[] = [], is: Tensor[] = [];
    line.forEach((b, i) => {
      const [v, k] = pick(b, ax);
      vs.push(v);
      is.push(starts[i] === 0 ? k : binaryOp(BINARY.add, k, starts[i], fn));
      if (starts[i] !== 0) k.dispose();
    });
    const home = vs[0].device;
    using values = stackOn(vs, home, fn);
    using indices = stackOn(is, home, fn);
    const [best, which] = pick(values, 0);
    using at = unsqueeze(which, 0);
    using picked = gather(indices, 0, at);
    which.dispose();
    return { values: best, indices: squeeze(picked, 0) };
  });
  const shape = without(c, ax);
  return { values: { ...shape, blocks: pairs.map((p) => p.values) }, indices: { ...shape, blocks: pairs.map((p) => p.indices) } };
}
