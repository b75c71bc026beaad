// The ordering ops of ./sorting that take one tensor as Tensor methods
// (x.sort(), x.argsort(0), x.topk(5), x.kthvalue(2), x.unique()), as torch
// has them; declared and installed (by lib/register.ts) as NOTE [ Tensor methods ] (install.ts)
// says. Errors name the method ('Tensor.sort').
import type { DType } from '../../core/dtype';
import type { Tensor } from '../../core/tensor';
import type { TensorMethods } from '../install';
import * as ops from './sorting';
import type { ArgsortOptions, KthvalueOptions, SortOptions, SortResult, TopkOptions, UniqueOptions, UniqueResult } from './sorting';
import { tooManyArguments } from '../../core/options';
import { axisMethod } from '../axis-function';

declare module '../../core/tensor' {
  interface Tensor<D extends DType> {
    /** gx.sort: `{ values, indices }` along `axis` (default -1), stable. @example const { values, indices } = x.sort(); x.sort(0, { descending: true }) */
    sort(axis?: number, opts?: SortOptions<D>): SortResult<D>;
    sort(opts: SortOptions<D>): SortResult<D>;
    /** gx.argsort: the indices that sort along `axis` (default -1). @example x.argsort({ descending: true }) */
    argsort(axis?: number, opts?: ArgsortOptions): Tensor<'int64'>;
    argsort(opts: ArgsortOptions): Tensor<'int64'>;
    /** gx.topk: the k largest (or smallest) along `axis` (default -1), best first. @example const { values, indices } = logits.topk(5) */
    topk(k: number, axis?: number, opts?: TopkOptions<D>): SortResult<D>;
    topk(k: number, opts: TopkOptions<D>): SortResult<D>;
    /** gx.kthvalue: the k-th smallest (k from 1) along `axis` (default -1) and its index. @example x.kthvalue(2, 0).values */
    kthvalue(k: number, axis?: number, opts?: KthvalueOptions<D>): SortResult<D>;
    kthvalue(k: number, opts: KthvalueOptions<D>): SortResult<D>;
    /** gx.unique: the distinct values, ascending (with inverse and counts when asked for). @example x.unique(); x.unique({ returnCounts: true }).counts */
    unique(opts: UniqueOptions & ({ returnInverse: true } | { returnCounts: true })): UniqueResult<D>;
    unique(opts?: UniqueOptions & { returnInverse?: false; returnCounts?: false }): Tensor<D>;
    unique(opts?: UniqueOptions): Tensor<D> | UniqueResult<D>;
  }
}

export const SORT_METHODS: TensorMethods = {
  sort: axisMethod('sort', 'axis?', ops.sortImpl),
  argsort: axisMethod('argsort', 'axis?', ops.argsortImpl),
  topk: axisMethod('topk', 'k, axis?', ops.topkImpl),
  kthvalue: axisMethod('kthvalue', 'k, axis?', ops.kthvalueImpl),
  unique(this: Tensor, opts?: unknown) {
    if (arguments.length > 1) tooManyArguments('Tensor.unique', '(options?)', arguments.length - 1, arguments[1]);
    return ops.uniqueImpl(this, opts, 'Tensor.unique');
  },
};
