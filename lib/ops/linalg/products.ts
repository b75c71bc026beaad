// Vector and matrix helpers, as torch names them: dot, vdot, outer, cross,
// trace, diag, diagonal, triu, tril. Each is composed of gx ops where that
// costs what a kernel would (autograd then comes from the ops), and is one
// kernel where composing would be slow (cross: NOTE [ The cross product in
// one pass ] in ops/linalg/cross.h). Tensor methods of the same names are in
// ./methods.ts.
//
// - dot (and vdot, the same for real tensors): floating vectors go to
//   gx.matmul as [1, k] @ [k, 1], one cuBLAS call on CUDA (no product
//   temporary and no separate sum); integer vectors, which matmul does not
//   take, are mul + sum in int64, stored in their own dtype as torch's CPU
//   dot does (wrapping).
// - outer: a[:, None] * b[None, :], one broadcasting multiply (as fast as a
//   kernel: it writes the result once), promoting dtypes as mul does.
// - diagonal: a view (no copy), as torch.diagonal; diag of a 2-d tensor is a
//   copy of that view, of a 1-d one a zero matrix with the vector written on
//   its diagonal view.
// - trace: the sum of the diagonal view (integers sum in int64, as torch).
// - triu / tril: where(mask, x, 0) with mask [m, n] from one comparison of two
//   aranges ([1, n] against [m, 1] + offset): one pass over x, and the only
//   temporary is that bool mask of one matrix, shared by the whole batch.
import { allocate, arange } from '../creation/creation';
import type { DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { record, shouldRecord } from '../../tape/graph';
import { formatShape } from '../../core/shape';
import { copyValues, type Tensor } from '../../core/tensor';
import { optionKeys, tooManyArguments } from '../../core/options';
import { normalizeAxis } from '../axes';
import { checkTensor, commonDevice, describeOperand, optionsOf } from '../common';
import { BINARY, binaryOp, astypeOp, whereOp } from '../elementwise/elementwise';
import { checkInt } from '../layout/layout';
import { namedForCaller } from '../library';
import { matmul } from './matmul';
import { isFloating } from '../promotion';
import { REDUCE, reduceOp } from '../reduce/reduction';

/** Two live tensors on one device: the common checks of the two-operand helpers. */
function checkPair(a: unknown, b: unknown, fn: string, names: readonly [string, string] = ['a', 'b']): [Tensor, Tensor] {
  const x = checkTensor(a, fn, names[0]);
  const y = checkTensor(b, fn, names[1]);
  commonDevice([x, y], names, fn);
  return [x, y];
}

function dotImpl(a: unknown, b: unknown, fn: string): Tensor {
  const [x, y] = checkPair(a, b, fn);
  if (x.ndim !== 1 || y.ndim !== 1) {
    throw new RangeError(`${fn}: expected two 1-d tensors, got ${formatShape(x.shape)} and ${formatShape(y.shape)}`);
  }
  if (x.shape[0] !== y.shape[0]) {
    throw new RangeError(`${fn}: the vectors have different lengths, ${x.shape[0]} and ${y.shape[0]}`);
  }
  if (x.dtype !== y.dtype) throw new TypeError(`${fn}: expected vectors of one dtype, got ${x.dtype} and ${y.dtype}`);
  if (x.dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)})`);
  try {
    if (isFloating(x.dtype)) return matmul(x, y);
    // Integers: matmul takes floating dtypes only; the products sum in int64 and wrap to the dtype, as torch's CPU dot.
    using p = binaryOp(BINARY.mul, x, y, fn);
    if (x.dtype === 'int64') return reduceOp(REDUCE.sum, p, undefined, undefined, fn);
    using s = reduceOp(REDUCE.sum, p, undefined, undefined, fn);
    return astypeOp(s, x.dtype, fn);
  } catch (e) {
    // The checks above leave matmul nothing to refuse but a failure of the device (out of memory): named for the caller.
    if (e instanceof Error && e.message.startsWith('gx.matmul:')) e.message = fn + e.message.slice('gx.matmul'.length);
    throw namedForCaller(e, fn);
  }
}

/**
 * The dot product of two 1-d tensors of one dtype (a 0-d result), as
 * torch.dot: floating vectors in one matmul (cuBLAS on CUDA), integer ones
 * summed in int64 and stored in their dtype.
 * @example gx.dot(gx.tensor([1, 2, 3]), gx.tensor([4, 5, 6])).item() // 32
 */
export function dot<D extends DType>(a: Tensor<D>, b: Tensor<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.dot', '(a, b)', arguments.length - 2, arguments[2]);
  return dotImpl(a, b, 'gx.dot') as Tensor<D>;
}

/** torch.vdot: conj(a) . b, which for gpuext's real dtypes is gx.dot. @example gx.vdot(a, b) */
export function vdot<D extends DType>(a: Tensor<D>, b: Tensor<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.vdot', '(a, b)', arguments.length - 2, arguments[2]);
  return dotImpl(a, b, 'gx.vdot') as Tensor<D>;
}

/**
 * The outer product of two 1-d tensors: out[i, j] = a[i] * b[j], dtypes
 * promoted as gx.mul does (torch.outer).
 * @example gx.outer(gx.arange(3), gx.arange(4)).shape // [3, 4]
 */
export function outer(a: Tensor, b: Tensor): Tensor {
  if (arguments.length > 2) tooManyArguments('gx.outer', '(a, b)', arguments.length - 2, arguments[2]);
  const fn = 'gx.outer';
  const [x, y] = checkPair(a, b, fn);
  if (x.ndim !== 1 || y.ndim !== 1) {
    throw new RangeError(`${fn}: expected two 1-d tensors, got ${formatShape(x.shape)} and ${formatShape(y.shape)}`);
  }
  using col = x.reshape([x.shape[0], 1]);
  using row = y.reshape([1, y.shape[0]]);
  return binaryOp(BINARY.mul, col, row, fn);
}

/**
 * The cross product of 3-vectors along `axis` (default -1, whose size must be
 * 3 in both), broadcasting the other dims, as torch.linalg.cross: both inputs
 * have the same number of dims and one dtype (numeric). One kernel pass.
 * @example gx.cross(gx.tensor([1, 0, 0]), gx.tensor([0, 1, 0])) // [0, 0, 1]
 */
export function cross<D extends DType>(a: Tensor<D>, b: Tensor<D>, axis = -1): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.cross', '(a, b, axis?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.cross';
  const [x, y] = checkPair(a, b, fn);
  if (x.ndim !== y.ndim) {
    throw new RangeError(`${fn}: the inputs must have the same number of dimensions, got ${formatShape(x.shape)} and ${formatShape(y.shape)}`);
  }
  if (x.ndim === 0) throw new RangeError(`${fn}: expected tensors of 3-vectors, got 0-d tensors`);
  const d = normalizeAxis(axis, x.shape, fn, 'axis', 'strict');
  if (x.shape[d] !== 3 || y.shape[d] !== 3) {
    throw new RangeError(`${fn}: axis ${axis} must have size 3 in both inputs, got ${formatShape(x.shape)} and ${formatShape(y.shape)}`);
  }
  if (x.dtype !== y.dtype) throw new TypeError(`${fn}: expected inputs of one dtype, got ${x.dtype} and ${y.dtype}`);
  if (x.dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)})`);
  const shape = x.shape.map((s, i) => {
    const t = y.shape[i];
    if (s !== t && s !== 1 && t !== 1) {
      throw new RangeError(`${fn}: shapes ${formatShape(x.shape)} and ${formatShape(y.shape)} do not broadcast (dim ${i}: ${s} vs ${t})`);
    }
    return s === 1 ? t : s;
  });
  const out = allocate(shape, x.dtype, x.device, undefined, fn);
  try {
    using xe = x.expand(shape);
    using ye = y.expand(shape);
    ops.cross(fn, { self: xe.handle(fn), other: ye.handle(fn), axis: d, out: out.handle(fn) });
  } catch (e) {
    out.dispose();
    throw namedForCaller(e, fn);
  }
  if (shouldRecord(x, y)) {
    // d(a x b) = da x b + a x db: the gradient of a is b x g, of b is g x a (broadcast dims summed by the engine).
    const needA = shouldRecord(x), needB = shouldRecord(y);
    record('cross', [x, y], out, [x, y], (g, [sx, sy]) => [needA ? cross(sy, g, d) : null, needB ? cross(g, sx, d) : null]);
  }
  return out as Tensor<D>;
}

// --- diagonals -------------------------------------------------------------------

export interface DiagonalOptions {
  /** Which diagonal: 0 the main one, > 0 above it, < 0 below it (default 0). */
  offset?: number;
  /** The first of the two axes the diagonal runs over (default 0). */
  axis1?: number;
  /** The second (default 1). */
  axis2?: number;
}

const DIAGONAL_KEYS = optionKeys<DiagonalOptions>({ offset: true, axis1: true, axis2: true });

/** The diagonal `offset` of x over dims d1, d2 as a view: those dims removed, the diagonal appended last. */
function diagonalView<D extends DType>(x: Tensor<D>, offset: number, d1: number, d2: number): Tensor<D> {
  const shape = x.shape, strides = x.strides;
  const n1 = shape[d1], n2 = shape[d2];
  const len = Math.max(0, offset >= 0 ? Math.min(n1, n2 - offset) : Math.min(n1 + offset, n2));
  const start = len === 0 ? 0 : offset >= 0 ? offset * strides[d2] : -offset * strides[d1];
  const keep = shape.map((_, i) => i).filter((i) => i !== d1 && i !== d2);
  return x.asStrided([...keep.map((i) => shape[i]), len], [...keep.map((i) => strides[i]), strides[d1] + strides[d2]],
    x.storageOffset + start);
}

/**
 * @internal The diagonal `offset` of x over dims d1, d2 (normalized, distinct)
 * as a view recorded for autograd: the gradient is zeros with g written on the
 * same diagonal. (gx.einsum takes repeated subscripts' diagonals with it.)
 */
export function recordedDiagonal<D extends DType>(x: Tensor<D>, offset: number, d1: number, d2: number): Tensor<D> {
  const out = diagonalView(x, offset, d1, d2);
  if (shouldRecord(x)) {
    const shape = x.shape.slice(), dtype = x.dtype, device = x.device;
    record('diagonal', [x], out, [], (g) => {
      const z = allocate(shape, dtype, device, undefined, 'autograd').fill_(0);
      using v = diagonalView(z, offset, d1, d2);
      copyValues(v, g, 'autograd');
      return [z];
    });
  }
  return out;
}

/**
 * The diagonal `offset` over axes axis1 and axis2 as a view (writing it
 * writes x), those axes removed and the diagonal appended as the last one,
 * as torch.diagonal. Takes its arguments positionally or as options.
 * @example
 * gx.diagonal(m)                              // the main diagonal of a matrix
 * gx.diagonal(x, { offset: 1, axis1: -2, axis2: -1 })  // a batch's first superdiagonals
 * gx.diagonal(x, 0, 1, 2)
 */
export function diagonal<D extends DType>(x: Tensor<D>, offset?: number | DiagonalOptions, axis1?: number, axis2?: number): Tensor<D> {
  const fn = 'gx.diagonal';
  checkTensor(x, fn, 'x');
  let o: DiagonalOptions;
  if (typeof offset === 'object' && offset !== null && !Array.isArray(offset)) {
    if (axis1 !== undefined || axis2 !== undefined) {
      throw new TypeError(`${fn}: takes offset and axes positionally or as options ({ offset, axis1, axis2 }), not both`);
    }
    o = optionsOf<DiagonalOptions>(offset, fn, DIAGONAL_KEYS);
  } else {
    o = { offset: offset as number | undefined, axis1: axis1 as number | undefined, axis2: axis2 as number | undefined };
  }
  const k = o.offset === undefined ? 0 : checkInt(o.offset, fn, 'offset');
  if (x.ndim < 2) throw new RangeError(`${fn}: needs a tensor of 2 or more dimensions, got ${formatShape(x.shape)}`);
  const d1 = normalizeAxis(o.axis1 ?? 0, x.shape, fn, 'axis1', 'strict');
  const d2 = normalizeAxis(o.axis2 ?? 1, x.shape, fn, 'axis2', 'strict');
  if (d1 === d2) throw new RangeError(`${fn}: axis1 and axis2 must be different dimensions, both are ${d1}`);
  return recordedDiagonal(x, k, d1, d2);
}

/**
 * torch.diag: a 1-d x becomes a square matrix with x on its diagonal `offset`
 * (zeros elsewhere); a 2-d x gives a copy of its diagonal `offset`.
 * @example gx.diag(gx.tensor([1, 2, 3])) // 3 x 3 with 1, 2, 3 on the diagonal
 */
export function diag<D extends DType>(x: Tensor<D>, offset = 0): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.diag', '(x, offset?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.diag';
  checkTensor(x, fn, 'x');
  const k = checkInt(offset, fn, 'offset');
  if (x.ndim === 2) {
    using v = recordedDiagonal(x, k, 0, 1);
    return v.clone();
  }
  if (x.ndim !== 1) throw new RangeError(`${fn}: expected a 1-d or 2-d tensor, got ${formatShape(x.shape)}`);
  const n = x.shape[0] + Math.abs(k);
  const out = allocate([n, n], x.dtype, x.device, undefined, fn);
  try {
    out.fill_(0, fn);
    using v = diagonalView(out, k, 0, 1);
    copyValues(v, x, fn);
  } catch (e) {
    out.dispose();
    throw namedForCaller(e, fn);
  }
  if (shouldRecord(x)) record('diag', [x], out, [], (g) => [diagonalView(g, k, 0, 1)]);
  return out;
}

/**
 * The sum of a matrix's main diagonal (0-d), as torch.trace: integer and bool
 * matrices sum in int64.
 * @example gx.trace(gx.eye(3)).item() // 3
 */
export function trace(x: Tensor): Tensor {
  if (arguments.length > 1) tooManyArguments('gx.trace', '(x)', arguments.length - 1, arguments[1]);
  const fn = 'gx.trace';
  checkTensor(x, fn, 'x');
  if (x.ndim !== 2) throw new RangeError(`${fn}: expected a 2-d matrix, got ${formatShape(x.shape)}`);
  using d = recordedDiagonal(x, 0, 0, 1);
  return reduceOp(REDUCE.sum, d, undefined, undefined, fn);
}

/** triu / tril: x where the element's column minus row is >= offset (upper) or <= offset (lower), else 0. */
function triangle<D extends DType>(x: Tensor<D>, offset: unknown, upper: boolean, fn: string): Tensor<D> {
  checkTensor(x, fn, 'x');
  const k = checkInt(offset, fn, 'offset');
  if (x.ndim < 2) throw new RangeError(`${fn}: needs a tensor of 2 or more dimensions (a matrix or a batch of them), got ${formatShape(x.shape)}`);
  const [m, n] = x.shape.slice(-2);
  // column j of row i is kept where j >= i + k (upper) or j <= i + k (lower): [1, n] against [m, 1].
  using rows = arange(k, m + k, 1, { dtype: 'int64', device: x.device });
  using cols = arange(0, n, 1, { dtype: 'int64', device: x.device });
  using r = rows.reshape([m, 1]);
  using c = cols.reshape([1, n]);
  using mask = binaryOp(upper ? BINARY.ge : BINARY.le, c, r, fn);
  // A number keeps x's dtype (false for bool), so the result has x's dtype.
  return whereOp(mask, x, x.dtype === 'bool' ? false : 0, fn) as Tensor<D>;
}

/**
 * The upper triangle of the last two dims (a matrix or a batch of them):
 * elements on and above diagonal `offset` kept, the rest zero, as torch.triu.
 * @example gx.triu(m); gx.triu(m, 1) // strictly above the diagonal
 */
export function triu<D extends DType>(x: Tensor<D>, offset = 0): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.triu', '(x, offset?)', arguments.length - 2, arguments[2]);
  return triangle(x, offset, true, 'gx.triu');
}

/**
 * The lower triangle of the last two dims: elements on and below diagonal
 * `offset` kept, the rest zero, as torch.tril.
 * @example gx.tril(m); gx.tril(m, -1) // strictly below the diagonal
 */
export function tril<D extends DType>(x: Tensor<D>, offset = 0): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.tril', '(x, offset?)', arguments.length - 2, arguments[2]);
  return triangle(x, offset, false, 'gx.tril');
}
