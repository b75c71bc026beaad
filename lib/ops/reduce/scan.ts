// gx.cumsum and gx.cumprod: inclusive prefix sums and products along one
// axis, like torch.cumsum and torch.cumprod. Integer and bool inputs give
// int64 (exact, wrapping as int64 does); floating ones keep their dtype
// (float16 and bfloat16 compute in float32); `{ dtype }` converts the input
// first, as torch's `dtype` argument. The kernels are in ops/scan/ (NOTE
// [ One scan, three operations ] in scan.h: the devices agree bit for bit on
// integers, within rounding on floats).
import { parseDType } from '../../core/dtype';
import type { DType } from '../../generated/dtypes';
import { recorders, shouldRecord } from '../../tape/graph';
import type { Tensor } from '../../core/tensor';
import { axisCallOptions, axisOfCall, callAlongAxis, normalizeAxis, type AxisOptions } from '../axes';
import { optionKeys } from '../../core/options';
import { checkTensor } from '../common';
import { BINARY, binaryOp } from '../elementwise/elementwise';
import { cat, checkInt, narrow } from '../layout/layout';
import { tidy } from '../../core/tidy';
import * as ops from '../../generated/ops';
import { isFloating } from '../promotion';
import type { SumResult } from '../types';
import { axisFunction } from '../axis-function';

export interface CumsumOptions<E extends DType = DType> extends AxisOptions {
  /** Convert the input to this dtype first and return it (not bool). */
  dtype?: E;
  /** Write the result here (the input's shape; a dtype the result casts to). */
  out?: Tensor;
}

const CUMSUM_KEYS = optionKeys<CumsumOptions>({ axis: true, dim: true, dtype: true, out: true });

/** The options of gx.cumprod: those of gx.cumsum. */
export type CumprodOptions<E extends DType = DType> = CumsumOptions<E>;

/** cumsum or cumprod of x along its axis (the same arguments, the same dtype rule). */
function runningImpl(name: 'cumsum' | 'cumprod', a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const o = axisCallOptions<CumsumOptions>(arg, opts, fn, CUMSUM_KEYS);
  const dim = normalizeAxis(axisOfCall(arg, o, fn, true), x.shape, fn);
  const asked = o.dtype !== undefined ? parseDType(o.dtype, fn) : undefined;
  if (asked === 'bool') throw new TypeError(`${fn}: dtype bool is not supported; ask for an integer or floating dtype`);
  const dtype: DType = asked ?? (isFloating(x.dtype) ? x.dtype : 'int64');
  const result = callAlongAxis(ops[name], x, dim, dtype, asked, o.out, fn);
  if (o.out === undefined && shouldRecord(x)) recorders.alongAxis?.(name, x, dim, result);
  return result;
}

/** @internal */
export function cumsumImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  return runningImpl('cumsum', a, arg, opts, fn);
}

/** @internal gx.cumprod and Tensor.cumprod (its gradient: lib/autograd/cumprod-backward.ts). */
export function cumprodImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  return runningImpl('cumprod', a, arg, opts, fn);
}

export interface CumsumFn {
  <E extends DType>(x: Tensor, axis: number, opts: CumsumOptions<E> & { dtype: E }): Tensor<E>;
  <E extends DType>(x: Tensor, opts: CumsumOptions<E> & { axis: number; dtype: E }): Tensor<E>;
  <D extends DType>(x: Tensor<D>, axis: number, opts?: CumsumOptions): Tensor<SumResult<D>>;
  <D extends DType>(x: Tensor<D>, opts: CumsumOptions & { axis: number }): Tensor<SumResult<D>>;
}

/**
 * Inclusive prefix sums along `axis` (negative counts from the end), like
 * torch.cumsum: integer and bool inputs give int64, floating ones keep their
 * dtype; `{ dtype }` converts the input first.
 * @example gx.cumsum(gx.arange(5), 0) // int64 [0, 1, 3, 6, 10]; gx.cumsum(x, { axis: -1 })
 */
export const cumsum = axisFunction<CumsumFn>('cumsum', 'axis', cumsumImpl);

/**
 * Inclusive prefix products along `axis` (negative counts from the end), as
 * torch.cumprod: integer and bool inputs give int64 (wrapping as int64
 * does), floating ones keep their dtype; `{ dtype }` converts the input
 * first. Its gradient is right where the input has zeros (as torch's).
 * @example gx.cumprod(gx.tensor([1, 2, 3, 4]), 0) // [1, 2, 6, 24]
 */
export const cumprod = axisFunction<CumsumFn>('cumprod', 'axis', cumprodImpl);

// --- diff ------------------------------------------------------------------------------

export interface DiffOptions extends AxisOptions {
  /** Put before x along the axis first (its shape but along the axis). */
  prepend?: Tensor;
  /** Put after x along the axis first. */
  append?: Tensor;
}

const DIFF_KEYS = optionKeys<DiffOptions>({ axis: true, dim: true, prepend: true, append: true });

/** @internal gx.diff and Tensor.diff: n-th forward differences, as views subtracted (composite). */
export function diffImpl(a: unknown, nArg: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'input');
  const n = nArg === undefined ? 1 : checkInt(nArg, fn, 'n');
  if (n < 0) throw new RangeError(`${fn}: n must be >= 0, got ${n}`);
  if (x.ndim === 0) throw new RangeError(`${fn}: needs a tensor of 1 dimension or more, got a 0-d tensor`);
  const o = axisCallOptions<DiffOptions>(arg, opts, fn, DIFF_KEYS);
  const a0 = axisOfCall(arg, o, fn);
  const dim = normalizeAxis(a0 === undefined || a0 === null ? -1 : a0, x.shape, fn);
  return tidy(() => {
    const parts = [o.prepend, x, o.append].filter((t): t is Tensor => t !== undefined)
      .map((t, i) => (t === x ? t : checkTensor(t, fn, i === 0 && o.prepend !== undefined ? 'prepend' : 'append')));
    let y = parts.length === 1 ? x : cat(parts, dim);
    // bool differences are "changed" (torch's logical_xor), numbers subtract.
    const op = x.dtype === 'bool' ? BINARY.ne : BINARY.sub;
    for (let k = 0; k < n && y.shape[dim] > 0; k++) {
      const len = y.shape[dim] - 1;
      y = binaryOp(op, narrow(y, dim, 1, len), narrow(y, dim, 0, len), fn);
    }
    return y === x ? x.clone() : y;
  });
}

export interface DiffFn {
  <D extends DType>(x: Tensor<D>, n?: number, axis?: number, opts?: DiffOptions): Tensor<D>;
  <D extends DType>(x: Tensor<D>, n: number, opts: DiffOptions): Tensor<D>;
}

/**
 * The n-th forward difference along `axis` (default -1), as torch.diff:
 * out[i] = x[i + 1] - x[i], applied n times (default 1), after `prepend`
 * and `append` are put around x; bool inputs give x[i + 1] != x[i].
 * @example gx.diff(gx.tensor([1, 4, 9, 16])) // [3, 5, 7]; gx.diff(x, 2, 0)
 */
export const diff = axisFunction<DiffFn>('diff', 'n?, axis?', diffImpl);
