// gx.logsumexp, gx.var and gx.std: reductions over one axis, several or all,
// with keepdims and `out`, as torch.logsumexp, torch.var and torch.std.
// logsumexp is stable (max + log(sum(exp(x - max)))) and gives -inf for
// lines of -inf; var and std take torch's `correction` (default 1, the
// unbiased estimate) and run one pass of a shifted Welford update (NOTE
// [ Shifted Welford ] in ops/stats/var.h), accurate for data with a large
// mean. The kernels ride on the built-in reduction loops (ops/reduce/).
import { DEFAULT_FLOAT } from '../../core/dtype';
import type { DType } from '../../generated/dtypes';
import type { NativeTensor } from '../../core/native';
import { recorders, shouldRecord } from '../../tape/graph';
import type { Tensor } from '../../core/tensor';
import { axisCallOptions, axisOfCall, normalizeAxes, reducedShape, type Axes, type AxisOptions } from '../axes';
import { optionKeys } from '../../core/options';
import { checkTensor, describeOperand, computeResult } from '../common';
import * as ops from '../../generated/ops';
import { isFloating } from '../promotion';
import type { FloatResult, ReduceAxis } from '../types';
import { axisFunction } from '../axis-function';

export interface LogsumexpOptions extends AxisOptions<Axes> {
  /** The axes to reduce (default: all). Negative axes count from the end. */
  axis?: Axes;
  /** Keep reduced axes as size 1 (default false). */
  keepdims?: boolean;
  /** Write the result into this tensor (of the result's shape). */
  out?: Tensor;
}

export interface VarOptions extends LogsumexpOptions {
  /** Divide by N - correction (floored at 0): 1 (default) the unbiased estimate, 0 the population's. */
  correction?: number;
}

const LOGSUMEXP_KEYS = optionKeys<LogsumexpOptions>({ axis: true, dim: true, keepdims: true, out: true });
const VAR_KEYS = optionKeys<VarOptions>({ axis: true, dim: true, keepdims: true, out: true, correction: true });

/** Reduces x over `axis` into a new tensor or o.out of `dtype`; `call` runs the op. */
function callReduce(x: Tensor, axis: unknown, o: Partial<VarOptions>, dtype: DType, fn: string, name: string,
  call: (self: NativeTensor, axis: number[], out: NativeTensor) => void): Tensor {
  const dims = normalizeAxes(axis, x.shape, fn);
  const result = computeResult(reducedShape(x.shape, dims, o.keepdims === true), dtype, x.device, fn,
    { out: o.out, inputs: [x], elementwise: false }, (r) => call(x.handle(fn), dims, r.handle(fn)));
  if (o.out === undefined && shouldRecord(x)) recorders.statReduce?.(name, x, dims, o.keepdims === true, o.correction ?? 1, result);
  return result;
}

/** @internal */
export function logsumexpImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const o = axisCallOptions<LogsumexpOptions>(arg, opts, fn, LOGSUMEXP_KEYS);
  // Integer and bool inputs give the default float, as torch.logsumexp.
  const dtype = isFloating(x.dtype) ? x.dtype : DEFAULT_FLOAT;
  return callReduce(x, axisOfCall(arg, o, fn), o, dtype, fn, 'logsumexp', (self, axes, out) => ops.logsumexp(fn, { self, axis: axes, dtype, out }));
}

/** @internal var (sqrt false) or std (sqrt true). */
export function varImpl(a: unknown, arg: unknown, opts: unknown, sqrt: boolean, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const o = axisCallOptions<VarOptions>(arg, opts, fn, VAR_KEYS);
  const axis = axisOfCall(arg, o, fn);
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
  return callReduce(x, axis, o, x.dtype, fn, name, (self, axes, out) => op(fn, { self, axis: axes, correction, dtype: x.dtype, out }));
}

export interface LogsumexpFn {
  <D extends DType>(x: Tensor<D>, axis: ReduceAxis, opts?: LogsumexpOptions): Tensor<FloatResult<D>>;
  <D extends DType>(x: Tensor<D>, opts?: LogsumexpOptions | Axes): Tensor<FloatResult<D>>;
}

export interface VarFn {
  <D extends DType>(x: Tensor<D>, axis: ReduceAxis, opts?: VarOptions): Tensor<D>;
  <D extends DType>(x: Tensor<D>, opts?: VarOptions | Axes): Tensor<D>;
}

/**
 * log(sum(exp(x))) over `axis` (a number, an array, or all axes), computed
 * stably, like torch.logsumexp: lines of only -inf (or none) give -inf, a +inf
 * gives +inf, a NaN gives NaN. Integer and bool inputs give float32.
 * @example gx.logsumexp(logits, { axis: -1, keepdims: true }); gx.logsumexp(x, [0, 1])
 */
export const logsumexp = axisFunction<LogsumexpFn>('logsumexp', 'axis?', logsumexpImpl);

/**
 * Variance over `axis` (default: all): sum((x - mean)^2) / max(0, N - correction),
 * like torch.var (correction 1 by default: the unbiased estimate; N <= correction
 * gives NaN or inf, as torch). Floating inputs only. Exported as `gx.var`.
 * @example gx.var(x); gx.var(x, 0, { correction: 0 }); gx.var(x, { axis: 0, correction: 0, keepdims: true })
 */
export const variance = axisFunction<VarFn>('var', 'axis?', (x, axis, opts, fn) => varImpl(x, axis, opts, false, fn));

/**
 * Standard deviation over `axis`: the square root of gx.var, like torch.std.
 * @example gx.std(x, { axis: -1 })
 */
export const std = axisFunction<VarFn>('std', 'axis?', (x, axis, opts, fn) => varImpl(x, axis, opts, true, fn));
