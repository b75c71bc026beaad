// The indexing ops of ./indexing as Tensor methods (t.gather(1, index), ...),
// declared and installed as NOTE [ Tensor methods ] (install.ts) says; errors
// name the function ('gx.gather'), or the method for the in-place one.
import type { DType } from '../dtype';
import type { Tensor } from '../tensor';
import { installMethods } from './install';
import * as ops from './indexing';

declare module '../tensor' {
  interface Tensor<D extends DType> {
    /** gx.gather: values along `axis` at `index` (the result has index's shape). @example x.gather(1, idx) */
    gather(axis: number, index: Tensor): Tensor<D>;
    /** gx.indexSelect: the slices along `axis` at a 1-d `index`. @example x.indexSelect(0, idx) */
    indexSelect(axis: number, index: Tensor): Tensor<D>;
    /** gx.take: elements at `index` as if this tensor were 1-d. @example x.take(idx) */
    take(index: Tensor): Tensor<D>;
    /** gx.scatter: a copy with src written at `index` along `axis`. @example x.scatter(0, idx, src) */
    scatter(axis: number, index: Tensor, src: Tensor<D> | number): Tensor<D>;
    /** gx.scatter in place: src written at `index` along `axis` of this tensor; returns it. @example x.scatter_(0, idx, 1) */
    scatter_(axis: number, index: Tensor, src: Tensor<D> | number): this;
    /** gx.scatterAdd: a copy with src added at `index` along `axis`. @example x.scatterAdd(0, idx, src) */
    scatterAdd(axis: number, index: Tensor, src: Tensor<D> | number): Tensor<D>;
    /** gx.scatterAdd in place: src added at `index` along `axis` of this tensor; returns it. @example x.scatterAdd_(0, idx, src) */
    scatterAdd_(axis: number, index: Tensor, src: Tensor<D> | number): this;
    /** gx.maskedFill: `value` where `mask` is true. @example x.maskedFill(x.lt(0), 0) */
    maskedFill(mask: Tensor, value: number | boolean | Tensor): Tensor<D>;
  }
}

installMethods({
  gather(this: Tensor, axis: number, index: Tensor) {
    return ops.gather(this, axis, index);
  },
  indexSelect(this: Tensor, axis: number, index: Tensor) {
    return ops.indexSelect(this, axis, index);
  },
  take(this: Tensor, index: Tensor) {
    return ops.take(this, index);
  },
  scatter(this: Tensor, axis: number, index: Tensor, src: Tensor | number) {
    return ops.scatter(this, axis, index, src);
  },
  scatter_(this: Tensor, axis: number, index: Tensor, src: Tensor | number) {
    return ops.scatterInPlace(this, axis, index, src, ops.SCATTER_ASSIGN, 'Tensor.scatter_');
  },
  scatterAdd(this: Tensor, axis: number, index: Tensor, src: Tensor | number) {
    return ops.scatterAdd(this, axis, index, src);
  },
  scatterAdd_(this: Tensor, axis: number, index: Tensor, src: Tensor | number) {
    return ops.scatterInPlace(this, axis, index, src, ops.SCATTER_ADD, 'Tensor.scatterAdd_');
  },
  maskedFill(this: Tensor, mask: Tensor, value: number | boolean | Tensor) {
    return ops.maskedFill(this, mask, value);
  },
});
