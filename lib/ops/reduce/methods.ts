// The statistics of ./statistics-nan, ./statistics-order, ./statistics-nan-order and ./scan's diff
// as Tensor methods (x.nansum(1), x.median(0), x.quantile(0.9), x.diff()),
// as torch has them; declared and installed (by lib/register.ts) as NOTE [ Tensor methods ]
// (install.ts) says. Errors name the method ('Tensor.median').
import type { DType } from '../../core/dtype';
import type { Axes } from '../axes';
import type { TensorMethods } from '../install';
import type { ReduceOptions } from './reduction';
import { cumprodImpl, diffImpl, type CumprodOptions, type DiffOptions } from './scan';
import { cumExtremumImpl } from './scan-extremum';
import type { AxisOptions } from '../axes';
import { REDUCE, reduceWith } from './reduction';
import { aminmaxImpl, countNonzeroImpl, nanmeanImpl, nansumImpl, type AminmaxResult, type NanReduceOptions } from './statistics-nan';
import { medianImpl, quantileImpl, type MedianOptions, type QuantileOptions } from './statistics-order';
import { modeImpl, nanmedianImpl, nanquantileImpl, type ModeOptions } from './statistics-nan-order';
import type { SortResult } from '../sort/sorting';
import type { FloatResult, ReduceAxis, SumResult } from '../types';
import { axisMethod } from '../axis-function';

declare module '../../core/tensor' {
  interface Tensor<D extends DType> {
    /** gx.nansum: the sum with NaNs as 0. @example x.nansum(1) */
    nansum(axis?: ReduceAxis, opts?: NanReduceOptions): Tensor<SumResult<D>>;
    nansum(opts: NanReduceOptions | Axes): Tensor<SumResult<D>>;
    /** gx.nanmean: the mean of the elements that are not NaN. @example x.nanmean(0) */
    nanmean(axis?: ReduceAxis, opts?: NanReduceOptions): Tensor<FloatResult<D>>;
    nanmean(opts: NanReduceOptions | Axes): Tensor<FloatResult<D>>;
    /** gx.countNonzero: how many elements are not zero (int64). @example mask.countNonzero() */
    countNonzero(axis?: ReduceAxis, opts?: NanReduceOptions): Tensor<'int64'>;
    countNonzero(opts: NanReduceOptions | Axes): Tensor<'int64'>;
    /** gx.amax: the largest element over axes, a tensor. @example x.amax(-1) */
    amax(axis?: ReduceAxis, opts?: ReduceOptions): Tensor<D>;
    amax(opts: ReduceOptions | Axes): Tensor<D>;
    /** gx.amin: the smallest element over axes, a tensor. @example x.amin(-1) */
    amin(axis?: ReduceAxis, opts?: ReduceOptions): Tensor<D>;
    amin(opts: ReduceOptions | Axes): Tensor<D>;
    /** gx.aminmax: `{ min, max }` (also `[min, max]`). @example const [lo, hi] = x.aminmax() */
    aminmax(axis?: ReduceAxis, opts?: NanReduceOptions): AminmaxResult<D>;
    aminmax(opts: NanReduceOptions | Axes): AminmaxResult<D>;
    /** gx.median: of every element, or `{ values, indices }` along an axis. @example x.median(); x.median(1).values */
    median(): Tensor<D>;
    median(axis: number, opts?: MedianOptions): SortResult<D>;
    median(opts: MedianOptions & { axis: number }): SortResult<D>;
    /** gx.quantile: the q-th quantiles (q in [0, 1]). @example x.quantile([0.1, 0.9], 0) */
    quantile(q: number | readonly number[] | Tensor, axis?: number | null, opts?: QuantileOptions): Tensor<FloatResult<D>>;
    quantile(q: number | readonly number[] | Tensor, opts: QuantileOptions): Tensor<FloatResult<D>>;
    /** gx.mode: the most frequent value along an axis (default -1) and its index. @example const [m, i] = x.mode(1) */
    mode(axis?: number, opts?: ModeOptions): SortResult<D>;
    mode(opts: ModeOptions): SortResult<D>;
    /** gx.nanmedian: the median of the elements that are not NaN. @example x.nanmedian(); x.nanmedian(1).values */
    nanmedian(): Tensor<D>;
    nanmedian(axis: number, opts?: MedianOptions): SortResult<D>;
    nanmedian(opts: MedianOptions & { axis: number }): SortResult<D>;
    /** gx.nanquantile: the q-th quantiles of the elements that are not NaN. @example x.nanquantile(0.9, 1) */
    nanquantile(q: number | readonly number[] | Tensor, axis?: number | null, opts?: QuantileOptions): Tensor<FloatResult<D>>;
    nanquantile(q: number | readonly number[] | Tensor, opts: QuantileOptions): Tensor<FloatResult<D>>;
    /** gx.diff: the n-th forward difference along an axis (default -1). @example x.diff() */
    diff(n?: number, axis?: number, opts?: DiffOptions): Tensor<D>;
    diff(n: number, opts: DiffOptions): Tensor<D>;
    /** gx.cumprod: inclusive prefix products along an axis. @example x.cumprod(0) */
    cumprod<E extends DType>(axis: number, opts: CumprodOptions<E> & { dtype: E }): Tensor<E>;
    cumprod<E extends DType>(opts: CumprodOptions<E> & { axis: number; dtype: E }): Tensor<E>;
    cumprod(axis: number, opts?: CumprodOptions): Tensor<SumResult<D>>;
    cumprod(opts: CumprodOptions & { axis: number }): Tensor<SumResult<D>>;
    /** gx.cummax: the running maximum and its index, `{ values, indices }`. @example const [m, i] = x.cummax(1) */
    cummax(axis: number): SortResult<D>;
    cummax(opts: AxisOptions & { axis: number }): SortResult<D>;
    /** gx.cummin: the running minimum and its index. @example x.cummin(-1).values */
    cummin(axis: number): SortResult<D>;
    cummin(opts: AxisOptions & { axis: number }): SortResult<D>;
  }
}

export const STATISTICS_METHODS: TensorMethods = {
  nansum: axisMethod('nansum', 'axis?', nansumImpl),
  nanmean: axisMethod('nanmean', 'axis?', nanmeanImpl),
  countNonzero: axisMethod('countNonzero', 'axis?', countNonzeroImpl),
  amax: axisMethod('amax', 'axis?', reduceWith(REDUCE.max)),
  amin: axisMethod('amin', 'axis?', reduceWith(REDUCE.min)),
  aminmax: axisMethod('aminmax', 'axis?', aminmaxImpl),
  median: axisMethod('median', 'axis?', medianImpl),
  quantile: axisMethod('quantile', 'q, axis?', quantileImpl),
  mode: axisMethod('mode', 'axis?', modeImpl),
  nanmedian: axisMethod('nanmedian', 'axis?', nanmedianImpl),
  nanquantile: axisMethod('nanquantile', 'q, axis?', nanquantileImpl),
  diff: axisMethod('diff', 'n?, axis?', diffImpl),
  cumprod: axisMethod('cumprod', 'axis', cumprodImpl),
  cummax: axisMethod('cummax', 'axis', (x, axis, opts, fn) => cumExtremumImpl(x, axis, opts, true, fn)),
  cummin: axisMethod('cummin', 'axis', (x, axis, opts, fn) => cumExtremumImpl(x, axis, opts, false, fn)),
};
