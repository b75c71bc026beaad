// gx.logsumexp, gx.var and gx.std: reductions over one axis, several or all,
// with keepdims and `out`, as torch.logsumexp, torch.var and torch.std.
// logsumexp is stable (max + log(sum(exp(x - max)))) and gives -inf for
// lines of -inf; var and std take torch's `correction` (default 1, the
// unbiased estimate) and run one pass of a shifted Welford update (NOTE
// [ Shifted Welford ] in ops/stats/var.h), accurate for data with a large
// mean. The kernels ride on the built-in reduction loops (ops/reduce/).
import { DEFAULT_FLOAT } from '../dtype';
import type { DType } from '../generated/dtypes';
import type { NativeTensor } from '../native';
import type { Tensor } from '../tensor';
import { normalizeAxes, reducedShape } from './axes';
import { optionKeys } from '../options';
import { checkTensor, describeOperand, computeResult, optionsOf } from './common';
import * as ops from '../generated/ops';
import { isFloating } from './promotion';
import type { FloatResult } from './types';

export interface LogsumexpOptions {
  /** The axes to reduce (default: all). Negative axes count from the end. */
  axis?: number | readonly number[];
  /** Keep reduced axes as size 1 (default false). */
  keepdims?: boolean;
  /** Write the result into this tensor (of the result's shape). */
  out?: Tensor;
}

export interface VarOptions extends LogsumexpOptions {
  /** Divide by N - correction (floored at 0): 1 (default) the unbiased estimate, 0 the population's. */
  correction?: number;
}

const LOGSUMEXP_KEYS = optionKeys<LogsumexpOptions>({ axis: true, keepdims: true, out: true });
const VAR_KEYS = optionKeys<VarOptions>({ axis: true, keepdims: true, out: true, correction: true });

/** The options object, or just the axis (or axes). */
function reduceOptions<T extends LogsumexpOptions>(opts: unknown, fn: string, known: readonly string[]): Partial<T> {
  return typeof opts === 'number' || Array.isArray(opts) ? ({ axis: opts } as Partial<T>) : optionsOf<T>(opts, fn, known);
}

/** Reduces x over o.axis into a new tensor or o.out of `dtype`; `call` runs the op. */
function callReduce(x: Tensor, o: Partial<LogsumexpOptions>, dtype: DType, fn: string,
  call: (self: NativeTensor, axis: number[], out: NativeTensor) => void): Tensor {
  const dims = normalizeAxes(o.axis, x.shape, fn);
  return computeResult(reducedShape(x.shape, dims, o.keepdims === true), dtype, x.device, fn,
    { out: o.out, inputs: [x], elementwise: false }, (r) => call(x.handle(fn), dims, r.handle(fn)));
}

/** @internal */
export function logsumexpImpl(a: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const o = reduceOptions<LogsumexpOptions>(opts, fn, LOGSUMEXP_KEYS);
  // Integer and bool inputs give the default float, as torch.logsumexp.
  const dtype = isFloating(x.dtype) ? x.dtype : DEFAULT_FLOAT;
  return callReduce(x, o, dtype, fn, (self, axis, out) => ops.logsumexp(fn, { self, axis, dtype, out }));
}

/** @internal var (sqrt false) or std (sqrt true). */
export function varImpl(a: unknown, opts: unknown, sqrt: boolean, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const o = reduceOptions<VarOptions>(opts, fn, VAR_KEYS);
  const name = sqrt ? 'std' : 'var';
  if (!isFloating(x.dtype)) {
    throw new TypeError(`${fn}: dtype ${x.dtype} is not supported (got ${describeOperand(x)}); ${name} needs a ` +
      "floating-point input (convert it with .astype('float32'))");
  }
  const correction = o.correction ?? 1;
  if (typeof correction !== 'number' || !Number.isFinite(correction)) {
    throw new TypeError(`${fn}: correction must be a finite number, got ${describeOperand(correction)}`);
  }
  const op = sqrt ? ops.std : ops.var;
  return callReduce(x, o, x.dtype, fn, (self, axis, out) => op(fn, { self, axis, correction, dtype: x.dtype, out }));
}

export interface LogsumexpFn {
  <D extends DType>(x: Tensor<D>, opts?: LogsumexpOptions | number | readonly number[]): Tensor<FloatResult<D>>;
}

export interface VarFn {
  <D extends DType>(x: Tensor<D>, opts?: VarOptions | number | readonly number[]): Tensor<D>;
}

/**
 * log(sum(exp(x))) over `axis` (a number, an array, or all axes), computed
 * stably, like torch.logsumexp: lines of only -inf (or none) give -inf, a +inf
 * gives +inf, a NaN gives NaN. Integer and bool inputs give float32.
 * @example gx.logsumexp(logits, { axis: -1, keepdims: true }); gx.logsumexp(x, [0, 1])
 */
export const logsumexp: LogsumexpFn = ((x: unknown, opts?: unknown): Tensor =>
  logsumexpImpl(x, opts, 'gx.logsumexp')) as LogsumexpFn;

/**
 * Variance over `axis` (default: all): sum((x - mean)^2) / max(0, N - correction),
 * like torch.var (correction 1 by default: the unbiased estimate; N <= correction
 * gives NaN or inf, as torch). Floating inputs only. Exported as `gx.var`.
 * @example gx.var(x); gx.var(x, { axis: 0, correction: 0, keepdims: true })
 */
export const variance: VarFn = ((x: unknown, opts?: unknown): Tensor => varImpl(x, opts, false, 'gx.var')) as VarFn;

/**
 * Standard deviation over `axis`: the square root of gx.var, like torch.std.
 * @example gx.std(x, { axis: -1 })
 */
export const std: VarFn = ((x: unknown, opts?: unknown): Tensor => varImpl(x, opts, true, 'gx.std')) as VarFn;
