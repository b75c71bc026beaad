// The indexing ops of ./indexing, ./index-expr, ./index-write and ./scatter-family as Tensor
// methods (t.gather(1, index), t.index(0, gx.sl(1)), ...), declared and
// installed (by lib/register.ts) as NOTE [ Tensor methods ] (install.ts) says; errors name the
// function ('gx.gather'), or the method for the in-place ones and those with
// no gx function (index, get, set).
import type { DType } from '../../core/dtype';
import type { Tensor } from '../../core/tensor';
import type { TensorMethods } from '../install';
import * as ops from './indexing';
import { indexRead, parseIndexString, type IndexItem } from './index-expr';
import { indexPutImpl, indexWrite, type IndexPutOptions } from './index-write';
import * as family from './scatter-family';
import type { BincountOptions, HistcOptions, IndexAddOptions, NonzeroOptions, ScatterReduceOptions, ScatterReduction } from './scatter-family';
import { tooManyArguments } from '../../core/options';


declare module '../../core/tensor' {
  interface Tensor<D extends DType> {
    /** gx.gather: values along `axis` at `index` (the result has index's shape). @example x.gather(1, idx) */
    gather(axis: number, index: Tensor): Tensor<D>;
    /** gx.indexSelect: the slices along `axis` at a 1-d `index`. @example x.indexSelect(0, idx) */
    indexSelect(axis: number, index: Tensor): Tensor<D>;
    /** gx.take: elements at `index` as if this tensor were 1-d. @example x.take(idx) */
    take(index: Tensor): Tensor<D>;
    /** gx.scatter: a copy with src written at `index` along `axis`. @example x.scatter(0, idx, src) */
    scatter(axis: number, index: Tensor, src: Tensor<D> | number, opts?: ops.ScatterOptions): Tensor<D>;
    /** gx.scatter in place: src written at `index` along `axis` of this tensor; returns it. @example x.scatter_(0, idx, 1) */
    scatter_(axis: number, index: Tensor, src: Tensor<D> | number, opts?: ops.ScatterOptions): this;
    /** gx.scatterAdd: a copy with src added at `index` along `axis`. @example x.scatterAdd(0, idx, src) */
    scatterAdd(axis: number, index: Tensor, src: Tensor<D> | number): Tensor<D>;
    /** gx.scatterAdd in place: src added at `index` along `axis` of this tensor; returns it. @example x.scatterAdd_(0, idx, src) */
    scatterAdd_(axis: number, index: Tensor, src: Tensor<D> | number): this;
    /** gx.maskedFill: `value` where `mask` is true. @example x.maskedFill(x.lt(0), 0) */
    maskedFill(mask: Tensor, value: number | boolean | Tensor): Tensor<D>;
    /**
     * Indexing as PyTorch's x[...] (NOTE [ Index expressions ] in
     * lib/ops/indexing/index-expr.ts): integers, gx.sl(start, end, step), null (a new
     * dimension), '...', int64/int32 index tensors and bool masks (or JS
     * arrays of them). Basic items give a view, tensors a copy.
     * @example x.index(0, gx.sl(1, null, 2), null, '...') // x[0, 1::2, None, ...]; x.index(x.gt(0)); x.index(rows, cols)
     */
    index(...items: IndexItem[]): Tensor<D>;
    /** x.index with the items written as Python's subscript: integers, slices (start:end:step), None, '...'. @example x.get('0, 1::2, None, ...') */
    get(expr: string): Tensor<D>;
    /**
     * Writes `value` (broadcast, converted to this dtype) at `index`: one item,
     * an array of items (Python's tuple) or a subscript string; in place, returns this.
     * @example x.set('0, :', 1); x.set([rows, cols], v); x.set(x.lt(0), 0)
     */
    set(index: string | IndexItem | readonly IndexItem[], value: Tensor | number | boolean | bigint): this;
    /** gx.indexPut_: `values` written (or with accumulate, added) at `indices`, in place; returns this. @example x.indexPut_([idx], v, { accumulate: true }) */
    indexPut_(indices: readonly IndexItem[], values: Tensor | number | boolean | bigint, opts?: IndexPutOptions): this;
    /** gx.scatterReduce: a copy with src reduced ('sum', 'prod', 'mean', 'amax', 'amin') into it at `index` along `axis`. @example x.scatterReduce(0, idx, src, 'amax') */
    scatterReduce(axis: number, index: Tensor, src: Tensor<D> | number, reduce: ScatterReduction, opts?: ScatterReduceOptions): Tensor<D>;
    /** gx.scatterReduce in place; returns this. @example x.scatterReduce_(0, idx, src, 'sum', { includeSelf: false }) */
    scatterReduce_(axis: number, index: Tensor, src: Tensor<D> | number, reduce: ScatterReduction, opts?: ScatterReduceOptions): this;
    /** gx.indexAdd: a copy with alpha * source added at `index` along `axis`. @example x.indexAdd(0, idx, rows) */
    indexAdd(axis: number, index: Tensor, source: Tensor<D>, opts?: IndexAddOptions): Tensor<D>;
    /** gx.indexAdd in place; returns this. @example x.indexAdd_(0, idx, rows, { alpha: -1 }) */
    indexAdd_(axis: number, index: Tensor, source: Tensor<D>, opts?: IndexAddOptions): this;
    /** gx.maskedSelect: the elements where `mask` is true, 1-d. @example x.maskedSelect(x.gt(0)) */
    maskedSelect(mask: Tensor): Tensor<D>;
    /** gx.nonzero: the indices of the nonzero elements, int64 [n, ndim] (or one 1-d tensor per dimension with asTuple). @example x.nonzero() */
    nonzero(opts: NonzeroOptions & { asTuple: true }): Tensor<'int64'>[];
    nonzero(opts?: NonzeroOptions & { asTuple?: false }): Tensor<'int64'>;
    nonzero(opts?: NonzeroOptions): Tensor<'int64'> | Tensor<'int64'>[];
    /** gx.bincount: how often each non-negative integer occurs (or the sum of its weights). @example labels.bincount({ minlength: 10 }) */
    bincount(opts?: BincountOptions): Tensor;
    /** gx.histc: a histogram in `bins` equal bins over [min, max]. @example x.histc({ bins: 10, min: 0, max: 1 }) */
    histc(opts?: HistcOptions): Tensor<D>;
  }
}

export const INDEXING_METHODS: TensorMethods = {
  gather(this: Tensor, axis: number, index: Tensor) {
    if (arguments.length > 2) tooManyArguments('Tensor.gather', '(axis, index)', arguments.length - 2, arguments[2]);
    return ops.gather(this, axis, index);
  },
  indexSelect(this: Tensor, axis: number, index: Tensor) {
    if (arguments.length > 2) tooManyArguments('Tensor.indexSelect', '(axis, index)', arguments.length - 2, arguments[2]);
    return ops.indexSelect(this, axis, index);
  },
  take(this: Tensor, index: Tensor) {
    if (arguments.length > 1) tooManyArguments('Tensor.take', '(index)', arguments.length - 1, arguments[1]);
    return ops.take(this, index);
  },
  scatter(this: Tensor, axis: number, index: Tensor, src: Tensor | number, opts?: ops.ScatterOptions) {
    if (arguments.length > 4) tooManyArguments('Tensor.scatter', '(axis, index, src, options?)', arguments.length - 4, arguments[4]);
    return ops.scatter(this, axis, index, src, opts);
  },
  scatter_(this: Tensor, axis: number, index: Tensor, src: Tensor | number, opts?: ops.ScatterOptions) {
    if (arguments.length > 4) tooManyArguments('Tensor.scatter_', '(axis, index, src, options?)', arguments.length - 4, arguments[4]);
    return ops.scatterInPlace(this, axis, index, src, ops.scatterMode(opts, 'Tensor.scatter_'), 'Tensor.scatter_');
  },
  scatterAdd(this: Tensor, axis: number, index: Tensor, src: Tensor | number) {
    if (arguments.length > 3) tooManyArguments('Tensor.scatterAdd', '(axis, index, src)', arguments.length - 3, arguments[3]);
    return ops.scatterAdd(this, axis, index, src);
  },
  scatterAdd_(this: Tensor, axis: number, index: Tensor, src: Tensor | number) {
    if (arguments.length > 3) tooManyArguments('Tensor.scatterAdd_', '(axis, index, src)', arguments.length - 3, arguments[3]);
    return ops.scatterInPlace(this, axis, index, src, ops.SCATTER_ADD, 'Tensor.scatterAdd_');
  },
  maskedFill(this: Tensor, mask: Tensor, value: number | boolean | Tensor) {
    if (arguments.length > 2) tooManyArguments('Tensor.maskedFill', '(mask, value)', arguments.length - 2, arguments[2]);
    return ops.maskedFill(this, mask, value);
  },
  index(this: Tensor, ...items: IndexItem[]) {
    return indexRead(this, items, 'Tensor.index');
  },
  get(this: Tensor, expr: string) {
    if (arguments.length > 1) tooManyArguments('Tensor.get', '(expr)', arguments.length - 1, arguments[1]);
    if (typeof expr !== 'string') throw new TypeError(`Tensor.get: takes the index as a string like '0, 1::2, None, ...' (for items, use x.index(...)), got ${typeof expr}`);
    return indexRead(this, parseIndexString(expr, 'Tensor.get'), 'Tensor.get');
  },
  set(this: Tensor, index: string | IndexItem | readonly IndexItem[], value: Tensor | number | boolean | bigint) {
    if (arguments.length > 2) tooManyArguments('Tensor.set', '(index, value)', arguments.length - 2, arguments[2]);
    indexWrite(this, index, value, false, 'Tensor.set');
    return this;
  },
  indexPut_(this: Tensor, indices: readonly IndexItem[], values: Tensor | number | boolean | bigint, opts?: IndexPutOptions) {
    if (arguments.length > 3) tooManyArguments('Tensor.indexPut_', '(indices, values, options?)', arguments.length - 3, arguments[3]);
    indexPutImpl(this, indices, values, opts, 'Tensor.indexPut_');
    return this;
  },
  scatterReduce(this: Tensor, axis: number, index: Tensor, src: Tensor | number, reduce: ScatterReduction, opts?: ScatterReduceOptions) {
    if (arguments.length > 5) tooManyArguments('Tensor.scatterReduce', '(axis, index, src, reduce, options?)', arguments.length - 5, arguments[5]);
    return family.scatterReduce(this, axis, index, src, reduce, opts);
  },
  scatterReduce_(this: Tensor, axis: number, index: Tensor, src: Tensor | number, reduce: ScatterReduction, opts?: ScatterReduceOptions) {
    if (arguments.length > 5) tooManyArguments('Tensor.scatterReduce_', '(axis, index, src, reduce, options?)', arguments.length - 5, arguments[5]);
    return family.scatterReduceImpl(this, axis, index, src, reduce, opts, true, 'Tensor.scatterReduce_');
  },
  indexAdd(this: Tensor, axis: number, index: Tensor, source: Tensor, opts?: IndexAddOptions) {
    if (arguments.length > 4) tooManyArguments('Tensor.indexAdd', '(axis, index, source, options?)', arguments.length - 4, arguments[4]);
    return family.indexAdd(this, axis, index, source, opts);
  },
  indexAdd_(this: Tensor, axis: number, index: Tensor, source: Tensor, opts?: IndexAddOptions) {
    if (arguments.length > 4) tooManyArguments('Tensor.indexAdd_', '(axis, index, source, options?)', arguments.length - 4, arguments[4]);
    return family.indexAddImpl(this, axis, index, source, opts, true, 'Tensor.indexAdd_');
  },
  maskedSelect(this: Tensor, mask: Tensor) {
    if (arguments.length > 1) tooManyArguments('Tensor.maskedSelect', '(mask)', arguments.length - 1, arguments[1]);
    return family.maskedSelect(this, mask);
  },
  nonzero(this: Tensor, opts?: NonzeroOptions) {
    if (arguments.length > 1) tooManyArguments('Tensor.nonzero', '(options?)', arguments.length - 1, arguments[1]);
    return family.nonzero(this, opts);
  },
  bincount(this: Tensor, opts?: BincountOptions) {
    if (arguments.length > 1) tooManyArguments('Tensor.bincount', '(options?)', arguments.length - 1, arguments[1]);
    return family.bincountImpl(this, opts, 'Tensor.bincount');
  },
  histc(this: Tensor, opts?: HistcOptions) {
    if (arguments.length > 1) tooManyArguments('Tensor.histc', '(options?)', arguments.length - 1, arguments[1]);
    return family.histcImpl(this, opts, 'Tensor.histc');
  },
};
