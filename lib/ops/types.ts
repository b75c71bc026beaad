// The TypeScript faces of the built-in ops: result dtypes as precise as the
// operand types allow. Where the result dtype depends on values TypeScript
// does not see (a JS number being 2 or 2.5, a tensor being 0-d), the general
// overload returns Tensor (any dtype).
import type { DType, FloatDType, IntegerDType } from '../generated/dtypes';
import type { Tensor } from '../core/tensor';
import type { OutOptions } from './common';
import type { Operand, ScalarOperand } from './promotion';
import type { Axes } from './axes';
import type { ArgReduceOptions, ReduceDTypeOptions, ReduceOptions } from './reduce/reduction';
import type { ClampOptions, DivOptions, RoundingMode } from './elementwise/elementwise';

export type { FloatDType, IntegerDType };

/** A float op's result dtype: floating inputs keep theirs, integer and bool ones give float32. */
export type FloatResult<D extends DType> = D extends FloatDType ? D : 'float32';
/** sum's and prod's result dtype: floating inputs keep theirs, integer and bool ones give int64. */
export type SumResult<D extends DType> = D extends FloatDType ? D : 'int64';

/** any's and all's result dtype: bool, but uint8 for uint8 inputs (as torch.any / torch.all). */
export type TestResult<D extends DType> = D extends 'uint8' ? 'uint8' : 'bool';

/** The axis (or axes) to reduce, or the options (NOTE [ Axis forms ] in axes.ts). */
export type ReduceArg = ReduceOptions | Axes;

/** A positional axis (or axes) of a reduction; null or undefined: all. */
export type ReduceAxis = Axes | null | undefined;

/** add, sub, mul, pow, maximum, minimum, remainder. */
export interface BinaryFn {
  <D extends DType>(self: Tensor<D>, other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
  <D extends FloatDType>(self: Tensor<D>, other: ScalarOperand, opts?: OutOptions<D>): Tensor<D>;
  <D extends FloatDType>(self: ScalarOperand, other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
  (self: Operand, other: Operand, opts?: OutOptions): Tensor;
}

/** A division with a roundingMode (gx.div's 'floor' or 'trunc'): the common dtype, integers staying integers. */
export type RoundedDivOptions<D extends DType = DType> = DivOptions<D> & { roundingMode: RoundingMode };

/** div: true division, or with roundingMode the quotient rounded down or toward 0 (as BinaryFn's dtypes). */
export interface DivFn {
  <D extends DType>(self: Tensor<D>, other: Tensor<D>, opts: RoundedDivOptions<D>): Tensor<D>;
  <D extends FloatDType>(self: Tensor<D>, other: ScalarOperand, opts: RoundedDivOptions<D>): Tensor<D>;
  <D extends FloatDType>(self: ScalarOperand, other: Tensor<D>, opts: RoundedDivOptions<D>): Tensor<D>;
  (self: Operand, other: Operand, opts: RoundedDivOptions): Tensor;
  <D extends FloatDType>(self: Tensor<D>, other: Tensor<D> | ScalarOperand, opts?: OutOptions<D>): Tensor<D>;
  <D extends FloatDType>(self: ScalarOperand, other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
  (self: Tensor<IntegerDType | 'bool'>, other: Tensor<IntegerDType | 'bool'> | ScalarOperand,
    opts?: OutOptions<'float32'>): Tensor<'float32'>;
  (self: Operand, other: Operand, opts?: DivOptions): Tensor;
}

/** eq, ne, lt, le, gt, ge, logicalAnd, logicalOr, logicalXor. */
export interface CompareFn {
  (self: Operand, other: Operand, opts?: OutOptions<'bool'>): Tensor<'bool'>;
  (self: Operand, other: Operand, opts?: OutOptions): Tensor;
}

/** exp, log, log1p, sqrt, rsqrt, sin, cos, tanh, sigmoid, gelu, softplus. */
export interface UnaryFloatFn {
  <D extends DType>(x: Tensor<D>, opts?: OutOptions<FloatResult<D>>): Tensor<FloatResult<D>>;
  (x: Tensor, opts?: OutOptions): Tensor;
}

/** neg, abs, sign, floor, ceil, round, relu. */
export interface UnaryKeepFn {
  <D extends DType>(x: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
  (x: Tensor, opts?: OutOptions): Tensor;
}

export interface WhereFn {
  <D extends DType>(condition: Tensor, self: Tensor<D>, other: Tensor<D>, opts?: OutOptions<D>): Tensor<D>;
  (condition: Tensor, self: Operand, other: Operand, opts?: OutOptions): Tensor;
}

export interface ClampFn {
  <D extends FloatDType>(x: Tensor<D>, min?: number | bigint | null, max?: number | bigint | null, opts?: OutOptions<D>): Tensor<D>;
  (x: Tensor, min?: number | bigint | null, max?: number | bigint | null, opts?: OutOptions): Tensor;
  <D extends FloatDType>(x: Tensor<D>, bounds: ClampOptions<D>): Tensor<D>;
  (x: Tensor, bounds: ClampOptions): Tensor;
}

export interface SumFn {
  <E extends DType>(x: Tensor, opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
  <E extends DType>(x: Tensor, axis: ReduceAxis, opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
  <D extends DType>(x: Tensor<D>, axis: ReduceAxis, opts?: ReduceDTypeOptions): Tensor<SumResult<D>>;
  <D extends DType>(x: Tensor<D>, opts?: ReduceArg): Tensor<SumResult<D>>;
}

export interface MeanFn {
  <E extends DType>(x: Tensor, opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
  <E extends DType>(x: Tensor, axis: ReduceAxis, opts: ReduceDTypeOptions<E> & { dtype: E }): Tensor<E>;
  <D extends DType>(x: Tensor<D>, axis: ReduceAxis, opts?: ReduceDTypeOptions): Tensor<D>;
  <D extends DType>(x: Tensor<D>, opts?: ReduceArg): Tensor<D>;
}

/** The options of gx.any and gx.all: an `out` is bool or uint8, whatever the input (as torch's). */
export interface TestReduceOptions<O extends 'bool' | 'uint8' = 'bool' | 'uint8'> extends Omit<ReduceOptions, 'out'> {
  out?: Tensor<O>;
}

/** gx.any and gx.all: bool, or uint8 for a uint8 input; the `out` given. */
export interface TestReduceFn {
  <O extends 'bool' | 'uint8'>(x: Tensor, opts: TestReduceOptions<O> & { out: Tensor<O> }): Tensor<O>;
  <O extends 'bool' | 'uint8'>(x: Tensor, axis: Axes | undefined, opts: TestReduceOptions<O> & { out: Tensor<O> }): Tensor<O>;
  <D extends DType>(x: Tensor<D>, axis?: Axes | TestReduceOptions, opts?: TestReduceOptions): Tensor<TestResult<D>>;
}

export interface ArgReduceFn {
  (x: Tensor, axis: number | null | undefined, opts?: ArgReduceOptions): Tensor<'int64'>;
  (x: Tensor, opts?: ArgReduceOptions | number): Tensor<'int64'>;
}
