// gx.where, gx.clamp and gx.astype: the elementwise ops that are not in the op list
// (their kernels take a condition, bounds or a target dtype).
import { astypeOp, clampOp, whereOp } from './elementwise';
import type { ClampFn, WhereFn } from '../types';
import type { DType } from '../../generated/dtypes';
import type { Tensor } from '../../core/tensor';
import { tooManyArguments } from '../../core/options';


// --- where, clamp, astype -------------------------------------------------------

/**
 * self where condition (a bool tensor) is true, else other; all three
 * broadcast, and self and other may be JS numbers.
 * @example gx.where(gx.gt(x, 0), x, 0)
 */
export const where: WhereFn = (function (condition: unknown, a: unknown, b: unknown, opts?: unknown): Tensor {
  if (arguments.length > 4) tooManyArguments('gx.where', '(condition, a, b, options?)', arguments.length - 4, arguments[4]);
  return whereOp(condition, a, b, 'gx.where', opts);
}) as WhereFn;

/**
 * Limits x to [min, max] (either may be undefined or null); min > max gives
 * max everywhere, NaN stays NaN. Number bounds promote like scalars.
 * @example gx.clamp(x, 0, 1); gx.clamp(x, undefined, 6)
 */
export const clamp: ClampFn = (function (x: unknown, min?: unknown, max?: unknown, opts?: unknown): Tensor {
  if (arguments.length > 4) tooManyArguments('gx.clamp', '(x, min?, max?, options?)', arguments.length - 4, arguments[4]);
  return clampOp(x, min, max, 'gx.clamp', opts);
}) as ClampFn;

/**
 * A copy of x converted to `dtype` (floats to integers truncate toward zero;
 * anything to bool is "nonzero").
 * @example gx.astype(gx.arange(3), 'float32')
 */
export function astype<E extends DType>(x: Tensor, dtype: E): Tensor<E> {
  if (arguments.length > 2) tooManyArguments('gx.astype', '(x, dtype)', arguments.length - 2, arguments[2]);
  return astypeOp(x, dtype, 'gx.astype') as Tensor<E>;
}
