// gx.cummax and gx.cummin: the running maximum / minimum along one axis and
// where it was found, as torch.cummax / torch.cummin, by the scan kernels of
// ops/scan/ (NOTE [ Running extremum keys ] in scan.h: ties and NaNs go to
// the last index, as torch's kernels; a NaN is the extremum from its
// position on). Every dtype, bool included; the values keep the input's
// dtype, the indices are int64, and both devices agree bit for bit.
// The gradient of the values goes to the elements the indices name, summed
// where one element is the running extremum of several positions (torch's
// scatter_add into zeros).
import { zeros } from '../creation/creation';
import { allocate } from '../creation/creation';
import type { DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { optionKeys } from '../../core/options';
import type { Tensor } from '../../core/tensor';
import { record, shouldRecord } from '../../tape/graph';
import { axisCallOptions, axisOfCall, normalizeAxis, type AxisOptions } from '../axes';
import { checkTensor } from '../common';
import { scatterAdd } from '../indexing/indexing';
import { namedForCaller } from '../library';
import { named } from '../named';
import type { SortResult } from '../sort/sorting';
import { axisFunction } from '../axis-function';

const CUMEXT_KEYS = optionKeys<AxisOptions>({ axis: true, dim: true });

/** Records values = x at indices along axis: the gradient is g summed into zeros at the indices. */
function recordRunning(name: string, x: Tensor, axis: number, values: Tensor, indices: Tensor<'int64'>): void {
  const shape = x.shape.slice(), dtype = x.dtype, device = x.device;  // read now: x may be gone by backward time
  record(name, [x], values, [indices], (g, [idx]) => [shape.length === 0 ? g : scatterAdd(zeros(shape, { dtype, device }), axis, idx, g)]);
}

/** @internal gx.cummax / gx.cummin and their methods. */
export function cumExtremumImpl(a: unknown, arg: unknown, opts: unknown, largest: boolean, fn: string): SortResult {
  const x = checkTensor(a, fn, 'self');
  const o = axisCallOptions<AxisOptions>(arg, opts, fn, CUMEXT_KEYS);
  const axis = normalizeAxis(axisOfCall(arg, o, fn, true), x.shape, fn);
  const values = allocate(x.shape, x.dtype, x.device, undefined, fn);
  const indices = allocate(x.shape, 'int64', x.device, undefined, fn);
  try {
    const call = largest ? ops.cummax : ops.cummin;
    call(fn, { self: x.handle(fn), axis, values: values.handle(fn), indices: indices.handle(fn) });
  } catch (e) {
    values.dispose();
    indices.dispose();
    throw namedForCaller(e, fn);
  }
  if (shouldRecord(x)) recordRunning(largest ? 'cummax' : 'cummin', x, axis, values, indices);
  return named({ values, indices }, ['values', 'indices']);
}

export interface CumExtremumFn {
  <D extends DType>(x: Tensor<D>, axis: number): SortResult<D>;
  <D extends DType>(x: Tensor<D>, opts: AxisOptions & { axis: number }): SortResult<D>;
}

/**
 * The running maximum along `axis` and where it was found, as torch.cummax:
 * `{ values, indices }` (also `[values, indices]`); ties go to the later
 * index, and a NaN is the maximum from its position on (its index that of
 * the last NaN so far). Gradients reach the elements the indices name.
 * @example const [m, i] = gx.cummax(gx.tensor([1, 3, 2, 3]), 0) // m [1, 3, 3, 3], i [0, 1, 1, 3]
 */
// The options after an axis go on to be checked (an unknown key was dropped).
export const cummax = axisFunction<CumExtremumFn>('cummax', 'axis', (x, axis, opts, fn) => cumExtremumImpl(x, axis, opts, true, fn));

/** The running minimum along `axis` and where it was found, as torch.cummin (see gx.cummax). @example gx.cummin(x, -1).values */
export const cummin = axisFunction<CumExtremumFn>('cummin', 'axis', (x, axis, opts, fn) => cumExtremumImpl(x, axis, opts, false, fn));
