// The built-in ops as Tensor methods: `a.add(b).mul(2).sum()`. Types by
// declaration merging with the Tensor class (the same result dtypes as the gx
// functions in index.ts); the methods are installed on Tensor.prototype when
// this module loads (lib/index.ts loads it).
import type { DType } from '../generated/dtypes';
import { Tensor } from '../tensor';
import type { OutOptions } from './common';
import { astypeOp, BINARY, binaryOp, clampOp, UNARY, unaryOp, whereOp, type BinaryName, type UnaryName } from './elementwise';
import type { Operand } from './promotion';
import { REDUCE, reduceOp, type ArgReduceOptions, type ReduceDTypeOptions, type ReduceName } from './reduction';
import type { FloatDType, ReduceArg, SumResult } from './types';

declare module '../tensor' {
  interface Tensor<D extends DType = DType> {
    /** this where condition is true, else other (gx.where(condition, this, other)). */
    where(condition: Tensor, other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    where(condition: Tensor, other: Operand, opts?: OutOptions): Tensor;
    /** Limits to [min, max], either optional (gx.clamp). */
    clamp(min?: number | bigint | null, max?: number | bigint | null, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    /** In place gx.clamp, keeping the dtype; returns this. */
    clamp_(min?: number | bigint | null, max?: number | bigint | null): this;
    /** A copy converted to `dtype` (gx.astype). */
    astype<E extends DType>(dtype: E): Tensor<E>;
    /** Sum over axes (gx.sum); integer and bool tensors sum in int64. */
    sum<E extends DType>(opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    sum(opts?: ReduceArg): Tensor<SumResult<D>>;
    /** Product over axes (gx.prod). */
    prod<E extends DType>(opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    prod(opts?: ReduceArg): Tensor<SumResult<D>>;
    /** Mean over axes (gx.mean); floating tensors, or pass { dtype }. */
    mean<E extends DType>(opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
    mean(opts?: ReduceArg): Tensor<D>;
    /** Maximum over axes (gx.max, torch.amax). */
    max(opts?: ReduceArg): Tensor<D>;
    /** Minimum over axes (gx.min, torch.amin). */
    min(opts?: ReduceArg): Tensor<D>;
    /** Index of the first maximum along one axis, or into the flattened tensor (gx.argmax). */
    argmax(opts?: ArgReduceOptions | number): Tensor<'int64'>;
    /** Index of the first minimum along one axis, or into the flattened tensor (gx.argmin). */
    argmin(opts?: ArgReduceOptions | number): Tensor<'int64'>;
  }
}

/** Defines a non-enumerable method, as class methods are. */
function install(name: string, f: (this: Tensor, ...args: never[]) => unknown): void {
  Object.defineProperty(Tensor.prototype, name, { value: f, writable: true, configurable: true, enumerable: false });
}

for (const name of Object.keys(BINARY) as BinaryName[]) {
  const spec = BINARY[name];
  const fn = `Tensor.${name}`;
  install(name, function (this: Tensor, other: unknown, opts?: unknown) {
    return binaryOp(spec, this, other, fn, opts);
  });
}
for (const name of Object.keys(BINARY) as BinaryName[]) {
  const spec = BINARY[name];
  if (!spec.inplace) continue;
  const fn = `Tensor.${name}_`;
  install(`${name}_`, function (this: Tensor, other: unknown) {
    return binaryOp(spec, this, other, fn, undefined, true);
  });
}
for (const name of Object.keys(UNARY) as UnaryName[]) {
  const spec = UNARY[name];
  const fn = `Tensor.${name}`;
  install(name, function (this: Tensor, opts?: unknown) {
    return unaryOp(spec, this, fn, opts);
  });
  if (!spec.inplace) continue;
  const fnIn = `Tensor.${name}_`;
  install(`${name}_`, function (this: Tensor) {
    return unaryOp(spec, this, fnIn, undefined, true);
  });
}
install('where', function (this: Tensor, condition: unknown, other: unknown, opts?: unknown) {
  return whereOp(condition, this, other, 'Tensor.where', opts);
});
install('clamp', function (this: Tensor, min?: unknown, max?: unknown, opts?: unknown) {
  return clampOp(this, min, max, 'Tensor.clamp', opts);
});
install('clamp_', function (this: Tensor, min?: unknown, max?: unknown) {
  return clampOp(this, min, max, 'Tensor.clamp_', undefined, true);
});
install('astype', function (this: Tensor, dtype: unknown) {
  return astypeOp(this, dtype, 'Tensor.astype');
});
for (const name of Object.keys(REDUCE) as ReduceName[]) {
  const spec = REDUCE[name];
  const fn = `Tensor.${name}`;
  install(name, function (this: Tensor, opts?: unknown) {
    return reduceOp(spec, this, opts, fn);
  });
}
