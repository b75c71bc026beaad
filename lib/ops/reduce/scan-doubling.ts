// gx.cumprod, gx.cummax and gx.cummin, as torch has them, by prefix
// doubling on the built-in elementwise ops (so both devices and autograd
// come with them).
//
// NOTE [ Scans by doubling ]
// After step s (s = 1, 2, 4, ...) element i holds the combination of the
// elements (i - 2s, i]; combining element i with element i - s doubles that
// (Hillis and Steele's scan): ceil(log2 n) elementwise passes over the
// tensor, O(n log n) work where a dedicated kernel does O(n). The products
// are grouped differently from a running product, so cumprod's floating
// results differ from torch's in the last bits; cummax and cummin are exact.
// cumprod's gradient is that of its multiplications (right where an element
// is 0, which a division-based formula is not); cummax's and cummin's values
// are x gathered at their indices, so their gradient goes to those elements,
// as torch's. Ties: the later index wins, and a NaN sticks from where it is
// first seen (the first NaN's index), as torch's kernels: the combination is
// the largest of the keys (value, index), with a NaN's key (+inf, -index).
// That is associative, which the doubling needs.
import { parseDType } from '../../core/dtype';
import type { DType } from '../../generated/dtypes';
import { noGrad } from '../../tape/mode';
import { optionKeys } from '../../core/options';
import type { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { arange } from '../creation/creation';
import { axisCallOptions, axisOfCall, normalizeAxis, type AxisOptions } from '../axes';
import { checkTensor, describeOperand } from '../common';
import { astypeOp, BINARY, binaryOp, whereOp } from '../elementwise/elementwise';
import { gather } from '../indexing/indexing';
import { cat, narrow } from '../layout/layout';
import { named } from '../named';
import { isnan } from '../elementwise/predicates';
import { isFloating } from '../promotion';
import type { SortResult } from '../sort/sorting';
import type { SumResult } from '../types';

export interface CumprodOptions<E extends DType = DType> extends AxisOptions {
  /** Convert the input to this dtype first and return it (not bool). */
  dtype?: E;
}

const CUMPROD_KEYS = optionKeys<CumprodOptions>({ axis: true, dim: true, dtype: true });
const CUMEXT_KEYS = optionKeys<AxisOptions>({ axis: true, dim: true });

/** The axis of a scan call (required), normalized; 0 for a 0-d x. */
function scanAxis(x: Tensor, arg: unknown, o: AxisOptions, fn: string): number {
  return normalizeAxis(axisOfCall(arg, o, fn, true), x.shape, fn);
}

/** One doubling step on each of `ts` along axis: element i combined with element i - s (NOTE [ Scans by doubling ]). */
function step(ts: Tensor[], axis: number, s: number, combine: (earlier: Tensor[], later: Tensor[]) => Tensor[]): Tensor[] {
  const n = ts[0].shape[axis];
  const earlier = ts.map((t) => narrow(t, axis, 0, n - s));
  const later = ts.map((t) => narrow(t, axis, s, n - s));
  const merged = combine(earlier, later);
  return ts.map((t, k) => cat([narrow(t, axis, 0, s), merged[k]], axis));
}

/** The inclusive scan of `ts` along axis by `combine`. */
function scan(ts: Tensor[], axis: number, combine: (earlier: Tensor[], later: Tensor[]) => Tensor[]): Tensor[] {
  const n = ts[0].ndim === 0 ? 1 : ts[0].shape[axis];
  let cur = ts;
  for (let s = 1; s < n; s *= 2) cur = step(cur, axis, s, combine);
  return cur;
}

/** @internal gx.cumprod and Tensor.cumprod. */
export function cumprodImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const o = axisCallOptions<CumprodOptions>(arg, opts, fn, CUMPROD_KEYS);
  const axis = scanAxis(x, arg, o, fn);
  const asked = o.dtype !== undefined ? parseDType(o.dtype, fn) : undefined;
  if (asked === 'bool') throw new TypeError(`${fn}: dtype bool is not supported; ask for an integer or floating dtype`);
  const dtype: DType = asked ?? (isFloating(x.dtype) ? x.dtype : 'int64');
  return tidy(() => {
    const src = x.dtype === dtype ? x : astypeOp(x, dtype, fn);
    if (src.ndim === 0) return src === x ? x.clone() : src;
    const [r] = scan([src], axis, ([e], [l]) => [binaryOp(BINARY.mul, e, l, fn)]);
    return r === x ? x.clone() : r;
  });
}

/** @internal gx.cummax / gx.cummin and their methods. */
export function cumExtremumImpl(a: unknown, arg: unknown, opts: unknown, largest: boolean, fn: string): SortResult {
  const x = checkTensor(a, fn, 'self');
  if (x.dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)}); convert it with .astype('uint8') first`);
  const o = axisCallOptions<AxisOptions>(arg, opts, fn, CUMEXT_KEYS);
  const axis = scanAxis(x, arg, o, fn);
  return tidy(() => {
    const indices = noGrad(() => {
      if (x.ndim === 0) return astypeOp(x, 'int64', fn).fill_(0) as Tensor<'int64'>;
      const n = x.shape[axis];
      const pos = arange(n, { device: x.device }).reshape(x.shape.map((s, d) => (d === axis ? s : 1))).expand(x.shape);
      const v = x.detach();
      // The later element wins unless the earlier is NaN: where it is NaN, or beats (or ties) the earlier one.
      const [, idx] = scan([v, pos], axis, ([ev, ei], [lv, li]) => {
        const beats = binaryOp(largest ? BINARY.ge : BINARY.le, lv, ev, fn);
        const take = isFloating(x.dtype)
          ? binaryOp(BINARY.logicalAnd, binaryOp(BINARY.logicalXor, isnan(ev), true, fn), binaryOp(BINARY.logicalOr, isnan(lv), beats, fn), fn)
          : beats;
        return [whereOp(take, lv, ev, fn), whereOp(take, li, ei, fn)];
      });
      return idx as Tensor<'int64'>;
    });
    const values = gather(x, axis, indices);
    return named({ values, indices }, ['values', 'indices']);
  });
}

export interface CumprodFn {
  <E extends DType>(x: Tensor, axis: number, opts: CumprodOptions<E> & { dtype: E }): Tensor<E>;
  <E extends DType>(x: Tensor, opts: CumprodOptions<E> & { axis: number; dtype: E }): Tensor<E>;
  <D extends DType>(x: Tensor<D>, axis: number, opts?: CumprodOptions): Tensor<SumResult<D>>;
  <D extends DType>(x: Tensor<D>, opts: CumprodOptions & { axis: number }): Tensor<SumResult<D>>;
}

export interface CumExtremumFn {
  <D extends DType>(x: Tensor<D>, axis: number): SortResult<D>;
  <D extends DType>(x: Tensor<D>, opts: AxisOptions & { axis: number }): SortResult<D>;
}

/**
 * Inclusive prefix products along `axis`, as torch.cumprod: integer and bool
 * inputs give int64, floating ones keep their dtype; `{ dtype }` converts
 * first. By doubling (NOTE [ Scans by doubling ]); the gradient is right at zeros.
 * @example gx.cumprod(gx.tensor([1, 2, 3, 4]), 0) // [1, 2, 6, 24]
 */
export const cumprod: CumprodFn = ((x: unknown, axis: unknown, opts?: unknown): Tensor => cumprodImpl(x, axis, opts, 'gx.cumprod')) as CumprodFn;

/**
 * The running maximum along `axis` and where it was found, as torch.cummax:
 * `{ values, indices }` (also `[values, indices]`); ties go to the later
 * index, NaN propagates. Gradients reach the elements the indices name.
 * @example const [m, i] = gx.cummax(x, 0)
 */
export const cummax: CumExtremumFn = ((x: unknown, axis: unknown): SortResult => cumExtremumImpl(x, axis, undefined, true, 'gx.cummax')) as CumExtremumFn;

/** The running minimum along `axis` and where it was found, as torch.cummin (see gx.cummax). @example gx.cummin(x, -1).values */
export const cummin: CumExtremumFn = ((x: unknown, axis: unknown): SortResult => cumExtremumImpl(x, axis, undefined, false, 'gx.cummin')) as CumExtremumFn;
