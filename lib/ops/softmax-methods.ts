// softmax, logSoftmax, logsumexp, var, std and cumsum as Tensor methods:
// `logits.softmax(-1)`, `x.var({ axis: 0 })`. Types by declaration merging
// with the Tensor class (the same result dtypes as the gx functions); the
// methods are installed on Tensor.prototype when this module loads
// (softmax.ts imports it for that). Errors name the method: 'Tensor.softmax'.
import type { DType } from '../generated/dtypes';
import { Tensor } from '../tensor';
import { cumsumImpl, type CumsumOptions } from './scan';
import { logSoftmaxImpl, softmaxImpl, type SoftmaxOptions } from './softmax';
import { logsumexpImpl, varImpl, type LogsumexpOptions, type VarOptions } from './statistics';
import type { FloatDType, FloatResult, SumResult } from './types';

declare module '../tensor' {
  interface Tensor<D extends DType = DType> {
    /** exp(x - max) / sum(exp(x - max)) along `axis` (gx.softmax); floating tensors, or pass { dtype }. */
    softmax<E extends FloatDType>(axis: number, opts: SoftmaxOptions<E> & { dtype: E }): Tensor<E>;
    softmax(axis: number, opts?: SoftmaxOptions): Tensor<D>;
    /** x - max - log(sum(exp(x - max))) along `axis` (gx.logSoftmax). */
    logSoftmax<E extends FloatDType>(axis: number, opts: SoftmaxOptions<E> & { dtype: E }): Tensor<E>;
    logSoftmax(axis: number, opts?: SoftmaxOptions): Tensor<D>;
    /** log(sum(exp(x))) over axes, stable (gx.logsumexp); integer and bool tensors give float32. */
    logsumexp(opts?: LogsumexpOptions | number | readonly number[]): Tensor<FloatResult<D>>;
    /** Variance over axes with torch's correction (default 1) (gx.var); floating tensors. */
    var(opts?: VarOptions | number | readonly number[]): Tensor<D>;
    /** Standard deviation over axes (gx.std); floating tensors. */
    std(opts?: VarOptions | number | readonly number[]): Tensor<D>;
    /** Inclusive prefix sums along `axis` (gx.cumsum); integer and bool tensors give int64. */
    cumsum<E extends DType>(axis: number, opts: CumsumOptions<E> & { dtype: E }): Tensor<E>;
    cumsum(axis: number, opts?: CumsumOptions): Tensor<SumResult<D>>;
  }
}

/** Defines a non-enumerable method, as class methods are. */
function install(name: string, f: (this: Tensor, ...args: never[]) => unknown): void {
  Object.defineProperty(Tensor.prototype, name, { value: f, writable: true, configurable: true, enumerable: false });
}

install('softmax', function (this: Tensor, axis: unknown, opts?: unknown) {
  return softmaxImpl(this, axis, opts, 'Tensor.softmax');
});
install('logSoftmax', function (this: Tensor, axis: unknown, opts?: unknown) {
  return logSoftmaxImpl(this, axis, opts, 'Tensor.logSoftmax');
});
install('logsumexp', function (this: Tensor, opts?: unknown) {
  return logsumexpImpl(this, opts, 'Tensor.logsumexp');
});
install('var', function (this: Tensor, opts?: unknown) {
  return varImpl(this, opts, false, 'Tensor.var');
});
install('std', function (this: Tensor, opts?: unknown) {
  return varImpl(this, opts, true, 'Tensor.std');
});
install('cumsum', function (this: Tensor, axis: unknown, opts?: unknown) {
  return cumsumImpl(this, axis, opts, 'Tensor.cumsum');
});
