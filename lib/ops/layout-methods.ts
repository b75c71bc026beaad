// The layout ops of ./layout as Tensor methods (t.transpose(0, 1), ...),
// attached by declaration merging. ./layout imports this module for its side
// effect, so the methods exist wherever the ops do. Each method is its
// function with `this` as the input (errors name the function: 'gx.transpose').
import type { DType } from './dtype';
import * as ops from './layout';
import { Tensor } from './tensor';

declare module './tensor' {
  interface Tensor<D extends DType> {
    /** gx.transpose: a view with dims `dim0` and `dim1` swapped. @example a.transpose(0, 1) */
    transpose(dim0: number, dim1: number): Tensor<D>;
    /** gx.permute: a view whose dim i is this tensor's dim `dims[i]`. @example a.permute(2, 0, 1) */
    permute(...dims: number[] | [readonly number[]]): Tensor<D>;
    /** gx.movedim: a view with dims `source` moved to `destination`. @example a.movedim(0, -1) */
    movedim(source: number | readonly number[], destination: number | readonly number[]): Tensor<D>;
    /** gx.squeeze: a view without size-1 dims (all, or those in `dim`). @example a.squeeze(0) */
    squeeze(dim?: number | readonly number[]): Tensor<D>;
    /** gx.unsqueeze: a view with a new size-1 dim at `dim`. @example a.unsqueeze(-1) */
    unsqueeze(dim: number): Tensor<D>;
    /** gx.expand: size-1 dims repeated to `shape` (stride 0, a view); -1 keeps a dim. @example a.expand(4, -1) */
    expand(...shape: number[] | [readonly number[]]): Tensor<D>;
    /** gx.broadcastTo: this tensor broadcast to `shape` (a view). @example a.broadcastTo([4, 3]) */
    broadcastTo(shape: readonly number[]): Tensor<D>;
    /** gx.flatten: dims startDim..endDim merged (a view when possible, else a copy). @example a.flatten(1) */
    flatten(startDim?: number, endDim?: number): Tensor<D>;
    /** gx.slice: a view of start:end:step along `dim`. @example a.slice(0, 1, null, 2) */
    slice(dim: number, start?: number | null, end?: number | null, step?: number): Tensor<D>;
    /** gx.narrow: a view of `length` elements along `dim` from `start`. @example a.narrow(1, 2, 3) */
    narrow(dim: number, start: number, length: number): Tensor<D>;
    /** gx.sliceDims: NumPy-style basic indexing, a view. @example a.sliceDims([0, 4, 2], null, -1) // a[0:4:2, :, -1] */
    sliceDims(...specs: ops.DimSlice[]): Tensor<D>;
  }
}

/** Accepts f(2, 3) and f([2, 3]). */
function listArg(args: readonly unknown[]): number[] {
  return (args.length === 1 && Array.isArray(args[0]) ? args[0] : args) as number[];
}

Tensor.prototype.transpose = function <D extends DType>(this: Tensor<D>, dim0: number, dim1: number): Tensor<D> {
  return ops.transpose(this, dim0, dim1);
};
Tensor.prototype.permute = function <D extends DType>(this: Tensor<D>, ...dims: number[] | [readonly number[]]): Tensor<D> {
  return ops.permute(this, listArg(dims));
};
Tensor.prototype.movedim = function <D extends DType>(this: Tensor<D>, source: number | readonly number[], destination: number | readonly number[]): Tensor<D> {
  return ops.movedim(this, source, destination);
};
Tensor.prototype.squeeze = function <D extends DType>(this: Tensor<D>, dim?: number | readonly number[]): Tensor<D> {
  return ops.squeeze(this, dim);
};
Tensor.prototype.unsqueeze = function <D extends DType>(this: Tensor<D>, dim: number): Tensor<D> {
  return ops.unsqueeze(this, dim);
};
Tensor.prototype.expand = function <D extends DType>(this: Tensor<D>, ...shape: number[] | [readonly number[]]): Tensor<D> {
  return ops.expand(this, listArg(shape));
};
Tensor.prototype.broadcastTo = function <D extends DType>(this: Tensor<D>, shape: readonly number[]): Tensor<D> {
  return ops.broadcastTo(this, shape);
};
Tensor.prototype.flatten = function <D extends DType>(this: Tensor<D>, startDim?: number, endDim?: number): Tensor<D> {
  return ops.flatten(this, startDim, endDim);
};
Tensor.prototype.slice = function <D extends DType>(this: Tensor<D>, dim: number, start?: number | null, end?: number | null, step?: number): Tensor<D> {
  return ops.slice(this, dim, start, end, step);
};
Tensor.prototype.narrow = function <D extends DType>(this: Tensor<D>, dim: number, start: number, length: number): Tensor<D> {
  return ops.narrow(this, dim, start, length);
};
Tensor.prototype.sliceDims = function <D extends DType>(this: Tensor<D>, ...specs: ops.DimSlice[]): Tensor<D> {
  return ops.sliceDims(this, ...specs);
};
