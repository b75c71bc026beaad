// softmax, logSoftmax, logsumexp, var, std and cumsum as Tensor methods:
// `logits.softmax(-1)`, `x.var(0)`, `x.cumsum({ axis: 1 })`, declared and
// installed (by lib/register.ts) as NOTE [ Tensor methods ] (install.ts) says; the axis forms are
// NOTE [ Axis forms ] (axes.ts).
import type { DType } from '../../generated/dtypes';
import type { Axes } from '../axes';
import type { TensorMethods } from '../install';
import { cumsumImpl, type CumsumOptions } from '../reduce/scan';
import { logSoftmaxImpl, softmaxImpl, type SoftmaxOptions } from './softmax';
import { logsumexpImpl, varImpl, type LogsumexpOptions, type VarOptions } from '../reduce/statistics';
import type { FloatDType, FloatResult, ReduceAxis, SumResult } from '../types';
import { axisMethod } from '../axis-function';

declare module '../../core/tensor' {
  interface Tensor<D extends DType = DType> {
    /** exp(x - max) / sum(exp(x - max)) along `axis` (gx.softmax); floating tensors, or pass { dtype }. */
    softmax<E extends FloatDType>(axis: number, opts: SoftmaxOptions<E> & { dtype: E }): Tensor<E>;
    softmax<E extends FloatDType>(opts: SoftmaxOptions<E> & { axis: number; dtype: E }): Tensor<E>;
    softmax(axis: number, opts?: SoftmaxOptions): Tensor<D>;
    softmax(opts: SoftmaxOptions & { axis: number }): Tensor<D>;
    /** x - max - log(sum(exp(x - max))) along `axis` (gx.logSoftmax). */
    logSoftmax<E extends FloatDType>(axis: number, opts: SoftmaxOptions<E> & { dtype: E }): Tensor<E>;
    logSoftmax<E extends FloatDType>(opts: SoftmaxOptions<E> & { axis: number; dtype: E }): Tensor<E>;
    logSoftmax(axis: number, opts?: SoftmaxOptions): Tensor<D>;
    logSoftmax(opts: SoftmaxOptions & { axis: number }): Tensor<D>;
    /** log(sum(exp(x))) over axes, stable (gx.logsumexp); integer and bool tensors give float32. */
    logsumexp(axis: ReduceAxis, opts?: LogsumexpOptions): Tensor<FloatResult<D>>;
    logsumexp(opts?: LogsumexpOptions | Axes): Tensor<FloatResult<D>>;
    /** Variance over axes with torch's correction (default 1) (gx.var); floating tensors. */
    var(axis: ReduceAxis, opts?: VarOptions): Tensor<D>;
    var(opts?: VarOptions | Axes): Tensor<D>;
    /** Standard deviation over axes (gx.std); floating tensors. */
    std(axis: ReduceAxis, opts?: VarOptions): Tensor<D>;
    std(opts?: VarOptions | Axes): Tensor<D>;
    /** Inclusive prefix sums along `axis` (gx.cumsum); integer and bool tensors give int64. */
    cumsum<E extends DType>(axis: number, opts: CumsumOptions<E> & { dtype: E }): Tensor<E>;
    cumsum<E extends DType>(opts: CumsumOptions<E> & { axis: number; dtype: E }): Tensor<E>;
    cumsum(axis: number, opts?: CumsumOptions): Tensor<SumResult<D>>;
    cumsum(opts: CumsumOptions & { axis: number }): Tensor<SumResult<D>>;
  }
}

export const SOFTMAX_METHODS: TensorMethods = {
  softmax: axisMethod('softmax', 'axis', softmaxImpl),
  logSoftmax: axisMethod('logSoftmax', 'axis', logSoftmaxImpl),
  logsumexp: axisMethod('logsumexp', 'axis?', logsumexpImpl),
  var: axisMethod('var', 'axis?', (x, axis, opts, fn) => varImpl(x, axis, opts, false, fn)),
  std: axisMethod('std', 'axis?', (x, axis, opts, fn) => varImpl(x, axis, opts, true, fn)),
  cumsum: axisMethod('cumsum', 'axis', cumsumImpl),
};
