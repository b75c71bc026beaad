// Shapes and strides: checking user shapes, contiguous strides, and the
// stride rule that decides whether a view can be made without copying.

import * as limits from '../generated/limits';

/** At most this many dimensions (GX_MAX_DIMS in csrc/include/gpuext/limits.h). */
export const MAX_DIMS = limits.MAX_DIMS;

export type ShapeLike = number | readonly number[];

/** Checks a user-supplied shape; `fn` names the API in errors. */
export function parseShape(shape: unknown, fn: string, argName = 'shape'): number[] {
  const dims = typeof shape === 'number' ? [shape] : shape;
  if (!Array.isArray(dims)) {
    throw new TypeError(`${fn}: ${argName} must be an array of non-negative integers, got ${describeValue(shape)}`);
  }
  if (dims.length > MAX_DIMS) {
    throw new RangeError(`${fn}: ${argName} has ${dims.length} dimensions; at most ${MAX_DIMS} are supported`);
  }
  dims.forEach((d: unknown, i) => {
    if (typeof d !== 'number') {
      throw new TypeError(`${fn}: ${argName}[${i}] must be a number, got ${describeValue(d)}`);
    }
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new RangeError(`${fn}: ${argName}[${i}] must be a non-negative integer, got ${d}`);
    }
  });
  return dims.slice() as number[];
}

export function numelOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * NOTE [ Tensor byte limit ]
 * Sizes, strides and offsets are JS numbers, exact to 2^53 - 1, so a shape
 * is refused when its contiguous span in bytes passes that: the product of
 * its dimensions with each 0 counted as 1 (the first contiguous stride times
 * the first dimension), times the item size. Counting 0 as 1 keeps the strides
 * of an empty tensor of shape [0, 2^53 - 1, 2^53 - 1] from being inexact
 * numbers; NumPy refuses that shape too ("array is too big"), its limit being
 * 2^63 - 1 bytes. No allocation comes near either limit.
 */
export const MAX_TENSOR_BYTES = Number.MAX_SAFE_INTEGER;

/** The bytes a contiguous tensor of `shape` spans, 0s counted as 1 (NOTE [ Tensor byte limit ]), exact as a bigint. */
export function spanBytes(shape: readonly (number | bigint)[], itemsize: number): bigint {
  let n = BigInt(itemsize);
  for (const d of shape) n *= BigInt(d) > 0n ? BigInt(d) : 1n;
  return n;
}

/** Why `shape` of items of `itemsize` bytes is too large (NOTE [ Tensor byte limit ]), or undefined when it is not. */
export function tooLargeReason(shape: readonly (number | bigint)[], itemsize: number): string | undefined {
  const span = spanBytes(shape, itemsize);
  if (span <= BigInt(MAX_TENSOR_BYTES)) return undefined;
  const zero = shape.some((d) => BigInt(d) === 0n) ? ', with each 0 counted as 1,' : '';
  return `its ${shape.length > 0 ? 'dimensions' : 'size'}${zero} span ${span} bytes, more than the ${MAX_TENSOR_BYTES} (2^53 - 1) a tensor may ` +
    'have (its sizes and strides are exact JS numbers)';
}

/** NumPy broadcasting of shapes; an Error naming `fn` and every shape when they do not broadcast. */
export function broadcastShapes(shapes: readonly (readonly number[])[], fn: string): number[] {
  const ndim = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(ndim).fill(1);
  for (const s of shapes) {
    const lead = ndim - s.length;
    for (let k = 0; k < s.length; k++) {
      const o = out[lead + k], d = s[k];
      if (o === 1) out[lead + k] = d;
      else if (d !== 1 && d !== o) {
        throw new Error(`${fn}: shapes ${shapes.map(formatShape).join(' and ')} do not broadcast ` +
          `(dimension ${lead + k} of the result: ${o} vs ${d})`);
      }
    }
  }
  return out;
}

/** Same sizes, same rank (no allocation: it runs on launch paths). */
export function equalShapes(a: readonly number[], b: readonly number[]): boolean {
  // One array (an op's result shares its operand's frozen shape): no element read, each of which in a frozen
  // array costs V8's optimized code a call into the keyed-load IC (Node 20), not an inline load.
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Whether several elements of a layout share memory: a dimension of size > 1
 * with stride 0, as expand() makes (torch's has_internal_overlap says yes for
 * these, and so does this; layouts made by asStrided that overlap otherwise
 * are not detected). Such a tensor cannot be written to in place: which of
 * the writes to a shared element lands is not defined.
 */
export function overlapsItself(shape: readonly number[], strides: readonly number[]): boolean {
  for (let i = 0; i < shape.length; i++) if (shape[i] > 1 && strides[i] === 0) return true;
  return false;
}

/** A refusal of writing in place into such a tensor, named for `fn`; `what` names the tensor ('self', 'out'). */
export function overlapsItselfError(fn: string, what: string, shape: readonly number[], strides: readonly number[]): Error {
  return new Error(`${fn}: ${what} (shape ${formatShape(shape)}, strides ${formatShape(strides)}) has elements that share ` +
    'memory (an expanded tensor); writing to it in place is not supported (use .contiguous() or .clone() first)');
}

export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= Math.max(shape[d], 1);
  }
  return strides;
}

export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/**
 * Resolves one -1 in a requested shape against `numel`, as torch.view does.
 * Throws an Error naming `fn`, both shapes and the element counts when they
 * cannot match.
 */
export function inferShape(requested: readonly number[], numel: number, oldShape: readonly number[], fn: string): number[] {
  const shape = requested.slice();
  let infer = -1;
  let known = 1;
  shape.forEach((d, i) => {
    if (typeof d !== 'number' || !Number.isSafeInteger(d)) {
      throw new TypeError(`${fn}: shape[${i}] must be an integer, got ${describeValue(d)}`);
    }
    if (d === -1) {
      if (infer >= 0) throw new RangeError(`${fn}: only one dimension can be -1, got ${formatShape(requested)}`);
      infer = i;
    } else if (d < 0) {
      throw new RangeError(`${fn}: shape[${i}] must be >= 0 or -1, got ${d}`);
    } else {
      known *= d;
    }
  });
  if (shape.length > MAX_DIMS) throw new RangeError(`${fn}: at most ${MAX_DIMS} dimensions are supported`);
  if (infer >= 0) {
    if (known === 0 || numel % known !== 0) {
      throw new Error(`${fn}: shape ${formatShape(requested)} is invalid for a tensor of shape ${formatShape(oldShape)} (${numel} elements)`);
    }
    shape[infer] = numel / known;
  } else if (known !== numel) {
    throw new Error(`${fn}: shape ${formatShape(requested)} is invalid for a tensor of shape ${formatShape(oldShape)} (${numel} elements)`);
  }
  return shape;
}

/**
 * Strides for viewing (oldShape, oldStrides) as newShape without copying, or
 * undefined when the memory layout does not allow it (then reshape copies).
 * The same rule as PyTorch's computeStride: dims of old can be split or merged
 * only within chunks that are contiguous with respect to each other.
 */
export function viewStrides(
  oldShape: readonly number[],
  oldStrides: readonly number[],
  newShape: readonly number[],
): number[] | undefined {
  const numel = numelOf(oldShape);
  if (numel <= 1) return contiguousStrides(newShape);
  const newStrides = new Array<number>(newShape.length).fill(0);
  let viewD = newShape.length - 1;
  let chunkBaseStride = oldStrides[oldStrides.length - 1];
  let tensorNumel = 1;
  let viewNumel = 1;
  for (let tensorD = oldShape.length - 1; tensorD >= 0; tensorD--) {
    tensorNumel *= oldShape[tensorD];
    // End of a contiguous chunk: match view dims against it.
    if (tensorD === 0 || (oldShape[tensorD - 1] !== 1 && oldStrides[tensorD - 1] !== tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] === 1)) {
        newStrides[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= newShape[viewD];
        viewD--;
      }
      if (viewNumel !== tensorNumel) return undefined;
      if (tensorD > 0) {
        chunkBaseStride = oldStrides[tensorD - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  return viewD === -1 ? newStrides : undefined;
}

export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `a string (${JSON.stringify(v)})`;
  if (typeof v === 'object') return `an object (${Object.prototype.toString.call(v)})`;
  return `${typeof v} ${String(v)}`;
}

/**
 * The byte range [lo, hi) that the elements of a strided layout span in
 * memory (NOTE [ Overlapping outputs ] in ops/overlap.ts); undefined when it
 * has no elements.
 */
export function byteSpan(address: number, shape: readonly number[], strides: readonly number[], itemsize: number): [number, number] | undefined {
  let lo = 0, hi = 0;
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 0) return undefined;
    const span = (shape[d] - 1) * strides[d];
    if (span < 0) lo += span;
    else hi += span;
  }
  return [address + lo * itemsize, address + (hi + 1) * itemsize];
}

/** Whether two layouts (of one dtype) put the same elements at the same addresses. */
export function sameLayout(a: number, shapeA: readonly number[], stridesA: readonly number[],
  b: number, shapeB: readonly number[], stridesB: readonly number[]): boolean {
  if (a !== b || shapeA.length !== shapeB.length) return false;
  for (let d = 0; d < shapeA.length; d++) {
    if (shapeA[d] !== shapeB[d]) return false;
    if (shapeA[d] > 1 && stridesA[d] !== stridesB[d]) return false;
  }
  return true;
}
