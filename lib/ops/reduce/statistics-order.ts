// Order statistics as torch has them: median (the lower of the two middle
// values, as torch.median) and quantile (its five interpolations), made of
// gx.sort and gathers, so both devices and autograd come with them (the
// gradient reaches the elements picked, through sort's indices). A line with
// a NaN gives NaN, as in torch: sort puts NaNs last, so median picks the
// first NaN of a line that has one, and quantile writes NaN there. As torch's
// too: the median of every element of an empty tensor is NaN (medianOfNothing),
// an empty line along an axis is refused, and quantile refuses an empty input
// and a tensor q of another dtype than the input.
import { full, tensor } from '../creation/creation';
import type { DType } from '../../generated/dtypes';
import { optionKeys } from '../../core/options';
import { describeValue, formatShape } from '../../core/shape';
import { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { record, shouldRecord } from '../../tape/graph';
import { axisCallOptions, axisOfCall, normalizeAxis, type AxisOptions } from '../axes';
import { checkTensor, describeOperand } from '../common';
import { astypeOp, BINARY, binaryOp, whereOp } from '../elementwise/elementwise';
import { gather, indexSelect } from '../indexing/indexing';
import { movedim, squeeze, unsqueeze } from '../layout/layout';
import { named } from '../named';
import { isnan } from '../elementwise/predicates';
import { isFloating } from '../promotion';
import { REDUCE, reduceOp } from './reduction';
import { sortImpl, type SortResult } from '../sort/sorting';
import type { FloatResult } from '../types';
import { axisFunction } from '../axis-function';

export interface MedianOptions extends AxisOptions {
  /** The axis (default: none, the median of every element). */
  axis?: number;
  /** Keep the axis as size 1 (default false). */
  keepdims?: boolean;
}

export type QuantileInterpolation = 'linear' | 'lower' | 'higher' | 'nearest' | 'midpoint';

export interface QuantileOptions extends MedianOptions {
  /** Between the two elements around q (default 'linear'), as torch.quantile's interpolation. */
  interpolation?: QuantileInterpolation;
}

/** @internal */
export const MEDIAN_KEYS = optionKeys<MedianOptions>({ axis: true, dim: true, keepdims: true });
/** @internal */
export const QUANTILE_KEYS = optionKeys<QuantileOptions>({ axis: true, dim: true, keepdims: true, interpolation: true });
/** @internal */
export const INTERPOLATIONS: readonly QuantileInterpolation[] = ['linear', 'lower', 'higher', 'nearest', 'midpoint'];

/** @internal x's lines along the axis the call names: x itself and the axis, or x flattened and 0. */
export function linesOf(x: Tensor, axisArg: unknown, fn: string): { lines: Tensor; axis: number; flat: boolean } {
  if (axisArg === undefined || axisArg === null) return { lines: x.reshape([x.numel]), axis: 0, flat: true };
  return { lines: x, axis: normalizeAxis(axisArg, x.shape, fn), flat: false };
}

/** @internal Refuses an empty line: it has no median or quantile. */
export function checkLength(lines: Tensor, axis: number, x: Tensor, fn: string): number {
  const n = lines.ndim === 0 ? 1 : lines.shape[axis];
  if (n === 0) throw new RangeError(`${fn}: cannot take it of zero elements (input of shape ${formatShape(x.shape)})`);
  return n;
}

/**
 * @internal The median of every element of an empty tensor, as torch's median and nanmedian: NaN converted to
 * x's dtype (torch's at::full({}, NaN).to(x's options)), so an integer dtype gets what the conversion of NaN
 * gives on that device (on the CPU, the lowest int32 or int64, 0 for int8, int16 and uint8, as torch's).
 * Along an empty axis there is nothing to pick and both refuse, as torch's.
 */
export function medianOfNothing(x: Tensor, keepdims: boolean, fn: string): Tensor {
  const nan = full([], NaN, { dtype: 'float32', device: x.device });
  const r = nan.dtype === x.dtype ? nan : astypeOp(nan, x.dtype, fn);
  return keepdims ? r.reshape(x.shape.map(() => 1)) : r;
}

/** @internal gx.median and Tensor.median: a tensor without an axis, `{ values, indices }` with one. */
export function medianImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor | SortResult {
  const x = checkTensor(a, fn, 'input');
  if (x.dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)})`);
  const o = axisCallOptions<MedianOptions>(arg, opts, fn, MEDIAN_KEYS);
  const axisArg = axisOfCall(arg, o, fn);
  const keepdims = o.keepdims === true;
  const r = tidy(() => {
    // The whole tensor's median records its own derivative (splitEvenly): its forward runs detached.
    const { lines, axis, flat } = linesOf(axisArg === undefined || axisArg === null ? x.detach() : x, axisArg, fn);
    if (flat && x.numel === 0) return medianOfNothing(x, keepdims, fn);
    const n = checkLength(lines, axis, x, fn);
    const sorted = sortImpl(lines, axis, undefined, fn);
    // The place of the median in each sorted line: (n - 1) >> 1, or the first NaN (sorted last) where there is one.
    const nans = reduceOp(REDUCE.sum, isnan(lines), axis, { keepdims: true }, fn);
    const place = whereOp(binaryOp(BINARY.gt, nans, 0, fn), binaryOp(BINARY.sub, n, nans, fn), (n - 1) >> 1, fn);
    const pick = (t: Tensor): Tensor => (keepdims || lines.ndim === 0 ? gather(t, axis, place) : squeeze(gather(t, axis, place), axis));
    if (flat) return keepdims ? pick(sorted.values).reshape(x.shape.map(() => 1)) : pick(sorted.values);
    return named({ values: pick(sorted.values), indices: pick(sorted.indices) as Tensor<'int64'> }, ['values', 'indices']);
  });
  return r instanceof Tensor ? splitEvenly('median', x, r) : r;
}

/**
 * @internal Records the median of a whole tensor (`value`, of `x`) as torch's evenly_distribute_backward: the
 * gradient is split evenly between the elements equal to the value, or between the NaNs when it is NaN. (Along
 * an axis the gradient goes to the index returned, through sort and gather.)
 */
export function splitEvenly(name: string, x: Tensor, value: Tensor): Tensor {
  if (!shouldRecord(x)) return value;
  return record(name, [x], value, [x, value], (g, [sx, v]) => {
    const fn = `${name} backward`;
    const hit = binaryOp(BINARY.logicalOr, binaryOp(BINARY.eq, sx, v, fn), binaryOp(BINARY.logicalAnd, isnan(sx), isnan(v), fn), fn);
    const ties = reduceOp(REDUCE.sum, hit, undefined, undefined, fn);
    return [whereOp(hit, binaryOp(BINARY.div, g, ties, fn), 0, fn)];
  });
}

/**
 * @internal The quantiles asked for, as numbers in [0, 1], and whether q was one number (no q axis in the result).
 * A tensor q must have the input's dtype (`dtype`), as torch's.
 */
export function quantilesOf(q: unknown, dtype: DType, fn: string): { qs: number[]; scalar: boolean } {
  let qs: number[], scalar = false;
  if (typeof q === 'number') {
    qs = [q];
    scalar = true;
  } else if (Array.isArray(q) && q.every((v) => typeof v === 'number')) {
    qs = q as number[];
  } else if (q instanceof Tensor && q.ndim <= 1 && q.dtype === dtype) {
    qs = Array.from(q.toArraySync() as ArrayLike<number>);  // as torch, q's range is checked on the host
    scalar = q.ndim === 0;
  } else if (q instanceof Tensor && q.ndim <= 1) {
    // As torch.quantile ("q tensor must be same dtype as the input tensor"); a JS number q takes the input's dtype.
    throw new TypeError(`${fn}: q must have the input's dtype ${dtype}, got ${describeOperand(q)}`);
  } else {
    throw new TypeError(`${fn}: q must be a number, an array of numbers or a 0-d or 1-d tensor of the input's dtype, got ${describeOperand(q)}`);
  }
  const bad = qs.find((v) => !(v >= 0 && v <= 1));
  if (bad !== undefined) throw new RangeError(`${fn}: q must be in [0, 1], got ${bad}`);
  return { qs, scalar };
}

/** The two places around q's rank in a sorted line of n, and the weight of the upper one. */
function placesOf(q: number, n: number, how: QuantileInterpolation): [number, number, number] {
  const rank = q * (n - 1);
  const lo = Math.floor(rank), hi = Math.ceil(rank), frac = rank - lo;
  switch (how) {
    case 'lower': return [lo, lo, 0];
    case 'higher': return [hi, hi, 0];
    case 'nearest': {
      // Round half to even, as torch's round().
      const r = frac === 0.5 ? (lo % 2 === 0 ? lo : hi) : Math.round(rank);
      return [r, r, 0];
    }
    case 'midpoint': return [lo, hi, hi > lo ? 0.5 : 0];
    default: return [lo, hi, frac];
  }
}

/** @internal lo + w (hi - lo) as torch's lerp computes it: from lo for w < 0.5, hi - (1 - w) (hi - lo) above. */
export function torchLerp(lo: Tensor, hi: Tensor, w: Tensor, fn: string): Tensor {
  const span = binaryOp(BINARY.sub, hi, lo, fn);
  const fromLo = binaryOp(BINARY.add, lo, binaryOp(BINARY.mul, w, span, fn), fn);
  const fromHi = binaryOp(BINARY.sub, hi, binaryOp(BINARY.mul, binaryOp(BINARY.sub, 1, w, fn), span, fn), fn);
  return whereOp(binaryOp(BINARY.lt, w, 0.5, fn), fromLo, fromHi, fn);
}

/** A quantile call's arguments, checked: the input (floating), the axis argument, the interpolation, the quantiles. */
export function quantileCall(a: unknown, q: unknown, arg: unknown, opts: unknown, fn: string, what: string):
  { x: Tensor; axisArg: unknown; how: QuantileInterpolation; qs: number[]; scalar: boolean; keepdims: boolean } {
  const x = checkTensor(a, fn, 'input');
  if (!isFloating(x.dtype)) {
    throw new TypeError(`${fn}: dtype ${x.dtype} is not supported (got ${describeOperand(x)}); ${what} needs a floating-point input`);
  }
  const o = axisCallOptions<QuantileOptions>(arg, opts, fn, QUANTILE_KEYS);
  const axisArg = axisOfCall(arg, o, fn);
  const how = o.interpolation ?? 'linear';
  if (!INTERPOLATIONS.includes(how)) throw new TypeError(`${fn}: interpolation must be one of ${INTERPOLATIONS.join(', ')}, got ${describeValue(how)}`);
  const qs = quantilesOf(q, x.dtype, fn);
  // torch refuses any empty input, also along an axis whose lines are not empty (quantile of [3, 0] along 0).
  if (x.numel === 0) throw new RangeError(`${fn}: the input must not be empty, got shape ${formatShape(x.shape)} (as torch.${what})`);
  return { x, axisArg, how, ...qs, keepdims: o.keepdims === true };
}

/** @internal gx.quantile and Tensor.quantile. */
export function quantileImpl(a: unknown, q: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const { x, axisArg, how, qs, scalar, keepdims } = quantileCall(a, q, arg, opts, fn, 'quantile');
  return tidy(() => {
    const { lines, axis, flat } = linesOf(x, axisArg, fn);
    const n = checkLength(lines, axis, x, fn);
    const sorted = sortImpl(lines, axis, undefined, fn).values;
    const places = qs.map((v) => placesOf(v, n, how));
    const at = (k: 0 | 1): Tensor => indexSelect(sorted, axis, tensor(places.map((p) => p[k]), { dtype: 'int64', device: x.device }));
    const lo = at(0), hi = at(1);
    // The weights along the axis.
    const shape = lo.shape.map((s, d) => (d === axis ? s : 1));
    const w = tensor(places.map((p) => p[2]), { dtype: x.dtype, device: x.device }).reshape(shape);
    let r = torchLerp(lo, hi, w, fn);
    const anyNan = binaryOp(BINARY.gt, reduceOp(REDUCE.sum, isnan(lines), axis, { keepdims: true }, fn), 0, fn);
    r = whereOp(anyNan, NaN, r, fn);
    // The q axis first, as torch puts it; the reduced axis kept as 1 or dropped.
    r = movedim(unsqueeze(r, axis + 1), axis, 0);  // [m, ..., 1 at axis, ...]
    if (flat && keepdims) r = r.reshape([qs.length, ...x.shape.map(() => 1)]);
    else if (!keepdims) r = squeeze(r, axis + 1);
    return scalar ? squeeze(r, 0) : r;
  });
}

export interface MedianFn {
  <D extends DType>(x: Tensor<D>): Tensor<D>;
  <D extends DType>(x: Tensor<D>, axis: number, opts?: MedianOptions): SortResult<D>;
  <D extends DType>(x: Tensor<D>, opts: MedianOptions & { axis: number }): SortResult<D>;
  <D extends DType>(x: Tensor<D>, opts: MedianOptions): Tensor<D> | SortResult<D>;
}

export interface QuantileFn {
  <D extends DType>(x: Tensor<D>, q: number | readonly number[] | Tensor, axis?: number | null, opts?: QuantileOptions): Tensor<FloatResult<D>>;
  <D extends DType>(x: Tensor<D>, q: number | readonly number[] | Tensor, opts: QuantileOptions): Tensor<FloatResult<D>>;
}

/**
 * The median, as torch.median: of every element (a 0-d tensor) without an
 * axis; along `axis`, `{ values, indices }` (also `[values, indices]`).
 * With an even count it is the lower of the two middle values; a line with
 * a NaN gives NaN; of an empty tensor, NaN (converted to its dtype, as
 * torch's). Along an axis the gradient reaches the element picked;
 * of every element it is split evenly between the elements equal to the
 * median (torch's evenly_distribute_backward).
 * @example gx.median(x); const [m, i] = gx.median(x, 1)
 */
export const median = axisFunction<MedianFn>('median', 'axis?', medianImpl);

/**
 * The q-th quantiles (q in [0, 1]: a number, or an array or 1-d tensor of
 * them of the input's dtype, which become the result's first axis) of every element, or along
 * `axis`, as torch.quantile, interpolating linearly between the two elements
 * around q's rank (or { interpolation: 'lower' | 'higher' | 'nearest' |
 * 'midpoint' }). Floating, non-empty inputs; a line with a NaN gives NaN.
 * @example gx.quantile(x, 0.9); gx.quantile(x, [0.25, 0.5, 0.75], 1, { keepdims: true })
 */
export const quantile = axisFunction<QuantileFn>('quantile', 'q, axis?', quantileImpl);
