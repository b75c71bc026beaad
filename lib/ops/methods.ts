// The elementwise ops and reductions as Tensor methods: `a.add(b).mul(2).sum()`,
// declared and installed as NOTE [ Tensor methods ] (install.ts) says.
import type { DType } from '../generated/dtypes';
import type { Tensor } from '../tensor';
import type { OutOptions } from './common';
import { astypeOp, BINARY, binaryOp, clampOp, UNARY, unaryOp, whereOp, type BinaryName, type UnaryName } from './elementwise';
import type { Operand, ScalarOperand } from './promotion';
import { installMethods, type TensorMethods } from './install';
import { REDUCE, reduceOp, type ArgReduceOptions, type ReduceDTypeOptions, type ReduceName, type ReduceOptions } from './reduction';
import type { FloatDType, FloatResult, ReduceArg, ReduceAxis, SumResult } from './types';

declare module '../tensor' {
  interface Tensor<D extends DType = DType> {
    /** self + other, elementwise with broadcasting (gx.add). */
    add(other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    add(other: ScalarOperand, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    add(other: Operand, opts?: OutOptions): Tensor;
    /** self - other, elementwise with broadcasting (gx.sub). */
    sub(other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    sub(other: ScalarOperand, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    sub(other: Operand, opts?: OutOptions): Tensor;
    /** self * other, elementwise with broadcasting (gx.mul). */
    mul(other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    mul(other: ScalarOperand, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    mul(other: Operand, opts?: OutOptions): Tensor;
    /** self ** other, elementwise with broadcasting (gx.pow). */
    pow(other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    pow(other: ScalarOperand, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    pow(other: Operand, opts?: OutOptions): Tensor;
    /** elementwise maximum (NaN propagates), elementwise with broadcasting (gx.maximum). */
    maximum(other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    maximum(other: ScalarOperand, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    maximum(other: Operand, opts?: OutOptions): Tensor;
    /** elementwise minimum (NaN propagates), elementwise with broadcasting (gx.minimum). */
    minimum(other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    minimum(other: ScalarOperand, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    minimum(other: Operand, opts?: OutOptions): Tensor;
    /** Python-style self % other, elementwise with broadcasting (gx.remainder). */
    remainder(other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    remainder(other: ScalarOperand, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    remainder(other: Operand, opts?: OutOptions): Tensor;
    /** True division (gx.div): integer and bool tensors give float32. */
    div(other: Tensor<D> | ScalarOperand, opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    div(other: Operand, opts?: OutOptions): Tensor;
    /** In place: self = self.add(other), keeping self's shape and dtype (the result must broadcast and cast to them); returns this. */
    add_(other: Operand): this;
    /** In place: self = self.sub(other), keeping self's shape and dtype (the result must broadcast and cast to them); returns this. */
    sub_(other: Operand): this;
    /** In place: self = self.mul(other), keeping self's shape and dtype (the result must broadcast and cast to them); returns this. */
    mul_(other: Operand): this;
    /** In place: self = self.div(other), keeping self's shape and dtype (the result must broadcast and cast to them); returns this. */
    div_(other: Operand): this;
    /** In place: self = self.pow(other), keeping self's shape and dtype (the result must broadcast and cast to them); returns this. */
    pow_(other: Operand): this;
    /** In place: self = self.remainder(other), keeping self's shape and dtype (the result must broadcast and cast to them); returns this. */
    remainder_(other: Operand): this;
    /** self == other, elementwise, as a bool tensor (gx.eq). */
    eq(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    eq(other: Operand, opts?: OutOptions): Tensor;
    /** self != other, elementwise, as a bool tensor (gx.ne). */
    ne(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    ne(other: Operand, opts?: OutOptions): Tensor;
    /** self < other, elementwise, as a bool tensor (gx.lt). */
    lt(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    lt(other: Operand, opts?: OutOptions): Tensor;
    /** self <= other, elementwise, as a bool tensor (gx.le). */
    le(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    le(other: Operand, opts?: OutOptions): Tensor;
    /** self > other, elementwise, as a bool tensor (gx.gt). */
    gt(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    gt(other: Operand, opts?: OutOptions): Tensor;
    /** self >= other, elementwise, as a bool tensor (gx.ge). */
    ge(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    ge(other: Operand, opts?: OutOptions): Tensor;
    /** self logical and other, elementwise, as a bool tensor (gx.logicalAnd). */
    logicalAnd(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    logicalAnd(other: Operand, opts?: OutOptions): Tensor;
    /** self logical or other, elementwise, as a bool tensor (gx.logicalOr). */
    logicalOr(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    logicalOr(other: Operand, opts?: OutOptions): Tensor;
    /** self logical xor other, elementwise, as a bool tensor (gx.logicalXor). */
    logicalXor(other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
    logicalXor(other: Operand, opts?: OutOptions): Tensor;
    /** gx.exp(this): integer and bool tensors give float32. */
    exp(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    exp(opts?: OutOptions): Tensor;
    /** In place gx.exp (floating tensors only); returns this. */
    exp_(): this;
    /** gx.log(this): integer and bool tensors give float32. */
    log(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    log(opts?: OutOptions): Tensor;
    /** In place gx.log (floating tensors only); returns this. */
    log_(): this;
    /** gx.log1p(this): integer and bool tensors give float32. */
    log1p(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    log1p(opts?: OutOptions): Tensor;
    /** In place gx.log1p (floating tensors only); returns this. */
    log1p_(): this;
    /** gx.sqrt(this): integer and bool tensors give float32. */
    sqrt(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    sqrt(opts?: OutOptions): Tensor;
    /** In place gx.sqrt (floating tensors only); returns this. */
    sqrt_(): this;
    /** gx.rsqrt(this): integer and bool tensors give float32. */
    rsqrt(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    rsqrt(opts?: OutOptions): Tensor;
    /** In place gx.rsqrt (floating tensors only); returns this. */
    rsqrt_(): this;
    /** gx.sin(this): integer and bool tensors give float32. */
    sin(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    sin(opts?: OutOptions): Tensor;
    /** In place gx.sin (floating tensors only); returns this. */
    sin_(): this;
    /** gx.cos(this): integer and bool tensors give float32. */
    cos(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    cos(opts?: OutOptions): Tensor;
    /** In place gx.cos (floating tensors only); returns this. */
    cos_(): this;
    /** gx.tanh(this): integer and bool tensors give float32. */
    tanh(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    tanh(opts?: OutOptions): Tensor;
    /** In place gx.tanh (floating tensors only); returns this. */
    tanh_(): this;
    /** gx.sigmoid(this): integer and bool tensors give float32. */
    sigmoid(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    sigmoid(opts?: OutOptions): Tensor;
    /** In place gx.sigmoid (floating tensors only); returns this. */
    sigmoid_(): this;
    /** gx.gelu(this): integer and bool tensors give float32. */
    gelu(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    gelu(opts?: OutOptions): Tensor;
    /** gx.softplus(this): integer and bool tensors give float32. */
    softplus(opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
    softplus(opts?: OutOptions): Tensor;
    /** gx.neg(this), keeping the dtype. */
    neg(opts?: OutOptions<D>): Tensor<D>;
    neg(opts?: OutOptions): Tensor;
    /** In place gx.neg; returns this. */
    neg_(): this;
    /** gx.abs(this), keeping the dtype. */
    abs(opts?: OutOptions<D>): Tensor<D>;
    abs(opts?: OutOptions): Tensor;
    /** In place gx.abs; returns this. */
    abs_(): this;
    /** gx.sign(this), keeping the dtype. */
    sign(opts?: OutOptions<D>): Tensor<D>;
    sign(opts?: OutOptions): Tensor;
    /** In place gx.sign; returns this. */
    sign_(): this;
    /** gx.floor(this), keeping the dtype. */
    floor(opts?: OutOptions<D>): Tensor<D>;
    floor(opts?: OutOptions): Tensor;
    /** In place gx.floor; returns this. */
    floor_(): this;
    /** gx.ceil(this), keeping the dtype. */
    ceil(opts?: OutOptions<D>): Tensor<D>;
    ceil(opts?: OutOptions): Tensor;
    /** In place gx.ceil; returns this. */
    ceil_(): this;
    /** gx.round(this), keeping the dtype. */
    round(opts?: OutOptions<D>): Tensor<D>;
    round(opts?: OutOptions): Tensor;
    /** In place gx.round; returns this. */
    round_(): this;
    /** gx.relu(this), keeping the dtype. */
    relu(opts?: OutOptions<D>): Tensor<D>;
    relu(opts?: OutOptions): Tensor;
    /** In place gx.relu; returns this. */
    relu_(): this;
    /** this where condition is true, else other (gx.where(condition, this, other)). */
    where(condition: Tensor, other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    where(condition: Tensor, other: Operand, opts?: OutOptions): Tensor;
    /** Limits to [min, max], either optional (gx.clamp). */
    clamp(min?: number | bigint | null, max?: number | bigint | null, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    /** In place gx.clamp, keeping the dtype; returns this. */
    clamp_(min?: number | bigint | null, max?: number | bigint | null): this;
    /** A copy converted to `dtype` (gx.astype). */
    astype<E extends DType>(dtype: E): Tensor<E>;
    /** Sum over axes (gx.sum); integer and bool tensors sum in int64. @example x.sum(); x.sum(1); x.sum(1, { keepdims: true }) */
    sum<E extends DType>(opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    sum<E extends DType>(axis: ReduceAxis, opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    sum(axis: ReduceAxis, opts?: ReduceDTypeOptions): Tensor<SumResult<D>>;
    sum(opts?: ReduceArg): Tensor<SumResult<D>>;
    /** Product over axes (gx.prod). */
    prod<E extends DType>(opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    prod<E extends DType>(axis: ReduceAxis, opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    prod(axis: ReduceAxis, opts?: ReduceDTypeOptions): Tensor<SumResult<D>>;
    prod(opts?: ReduceArg): Tensor<SumResult<D>>;
    /** Mean over axes (gx.mean); floating tensors, or pass { dtype }. */
    mean<E extends DType>(opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    mean<E extends DType>(axis: ReduceAxis, opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    mean(axis: ReduceAxis, opts?: ReduceDTypeOptions): Tensor<D>;
    mean(opts?: ReduceArg): Tensor<D>;
    /** Maximum over axes (gx.max, torch.amax). */
    max(axis: ReduceAxis, opts?: ReduceOptions): Tensor<D>;
    max(opts?: ReduceArg): Tensor<D>;
    /** Minimum over axes (gx.min, torch.amin). */
    min(axis: ReduceAxis, opts?: ReduceOptions): Tensor<D>;
    min(opts?: ReduceArg): Tensor<D>;
    /** Index of the first maximum along one axis, or into the flattened tensor (gx.argmax). */
    argmax(axis: number | null | undefined, opts?: ArgReduceOptions): Tensor<'int64'>;
    argmax(opts?: ArgReduceOptions | number): Tensor<'int64'>;
    /** Index of the first minimum along one axis, or into the flattened tensor (gx.argmin). */
    argmin(axis: number | null | undefined, opts?: ArgReduceOptions): Tensor<'int64'>;
    argmin(opts?: ArgReduceOptions | number): Tensor<'int64'>;
  }
}

/** Binary ops with an in-place variant (as in PyTorch). */
export const INPLACE_BINARY: readonly BinaryName[] = ['add', 'sub', 'mul', 'div', 'pow', 'remainder'];
/** Unary ops without one (PyTorch has no Tensor.gelu_ or softplus_). */
const NO_INPLACE_UNARY: readonly UnaryName[] = ['gelu', 'softplus'];

const methods: Record<string, (this: Tensor, ...args: never[]) => unknown> = {};
for (const name of Object.keys(BINARY) as BinaryName[]) {
  const spec = BINARY[name];
  const fn = `Tensor.${name}`;
  methods[name] = function (this: Tensor, other: unknown, opts?: unknown) {
    return binaryOp(spec, this, other, fn, opts);
  };
}
for (const name of INPLACE_BINARY) {
  const spec = BINARY[name];
  const fn = `Tensor.${name}_`;
  methods[`${name}_`] = function (this: Tensor, other: unknown) {
    return binaryOp(spec, this, other, fn, undefined, true);
  };
}
for (const name of Object.keys(UNARY) as UnaryName[]) {
  const spec = UNARY[name];
  const fn = `Tensor.${name}`;
  methods[name] = function (this: Tensor, opts?: unknown) {
    return unaryOp(spec, this, fn, opts);
  };
  if (NO_INPLACE_UNARY.includes(name)) continue;
  const fnIn = `Tensor.${name}_`;
  methods[`${name}_`] = function (this: Tensor) {
    return unaryOp(spec, this, fnIn, undefined, true);
  };
}
for (const name of Object.keys(REDUCE) as ReduceName[]) {
  const spec = REDUCE[name];
  const fn = `Tensor.${name}`;
  methods[name] = function (this: Tensor, axis?: unknown, opts?: unknown) {
    return reduceOp(spec, this, axis, opts, fn);
  };
}
installMethods({
  ...(methods as TensorMethods),
  where(this: Tensor, condition: unknown, other: unknown, opts?: unknown) {
    return whereOp(condition, this, other, 'Tensor.where', opts);
  },
  clamp(this: Tensor, min?: unknown, max?: unknown, opts?: unknown) {
    return clampOp(this, min, max, 'Tensor.clamp', opts);
  },
  clamp_(this: Tensor, min?: unknown, max?: unknown) {
    return clampOp(this, min, max, 'Tensor.clamp_', undefined, true);
  },
  astype(this: Tensor, dtype: unknown) {
    return astypeOp(this, dtype, 'Tensor.astype');
  },
});
