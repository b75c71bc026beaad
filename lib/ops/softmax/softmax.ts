// gx.softmax and gx.logSoftmax along one axis (torch.softmax,
// torch.log_softmax), numerically stable (the line's maximum is subtracted
// first). The Tensor methods of its family (softmax, logsumexp, var, std,
// cumsum) are in methods.ts.
//
// The kernels are in ops/softmax/ (softmax.h: the schemas); CUDA rows along a
// contiguous last axis take the fast path (a warp or a block per row, the row
// read once into registers, 16-byte loads).
import { parseDType } from '../../core/dtype';
import type { DType } from '../../generated/dtypes';
import { recorders, shouldRecord } from '../../tape/graph';
import type { Tensor } from '../../core/tensor';
import { axisCallOptions, axisOfCall, callAlongAxis, normalizeAxis, type AxisOptions } from '../axes';
import { optionKeys } from '../../core/options';
import { checkTensor, describeOperand } from '../common';
import * as ops from '../../generated/ops';
import { isFloating } from '../promotion';
import type { FloatDType } from '../types';
import { axisFunction } from '../axis-function';


export interface SoftmaxOptions<E extends FloatDType = FloatDType> extends AxisOptions {
  /** Convert the input to this floating dtype first, as torch's `dtype` argument; the result has it. */
  dtype?: E;
  /** Write the result here (the input's shape; a floating dtype the result casts to). */
  out?: Tensor;
}

/** softmax / logSoftmax: checks, the dtype, the call. */
function softmaxOp(op: typeof ops.softmax, name: string, a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const o = axisCallOptions<SoftmaxOptions>(arg, opts, fn, SOFTMAX_KEYS);
  const dim = normalizeAxis(axisOfCall(arg, o, fn, true), x.shape, fn);
  const asked = o.dtype !== undefined ? parseDType(o.dtype, fn) : undefined;
  const dtype: DType = asked ?? x.dtype;
  if (!isFloating(dtype)) {
    throw new TypeError(`${fn}: dtype ${dtype} is not supported (got ${describeOperand(x)}); ` +
      `${name} needs a floating-point input or { dtype: 'float32' }`);
  }
  const result = callAlongAxis(op, x, dim, dtype, asked, o.out, fn);
  if (o.out === undefined && shouldRecord(x)) recorders.alongAxis?.(name, x, dim, result);
  return result;
}

/** @internal */
const SOFTMAX_KEYS = optionKeys<SoftmaxOptions>({ axis: true, dim: true, dtype: true, out: true });

/** @internal */
export function softmaxImpl(x: unknown, axis: unknown, opts: unknown, fn: string): Tensor {
  return softmaxOp(ops.softmax, 'softmax', x, axis, opts, fn);
}

/** @internal */
export function logSoftmaxImpl(x: unknown, axis: unknown, opts: unknown, fn: string): Tensor {
  return softmaxOp(ops.logSoftmax, 'logSoftmax', x, axis, opts, fn);
}

export interface SoftmaxFn {
  <E extends FloatDType>(x: Tensor, axis: number, opts: SoftmaxOptions<E> & { dtype: E }): Tensor<E>;
  <E extends FloatDType>(x: Tensor, opts: SoftmaxOptions<E> & { axis: number; dtype: E }): Tensor<E>;
  <D extends DType>(x: Tensor<D>, axis: number, opts?: SoftmaxOptions): Tensor<D>;
  <D extends DType>(x: Tensor<D>, opts: SoftmaxOptions & { axis: number }): Tensor<D>;
}

/**
 * exp(x) / sum(exp(x)) along `axis` (negative counts from the end), computed
 * stably as exp(x - max) / sum(exp(x - max)), like torch.softmax. Floating
 * inputs only (or `{ dtype }` to convert first); a line holding NaN or +inf,
 * or only -inf, gives NaN, and -inf elements give 0.
 * @example gx.softmax(logits, -1); gx.softmax(x, 0, { dtype: 'float32' }); gx.softmax(x, { axis: -1 })
 */
export const softmax = axisFunction<SoftmaxFn>('softmax', 'axis', softmaxImpl);

/**
 * log(softmax(x)) along `axis`, computed as x - max - log(sum(exp(x - max)))
 * (no underflow to -inf where softmax rounds to 0), like torch.log_softmax.
 * @example gx.logSoftmax(logits, -1)
 */
export const logSoftmax = axisFunction<SoftmaxFn>('logSoftmax', 'axis', logSoftmaxImpl);
