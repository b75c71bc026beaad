// The reductions as gx functions (gx.sum ... gx.argmin) over one axis, several or all.
import { REDUCE, reduceWith } from './reduction';
import type { ArgReduceFn, MeanFn, SumFn } from '../types';
import { axisFunction } from '../axis-function';

// --- reductions -----------------------------------------------------------------

/**
 * Sum over `axis` (a number, an array, or all axes), optionally keeping the
 * reduced axes as size 1; integer and bool inputs sum in int64.
 * @example gx.sum(x); gx.sum(x, 0); gx.sum(x, 1, { keepdims: true }); gx.sum(x, { axis: [0, 2], keepdims: true })
 */
export const sum = axisFunction<SumFn>('sum', 'axis?', reduceWith(REDUCE.sum));
/** Product over axes; integer and bool inputs multiply in int64. */
export const prod = axisFunction<SumFn>('prod', 'axis?', reduceWith(REDUCE.prod));
/** Mean over axes; floating inputs only (or ask for `{ dtype: 'float32' }`). */
export const mean = axisFunction<MeanFn>('mean', 'axis?', reduceWith(REDUCE.mean));
// max and min in torch's three forms are in ./extremum.ts (NOTE [ The forms of max and min ]).
/** Index (int64) of the first maximum along one axis, or into the flattened tensor. @example gx.argmax(logits, 1) */
export const argmax = axisFunction<ArgReduceFn>('argmax', 'axis?', reduceWith(REDUCE.argmax));
/** Index (int64) of the first minimum along one axis, or into the flattened tensor. */
export const argmin = axisFunction<ArgReduceFn>('argmin', 'axis?', reduceWith(REDUCE.argmin));
