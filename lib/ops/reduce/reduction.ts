// Reductions over one axis, several, or all: sum, prod, mean, max, min,
// argmax, argmin, with keepdims, a result dtype (sum, prod, mean) and `out`.
import { parseDType } from '../../core/dtype';
import type { DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { formatShape } from '../../core/shape';
import { recorders, shouldRecord } from '../../tape/graph';
import type { Tensor } from '../../core/tensor';
import { optionKeys } from '../../core/options';
import { checkTensor, computeResult, describeOperand } from '../common';
import { astypeOp } from '../elementwise/elementwise';
import { axisCallOptions, axisOfCall, normalizeAxes, reducedShape, type Axes, type AxisOptions } from '../axes';
import { isFloating } from '../promotion';

export interface ReduceOptions extends AxisOptions<Axes> {
  /** The axes to reduce (default: all). Negative axes count from the end. */
  axis?: Axes;
  /** Keep reduced axes as size 1 (default false). */
  keepdims?: boolean;
  /** Write the result into this tensor (of the result's shape). */
  out?: Tensor;
}

export interface ReduceDTypeOptions<E extends DType = DType> extends ReduceOptions {
  /** The dtype to compute and return in (sum, prod, mean); the input is converted first. */
  dtype?: E;
}

export interface ArgReduceOptions extends AxisOptions {
  /** The one axis to reduce; default: the flattened tensor (the index is into it). */
  axis?: number;
  keepdims?: boolean;
  out?: Tensor;
}

/**
 * The reductions by gx name, each with its dtype rule (ops/op-list.js): sum
 * (integer and bool inputs give int64), mean (floating only), extremum (the
 * input's dtype), arg (int64 indices).
 */
export const REDUCE = ops.REDUCE;
export type ReduceSpec = ops.ReduceOp;

export type ReduceName = keyof typeof REDUCE;

// dtype is known to every reduction: max, min and the arg ones refuse it with their own message.
/** @internal The options a reduction takes. */
export const REDUCE_KEYS = optionKeys<ReduceDTypeOptions>({ axis: true, dim: true, keepdims: true, dtype: true, out: true });

/**
 * @internal Reduces x by `spec`: `reduceOp(spec, x, axis, opts)` or
 * `reduceOp(spec, x, opts)` (NOTE [ Axis forms ] in axes.ts).
 */
export function reduceOp(spec: ReduceSpec, a: unknown, arg: unknown, opts: unknown, fn: string): Tensor {
  const o = axisCallOptions<ReduceDTypeOptions>(arg, opts, fn, REDUCE_KEYS);
  const axis = axisOfCall(arg, o, fn);
  const x = checkTensor(a, fn, 'self');
  if (spec.kind === 'arg' && Array.isArray(axis)) {
    throw new TypeError(`${fn}: takes one axis (or none, for the flattened tensor), got ${JSON.stringify(axis)}`);
  }
  const shape = x.shape;
  const dims = normalizeAxes(axis, shape, fn);
  const outShape = reducedShape(shape, dims, o.keepdims === true);
  const xd = x.dtype;
  const asked = o.dtype !== undefined ? parseDType(o.dtype, fn) : undefined;
  if (asked !== undefined && (spec.kind === 'extremum' || spec.kind === 'arg')) {
    throw new TypeError(`${fn}: takes no dtype option (the result has the input's ${spec.kind === 'arg' ? 'indices' : 'dtype'})`);
  }
  let compute: DType, resDtype: DType;
  switch (spec.kind) {
    case 'sum':
      compute = resDtype = asked ?? (isFloating(xd) ? xd : 'int64');
      break;
    case 'mean':
      compute = resDtype = asked ?? xd;
      if (!isFloating(compute)) {
        throw new TypeError(`${fn}: dtype ${compute} is not supported (got ${describeOperand(x)}); ` +
          "mean needs a floating-point input or { dtype: 'float32' }");
      }
      break;
    case 'extremum':
      compute = resDtype = xd;
      break;
    case 'arg':
      if (xd === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)})`);
      compute = xd;
      resDtype = 'int64';
      break;
  }
  if (spec.kind === 'extremum' || spec.kind === 'arg') {
    let reduced = 1, kept = 1;
    shape.forEach((s, i) => { if (dims.includes(i)) reduced *= s; else kept *= s; });
    if (reduced === 0 && kept > 0) {
      throw new RangeError(`${fn}: cannot reduce zero elements (input of shape ${formatShape(shape)}` +
        `${axis === undefined || axis === null ? '' : `, axis ${JSON.stringify(axis)}`}): ${spec.name} has no identity`);
    }
  }
  // { dtype } converts the input first, as torch does (sum of float64 1e300 and -1e300 as float32 is
  // inf - inf = NaN, of int8 -1 as uint8 is 255); accumulating the input's own values differed.
  const src = asked !== undefined && asked !== xd ? astypeOp(x, asked, fn) : x;
  try {
    const result = computeResult(outShape, resDtype, x.device, fn, { out: o.out, inputs: [x], elementwise: false },
      (r) => spec.call(fn, { self: src.handle(fn), axis: dims, dtype: compute, out: r.handle(fn) }));
    if (shouldRecord(x)) recorders.reduce?.(spec.name, x, dims, o.keepdims === true, result);
    return result;
  } finally {
    if (src !== x) src.dispose();
  }
}

/** @internal reduceOp of `spec` as an axis op's implementation (lib/ops/axis-function.ts). */
export const reduceWith = (spec: ReduceSpec) => (x: unknown, axis: unknown, opts: unknown, fn: string): Tensor => reduceOp(spec, x, axis, opts, fn);
