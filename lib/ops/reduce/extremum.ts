// gx.max and gx.min (and the Tensor methods) in torch's three forms.
//
// NOTE [ The forms of max and min ]
// torch.max is three functions under one name, told apart by the arguments:
//   max(x)                      the largest element (a 0-d tensor);
//   max(x, dim, keepdim=False)  (values, indices) along one dim, a named tuple;
//   max(x, other)               the elementwise maximum of two tensors.
// gx.max follows it, with gx's spellings: max(x, axis, { keepdims }) and
// max(x, { axis, keepdims }) give `{ values, indices }` (also `[values,
// indices]`, NOTE [ Named results ]) when the axis is ONE number; a list of
// axes, or none, reduces to a tensor as gx.amax does (torch.amax's form: out=
// lives there); max(x, tensor) is gx.maximum. The index is the first maximum
// (NaN counts as the maximum, as in torch), and the gradient of the values
// reaches that one element (torch's max.dim; amax shares it among ties).
import type { DType } from '../../generated/dtypes';
import { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { axisCallOptions, axisOfCall, isOptions } from '../axes';
import { checkTensor } from '../common';
import { astypeOp, BINARY, binaryOp } from '../elementwise/elementwise';
import type { OutOptions } from '../common';
import { gather } from '../indexing/indexing';
import { squeeze } from '../layout/layout';
import { named } from '../named';
import { REDUCE, REDUCE_KEYS, reduceOp, type ReduceDTypeOptions, type ReduceOptions } from './reduction';
import type { SortResult } from '../sort/sorting';
import type { ReduceArg } from '../types';
import { axisFunction } from '../axis-function';

/** The options of max(x, axis, opts) and min's one-axis form. */
export interface ExtremumOptions {
  /** The one axis (negative counts from the end). */
  axis?: number;
  /** Keep the axis as size 1 (default false). */
  keepdims?: boolean;
}

/** Whether a call names one axis (a number, positional or { axis }): torch's (values, indices) form. */
function oneAxis(arg: unknown): boolean {
  if (typeof arg === 'number') return true;
  if (!isOptions(arg)) return false;
  const o = arg as { axis?: unknown; dim?: unknown };
  return typeof (o.axis ?? o.dim) === 'number';
}

/** @internal gx.max / gx.min and their methods (NOTE [ The forms of max and min ]). */
export function extremumImpl(largest: boolean, a: unknown, arg: unknown, opts: unknown, fn: string): Tensor | SortResult {
  if (arg instanceof Tensor) return binaryOp(largest ? BINARY.maximum : BINARY.minimum, a, arg, fn, opts);
  if (!oneAxis(arg)) return reduceOp(largest ? REDUCE.max : REDUCE.min, a, arg, opts, fn);
  const x = checkTensor(a, fn, 'input');
  const o = axisCallOptions<ReduceDTypeOptions>(arg, opts, fn, REDUCE_KEYS);
  const axis = axisOfCall(arg, o, fn) as number;
  const alt = `gx.${largest ? 'amax' : 'amin'}(x, axis, { out })`;
  if (o.out !== undefined) throw new TypeError(`${fn}: with one axis it gives { values, indices } and takes no out; for one tensor written into out, ${alt}`);
  if (o.dtype !== undefined) throw new TypeError(`${fn}: takes no dtype option (the values have the input's dtype)`);
  const keepdims = o.keepdims === true;
  return tidy(() => {
    // argmax has no bool kernel: bool compares as 0 and 1.
    const keyed = x.dtype === 'bool' ? astypeOp(x, 'uint8', fn) : x;
    const at = reduceOp(largest ? REDUCE.argmax : REDUCE.argmin, keyed, axis, { keepdims: true }, fn) as Tensor<'int64'>;
    const picked = x.ndim === 0 ? x.reshape([]) : gather(x, axis, at);
    const drop = (t: Tensor): Tensor => (keepdims || x.ndim === 0 ? t : squeeze(t, axis));
    return named({ values: drop(picked), indices: drop(at) as Tensor<'int64'> }, ['values', 'indices']);
  });
}

export interface ExtremumFn {
  /** The largest (smallest) element: a 0-d tensor; or over a list of axes, as gx.amax. */
  <D extends DType>(x: Tensor<D>, axes?: readonly number[] | null, opts?: ReduceOptions): Tensor<D>;
  <D extends DType>(x: Tensor<D>, opts: ReduceOptions & { axis?: readonly number[] | null }): Tensor<D>;
  /** `{ values, indices }` along one axis (torch.max(x, dim)). */
  <D extends DType>(x: Tensor<D>, axis: number, opts?: ExtremumOptions): SortResult<D>;
  <D extends DType>(x: Tensor<D>, opts: ExtremumOptions & { axis: number }): SortResult<D>;
  /** The elementwise maximum (minimum) of two tensors (gx.maximum). */
  <D extends DType>(x: Tensor<D>, other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
  (x: Tensor, other: Tensor, opts?: OutOptions): Tensor;
  /** Any of the forms, when the argument's type is not known. */
  (x: Tensor, arg?: ReduceArg | Tensor | null, opts?: ReduceOptions): Tensor | SortResult;
}

/**
 * torch.max's three forms (NOTE [ The forms of max and min ]): the largest element; along ONE axis,
 * `{ values, indices }` (also `[values, indices]`; the first maximum, NaN counting as one);
 * over a list of axes, the largest as gx.amax; with a tensor, the elementwise gx.maximum.
 * @example gx.max(x); const [v, i] = gx.max(x, 1); gx.max(x, [0, 1], { keepdims: true }); gx.max(a, b)
 */
export const max = axisFunction<ExtremumFn>('max', 'arg?', (x, arg, opts, fn) => extremumImpl(true, x, arg, opts, fn));

/**
 * torch.min's three forms, as gx.max's: the smallest element; `{ values, indices }` along one axis;
 * over a list of axes, as gx.amin; with a tensor, the elementwise gx.minimum.
 * @example gx.min(x); const { values, indices } = gx.min(x, 0); gx.min(a, b)
 */
export const min = axisFunction<ExtremumFn>('min', 'arg?', (x, arg, opts, fn) => extremumImpl(false, x, arg, opts, fn));
