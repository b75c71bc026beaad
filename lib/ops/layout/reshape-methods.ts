// The shape ops of ./split, ./reorder and ./repeat and the value tests of
// ../elementwise/predicates as Tensor methods (x.split(2), x.flip(0), x.any(1), ...), as
// torch has them; declared and installed (by lib/register.ts) as NOTE [ Tensor methods ]
// (install.ts) says. Errors name the gx function each one calls, but any's and all's, made by
// lib/ops/axis-function.ts, name the method as the reductions' methods do.
import type { DType } from '../../core/dtype';
import type { Tensor } from '../../core/tensor';
import type { Axes } from '../axes';
import type { TensorMethods } from '../install';
import * as predicates from '../elementwise/predicates';
import type { ReduceOptions } from '../reduce/reduction';
import type { TestReduceOptions, TestResult } from '../types';
import * as repeat from './repeat';
import * as reorder from './reorder';
import * as split from './split';

import { axisMethod } from '../axis-function';
import { tooManyArguments } from '../../core/options';

declare module '../../core/tensor' {
  interface Tensor<D extends DType> {
    /** gx.split: views of `sizeOrSections` elements (or of the listed sizes) along `axis`. @example x.split(2, 1) */
    split(sizeOrSections: number | readonly number[], axis?: number): Tensor<D>[];
    /** gx.chunk: `chunks` views along `axis`. @example x.chunk(3) */
    chunk(chunks: number, axis?: number): Tensor<D>[];
    /** gx.unbind: the slices along `axis`, that axis removed. @example const [a, b] = x.unbind(1) */
    unbind(axis?: number): Tensor<D>[];
    /** gx.flip: a copy reversed along `axes`, a list or each as an argument (torch's Tensor.flip). @example x.flip([0, 1]); x.flip(0, 1) */
    flip(...axes: number[] | [readonly number[]]): Tensor<D>;
    /** gx.roll: a copy shifted by `shifts` along `axes`, wrapping around. @example x.roll(1, 0) */
    roll(shifts: number | readonly number[], axes?: number | readonly number[]): Tensor<D>;
    /** gx.repeat: this tensor repeated `reps` times along each dim (torch's x.repeat). @example x.repeat([2, 1]) */
    repeat(reps: readonly number[]): Tensor<D>;
    /** gx.tile: as repeat, reps padded with ones at the front. @example x.tile([2]) */
    tile(reps: readonly number[]): Tensor<D>;
    /** gx.repeatInterleave: each element `repeats` times along `axis`. @example x.repeatInterleave(2, 0) */
    repeatInterleave(repeats: number, axis?: number): Tensor<D>;
    /** gx.any: whether any element is nonzero, over `axis` or all (bool; uint8 for uint8). @example x.gt(0).any(1) */
    any<O extends 'bool' | 'uint8'>(opts: TestReduceOptions<O> & { out: Tensor<O> }): Tensor<O>;
    any<O extends 'bool' | 'uint8'>(axis: Axes | undefined, opts: TestReduceOptions<O> & { out: Tensor<O> }): Tensor<O>;
    any(axis?: Axes | TestReduceOptions, opts?: TestReduceOptions): Tensor<TestResult<D>>;
    /** gx.all: whether every element is nonzero, over `axis` or all (bool; uint8 for uint8). @example x.isfinite().all().item() */
    all<O extends 'bool' | 'uint8'>(opts: TestReduceOptions<O> & { out: Tensor<O> }): Tensor<O>;
    all<O extends 'bool' | 'uint8'>(axis: Axes | undefined, opts: TestReduceOptions<O> & { out: Tensor<O> }): Tensor<O>;
    all(axis?: Axes | TestReduceOptions, opts?: TestReduceOptions): Tensor<TestResult<D>>;
    /** gx.isnan: the NaN elements. @example x.isnan() */
    isnan(): Tensor<'bool'>;
    /** gx.isinf: the infinite elements. @example x.isinf() */
    isinf(): Tensor<'bool'>;
    /** gx.isfinite: the elements neither NaN nor infinite. @example x.isfinite() */
    isfinite(): Tensor<'bool'>;
  }
}

export const RESHAPE_METHODS: TensorMethods = {
  split(this: Tensor, sizeOrSections: number | readonly number[], axis?: number) {
    if (arguments.length > 2) tooManyArguments('Tensor.split', '(sizeOrSections, axis?)', arguments.length - 2, arguments[2]);
    return split.split(this, sizeOrSections, axis);
  },
  chunk(this: Tensor, chunks: number, axis?: number) {
    if (arguments.length > 2) tooManyArguments('Tensor.chunk', '(chunks, axis?)', arguments.length - 2, arguments[2]);
    return split.chunk(this, chunks, axis);
  },
  unbind(this: Tensor, axis?: number) {
    if (arguments.length > 1) tooManyArguments('Tensor.unbind', '(axis?)', arguments.length - 1, arguments[1]);
    return split.unbind(this, axis);
  },
  flip(this: Tensor, ...axes: number[] | [readonly number[]]) {
    // flip(0, 1) flips both axes (it flipped the first only, the second argument dropped); flip() is refused, as torch's
    // (it gave an unflipped copy); flip([]) is the copy torch's gives.
    if (axes.length === 0) throw new TypeError('Tensor.flip: takes the axes to reverse, each as an argument or as a list: x.flip(0), x.flip([0, 1])');
    return reorder.flip(this, axes.length === 1 ? axes[0] : (axes as number[]));
  },
  roll(this: Tensor, shifts: number | readonly number[], axes?: number | readonly number[]) {
    if (arguments.length > 2) tooManyArguments('Tensor.roll', '(shifts, axes?)', arguments.length - 2, arguments[2]);
    return reorder.roll(this, shifts, axes);
  },
  repeat(this: Tensor, reps: readonly number[]) {
    if (arguments.length > 1) tooManyArguments('Tensor.repeat', '(reps)', arguments.length - 1, arguments[1]);
    return repeat.repeat(this, reps);
  },
  tile(this: Tensor, reps: readonly number[]) {
    if (arguments.length > 1) tooManyArguments('Tensor.tile', '(reps)', arguments.length - 1, arguments[1]);
    return repeat.tile(this, reps);
  },
  repeatInterleave(this: Tensor, repeats: number, axis?: number) {
    if (arguments.length > 2) tooManyArguments('Tensor.repeatInterleave', '(repeats, axis?)', arguments.length - 2, arguments[2]);
    return repeat.repeatInterleave(this, repeats, axis);
  },
  any: axisMethod('any', 'axis?', predicates.anyImpl),
  all: axisMethod('all', 'axis?', predicates.allImpl),
  isnan(this: Tensor) {
    if (arguments.length > 0) tooManyArguments('Tensor.isnan', '()', arguments.length, arguments[0]);
    return predicates.isnan(this);
  },
  isinf(this: Tensor) {
    if (arguments.length > 0) tooManyArguments('Tensor.isinf', '()', arguments.length, arguments[0]);
    return predicates.isinf(this);
  },
  isfinite(this: Tensor) {
    if (arguments.length > 0) tooManyArguments('Tensor.isfinite', '()', arguments.length, arguments[0]);
    return predicates.isfinite(this);
  },
};
