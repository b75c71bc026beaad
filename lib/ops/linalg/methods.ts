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
  trace(this: Tensor, ...extra: never[]) {
    return products.trace(this, ...extra);  // the function refuses what it does not take
  },
  diag(this: Tensor, offset?: number, ...extra: never[]) {
    return products.diag(this, offset, ...extra);  // the function refuses what it does not take
  },
  diagonal(this: Tensor, offset?: number | products.DiagonalOptions, axis1?: number, axis2?: number) {
    return products.diagonal(this, offset, axis1, axis2);
  },
  triu(this: Tensor, offset?: number, ...extra: never[]) {
    return products.triu(this, offset, ...extra);  // the function refuses what it does not take
  },
  tril(this: Tensor, offset?: number, ...extra: never[]) {
    return products.tril(this, offset, ...extra);  // the function refuses what it does not take
  },
  dot(this: Tensor, other: Tensor, ...extra: never[]) {
    return products.dot(this, other, ...extra);  // the function refuses what it does not take
  },
  vdot(this: Tensor, other: Tensor, ...extra: never[]) {
    return products.vdot(this, other, ...extra);  // the function refuses what it does not take
  },
  outer(this: Tensor, other: Tensor, ...extra: never[]) {
    return products.outer(this, other, ...extra);  // the function refuses what it does not take
  },
  cross(this: Tensor, other: Tensor, axis?: number, ...extra: never[]) {
    return products.cross(this, other, axis, ...extra);  // the function refuses what it does not take
  },
  norm(this: Tensor, p?: number | 'fro' | 'nuc' | null, axis?: Axes | null, options?: NormOptions) {
    return tensorNorm(this, p, axis, options, 'Tensor.norm');
  },
};
