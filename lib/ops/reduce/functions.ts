// The reductions as gx functions (gx.sum ... gx.argmin) over one axis, several or all.
import { REDUCE, reduceOp } from './reduction';
import type { ArgReduceFn, MeanFn, SumFn } from '../types';
import type { Tensor } from '../../core/tensor';
import { tooManyArguments } from '../../core/options';

// --- reductions -----------------------------------------------------------------

/**
 * Sum over `axis` (a number, an array, or all axes), optionally keeping the
 * reduced axes as size 1; integer and bool inputs sum in int64.
 * @example gx.sum(x); gx.sum(x, 0); gx.sum(x, 1, { keepdims: true }); gx.sum(x, { axis: [0, 2], keepdims: true })
 */
export const sum: SumFn = (function (x: unknown, axis?: unknown, opts?: unknown): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.sum', '(x, axis?, options?)', arguments.length - 3, arguments[3]);
  return reduceOp(REDUCE.sum, x, axis, opts, 'gx.sum');
}) as SumFn;
/** Product over axes; integer and bool inputs multiply in int64. */
export const prod: SumFn = (function (x: unknown, axis?: unknown, opts?: unknown): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.prod', '(x, axis?, options?)', arguments.length - 3, arguments[3]);
  return reduceOp(REDUCE.prod, x, axis, opts, 'gx.prod');
}) as SumFn;
/** Mean over axes; floating inputs only (or ask for `{ dtype: 'float32' }`). */
export const mean: MeanFn = (function (x: unknown, axis?: unknown, opts?: unknown): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.mean', '(x, axis?, options?)', arguments.length - 3, arguments[3]);
  return reduceOp(REDUCE.mean, x, axis, opts, 'gx.mean');
}) as MeanFn;
// max and min in torch's three forms: ./extremum.ts (NOTE [ The forms of max and min ]).
export { max, min } from './extremum';
/** Index (int64) of the first maximum along one axis, or into the flattened tensor. @example gx.argmax(logits, 1) */
export const argmax: ArgReduceFn = (function (x: unknown, axis?: unknown, opts?: unknown): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.argmax', '(x, axis?, options?)', arguments.length - 3, arguments[3]);
  return reduceOp(REDUCE.argmax, x, axis, opts, 'gx.argmax');
}) as ArgReduceFn;
/** Index (int64) of the first minimum along one axis, or into the flattened tensor. */
export const argmin: ArgReduceFn = (function (x: unknown, axis?: unknown, opts?: unknown): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.argmin', '(x, axis?, options?)', arguments.length - 3, arguments[3]);
  return reduceOp(REDUCE.argmin, x, axis, opts, 'gx.argmin');
}) as ArgReduceFn;
