// The order statistics that look past NaN or count: mode (torch.mode),
// nanmedian and nanquantile (torch's: NaNs ignored, a line of NaNs only gives
// NaN). Made as median and quantile are (statistics-order.ts): gx.sort, which
// is stable and puts NaNs last, then gathers, so both devices and autograd
// come with them (the gradient reaches the elements picked).
//
// NOTE [ Mode by runs ]
// In a sorted line equal values form runs. With c[i] the count of i's run so
// far (i - the run's start + 1, the start found by a running max of the
// places where a run begins), the first argmax of c is the END of the first
// longest run: a later run's partial count reaching the maximum would make
// that run longer than the maximum. So its value is the smallest most
// frequent value, as torch's, and (the sort being stable) its index the last
// occurrence of that value. torch documents no rule for the index: its CPU
// kernel gives the last occurrence on lines of up to 16 elements and one of
// them beyond (std::sort, unstable; checked with torch 2.13), so ours is torch's
// where torch's is determined, and deterministic everywhere.
// NaN != NaN, so each NaN is a run of one, as in torch. bool takes the same
// path (sort orders false first), as torch.mode takes bool.
import type { DType } from '../../generated/dtypes';
import { arange } from '../creation/creation';
import { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { noGrad } from '../../tape/mode';
import { axisCallOptions, axisOfCall, normalizeAxis, type AxisOptions } from '../axes';
import { checkTensor, describeOperand } from '../common';
import { astypeOp, BINARY, binaryOp, unaryOp, UNARY, whereOp } from '../elementwise/elementwise';
import { gather } from '../indexing/indexing';
import { cat, narrow, squeeze, stack } from '../layout/layout';
import { named } from '../named';
import { isnan } from '../elementwise/predicates';
import { optionKeys } from '../../core/options';
import { REDUCE, reduceOp } from './reduction';
import { cumExtremumImpl } from './scan-extremum';
import { sortImpl, type SortResult } from '../sort/sorting';
import {
  checkLength, linesOf, MEDIAN_KEYS, medianOfNothing, quantileCall, splitEvenly, torchLerp, type MedianFn, type MedianOptions, type QuantileFn,
} from './statistics-order';
import { axisFunction } from '../axis-function';

export interface ModeOptions extends AxisOptions {
  /** The axis (default -1, as torch.mode). */
  axis?: number;
  /** Keep the axis as size 1 (default false). */
  keepdims?: boolean;
}
const MODE_KEYS = optionKeys<ModeOptions>({ axis: true, dim: true, keepdims: true });

/** `pick(t)`: t's elements at `place` along axis, the axis kept or dropped. */
function picker(place: Tensor, axis: number, keepdims: boolean, ndim: number): (t: Tensor) => Tensor {
  return (t) => (keepdims || ndim === 0 ? gather(t, axis, place) : squeeze(gather(t, axis, place), axis));
}

/** @internal gx.mode and Tensor.mode (NOTE [ Mode by runs ]). */
export function modeImpl(a: unknown, arg: unknown, opts: unknown, fn: string): SortResult {
  const x = checkTensor(a, fn, 'input');
  const o = axisCallOptions<ModeOptions>(arg, opts, fn, MODE_KEYS);
  const axisArg = axisOfCall(arg, o, fn) ?? -1;
  const keepdims = o.keepdims === true;
  return tidy(() => {
    const lines = x.ndim === 0 ? x.reshape([1]) : x;
    const axis = x.ndim === 0 ? 0 : normalizeAxis(axisArg, x.shape, fn);
    const n = checkLength(lines, axis, x, fn);
    const sorted = sortImpl(lines, axis, undefined, fn);
    const place = noGrad(() => {
      const v = sorted.values.detach();
      const pos = arange(n, { dtype: 'int64', device: x.device }).reshape(lines.shape.map((s, d) => (d === axis ? s : 1))).expand(lines.shape);
      // A run starts at 0 and wherever the value differs from the one before (NaN differs from itself).
      const differs = binaryOp(BINARY.ne, narrow(v, axis, 1, n - 1), narrow(v, axis, 0, n - 1), fn);
      const starts = cat([narrow(binaryOp(BINARY.eq, pos, 0, fn), axis, 0, 1), differs], axis);
      const runStart = cumExtremumImpl(whereOp(starts, pos, 0, fn), axis, undefined, true, fn).values;
      const count = binaryOp(BINARY.sub, pos, runStart, fn);
      return reduceOp(REDUCE.argmax, count, axis, { keepdims: true }, fn);
    });
    const pick = picker(place, axis, keepdims || x.ndim === 0, lines.ndim);
    let values = pick(sorted.values), indices = pick(sorted.indices);
    if (x.ndim === 0) [values, indices] = [values.reshape([]), indices.reshape([])];
    return named({ values, indices: indices as Tensor<'int64'> }, ['values', 'indices']);
  });
}

/** The count of the non-NaN elements of each line, keeping the axis. */
function presentCount(lines: Tensor, axis: number, fn: string): Tensor {
  return reduceOp(REDUCE.sum, binaryOp(BINARY.logicalXor, isnan(lines), true, fn), axis, { keepdims: true }, fn);
}

/** @internal gx.nanmedian and Tensor.nanmedian: as median, over the elements that are not NaN. */
export function nanmedianImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor | SortResult {
  const x = checkTensor(a, fn, 'input');
  if (x.dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)})`);
  const o = axisCallOptions<MedianOptions>(arg, opts, fn, MEDIAN_KEYS);
  const axisArg = axisOfCall(arg, o, fn);
  const keepdims = o.keepdims === true;
  const r = tidy(() => {
    // The whole tensor's nanmedian records its own derivative (splitEvenly): its forward runs detached.
    const { lines, axis, flat } = linesOf(axisArg === undefined || axisArg === null ? x.detach() : x, axisArg, fn);
    if (flat && x.numel === 0) return medianOfNothing(x, keepdims, fn);
    checkLength(lines, axis, x, fn);
    const sorted = sortImpl(lines, axis, undefined, fn);
    // The lower middle of the c elements that are not NaN (sorted first): (c - 1) >> 1; the first NaN when c = 0.
    const c = presentCount(lines, axis, fn);
    const place = unaryOp(UNARY.floor, binaryOp(BINARY.div, binaryOp(BINARY.maximum, binaryOp(BINARY.sub, c, 1, fn), 0, fn), 2, fn), fn);
    const pick = picker(astypeOp(place, 'int64', fn), axis, keepdims, lines.ndim);
    if (flat) return keepdims ? pick(sorted.values).reshape(x.shape.map(() => 1)) : pick(sorted.values);
    return named({ values: pick(sorted.values), indices: pick(sorted.indices) as Tensor<'int64'> }, ['values', 'indices']);
  });
  return r instanceof Tensor ? splitEvenly('nanmedian', x, r) : r;
}

/**
 * The quantile q of each sorted line of c present elements, as torch's quantile_compute: the rank
 * q (c - 1), rounded for 'lower' / 'higher' / 'nearest' and read there; for 'linear' / 'midpoint',
 * torch's lerp between the elements below and above it.
 */
function nanQuantileOf(sorted: Tensor, axis: number, q: number, c: Tensor, how: string, fn: string): Tensor {
  let rank = binaryOp(BINARY.mul, astypeOp(binaryOp(BINARY.maximum, binaryOp(BINARY.sub, c, 1, fn), 0, fn), sorted.dtype, fn), q, fn);
  if (how === 'lower') rank = unaryOp(UNARY.floor, rank, fn);
  else if (how === 'higher') rank = unaryOp(UNARY.ceil, rank, fn);
  else if (how === 'nearest') rank = unaryOp(UNARY.round, rank, fn);  // halves to even, as torch's round
  const below = unaryOp(UNARY.floor, rank, fn);
  const lo = gather(sorted, axis, astypeOp(below, 'int64', fn));
  if (how !== 'linear' && how !== 'midpoint') return lo;
  const hi = gather(sorted, axis, astypeOp(unaryOp(UNARY.ceil, rank, fn), 'int64', fn));
  const w = how === 'linear' ? binaryOp(BINARY.sub, rank, below, fn) : binaryOp(BINARY.add, binaryOp(BINARY.mul, rank, 0, fn), 0.5, fn);
  return torchLerp(lo, hi, w, fn);
}

/** @internal gx.nanquantile and Tensor.nanquantile. */
export function nanquantileImpl(a: unknown, q: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const { x, axisArg, how, qs, scalar, keepdims } = quantileCall(a, q, arg, opts, fn, 'nanquantile');
  return tidy(() => {
    const { lines, axis, flat } = linesOf(x, axisArg, fn);
    checkLength(lines, axis, x, fn);
    const sorted = sortImpl(lines, axis, undefined, fn).values;
    const c = presentCount(lines, axis, fn);
    const none = binaryOp(BINARY.eq, c, 0, fn);
    const per = qs.map((v) => whereOp(none, NaN, nanQuantileOf(sorted, axis, v, c, how, fn), fn));  // each [..., 1 at axis, ...]
    let r = stack(per, 0);  // [m, ..., 1 at axis, ...]
    if (flat && keepdims) r = r.reshape([qs.length, ...x.shape.map(() => 1)]);
    else if (!keepdims) r = squeeze(r, axis + 1);
    return scalar ? squeeze(r, 0) : r;
  });
}

export interface ModeFn {
  <D extends DType>(x: Tensor<D>, axis?: number, opts?: ModeOptions): SortResult<D>;
  <D extends DType>(x: Tensor<D>, opts: ModeOptions): SortResult<D>;
}

/** nanmedian takes median's forms. */
export type NanmedianFn = MedianFn;

/** nanquantile takes quantile's forms. */
export type NanquantileFn = QuantileFn;

/**
 * The most frequent value along `axis` (default -1) and its index, as torch.mode: `{ values, indices }`
 * (also `[values, indices]`). Of values equally frequent, the smallest; its index is its last occurrence
 * (torch names one of them: NOTE [ Mode by runs ]).
 * NaNs never equal each other, so each counts once. Gradients reach the element picked.
 * @example const [m, i] = gx.mode(gx.tensor([[1, 2, 2], [3, 3, 1]]), 1) // m [2, 3], i [2, 1]
 */
export const mode = axisFunction<ModeFn>('mode', 'axis?', modeImpl);

/**
 * gx.median over the elements that are not NaN, as torch.nanmedian: of every element without an
 * axis, `{ values, indices }` along one; a line of NaNs only gives NaN (and the index of its first NaN).
 * @example gx.nanmedian(gx.tensor([1, NaN, 3, 2])) // 2
 */
export const nanmedian = axisFunction<NanmedianFn>('nanmedian', 'axis?', nanmedianImpl);

/**
 * gx.quantile over the elements that are not NaN, as torch.nanquantile (the same interpolations);
 * a line of NaNs only gives NaN.
 * @example gx.nanquantile(x, [0.25, 0.75], 1)
 */
export const nanquantile = axisFunction<NanquantileFn>('nanquantile', 'q, axis?', nanquantileImpl);
