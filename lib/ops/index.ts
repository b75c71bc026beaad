// The built-in ops as gx functions (gx.add, gx.sum, ...). Tensor methods for
// the same ops are in methods.ts (lib/index.ts loads it). Each runs on the device of its inputs, CPU
// or CUDA; results are new tensors unless `{ out }` names one.
import { astypeOp, clampOp, whereOp } from './elementwise/elementwise';
import { REDUCE, reduceOp } from './reduce/reduction';
import type { ArgReduceFn, ClampFn, ExtremumFn, MeanFn, SumFn, WhereFn } from './types';
import type { DType } from '../generated/dtypes';
import type { Tensor } from '../core/tensor';

export { resultType, promoteTypes, canCast, type Operand, type ScalarOperand } from './promotion';
export type { OutOptions } from './common';
export type { ClampOptions } from './elementwise/elementwise';
export type { ReduceOptions, ReduceDTypeOptions, ArgReduceOptions } from './reduce/reduction';
export type { Axes, AxisOptions } from './axes';
export type {
  FloatDType, IntegerDType, FloatResult, SumResult, ReduceArg, ReduceAxis, BinaryFn, DivFn, CompareFn, UnaryFloatFn, UnaryKeepFn,
  WhereFn, ClampFn, SumFn, MeanFn, ExtremumFn, ArgReduceFn,
} from './types';

// The elementwise ops (gx.add ... gx.relu) are generated from ops/op-list.js.
export * from '../generated/elementwise';

// --- where, clamp, astype -------------------------------------------------------

/**
 * self where condition (a bool tensor) is true, else other; all three
 * broadcast, and self and other may be JS numbers.
 * @example gx.where(gx.gt(x, 0), x, 0)
 */
export const where: WhereFn = ((condition: unknown, a: unknown, b: unknown, opts?: unknown): Tensor =>
  whereOp(condition, a, b, 'gx.where', opts)) as WhereFn;

/**
 * Limits x to [min, max] (either may be undefined or null); min > max gives
 * max everywhere, NaN stays NaN. Number bounds promote like scalars.
 * @example gx.clamp(x, 0, 1); gx.clamp(x, undefined, 6)
 */
export const clamp: ClampFn = ((x: unknown, min?: unknown, max?: unknown, opts?: unknown): Tensor =>
  clampOp(x, min, max, 'gx.clamp', opts)) as ClampFn;

/**
 * A copy of x converted to `dtype` (floats to integers truncate toward zero;
 * anything to bool is "nonzero").
 * @example gx.astype(gx.arange(3), 'float32')
 */
export function astype<E extends DType>(x: Tensor, dtype: E): Tensor<E> {
  return astypeOp(x, dtype, 'gx.astype') as Tensor<E>;
}

// --- reductions -----------------------------------------------------------------

/**
 * Sum over `axis` (a number, an array, or all axes), optionally keeping the
 * reduced axes as size 1; integer and bool inputs sum in int64.
 * @example gx.sum(x); gx.sum(x, 0); gx.sum(x, 1, { keepdims: true }); gx.sum(x, { axis: [0, 2], keepdims: true })
 */
export const sum: SumFn = ((x: unknown, axis?: unknown, opts?: unknown): Tensor => reduceOp(REDUCE.sum, x, axis, opts, 'gx.sum')) as SumFn;
/** Product over axes; integer and bool inputs multiply in int64. */
export const prod: SumFn = ((x: unknown, axis?: unknown, opts?: unknown): Tensor => reduceOp(REDUCE.prod, x, axis, opts, 'gx.prod')) as SumFn;
/** Mean over axes; floating inputs only (or ask for `{ dtype: 'float32' }`). */
export const mean: MeanFn = ((x: unknown, axis?: unknown, opts?: unknown): Tensor => reduceOp(REDUCE.mean, x, axis, opts, 'gx.mean')) as MeanFn;
/** Maximum over axes (torch.amax); NaN propagates. @example gx.max(x, { axis: 1 }) */
export const max: ExtremumFn = ((x: unknown, axis?: unknown, opts?: unknown): Tensor => reduceOp(REDUCE.max, x, axis, opts, 'gx.max')) as ExtremumFn;
/** Minimum over axes (torch.amin); NaN propagates. */
export const min: ExtremumFn = ((x: unknown, axis?: unknown, opts?: unknown): Tensor => reduceOp(REDUCE.min, x, axis, opts, 'gx.min')) as ExtremumFn;
/** Index (int64) of the first maximum along one axis, or into the flattened tensor. @example gx.argmax(logits, 1) */
export const argmax: ArgReduceFn = ((x: unknown, axis?: unknown, opts?: unknown): Tensor =>
  reduceOp(REDUCE.argmax, x, axis, opts, 'gx.argmax')) as ArgReduceFn;
/** Index (int64) of the first minimum along one axis, or into the flattened tensor. */
export const argmin: ArgReduceFn = ((x: unknown, axis?: unknown, opts?: unknown): Tensor =>
  reduceOp(REDUCE.argmin, x, axis, opts, 'gx.argmin')) as ArgReduceFn;
