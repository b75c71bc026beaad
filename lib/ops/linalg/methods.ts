// The vector and matrix helpers of ./products and the norms of
// ./norms as Tensor methods (x.trace(), x.diagonal(), x.triu(1),
// x.norm(), x.dot(y), ...), as torch has them; declared and installed as
// NOTE [ Tensor methods ] (install.ts) says. Errors name the gx function each
// one calls, except x.norm (torch's Tensor.norm, whose dispatch differs from
// gx.linalg.norm's), which names 'Tensor.norm'.
import type { DType } from '../../core/dtype';
import type { FloatDType } from '../../generated/dtypes';
import type { Tensor } from '../../core/tensor';
import type { Axes } from '../axes';
import type { TensorMethods } from '../install';
import { tensorNorm, type NormOptions } from './norms';
import * as products from './products';
import { tooManyArguments } from '../../core/options';


declare module '../../core/tensor' {
  interface Tensor<D extends DType> {
    /** gx.trace: the sum of this matrix's main diagonal (integers in int64). @example m.trace().item() */
    trace(): Tensor;
    /** gx.diag: a 1-d tensor as a diagonal matrix, or a 2-d tensor's diagonal `offset` (a copy). @example v.diag() */
    diag(offset?: number): Tensor<D>;
    /** gx.diagonal: the diagonal over axis1, axis2 (default 0, 1) as a view. @example x.diagonal(); x.diagonal({ axis1: -2, axis2: -1 }) */
    diagonal(offset?: number | products.DiagonalOptions, axis1?: number, axis2?: number): Tensor<D>;
    /** gx.triu: the upper triangle of the last two dims (on and above diagonal `offset`). @example m.triu(1) */
    triu(offset?: number): Tensor<D>;
    /** gx.tril: the lower triangle of the last two dims (on and below diagonal `offset`). @example m.tril() */
    tril(offset?: number): Tensor<D>;
    /** gx.dot: the dot product with another 1-d tensor of this dtype. @example u.dot(v).item() */
    dot(other: Tensor<D>): Tensor<D>;
    /** gx.vdot: the same as dot for gpuext's real dtypes. @example u.vdot(v) */
    vdot(other: Tensor<D>): Tensor<D>;
    /** gx.outer: the outer product with another 1-d tensor. @example u.outer(v) */
    outer(other: Tensor): Tensor;
    /** gx.cross: the cross product with `other` along `axis` (size 3, default -1). @example a.cross(b) */
    cross(other: Tensor<D>, axis?: number): Tensor<D>;
    /**
     * torch's Tensor.norm: p 'fro' (default) is the 2-norm of the elements over
     * `axis` (all, one or two axes); 'nuc' the nuclear norm of a matrix (a 2-d
     * tensor, or two axes); a number p the vector p-norm over `axis` (all by
     * default; gx.linalg.vectorNorm). Floating tensors only.
     * @example x.norm(); x.norm(1, -1); x.norm('fro', [0, 1], { keepdims: true })
     */
    norm<E extends FloatDType>(p: number | 'fro' | 'nuc' | null | undefined, axis: Axes | null | undefined, options: NormOptions<E> & { dtype: E }): Tensor<E>;
    norm(p?: number | 'fro' | 'nuc' | null, axis?: Axes | null, options?: NormOptions): Tensor<D>;
  }
}

export const LINALG_METHODS: TensorMethods = {
  trace(this: Tensor) {
    if (arguments.length > 0) tooManyArguments('Tensor.trace', '()', arguments.length, arguments[0]);
    return products.trace(this);
  },
  diag(this: Tensor, offset?: number) {
    if (arguments.length > 1) tooManyArguments('Tensor.diag', '(offset?)', arguments.length - 1, arguments[1]);
    return products.diag(this, offset);
  },
  diagonal(this: Tensor, offset?: number | products.DiagonalOptions, axis1?: number, axis2?: number) {
    return products.diagonal(this, offset, axis1, axis2);
  },
  triu(this: Tensor, offset?: number) {
    if (arguments.length > 1) tooManyArguments('Tensor.triu', '(offset?)', arguments.length - 1, arguments[1]);
    return products.triu(this, offset);
  },
  tril(this: Tensor, offset?: number) {
    if (arguments.length > 1) tooManyArguments('Tensor.tril', '(offset?)', arguments.length - 1, arguments[1]);
    return products.tril(this, offset);
  },
  dot(this: Tensor, other: Tensor) {
    if (arguments.length > 1) tooManyArguments('Tensor.dot', '(other)', arguments.length - 1, arguments[1]);
    return products.dot(this, other);
  },
  vdot(this: Tensor, other: Tensor) {
    if (arguments.length > 1) tooManyArguments('Tensor.vdot', '(other)', arguments.length - 1, arguments[1]);
    return products.vdot(this, other);
  },
  outer(this: Tensor, other: Tensor) {
    if (arguments.length > 1) tooManyArguments('Tensor.outer', '(other)', arguments.length - 1, arguments[1]);
    return products.outer(this, other);
  },
  cross(this: Tensor, other: Tensor, axis?: number) {
    if (arguments.length > 2) tooManyArguments('Tensor.cross', '(other, axis?)', arguments.length - 2, arguments[2]);
    return products.cross(this, other, axis);
  },
  norm(this: Tensor, p?: number | 'fro' | 'nuc' | null, axis?: Axes | null, options?: NormOptions) {
    if (arguments.length > 3) tooManyArguments('Tensor.norm', '(p?, axis?, options?)', arguments.length - 3, arguments[3]);
    return tensorNorm(this, p, axis, options, 'Tensor.norm');
  },
};
