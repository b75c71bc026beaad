// Axis arguments, one word and one set of forms for every op that takes one
// (reductions, softmax, logSoftmax, logsumexp, var, std, cumsum and the
// layout ops): negative axes count from the end; a range error names the op,
// the argument, the input's shape and the valid range.
//
// NOTE [ Axis forms ]
// An op whose only argument besides its input(s) and options is the axis
// takes it positionally or in the options, never both:
//   gx.sum(x, 1)  gx.sum(x, [0, 1], { keepdims: true })  gx.sum(x, { axis: 1 })
//   x.softmax(-1)  x.softmax({ axis: -1, dtype: 'float32' })  gx.cat(ts, 1)
// The second argument is the options when it is a plain object, else the
// axis. `{ dim }`, the old spelling, still works for this version with a
// DeprecationWarning (GPUEXT_DEP_DIM). Ops that take several axes in fixed
// places (transpose, movedim, permute, flatten, slice, narrow) take them
// positionally only, as PyTorch and NumPy do.
import type { DType } from '../generated/dtypes';
import type * as ops from '../generated/ops';
import { warnDeprecated } from '../core/options';
import { formatShape } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { computeResult, describeOperand, optionsOf } from './common';
import { astypeOp } from './elementwise/elementwise';

/** One axis, or several where several make sense (reductions, squeeze). */
export type Axes = number | readonly number[];

/** The options-object form of the axis: `{ axis }`. */
export interface AxisOptions<A extends Axes = number> {
  /** The axis (negative counts from the end). */
  axis?: A;
  /** @deprecated The old spelling of `axis`, kept for this version (with a warning): write `axis`. */
  dim?: A;
}

/**
 * Which axes are valid: 'existing' an axis of the input (a 0-d input takes 0
 * and -1, as in PyTorch), 'strict' an axis the input has (none for 0-d),
 * 'insert' a position in a result with one more axis (unsqueeze, stack).
 */
export type AxisMode = 'existing' | 'strict' | 'insert';

function rangeError(fn: string, name: string, a: number, shape: readonly number[], lim: number, mode: AxisMode): RangeError {
  const ndim = shape.length;
  const valid = lim === 0 ? 'it has none' : `valid: ${-lim} to ${lim - 1}${mode === 'insert' ? `, a place in the ${lim}-d result` : ''}`;
  return new RangeError(`${fn}: ${name} ${a} is out of range for an input of shape ${formatShape(shape)} ` +
    `(${ndim} dimension${ndim === 1 ? '' : 's'}; ${valid})`);
}

/** How the call reads in messages: `gx.sum(x, ARGS)`, or `x.sum(ARGS)` for a method. */
export function callHint(fn: string, args: string): string {
  return fn.startsWith('Tensor.') ? `x.${fn.slice(7)}(${args})` : `${fn}(x, ${args})`;
}

/** One axis, in [0, ndim) (see AxisMode); `name` is the argument's name in errors. */
export function normalizeAxis(axis: unknown, shape: readonly number[], fn: string, name = 'axis', mode: AxisMode = 'existing'): number {
  if (typeof axis !== 'number' || !Number.isInteger(axis)) {
    if (axis === undefined) throw new TypeError(`${fn}: ${name} is required`);
    throw new TypeError(`${fn}: ${name} must be an integer, got ${describeOperand(axis)}`);
  }
  const ndim = shape.length;
  const lim = mode === 'existing' ? Math.max(ndim, 1) : mode === 'insert' ? ndim + 1 : ndim;
  if (axis < -lim || axis >= lim) throw rangeError(fn, name, axis, shape, lim, mode);
  return axis < 0 ? axis + lim : axis;
}

/**
 * A number or an array of axes, each normalized, in the order given; an axis
 * named twice is an error. `item` names one entry in errors.
 */
export function normalizeAxisList(axis: unknown, shape: readonly number[], fn: string, name = 'axis', item = name): number[] {
  const list = typeof axis === 'number' ? [axis] : Array.isArray(axis) ? (axis as unknown[]) : undefined;
  if (list === undefined) throw new TypeError(`${fn}: ${name} must be a number or an array of numbers, got ${describeOperand(axis)}`);
  const out = new Array<number>(list.length);
  for (let i = 0; i < list.length; i++) {
    const a = list[i];
    if (typeof a !== 'number' || !Number.isInteger(a)) throw new TypeError(`${fn}: ${name} must hold integers, got ${describeOperand(a)}`);
    const d = normalizeAxis(a, shape, fn, item);
    for (let j = 0; j < i; j++) {
      if (out[j] === d) throw new RangeError(`${fn}: ${name} ${JSON.stringify(list)} names dimension ${d} twice`);
    }
    out[i] = d;
  }
  return out;
}

/**
 * The reduced axes, sorted and distinct; [] for a 0-d input. All of them for
 * undefined, null or an empty list: torch.sum(x, dim=[]) (and mean, amax, var,
 * count_nonzero, vector_norm ...) reduces every dim, where NumPy's axis=()
 * reduces none; any and all, whose torch dim=() reduces none, say so themselves.
 */
export function normalizeAxes(axis: unknown, shape: readonly number[], fn: string): number[] {
  if (axis === undefined || axis === null || (Array.isArray(axis) && axis.length === 0)) return shape.map((_, i) => i);
  if (typeof axis === 'number') {
    const d = normalizeAxis(axis, shape, fn);
    return shape.length === 0 ? [] : [d];
  }
  const dims = normalizeAxisList(axis, shape, fn);
  return shape.length === 0 ? [] : dims.sort((p, q) => p - q);
}

/** The shape left after reducing `dims` (kept as size 1 with keepdims). */
export function reducedShape(shape: readonly number[], dims: readonly number[], keepdims: boolean): number[] {
  return keepdims ? shape.map((s, i) => (dims.includes(i) ? 1 : s)) : shape.filter((_, i) => !dims.includes(i));
}

/** Whether the argument after an axis op's input is its options object (a plain object) rather than the axis. */
/** @internal */
export function isOptions(arg: unknown): boolean {
  return typeof arg === 'object' && arg !== null && !Array.isArray(arg);
}

/** The options of a call that passes none: shared, so that `x.sum(1)` allocates no options object. */
const NO_OPTIONS: object = Object.freeze({});

/**
 * The options of a call `f(x, axis, opts?)` or `f(x, opts?)` (NOTE [ Axis
 * forms ]), checked against `known`.
 */
export function axisCallOptions<T extends object>(arg: unknown, opts: unknown, fn: string, known: readonly string[]): Partial<T> {
  if (!isOptions(arg)) return opts === undefined ? (NO_OPTIONS as Partial<T>) : optionsOf<T>(opts, fn, known);
  if (opts !== undefined) {
    throw new TypeError(`${fn}: takes the axis and options as ${callHint(fn, '1, { ... }')} or ${callHint(fn, '{ axis: 1, ... }')}, ` +
      'not two options objects');
  }
  return optionsOf<T>(arg, fn, known);
}

/**
 * The axis of that call: the positional one, or the options' `axis` (or the
 * deprecated `dim`, with a warning); undefined when none is given, unless
 * `required`.
 */
export function axisOfCall(arg: unknown, o: AxisOptions<Axes>, fn: string, required = false): unknown {
  const inOptions = o.axis !== undefined ? o.axis : o.dim;
  if (!isOptions(arg) && arg !== undefined) {
    if (inOptions !== undefined) throw new TypeError(`${fn}: the axis is given twice, as ${describeOperand(arg)} and in the options; pass one`);
    return arg;
  }
  if (o.dim !== undefined) {
    if (o.axis !== undefined) throw new TypeError(`${fn}: both axis and its old spelling dim are given; pass axis only`);
    warnDeprecated('dim', fn, callHint(fn, `{ axis: ${JSON.stringify(o.dim)} }`));
  }
  if (inOptions === undefined && required) {
    throw new TypeError(`${fn}: the axis is required, as in ${callHint(fn, '-1')} or ${callHint(fn, '{ axis: -1 }')}`);
  }
  return inOptions;
}

/**
 * Runs an op of the form `op(Tensor self, int axis, ScalarType dtype, Tensor out)`
 * (softmax, logSoftmax, cumsum): converts x to `asked` first when asked for,
 * writes into `out` or a new tensor of x's shape and `dtype`, and frees what
 * it made if the op throws.
 */
export function callAlongAxis(op: typeof ops.softmax, x: Tensor, dim: number, dtype: DType, asked: DType | undefined, out: Tensor | undefined,
  fn: string): Tensor {
  const src = asked !== undefined && asked !== x.dtype ? astypeOp(x, asked, fn) : x;
  try {
    return computeResult(x.shape, dtype, x.device, fn, { out, inputs: [src], elementwise: false },
      (r) => op(fn, { self: src.handle(fn), axis: dim, dtype, out: r.handle(fn) }));
  } finally {
    if (src !== x) src.dispose();
  }
}
