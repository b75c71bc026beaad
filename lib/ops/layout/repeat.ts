// Repeating a tensor's elements: repeat (torch's Tensor.repeat), tile,
// repeatInterleave, and meshgrid's grids. Each is an expand (a stride-0
// view) made contiguous by reshape, so it runs on every device and autograd
// sums the gradient back over the copies (the engine's expand rule).
import type { DType } from '../../core/dtype';
import { formatShape, describeValue } from '../../core/shape';
import { Tensor } from '../../core/tensor';
import { normalizeAxis } from '../axes';
import { checkTensor, optionsOf } from '../common';
import { checkInt, expand } from './layout';
import { optionKeys, tooManyArguments } from '../../core/options';

function intList(v: unknown, fn: string, name: string): number[] {
  if (!Array.isArray(v)) throw new TypeError(`${fn}: ${name} must be an array of integers, got ${describeValue(v)}`);
  return v.map((r: unknown, i) => {
    if (checkInt(r, fn, `${name}[${i}]`) < 0) throw new RangeError(`${fn}: ${name}[${i}] must be >= 0, got ${String(r)}`);
    return r as number;
  });
}

/**
 * A copy of the expanded view `big` in `shape`: clone, not reshape, which
 * could return a stride-0 view (or x itself) where a new tensor is promised.
 */
function copyAs<D extends DType>(big: Tensor<D>, shape: number[]): Tensor<D> {
  using c = big.clone();
  return c.reshape(shape);
}

/** x repeated reps[i] times along dim i; reps may have more entries than x has dims (new leading dims). */
function repeatImpl<D extends DType>(x: Tensor<D>, reps: readonly number[], fn: string): Tensor<D> {
  const lead = reps.length - x.ndim;
  if (lead < 0) throw new RangeError(`${fn}: reps has ${reps.length} entries, fewer than the tensor's ${x.ndim} dimensions (shape ${formatShape(x.shape)})`);
  const shape = [...new Array<number>(lead).fill(1), ...x.shape];
  // [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...], then merged pairwise.
  using spread = x.reshape(shape.flatMap((s) => [1, s]));
  using big = expand(spread, shape.flatMap((s, i) => [reps[i], s]));
  return copyAs(big, shape.map((s, i) => s * reps[i]));
}

/**
 * x repeated `reps[i]` times along each dim i, as torch's Tensor.repeat:
 * reps has at least as many entries as x has dims; extra ones add leading dims.
 * @example gx.repeat(gx.tensor([1, 2]), [2, 2]) // [[1, 2, 1, 2], [1, 2, 1, 2]]
 */
export function repeat<D extends DType>(x: Tensor<D>, reps: readonly number[]): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.repeat', '(x, reps)', arguments.length - 2, arguments[2]);
  const fn = 'gx.repeat';
  checkTensor(x, fn, 'input');
  return repeatImpl(x, intList(reps, fn, 'reps'), fn);
}

/**
 * x repeated `reps[i]` times along each dim, as torch.tile / numpy.tile:
 * fewer reps than dims repeat the last dims (the others once).
 * @example gx.tile(gx.tensor([[1, 2]]), [2]) // [[1, 2, 1, 2]]
 */
export function tile<D extends DType>(x: Tensor<D>, reps: readonly number[]): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.tile', '(x, reps)', arguments.length - 2, arguments[2]);
  const fn = 'gx.tile';
  checkTensor(x, fn, 'input');
  const r = intList(reps, fn, 'reps');
  return repeatImpl(x, [...new Array<number>(Math.max(0, x.ndim - r.length)).fill(1), ...r], fn);
}

/**
 * Each element of x repeated `repeats` times along `axis`, copies next to
 * each other (torch.repeat_interleave); without an axis, x is flattened first.
 * @example gx.repeatInterleave(gx.tensor([1, 2]), 2) // [1, 1, 2, 2]
 */
export function repeatInterleave<D extends DType>(x: Tensor<D>, repeats: number, axis?: number): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.repeatInterleave', '(x, repeats, axis?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.repeatInterleave';
  checkTensor(x, fn, 'input');
  if (checkInt(repeats, fn, 'repeats') < 0) throw new RangeError(`${fn}: repeats must be >= 0, got ${repeats}`);
  if (axis === undefined) {
    using flat = x.reshape([-1]);
    return repeatInterleave(flat, repeats, 0);
  }
  const d = normalizeAxis(axis, x.shape, fn, 'axis', 'strict');
  const shape = x.shape.slice();
  using spread = x.reshape([...shape.slice(0, d + 1), 1, ...shape.slice(d + 1)]);
  using big = expand(spread, [...shape.slice(0, d + 1), repeats, ...shape.slice(d + 1)]);
  shape[d] *= repeats;
  return copyAs(big, shape);
}

/** Options of gx.meshgrid. */
export interface MeshgridOptions {
  /** 'ij' (default, matrix indexing: grid i varies along dim i) or 'xy' (Cartesian: the first two dims swapped). */
  indexing?: 'ij' | 'xy';
}

const MESHGRID_KEYS = optionKeys<MeshgridOptions>({ indexing: true });

/**
 * Coordinate grids of 1-d tensors (torch.meshgrid): one tensor per input,
 * all of shape [n0, n1, ...] ('xy': [n1, n0, ...]), grid i holding input i's
 * values along its dim. The grids are expanded views: treat them as read-only.
 * @example const [ys, xs] = gx.meshgrid(gx.arange(2), gx.arange(3)); // shapes [2, 3]
 */
export function meshgrid<D extends DType>(...args: (Tensor<D> | MeshgridOptions)[]): Tensor<D>[] {
  const fn = 'gx.meshgrid';
  const last = args[args.length - 1];
  const hasOptions = args.length > 0 && !(last instanceof Tensor);
  const o = hasOptions ? optionsOf<MeshgridOptions>(last, fn, MESHGRID_KEYS) : {};
  const indexing = o.indexing ?? 'ij';
  if (indexing !== 'ij' && indexing !== 'xy') throw new TypeError(`${fn}: indexing must be 'ij' or 'xy', got ${describeValue(indexing)}`);
  const inputs = (hasOptions ? args.slice(0, -1) : args).map((t, i) => {
    const x = checkTensor(t, fn, `tensors[${i}]`) as Tensor<D>;
    if (x.ndim > 1) throw new RangeError(`${fn}: tensors[${i}] has shape ${formatShape(x.shape)}; each input must be 0-d or 1-d`);
    return x;
  });
  // Where each input's values vary in the result: 'xy' swaps the first two.
  const place = inputs.map((_, i) => (indexing === 'xy' && inputs.length > 1 && i < 2 ? 1 - i : i));
  const shape = new Array<number>(inputs.length);
  inputs.forEach((x, i) => { shape[place[i]] = x.numel; });
  return inputs.map((x, i) => {
    using line = x.reshape(shape.map((s, k) => (k === place[i] ? s : 1)));
    return expand(line, shape);
  });
}
