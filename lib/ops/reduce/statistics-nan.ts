// Reductions that torch has beside sum and max: nansum, nanmean (NaN read as
// absent), countNonzero, amax, amin and aminmax. Each is made of the built-in
// reductions and elementwise ops (so both devices and autograd come with
// them): nansum is the sum of x with its NaNs replaced by 0, nanmean that
// over the count of the others, countNonzero the sum of x != 0; amax and
// amin the max and min reductions over any axes (gx.max along one axis gives
// { values, indices }: NOTE [ The forms of max and min ]), and aminmax both at once.
import type { DType } from '../../generated/dtypes';
import { optionKeys } from '../../core/options';
import type { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { axisCallOptions, axisOfCall, type Axes, type AxisOptions } from '../axes';
import { checkTensor, describeOperand } from '../common';
import { astypeOp, BINARY, binaryOp, whereOp } from '../elementwise/elementwise';
import { named, type Named } from '../named';
import { isnan } from '../elementwise/predicates';
import { isFloating } from '../promotion';
import { REDUCE, reduceWith, reduceOp, type ReduceOptions } from './reduction';
import type { FloatResult, ReduceAxis, SumResult } from '../types';
import { axisFunction } from '../axis-function';

export interface NanReduceOptions extends AxisOptions<Axes> {
  /** The axes to reduce (default: all). Negative axes count from the end. */
  axis?: Axes;
  /** Keep reduced axes as size 1 (default false). */
  keepdims?: boolean;
}

const NAN_KEYS = optionKeys<NanReduceOptions>({ axis: true, dim: true, keepdims: true });

/** The axis and keepdims of a call f(x, axis?, opts?) or f(x, opts?). */
function reduceArgs(arg: unknown, opts: unknown, fn: string): { axis: unknown; keepdims: boolean } {
  const o = axisCallOptions<NanReduceOptions>(arg, opts, fn, NAN_KEYS);
  return { axis: axisOfCall(arg, o, fn) ?? null, keepdims: o.keepdims === true };
}

/** x with its NaNs replaced by 0 (x itself for a dtype without NaN). */
function nanToZero(x: Tensor, fn: string): Tensor {
  return isFloating(x.dtype) ? whereOp(isnan(x), 0, x, fn) : x;
}

/** @internal gx.nansum and Tensor.nansum. */
export function nansumImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const { axis, keepdims } = reduceArgs(arg, opts, fn);
  return tidy(() => reduceOp(REDUCE.sum, nanToZero(x, fn), axis, { keepdims }, fn));
}

/** @internal gx.nanmean and Tensor.nanmean. */
export function nanmeanImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  if (!isFloating(x.dtype)) {
    throw new TypeError(`${fn}: dtype ${x.dtype} is not supported (got ${describeOperand(x)}); nanmean needs a floating-point input`);
  }
  const { axis, keepdims } = reduceArgs(arg, opts, fn);
  return tidy(() => {
    const total = reduceOp(REDUCE.sum, nanToZero(x, fn), axis, { keepdims }, fn);
    const present = binaryOp(BINARY.logicalXor, isnan(x), true, fn);
    const count = reduceOp(REDUCE.sum, astypeOp(present, x.dtype, fn), axis, { keepdims }, fn);
    return binaryOp(BINARY.div, total, count, fn);  // 0 / 0: NaN for a line of NaNs only, as torch
  });
}

/** @internal gx.countNonzero and Tensor.countNonzero. */
export function countNonzeroImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor<'int64'> {
  const x = checkTensor(a, fn, 'self');
  const { axis, keepdims } = reduceArgs(arg, opts, fn);
  return tidy(() => reduceOp(REDUCE.sum, binaryOp(BINARY.ne, x, x.dtype === 'bool' ? false : 0, fn), axis, { keepdims }, fn) as Tensor<'int64'>);
}

/** The smallest and the largest elements over the axes. */
export interface AminmaxFields<D extends DType = DType> {
  min: Tensor<D>;
  max: Tensor<D>;
}

/** `{ min, max }` that also destructures as `[min, max]` (NOTE [ Named results ]). */
export type AminmaxResult<D extends DType = DType> = Named<AminmaxFields<D>, [Tensor<D>, Tensor<D>]>;

/** @internal gx.aminmax and Tensor.aminmax. */
export function aminmaxImpl(a: unknown, arg: unknown, opts: unknown, fn: string): AminmaxResult {
  const x = checkTensor(a, fn, 'self');
  const { axis, keepdims } = reduceArgs(arg, opts, fn);
  const min = reduceOp(REDUCE.min, x, axis, { keepdims }, fn);
  try {
    return named({ min, max: reduceOp(REDUCE.max, x, axis, { keepdims }, fn) }, ['min', 'max']);
  } catch (e) {
    min.dispose();
    throw e;
  }
}

export interface NanSumFn {
  <D extends DType>(x: Tensor<D>, axis: ReduceAxis, opts?: NanReduceOptions): Tensor<SumResult<D>>;
  <D extends DType>(x: Tensor<D>, opts?: NanReduceOptions | Axes): Tensor<SumResult<D>>;
}

export interface NanMeanFn {
  <D extends DType>(x: Tensor<D>, axis: ReduceAxis, opts?: NanReduceOptions): Tensor<FloatResult<D>>;
  <D extends DType>(x: Tensor<D>, opts?: NanReduceOptions | Axes): Tensor<FloatResult<D>>;
}

export interface CountNonzeroFn {
  (x: Tensor, axis: ReduceAxis, opts?: NanReduceOptions): Tensor<'int64'>;
  (x: Tensor, opts?: NanReduceOptions | Axes): Tensor<'int64'>;
}

export interface AminmaxFn {
  <D extends DType>(x: Tensor<D>, axis: ReduceAxis, opts?: NanReduceOptions): AminmaxResult<D>;
  <D extends DType>(x: Tensor<D>, opts?: NanReduceOptions | Axes): AminmaxResult<D>;
}

export interface AmaxFn {
  <D extends DType>(x: Tensor<D>, axis: ReduceAxis, opts?: ReduceOptions): Tensor<D>;
  <D extends DType>(x: Tensor<D>, opts?: ReduceOptions | Axes): Tensor<D>;
}

/**
 * The sum over `axis` (default: all) with NaNs counted as 0, as torch.nansum;
 * integer and bool inputs sum in int64, as gx.sum. Gradients: 0 at the NaNs.
 * @example gx.nansum(gx.tensor([1, NaN, 2])) // 3
 */
export const nansum = axisFunction<NanSumFn>('nansum', 'axis?', nansumImpl);

/**
 * The mean over `axis` of the elements that are not NaN, as torch.nanmean
 * (NaN for a line of NaNs only). Floating inputs only.
 * @example gx.nanmean(x, 1, { keepdims: true })
 */
export const nanmean = axisFunction<NanMeanFn>('nanmean', 'axis?', nanmeanImpl);

/**
 * How many elements are not zero (not false) over `axis` (default: all), as
 * torch.count_nonzero: int64. NaN counts (it is not zero).
 * @example gx.countNonzero(x, 0)
 */
export const countNonzero = axisFunction<CountNonzeroFn>('countNonzero', 'axis?', countNonzeroImpl);

/**
 * The largest element over `axis` (one, several, or default all), as torch.amax:
 * a tensor (NaN propagates; the gradient is shared among ties, as torch's).
 * @example gx.amax(x, [0, 1], { keepdims: true })
 */
export const amax = axisFunction<AmaxFn>('amax', 'axis?', reduceWith(REDUCE.max));

/** The smallest element over `axis` (one, several, or default all), as torch.amin: a tensor. @example gx.amin(x, -1) */
export const amin = axisFunction<AmaxFn>('amin', 'axis?', reduceWith(REDUCE.min));

/**
 * The smallest and largest elements over `axis` (default: all), as
 * torch.aminmax: `{ min, max }`, which also destructures as `[min, max]`.
 * @example const [lo, hi] = gx.aminmax(x, { axis: 0 })
 */
export const aminmax = axisFunction<AminmaxFn>('aminmax', 'axis?', aminmaxImpl);
