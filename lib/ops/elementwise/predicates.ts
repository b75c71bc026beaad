// Tests on values: any, all, isnan, isinf, isfinite, isclose, allclose,
// equal, as torch's, composed from comparisons and sums (so every device and
// dtype that those take works; their results are bool and need no autograd).
// Intermediates are freed by tidy.
import { zeros } from '../creation/creation';
import { FLOAT_DTYPES, type DType } from '../../generated/dtypes';
import { abs, add, eq, le, logicalAnd, logicalOr, lt, mul, ne, sub } from '../../generated/elementwise';
import { optionKeys, tooManyArguments } from '../../core/options';
import { describeValue, equalShapes } from '../../core/shape';
import { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { axisCallOptions, isOptions, type Axes } from '../axes';
import { checkTensor, describeOperand, optionsOf } from '../common';
import { REDUCE, REDUCE_KEYS, reduceOp, type ReduceOptions } from '../reduce/reduction';
import type { TestReduceFn } from '../types';
import { axisFunction } from '../axis-function';
import { astypeOp } from './elementwise';

const isFloating = (x: Tensor): boolean => (FLOAT_DTYPES as readonly DType[]).includes(x.dtype);

/** Whether a call's axis, positional or in the options, is an empty list. */
function emptyAxisList(axis: unknown): boolean {
  const a = axis !== null && typeof axis === 'object' && !Array.isArray(axis) ? (axis as { axis?: unknown; dim?: unknown }).axis ?? (axis as { dim?: unknown }).dim : axis;
  return Array.isArray(a) && a.length === 0;
}

// torch.any / torch.all take an axis, keepdims and out, but no dtype: the result is bool (uint8 for a uint8 input).
const TEST_KEYS = REDUCE_KEYS.filter((k) => k !== 'dtype');

/**
 * Whether elements along `axis` satisfy `test` against 0, counted by a sum of `pick(t)`: bool,
 * but uint8 for a uint8 input, as torch.any / torch.all give (their one exception). `out`, as
 * torch's, is bool or uint8 whatever the input, and gets the test's result (not the count).
 */
function countTest(x: unknown, axis: Axes | ReduceOptions | undefined, opts: ReduceOptions | undefined, fn: string,
  pick: (t: Tensor) => Tensor, test: typeof eq): Tensor {
  const t = checkTensor(x, fn, 'input');
  const { out, ...counted } = axisCallOptions<ReduceOptions>(axis, opts, fn, TEST_KEYS);
  if (out !== undefined && !(out instanceof Tensor && (out.dtype === 'bool' || out.dtype === 'uint8'))) {
    throw new TypeError(`${fn}: out must be a bool or uint8 tensor (as torch's), got ${describeOperand(out)}`);
  }
  const dtype = out?.dtype ?? (t.dtype === 'uint8' ? 'uint8' : 'bool');
  return tidy(() => {
    // torch.any(x, dim=()) reduces no dim (unlike sum's dim=[], NOTE in normalizeAxes): each element's own truth.
    const r = emptyAxisList(axis) ? ne(t, 0) : test(reduceOp(REDUCE.sum, pick(t), isOptions(axis) ? undefined : axis, counted, fn), 0);
    return out !== undefined || dtype === 'uint8' ? astypeOp(r, dtype, fn, out) : r;
  });
}

/** @internal any's implementation, for gx.any and Tensor.any (lib/ops/axis-function.ts makes both). */
export const anyImpl = (x: unknown, axis: unknown, opts: unknown, fn: string): Tensor =>
  countTest(x, axis as Axes | ReduceOptions | undefined, opts as ReduceOptions | undefined, fn, (t) => ne(t, 0), ne);

/** @internal all's implementation, for gx.all and Tensor.all. */
export const allImpl = (x: unknown, axis: unknown, opts: unknown, fn: string): Tensor =>
  countTest(x, axis as Axes | ReduceOptions | undefined, opts as ReduceOptions | undefined, fn, (t) => eq(t, 0), eq);

/**
 * Whether any element is nonzero (true), over `axis` or all; empty gives false.
 * bool, or uint8 for a uint8 input (as torch.any).
 * @example gx.any(gx.gt(x, 0)); gx.any(x, 1, { keepdims: true })
 */
export const any = axisFunction<TestReduceFn>('any', 'axis?', anyImpl);

/**
 * Whether every element is nonzero (true), over `axis` or all; empty gives true.
 * bool, or uint8 for a uint8 input (as torch.all).
 * @example gx.all(gx.isfinite(x)).item()
 */
export const all = axisFunction<TestReduceFn>('all', 'axis?', allImpl);

/** NaN elements (never, for integer and bool tensors). @example gx.isnan(gx.tensor([0, NaN])) // [false, true] */
export function isnan(x: Tensor): Tensor<'bool'> {
  if (arguments.length > 1) tooManyArguments('gx.isnan', '(x)', arguments.length - 1, arguments[1]);
  const t = checkTensor(x, 'gx.isnan', 'input');
  return (isFloating(t) ? ne(t, t) : zeros(t.shape, { dtype: 'bool', device: t.device })) as Tensor<'bool'>;
}

/** Infinite elements, either sign. @example gx.isinf(gx.tensor([1, -Infinity])) // [false, true] */
export function isinf(x: Tensor): Tensor<'bool'> {
  if (arguments.length > 1) tooManyArguments('gx.isinf', '(x)', arguments.length - 1, arguments[1]);
  const t = checkTensor(x, 'gx.isinf', 'input');
  if (!isFloating(t)) return zeros(t.shape, { dtype: 'bool', device: t.device });
  return tidy(() => eq(abs(t), Infinity)) as Tensor<'bool'>;
}

/** Elements neither infinite nor NaN. @example gx.isfinite(gx.tensor([1, NaN, Infinity])) // [true, false, false] */
export function isfinite(x: Tensor): Tensor<'bool'> {
  if (arguments.length > 1) tooManyArguments('gx.isfinite', '(x)', arguments.length - 1, arguments[1]);
  const t = checkTensor(x, 'gx.isfinite', 'input');
  if (!isFloating(t)) return zeros(t.shape, { dtype: 'bool', device: t.device }).fill_(true);
  return tidy(() => lt(abs(t), Infinity)) as Tensor<'bool'>;  // NaN < Infinity is false
}

/** Options of gx.isclose and gx.allclose. */
export interface IsCloseOptions {
  /** Relative tolerance (default 1e-5). */
  rtol?: number;
  /** Absolute tolerance (default 1e-8). */
  atol?: number;
  /** Whether NaN is close to NaN (default false). */
  equalNan?: boolean;
}

const ISCLOSE_KEYS = optionKeys<IsCloseOptions>({ rtol: true, atol: true, equalNan: true });

function closeness(a: unknown, b: unknown, opts: unknown, fn: string): Tensor<'bool'> {
  const x = checkTensor(a, fn, 'input'), y = checkTensor(b, fn, 'other');
  const o = optionsOf<IsCloseOptions>(opts, fn, ISCLOSE_KEYS);
  const rtol = o.rtol ?? 1e-5, atol = o.atol ?? 1e-8;
  for (const [name, v] of [['rtol', rtol], ['atol', atol]] as const) {
    if (typeof v !== 'number' || !(v >= 0)) throw new RangeError(`${fn}: ${name} must be a number >= 0, got ${describeValue(v)}`);
  }
  return tidy(() => {
    // torch's rule: equal, or a finite error within atol + rtol * |other| (an infinite one never is).
    const err = abs(sub(x, y));
    const within = logicalAnd(lt(err, Infinity), le(err, add(mul(abs(y), rtol), atol)));
    const close = logicalOr(eq(x, y), within);
    return o.equalNan === true ? logicalOr(close, logicalAnd(ne(x, x), ne(y, y))) : close;
  }) as Tensor<'bool'>;
}

/**
 * Elementwise |a - b| <= atol + rtol * |b| (or a == b), broadcasting, as torch.isclose.
 * @example gx.isclose(a, b, { rtol: 1e-3, equalNan: true })
 */
export function isclose(a: Tensor, b: Tensor, opts?: IsCloseOptions): Tensor<'bool'> {
  if (arguments.length > 3) tooManyArguments('gx.isclose', '(a, b, options?)', arguments.length - 3, arguments[3]);
  return closeness(a, b, opts, 'gx.isclose');
}

/**
 * Whether every element of a is close to b's (gx.isclose), as a boolean.
 * @example if (!gx.allclose(got, want, { atol: 1e-6 })) throw new Error('mismatch');
 */
export function allclose(a: Tensor, b: Tensor, opts?: IsCloseOptions): boolean {
  if (arguments.length > 3) tooManyArguments('gx.allclose', '(a, b, options?)', arguments.length - 3, arguments[3]);
  return tidy(() => all(closeness(a, b, opts, 'gx.allclose')).item());
}

/**
 * Whether a and b have the same shape and the same values (torch.equal; NaN is never equal).
 * @example gx.equal(gx.tensor([1, 2]), gx.tensor([1, 2])) // true
 */
export function equal(a: Tensor, b: Tensor): boolean {
  if (arguments.length > 2) tooManyArguments('gx.equal', '(a, b)', arguments.length - 2, arguments[2]);
  const fn = 'gx.equal';
  const x = checkTensor(a, fn, 'input'), y = checkTensor(b, fn, 'other');
  if (!equalShapes(x.shape, y.shape)) return false;
  return tidy(() => all(eq(x, y)).item());
}
