// The elementwise ops and reductions as Tensor methods: `a.add(b).mul(2).sum()`,
// declared and installed (by lib/register.ts) as NOTE [ Tensor methods ] (install.ts) says.
import type { DType } from '../../generated/dtypes';
import type { Tensor } from '../../core/tensor';
import { type OutOptions } from '../common';
import { astypeOp, BINARY, binaryOp, clampOp, UNARY, unaryArgs, unaryOp, whereOp, type BinaryName, type ClampOptions, type UnaryName } from './elementwise';
import type { Operand } from '../promotion';
import type { TensorMethods } from '../install';
import { REDUCE, reduceWith, type ArgReduceOptions, type ReduceDTypeOptions, type ReduceName, type ReduceOptions } from '../reduce/reduction';
import type { FloatDType, ReduceArg, ReduceAxis, SumResult } from '../types';
import { extremumImpl, type ExtremumOptions } from '../reduce/extremum';
import type { SortResult } from '../sort/sorting';
import { axisMethod } from '../axis-function';
import { tooManyArguments } from '../../core/options';

declare module '../../core/tensor' {
  interface Tensor<D extends DType = DType> {
    /** this where condition is true, else other (gx.where(condition, this, other)). */
    where(condition: Tensor, other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
    where(condition: Tensor, other: Operand, opts?: OutOptions): Tensor;
    /** Limits to [min, max], either optional (gx.clamp). */
    clamp(min?: number | bigint | null, max?: number | bigint | null, opts?: OutOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    clamp(bounds: ClampOptions<D>): [D] extends [FloatDType] ? Tensor<D> : Tensor;
    /** In place gx.clamp, keeping the dtype; returns this. */
    clamp_(min?: number | bigint | null, max?: number | bigint | null): this;
    clamp_(bounds: Omit<ClampOptions, 'out'>): this;
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
    /**
     * gx.max's forms (NOTE [ The forms of max and min ]): the largest element, or over a list of axes;
     * `{ values, indices }` along one axis; the elementwise maximum with a tensor.
     * @example x.max(); const [v, i] = x.max(1); x.max([0, 1]); x.max(y)
     */
    max(axes?: readonly number[] | null, opts?: ReduceOptions): Tensor<D>;
    max(opts: ReduceOptions & { axis?: readonly number[] | null }): Tensor<D>;
    max(axis: number, opts?: ExtremumOptions): SortResult<D>;
    max(opts: ExtremumOptions & { axis: number }): SortResult<D>;
    max(other: Tensor, opts?: OutOptions): Tensor;
    max(arg?: ReduceArg | Tensor | null, opts?: ReduceOptions): Tensor | SortResult<D>;
    /** gx.min's forms, as max's. @example x.min(); const [v, i] = x.min(0); x.min(y) */
    min(axes?: readonly number[] | null, opts?: ReduceOptions): Tensor<D>;
    min(opts: ReduceOptions & { axis?: readonly number[] | null }): Tensor<D>;
    min(axis: number, opts?: ExtremumOptions): SortResult<D>;
    min(opts: ExtremumOptions & { axis: number }): SortResult<D>;
    min(other: Tensor, opts?: OutOptions): Tensor;
    min(arg?: ReduceArg | Tensor | null, opts?: ReduceOptions): Tensor | SortResult<D>;
    /** Index of the first maximum along one axis, or into the flattened tensor (gx.argmax). */
    argmax(axis: number | null | undefined, opts?: ArgReduceOptions): Tensor<'int64'>;
    argmax(opts?: ArgReduceOptions | number): Tensor<'int64'>;
    /** Index of the first minimum along one axis, or into the flattened tensor (gx.argmin). */
    argmin(axis: number | null | undefined, opts?: ArgReduceOptions): Tensor<'int64'>;
    argmin(opts?: ArgReduceOptions | number): Tensor<'int64'>;
  }
}

const methods: Record<string, (this: Tensor, ...args: never[]) => unknown> = {};
for (const name of Object.keys(BINARY) as BinaryName[]) {
  const spec = BINARY[name];
  const fn = `Tensor.${name}`;
  methods[name] = function (this: Tensor, other: unknown, opts?: unknown) {
    if (arguments.length > 2) tooManyArguments(fn, '(other, options?)', arguments.length - 2, arguments[2]);
    return binaryOp(spec, this, other, fn, opts);
  };
}
for (const name of Object.keys(BINARY) as BinaryName[]) {
  const spec = BINARY[name];
  if (!spec.inplace) continue;
  const fn = `Tensor.${name}_`;
  // div_ takes its roundingMode, as torch's div_(other, rounding_mode=...) (NOTE [ Rounding modes of div ]).
  const takes = spec === BINARY.div ? 2 : 1;
  methods[`${name}_`] = function (this: Tensor, other: unknown, opts?: unknown) {
    if (arguments.length > takes) tooManyArguments(fn, takes === 2 ? '(other, { roundingMode })' : '(other)', arguments.length - takes, arguments[takes]);
    return binaryOp(spec, this, other, fn, takes === 2 ? opts : undefined, true);
  };
}
for (const name of Object.keys(UNARY) as UnaryName[]) {
  const spec = UNARY[name];
  const fn = `Tensor.${name}`;
  methods[name] = spec.params.length === 0
    ? function (this: Tensor, opts?: unknown) {
      if (arguments.length > 1) tooManyArguments(fn, '(options?)', arguments.length - 1, arguments[1]);
      return unaryOp(spec, this, fn, opts);
    }
    : function (this: Tensor, ...rest: unknown[]) {
      const { params, opts } = unaryArgs(spec, rest, fn);
      return unaryOp(spec, this, fn, opts, false, params);
    };
  if (!spec.inplace) continue;
  const fnIn = `Tensor.${name}_`;
  methods[`${name}_`] = spec.params.length === 0
    ? function (this: Tensor) {
      if (arguments.length > 0) tooManyArguments(fnIn, '()', arguments.length, arguments[0]);
      return unaryOp(spec, this, fnIn, undefined, true);
    }
    : function (this: Tensor, ...rest: unknown[]) {
      const { params, opts } = unaryArgs(spec, rest, fnIn);
      if (opts !== undefined) throw new TypeError(`${fnIn}: takes no out (it writes this)`);
      return unaryOp(spec, this, fnIn, undefined, true, params);
    };
}
for (const name of Object.keys(REDUCE) as ReduceName[]) {
  methods[name] = axisMethod(name, 'axis?', reduceWith(REDUCE[name]));
}
export const ELEMENTWISE_METHODS: TensorMethods = {
  ...(methods as TensorMethods),
  where(this: Tensor, condition: unknown, other: unknown, opts?: unknown) {
    return whereOp(condition, this, other, 'Tensor.where', opts);
  },
  clamp(this: Tensor, min?: unknown, max?: unknown, opts?: unknown) {
    if (arguments.length > 3) tooManyArguments('Tensor.clamp', '(min?, max?, options?)', arguments.length - 3, arguments[3]);
    return clampOp(this, min, max, 'Tensor.clamp', opts);
  },
  clamp_(this: Tensor, min?: unknown, max?: unknown) {
    if (arguments.length > 2) tooManyArguments('Tensor.clamp_', '(min?, max?) or ({ min, max })', arguments.length - 2, arguments[2]);
    return clampOp(this, min, max, 'Tensor.clamp_', undefined, true);
  },
  astype(this: Tensor, dtype: unknown) {
    if (arguments.length > 1) tooManyArguments('Tensor.astype', '(dtype)', arguments.length - 1, arguments[1]);
    return astypeOp(this, dtype, 'Tensor.astype');
  },
  max: axisMethod('max', 'arg?', (x, arg, opts, fn) => extremumImpl(true, x, arg, opts, fn)),
  min: axisMethod('min', 'arg?', (x, arg, opts, fn) => extremumImpl(false, x, arg, opts, fn)),
};
