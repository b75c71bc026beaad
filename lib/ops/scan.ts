// gx.cumsum: inclusive prefix sums along one axis, like torch.cumsum.
// Integer and bool inputs give int64 (exact, wrapping as int64 does);
// floating ones keep their dtype (float16 and bfloat16 add in float32);
// `{ dtype }` converts the input first, as torch's `dtype` argument. The
// kernels are in ops/scan/.
import { parseDType } from '../dtype';
import type { DType } from '../generated/dtypes';
import { recorders, shouldRecord } from '../autograd/graph';
import type { Tensor } from '../tensor';
import { axisCallOptions, axisOfCall, callAlongAxis, normalizeAxis, type AxisOptions } from './axes';
import { optionKeys } from '../options';
import { checkTensor } from './common';
import * as ops from '../generated/ops';
import { isFloating } from './promotion';
import type { SumResult } from './types';

export interface CumsumOptions<E extends DType = DType> extends AxisOptions {
  /** Convert the input to this dtype first and return it (not bool). */
  dtype?: E;
  /** Write the result here (the input's shape; a dtype the result casts to). */
  out?: Tensor;
}

const CUMSUM_KEYS = optionKeys<CumsumOptions>({ axis: true, dim: true, dtype: true, out: true });

/** @internal */
export function cumsumImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const o = axisCallOptions<CumsumOptions>(arg, opts, fn, CUMSUM_KEYS);
  const dim = normalizeAxis(axisOfCall(arg, o, fn, true), x.shape, fn);
  const asked = o.dtype !== undefined ? parseDType(o.dtype, fn) : undefined;
  if (asked === 'bool') throw new TypeError(`${fn}: dtype bool is not supported; ask for an integer or floating dtype`);
  const dtype: DType = asked ?? (isFloating(x.dtype) ? x.dtype : 'int64');
  const result = callAlongAxis(ops.cumsum, x, dim, dtype, asked, o.out, fn);
  if (o.out === undefined && shouldRecord(x)) recorders.alongAxis?.('cumsum', x, dim, result);
  return result;
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
export const cumsum: CumsumFn = ((x: unknown, axis: unknown, opts?: unknown): Tensor =>
  cumsumImpl(x, axis, opts, 'gx.cumsum')) as CumsumFn;
