// The built-in ops as gx functions (gx.add, gx.sum, ...). Tensor methods for
// the same ops are in methods.ts (lib/index.ts loads it). Each runs on the device of its inputs, CPU
// or CUDA; results are new tensors unless `{ out }` names one.
import {
  astypeOp, BINARY, binaryOp, clampOp, UNARY, unaryOp, whereOp, type BinaryName, type UnaryName,
} from './elementwise';
import { REDUCE, reduceOp } from './reduction';
import type {
  ArgReduceFn, BinaryFn, ClampFn, CompareFn, DivFn, ExtremumFn, MeanFn, SumFn, UnaryFloatFn, UnaryKeepFn, WhereFn,
} from './types';
import type { DType } from '../generated/dtypes';
import type { Tensor } from '../tensor';
import type { OutOptions } from './common';
import type { Operand } from './promotion';

export { resultType, promoteTypes, canCast, type Operand, type ScalarOperand } from './promotion';
export type { OutOptions } from './common';
export type { ReduceOptions, ReduceDTypeOptions, ArgReduceOptions } from './reduction';
export type { Axes, AxisOptions } from './axes';
export type {
  FloatDType, IntegerDType, FloatResult, SumResult, ReduceArg, ReduceAxis, BinaryFn, DivFn, CompareFn, UnaryFloatFn, UnaryKeepFn,
  WhereFn, ClampFn, SumFn, MeanFn, ExtremumFn, ArgReduceFn,
} from './types';

type AnyBinary = (self: Operand, other: Operand, opts?: OutOptions) => Tensor;
type AnyUnary = (x: Tensor, opts?: OutOptions) => Tensor;

function binary(name: BinaryName): AnyBinary {
  const fn = `gx.${name}`;
  const f: AnyBinary = (a, b, opts) => binaryOp(BINARY[name], a, b, fn, opts);
  Object.defineProperty(f, 'name', { value: name });
  return f;
}

function unary(name: UnaryName): AnyUnary {
  const fn = `gx.${name}`;
  const f: AnyUnary = (x, opts) => unaryOp(UNARY[name], x, fn, opts);
  Object.defineProperty(f, 'name', { value: name });
  return f;
}

// --- binary -------------------------------------------------------------------

/**
 * self + other, elementwise, with NumPy broadcasting and PyTorch's type
 * promotion (gx.resultType); either side may be a JS number.
 * @example gx.add(a, b); gx.add(a, 1); gx.add(a, b, { out: c })
 */
export const add = binary('add') as BinaryFn;
/** self - other (not for bool: see logicalXor). @example gx.sub(1, x) */
export const sub = binary('sub') as BinaryFn;
/** self * other. @example gx.mul(x, 2) */
export const mul = binary('mul') as BinaryFn;
/** True division self / other: integer inputs give float32. @example gx.div(gx.arange(4), 2) // [0, 0.5, 1, 1.5] */
export const div = binary('div') as DivFn;
/** self ** other; integers to negative integer powers are refused. @example gx.pow(x, 2) */
export const pow = binary('pow') as BinaryFn;
/** Elementwise maximum; NaN propagates. @example gx.maximum(x, 0) */
export const maximum = binary('maximum') as BinaryFn;
/** Elementwise minimum; NaN propagates. @example gx.minimum(x, y) */
export const minimum = binary('minimum') as BinaryFn;
/** Python's % (the result has the divisor's sign), as torch.remainder. @example gx.remainder(x, 3) */
export const remainder = binary('remainder') as BinaryFn;
/** self == other, as a bool tensor. @example gx.eq(x, 0) */
export const eq = binary('eq') as CompareFn;
/** self != other, as a bool tensor. */
export const ne = binary('ne') as CompareFn;
/** self < other, as a bool tensor. */
export const lt = binary('lt') as CompareFn;
/** self <= other, as a bool tensor. */
export const le = binary('le') as CompareFn;
/** self > other, as a bool tensor. @example gx.where(gx.gt(x, 0), x, 0) */
export const gt = binary('gt') as CompareFn;
/** self >= other, as a bool tensor. */
export const ge = binary('ge') as CompareFn;
/** Logical and of "nonzero", as a bool tensor. */
export const logicalAnd = binary('logicalAnd') as CompareFn;
/** Logical or of "nonzero", as a bool tensor. */
export const logicalOr = binary('logicalOr') as CompareFn;
/** Logical xor of "nonzero", as a bool tensor. */
export const logicalXor = binary('logicalXor') as CompareFn;

// --- unary --------------------------------------------------------------------

/** e ** x (integer and bool inputs give float32). @example gx.exp(x) */
export const exp = unary('exp') as UnaryFloatFn;
/** Natural logarithm. */
export const log = unary('log') as UnaryFloatFn;
/** log(1 + x), accurate near 0. */
export const log1p = unary('log1p') as UnaryFloatFn;
/** Square root. */
export const sqrt = unary('sqrt') as UnaryFloatFn;
/** 1 / sqrt(x). */
export const rsqrt = unary('rsqrt') as UnaryFloatFn;
/** Sine. */
export const sin = unary('sin') as UnaryFloatFn;
/** Cosine. */
export const cos = unary('cos') as UnaryFloatFn;
/** Hyperbolic tangent. */
export const tanh = unary('tanh') as UnaryFloatFn;
/** 1 / (1 + exp(-x)). */
export const sigmoid = unary('sigmoid') as UnaryFloatFn;
/** GELU, the exact (erf) form of torch.nn.functional.gelu. */
export const gelu = unary('gelu') as UnaryFloatFn;
/** log(1 + exp(x)); x above 20 passes through (torch's threshold). */
export const softplus = unary('softplus') as UnaryFloatFn;
/** -x (keeps the dtype; not for bool). */
export const neg = unary('neg') as UnaryKeepFn;
/** |x| (keeps the dtype; not for bool). */
export const abs = unary('abs') as UnaryKeepFn;
/** -1, 0 or 1 by the sign of x; 0 for NaN. */
export const sign = unary('sign') as UnaryKeepFn;
/** Rounds down (integers unchanged). */
export const floor = unary('floor') as UnaryKeepFn;
/** Rounds up (integers unchanged). */
export const ceil = unary('ceil') as UnaryKeepFn;
/** Rounds to the nearest integer, halves to even as torch.round (integers unchanged). */
export const round = unary('round') as UnaryKeepFn;
/** max(x, 0); NaN propagates. @example gx.relu(x) */
export const relu = unary('relu') as UnaryKeepFn;

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
