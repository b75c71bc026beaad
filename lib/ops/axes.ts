// Axis arguments of the ops in softmax.ts, statistics.ts and scan.ts: one
// axis (softmax, logSoftmax, cumsum) or an axis list (logsumexp, var, std),
// negative ones counting from the end, checked with the messages the
// reductions give (reduction.ts).
import type { DType } from '../generated/dtypes';
import type * as ops from '../generated/ops';
import { formatShape } from '../shape';
import type { Tensor } from '../tensor';
import { computeResult, describeOperand } from './common';
import { astypeOp } from './elementwise';

function rangeError(fn: string, a: number, shape: readonly number[]): RangeError {
  const ndim = shape.length;
  const lim = Math.max(ndim, 1);
  return new RangeError(`${fn}: axis ${a} is out of range for an input of shape ${formatShape(shape)} ` +
    `(${ndim} dimension${ndim === 1 ? '' : 's'}; valid: ${-lim} to ${lim - 1})`);
}

/** One axis, in [0, ndim) (0 for a 0-d input, which takes 0 and -1, as in PyTorch). */
export function normalizeAxis(axis: unknown, shape: readonly number[], fn: string): number {
  if (typeof axis !== 'number' || !Number.isInteger(axis)) {
    throw new TypeError(`${fn}: axis must be an integer, got ${axis === undefined ? 'undefined (the axis is required)' : describeOperand(axis)}`);
  }
  const lim = Math.max(shape.length, 1);
  if (axis < -lim || axis >= lim) throw rangeError(fn, axis, shape);
  return axis < 0 ? axis + lim : axis;
}

/** The reduced axes, sorted and distinct (all for undefined); [] for a 0-d input. */
export function normalizeAxes(axis: unknown, shape: readonly number[], fn: string): number[] {
  const ndim = shape.length;
  if (axis === undefined || axis === null) return shape.map((_, i) => i);
  const list = typeof axis === 'number' ? [axis] : Array.isArray(axis) ? (axis as unknown[]) : undefined;
  if (list === undefined) {
    throw new TypeError(`${fn}: axis must be a number or an array of numbers, got ${describeOperand(axis)}`);
  }
  const seen = new Set<number>();
  for (const a of list) {
    if (typeof a !== 'number' || !Number.isInteger(a)) throw new TypeError(`${fn}: axis must hold integers, got ${describeOperand(a)}`);
    const lim = Math.max(ndim, 1);
    if (a < -lim || a >= lim) throw rangeError(fn, a, shape);
    const d = a < 0 ? a + lim : a;
    if (seen.has(d)) throw new RangeError(`${fn}: axis ${JSON.stringify(list)} names dimension ${d} twice`);
    seen.add(d);
  }
  return ndim === 0 ? [] : [...seen].sort((p, q) => p - q);
}

/** The shape left after reducing `dims` (kept as size 1 with keepdims). */
export function reducedShape(shape: readonly number[], dims: readonly number[], keepdims: boolean): number[] {
  return keepdims ? shape.map((s, i) => (dims.includes(i) ? 1 : s)) : shape.filter((_, i) => !dims.includes(i));
}

/**
 * Runs an op of the form `op(Tensor self, int axis, ScalarType dtype, Tensor out)`
 * (softmax, logSoftmax, cumsum): converts x to `asked` first when asked for,
 * writes into `out` or a new tensor of x's shape and `dtype`, and frees what
 * it made if the op throws.
 */
export function callAlongAxis(op: typeof ops.softmax, x: Tensor, dim: number, dtype: DType, asked: DType | undefined, out: Tensor | undefined,
  fn: string): Tensor {
  const src = asked !== undefined && asked !== x.dtype ? astypeOp(x, asked, fn) : x;
  try {
    return computeResult(x.shape, dtype, x.device, fn, { out, inputs: [src], elementwise: false },
      (r) => op(fn, { self: src.handle(fn), axis: dim, dtype, out: r.handle(fn) }));
  } finally {
    if (src !== x) src.dispose();
  }
}
