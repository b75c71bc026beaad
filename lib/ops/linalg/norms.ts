// Norms, as torch.linalg names them: gx.linalg.vectorNorm, matrixNorm and
// norm (which dispatches between them as torch.linalg.norm does); Tensor.norm
// (./methods.ts) is torch's Tensor.norm on top of them.
//
// - vectorNorm is one reduction (the vector_norm op: NOTE [ Vector norms as
//   reductions ] in ops/reduce/norm.h), unscaled as torch's: the 2-norm is
//   sqrt(sum(x^2)) in the compute type (float for float16 and bfloat16, so
//   their squares do not overflow; float32 values near 1e20 give inf, as in
//   torch). Its gradient is torch's norm_backward, written out below: for the
//   2-norm g x / norm, 0 where the norm is 0 (the zero vector has a zero
//   gradient, not NaN); for inf / -inf the gradient is split between the
//   elements that reach the extremum.
// - matrixNorm: 'fro' is the vector 2-norm over the two axes; 1 / -1 / inf /
//   -inf are a sum of |x| over one axis and a max / min over the other
//   (recorded ops, so autograd follows them); a max over no columns, rows or
//   singular values is 0 and a min over none is refused, as torch's
//   (extremumOfNothing); 2 / -2 / 'nuc' come from the
//   singular values. gx.linalg.svd takes one 2-d float32 / float64 matrix and
//   always computes U and Vh (it has no values-only form), so a batch is one
//   SVD per matrix (16-bit floats in float32); the gradient uses the U and Vh
//   of that SVD: U diag(dS) Vh, dS being 1 for 'nuc' and the tie-split
//   indicator of the largest (smallest) singular value for 2 (-2).
import { tooManyArguments } from '../../core/options';
import { allocate, full } from '../creation/creation';
import { parseDType } from '../../core/dtype';
import type { DType, FloatDType } from '../../generated/dtypes';
import * as E from '../../generated/elementwise';
import * as ops from '../../generated/ops';
import { record, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import { formatShape, numelOf } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { optionKeys } from '../../core/options';
import { normalizeAxisList, reducedShape, type Axes } from '../axes';
import { checkTensor, describeOperand, optionsOf } from '../common';
import { astypeOp, whereOp } from '../elementwise/elementwise';
import { permute, stack } from '../layout/layout';
import { namedForCaller } from '../library';
import { matmul } from './matmul';
import { svd } from './svd';
import { isFloating, promoteTypes } from '../promotion';
import { REDUCE, reduceOp } from '../reduce/reduction';

/** What every norm takes besides its order and axes. */
export interface NormOptions<R extends FloatDType = FloatDType> {
  /** Keep the reduced axes as size 1 (default false). */
  keepdims?: boolean;
  /** Convert the input to this floating dtype first (no narrowing: float32 may go to float64, not to float16); the result has it. */
  dtype?: R;
}

export interface VectorNormOptions<R extends FloatDType = FloatDType> extends NormOptions<R> {
  /** The order: any real number, Infinity (max |x|), -Infinity (min |x|), 0 (the count of nonzero elements); default 2. */
  ord?: number;
  /** The axes to reduce (default, null or []: all, the tensor as one vector). */
  axis?: Axes | null;
}

/** A matrix norm's order: Frobenius, nuclear, or the operator norms 1, -1, 2, -2, Infinity, -Infinity. */
export type MatrixNormOrd = 'fro' | 'nuc' | number;

export interface MatrixNormOptions<R extends FloatDType = FloatDType> extends NormOptions<R> {
  /** The order (default 'fro'). */
  ord?: MatrixNormOrd;
  /** The two axes holding the matrices (default [-2, -1]); the others are batch axes. */
  axis?: readonly [number, number];
}

export interface LinalgNormOptions<R extends FloatDType = FloatDType> extends NormOptions<R> {
  /** The order: a vector norm's (number) or a matrix norm's ('fro', 'nuc', number); see gx.linalg.norm. */
  ord?: MatrixNormOrd | null;
  /** One axis (a vector norm), two (a matrix norm), or none. */
  axis?: Axes | null;
}

const NORM_KEYS = optionKeys<NormOptions>({ keepdims: true, dtype: true });
const VECTOR_KEYS = optionKeys<VectorNormOptions>({ ord: true, axis: true, keepdims: true, dtype: true });
const MATRIX_KEYS = optionKeys<MatrixNormOptions>({ ord: true, axis: true, keepdims: true, dtype: true });
const LINALG_KEYS = optionKeys<LinalgNormOptions>({ ord: true, axis: true, keepdims: true, dtype: true });

/** The result type of a norm: the asked dtype, else the input's (a floating one). */
type NormResult<D extends DType, R extends FloatDType | undefined> = R extends FloatDType ? Tensor<R> : Tensor<D>;

interface Parsed {
  ord: unknown;
  axis: unknown;
  keepdims: boolean;
  dtype: DType | undefined;
}

/** `f(x, ord, axis, opts)` or `f(x, { ord, axis, ... })`: the arguments, checked against the options' keys. */
function parseCall(ordArg: unknown, axisArg: unknown, opts: unknown, fn: string, known: readonly string[]): Parsed {
  const isObj = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(ordArg)) {
    if (axisArg !== undefined || opts !== undefined) {
      throw new TypeError(`${fn}: takes ord and axis positionally or in one options object, not both`);
    }
    const o = optionsOf<LinalgNormOptions>(ordArg, fn, known);
    return { ord: o.ord, axis: o.axis, keepdims: o.keepdims === true, dtype: o.dtype === undefined ? undefined : parseDType(o.dtype, fn) };
  }
  const o = opts === undefined ? {} : optionsOf<NormOptions>(opts, fn, NORM_KEYS);
  return { ord: ordArg, axis: axisArg, keepdims: o.keepdims === true, dtype: o.dtype === undefined ? undefined : parseDType(o.dtype, fn) };
}

/** A floating input, and the dtype to compute in (the asked one, which must not narrow the input's). */
function checkInput(x: unknown, asked: DType | undefined, fn: string): [Tensor, DType] {
  const t = checkTensor(x, fn, 'x');
  if (!isFloating(t.dtype)) {
    throw new TypeError(`${fn}: expected a floating-point tensor, got ${describeOperand(t)}; convert it first, e.g. x.astype('float32')`);
  }
  if (asked === undefined) return [t, t.dtype];
  if (!isFloating(asked)) throw new TypeError(`${fn}: dtype must be a floating dtype, got ${asked}`);
  if (promoteTypes(t.dtype, asked) !== asked) {
    throw new TypeError(`${fn}: the input's dtype ${t.dtype} cannot be converted to dtype ${asked} without narrowing`);
  }
  return [t, asked];
}

function checkOrd(ord: unknown, fn: string): number {
  if (typeof ord !== 'number' || Number.isNaN(ord)) {
    throw new TypeError(`${fn}: ord must be a number (Infinity, -Infinity and 0 included), got ${describeOperand(ord)}`);
  }
  return ord;
}

const ordName = (ord: number): string => (ord === Infinity ? 'inf' : ord === -Infinity ? '-inf' : String(ord));

// --- vector norms --------------------------------------------------------------------

/** The vector norm of x (checked) over `dims` (normalized, distinct; all of x's for an all-reduce). */
function vectorNormOf(x: Tensor, ord: number, dims: readonly number[], keepdims: boolean, dtype: DType, fn: string): Tensor {
  const shape = x.shape;
  const outShape = reducedShape(shape, dims, keepdims);
  if (x.numel === 0 && (ord < 0 || ord === Infinity)) {
    for (const d of dims) {
      if (shape[d] === 0) {
        throw new RangeError(`${fn}: the ${ordName(ord)} norm of zero elements is not defined (no identity): input of shape ` +
          `${formatShape(shape)}, axis ${d} is empty`);
      }
    }
  }
  const grad = shouldRecord(x);
  const out = noGrad(() => {
    const src = dtype !== x.dtype ? astypeOp(x, dtype, fn) : x;
    try {
      if (dims.every((d) => shape[d] === 1)) {
        // Every reduced axis has one element (a 0-d input too): |x|, or x != 0 for ord 0, as torch's shortcut.
        using nonzero = ord === 0 ? E.ne(src, 0) : undefined;
        using one = nonzero !== undefined ? astypeOp(nonzero, dtype, fn) : E.abs(src);
        return one.reshape(outShape);
      }
      const r = allocate(outShape, dtype, x.device, undefined, fn);
      try {
        ops.vectorNorm(fn, { self: src.handle(fn), axis: dims, ord, dtype, out: r.handle(fn) });
      } catch (e) {
        r.dispose();
        throw namedForCaller(e, fn);
      }
      return r;
    } finally {
      if (src !== x) src.dispose();
    }
  });
  if (grad) {
    const kept = shape.map((n, d) => (dims.includes(d) ? 1 : n));
    // (The engine brings the gradient back to x's dtype when `dtype` converted it.)
    record('linalg.vectorNorm', [x], out, [x, out], (g, [sx, norm]) => {
      const src = sx.dtype === norm.dtype ? sx : sx.astype(norm.dtype);
      return [vectorNormBackward(src, norm.reshape(kept), g.reshape(kept), ord, dims)];
    });
  }
  return out;
}

/** torch's norm_backward: the gradient of the p-norm `norm` (reshaped to keep x's rank) of x, given g (likewise). */
function vectorNormBackward(x: Tensor, norm: Tensor, g: Tensor, p: number, dims: readonly number[]): Tensor {
  if (p === 0) return full(x.shape as number[], 0, { dtype: x.dtype, device: x.device });
  if (p === 1) return E.mul(E.sign(x), g);
  const safe = (scale: Tensor): Tensor => whereOp(E.eq(norm, 0), 0, scale, 'autograd');
  if (p === 2) return E.mul(x, safe(E.div(g, norm)));
  if (p === Infinity || p === -Infinity) {
    // The elements at the extremum (or NaN) share the gradient.
    const a = E.abs(x);
    const hit = E.logicalOr(E.eq(a, norm), E.ne(a, a)).astype(x.dtype);
    const count = reduceOp(REDUCE.sum, hit, [...dims], { keepdims: true }, 'autograd');
    return E.mul(E.mul(E.sign(x), hit), E.div(g, count));
  }
  const a = E.abs(x);
  if (p < 1) {
    const scaled = whereOp(E.eq(x, 0), 0, E.mul(E.sign(x), E.pow(a, p - 1)), 'autograd');
    return E.mul(scaled, E.mul(g, E.pow(norm, 1 - p)));
  }
  const scale = safe(E.div(g, E.pow(norm, p - 1)));
  if (p < 2) return E.mul(E.mul(E.sign(x), E.pow(a, p - 1)), scale);
  return E.mul(E.mul(x, E.pow(a, p - 2)), scale);
}

/** The axes of a vector norm: all for undefined, null or [] (as torch's dim=None or ()), else each normalized. */
function vectorAxes(axis: unknown, shape: readonly number[], fn: string): number[] {
  const all = shape.map((_, d) => d);
  if (axis === undefined || axis === null) return all;
  if (Array.isArray(axis) && axis.length === 0) return all;
  const dims = normalizeAxisList(axis, shape, fn);
  return shape.length === 0 ? [] : dims;
}

/**
 * The vector norm of x over `axis` (all by default: x as one vector), as
 * torch.linalg.vector_norm: ord any real (default 2), Infinity (max |x|),
 * -Infinity (min |x|) or 0 (the number of nonzero elements). Floating inputs
 * only; `dtype` converts first. Takes ord and axis positionally or in the
 * options.
 * @example
 * gx.linalg.vectorNorm(x)                                  // the 2-norm of all of x
 * gx.linalg.vectorNorm(x, 1, -1, { keepdims: true })       // the 1-norm of each row
 * gx.linalg.vectorNorm(x, { ord: Infinity, axis: [0, 2] })
 */
export function vectorNorm<D extends DType, R extends FloatDType | undefined = undefined>(x: Tensor<D>, ord?: number | VectorNormOptions<NonNullable<R>>,
  axis?: Axes | null, options?: NormOptions<NonNullable<R>>): NormResult<D, R> {
  const fn = 'gx.linalg.vectorNorm';
  if (arguments.length > 4) tooManyArguments(fn, '(x, ord?, axis?, options?)', arguments.length - 4, arguments[4]);
  const a = parseCall(ord, axis, options, fn, VECTOR_KEYS);
  const [t, dtype] = checkInput(x, a.dtype, fn);
  const p = a.ord === undefined ? 2 : checkOrd(a.ord, fn);
  return vectorNormOf(t, p, vectorAxes(a.axis, t.shape, fn), a.keepdims, dtype, fn) as NormResult<D, R>;
}

// --- matrix norms --------------------------------------------------------------------

const MATRIX_ORDS = "'fro', 'nuc', 1, -1, 2, -2, Infinity or -Infinity";

/** The two matrix axes, normalized and distinct. */
function matrixAxes(axis: unknown, shape: readonly number[], fn: string): [number, number] {
  if (shape.length < 2) throw new RangeError(`${fn}: needs a tensor of 2 or more dimensions (a matrix or a batch of them), got ${formatShape(shape)}`);
  if (axis === undefined || axis === null) return [shape.length - 2, shape.length - 1];
  if (!Array.isArray(axis) || axis.length !== 2) {
    throw new TypeError(`${fn}: axis must be two axes [row, column], got ${describeOperand(axis)}`);
  }
  const [d0, d1] = normalizeAxisList(axis, shape, fn);
  return [d0, d1];
}

/** The matrix norm of x (checked, floating) over [d0, d1]. */
function matrixNormOf(x: Tensor, ord: unknown, d0: number, d1: number, keepdims: boolean, dtype: DType, fn: string): Tensor {
  if (ord === 'fro') return vectorNormOf(x, 2, [d0, d1], keepdims, dtype, fn);
  const outShape = reducedShape(x.shape, [d0, d1], keepdims);
  if (ord === 1 || ord === -1 || ord === Infinity || ord === -Infinity) {
    // 1: the largest column sum of |x| (sum over rows, d0, then the max over columns, d1); inf: the rows'.
    const [sumAxis, extAxis] = ord === 1 || ord === -1 ? [d0, d1] : [d1, d0];
    if (x.shape[extAxis] === 0) return extremumOfNothing(ord, outShape, dtype, x, `${extAxis === d1 ? 'columns' : 'rows'}`, fn);
    const src = dtype !== x.dtype ? astypeOp(x, dtype, fn) : x;
    try {
      using a = E.abs(src);
      using s = reduceOp(REDUCE.sum, a, sumAxis, { keepdims: true }, fn);
      using m = reduceOp(ord > 0 ? REDUCE.max : REDUCE.min, s, extAxis, { keepdims: true }, fn);
      return m.reshape(outShape);
    } finally {
      if (src !== x) src.dispose();
    }
  }
  if (ord === 2 || ord === -2 || ord === 'nuc') return singularValueNorm(x, ord, d0, d1, outShape, dtype, fn);
  throw new RangeError(`${fn}: ord must be one of ${MATRIX_ORDS}, got ${describeOperand(ord)}`);
}

/**
 * A matrix norm that is the max (ord > 0) or min (ord < 0) over none of `what`, as torch.linalg.matrix_norm: the
 * max of nonnegative values over nothing is 0 (torch gives zeros, recording no gradient, for 1, inf and 2 when
 * there are no columns, rows or singular values), while a min has no identity and is refused (torch's amin refuses).
 */
function extremumOfNothing(ord: number, outShape: readonly number[], dtype: DType, x: Tensor, what: string, fn: string): Tensor {
  if (ord < 0) {
    throw new RangeError(`${fn}: the ${ordName(ord)} norm of matrices with no ${what} is not defined (a min over nothing; ` +
      `input of shape ${formatShape(x.shape)})`);
  }
  return full(outShape as number[], 0, { dtype, device: x.device });
}

/** The 2, -2 or nuclear norm from each matrix's singular values (one SVD per matrix). */
function singularValueNorm(x: Tensor, ord: 2 | -2 | 'nuc', d0: number, d1: number, outShape: readonly number[], dtype: DType, fn: string): Tensor {
  const batchDims = x.shape.map((_, d) => d).filter((d) => d !== d0 && d !== d1);
  const order = [...batchDims, d0, d1];
  const [m, k] = [x.shape[d0], x.shape[d1]];
  const count = numelOf(batchDims.map((d) => x.shape[d]));
  const r = Math.min(m, k);
  if (r === 0 && ord !== 'nuc') return extremumOfNothing(ord, outShape, dtype, x, 'singular values', fn);
  const grad = shouldRecord(x);
  // The SVD computes in float32 or float64.
  const svdDtype: DType = dtype === 'float64' ? 'float64' : 'float32';
  const parts = noGrad(() => {
    using moved = permute(x, order);
    using mats = moved.reshape([count, m, k]);
    const us: Tensor[] = [], ss: Tensor[] = [], vs: Tensor[] = [];
    try {
      for (let b = 0; b < count && r > 0; b++) {
        using one = mats.sliceDims(b);
        using conv = one.dtype === svdDtype ? undefined : astypeOp(one, svdDtype, fn);
        const res = svd(conv ?? one, { fullMatrices: false });
        ss.push(res.S);
        if (grad) {
          us.push(res.U);
          vs.push(res.Vh);
        } else {
          res.U.dispose();
          res.Vh.dispose();
        }
      }
      const stackOr = (list: Tensor[], shape: number[]): Tensor =>
        (list.length > 0 ? stack(list) : full(shape, 0, { dtype: svdDtype, device: x.device }));
      return { S: stackOr(ss, [count, r]), U: grad ? stackOr(us, [count, m, r]) : undefined, Vh: grad ? stackOr(vs, [count, r, k]) : undefined };
    } catch (e) {
      throw namedForCaller(e instanceof Error && e.message.startsWith('gx.linalg.svd:') ? Object.assign(e, { message: fn + e.message.slice(14) }) : e, fn);
    } finally {
      for (const t of [...us, ...ss, ...vs]) t.dispose();
    }
  });
  const S = parts.S;
  let out: Tensor;
  try {
    out = noGrad(() => {
      using v = ord === 'nuc' ? reduceOp(REDUCE.sum, S, -1, undefined, fn) : reduceOp(ord === 2 ? REDUCE.max : REDUCE.min, S, -1, undefined, fn);
      using c = v.dtype === dtype ? undefined : astypeOp(v, dtype, fn);
      return (c ?? v).reshape(outShape);
    });
  } catch (e) {
    S.dispose();
    parts.U?.dispose();
    parts.Vh?.dispose();
    throw e;
  }
  if (grad) {
    const U = parts.U as Tensor, Vh = parts.Vh as Tensor;
    const movedShape = order.map((d) => x.shape[d]);
    const inverse = order.map((_, i) => order.indexOf(i));
    record('linalg.matrixNorm', [x], out, [U, S, Vh], (g, [u, s, vh]) => {
      // dA = U diag(dS) Vh, with dS = g times 1 (nuc) or the tie-split indicator of the extreme singular value.
      const gb = g.reshape([count, 1]).astype(s.dtype);
      let ds: Tensor;  // [count, 1, r], or [count, 1, 1] for nuc (the same for every singular value)
      if (ord === 'nuc') {
        ds = gb.reshape([count, 1, 1]);
      } else {
        const ext = reduceOp(ord === 2 ? REDUCE.max : REDUCE.min, s, -1, { keepdims: true }, 'autograd');
        const hit = E.eq(s, ext).astype(s.dtype);
        ds = E.mul(E.div(hit, reduceOp(REDUCE.sum, hit, -1, { keepdims: true }, 'autograd')), gb).reshape([count, 1, r]);
      }
      const ga = matmul(E.mul(u, ds), vh);
      return [permute(ga.reshape(movedShape), inverse)];
    });
  }
  S.dispose();
  parts.U?.dispose();
  parts.Vh?.dispose();
  return out;
}

/**
 * The matrix norm of x's matrices (over `axis`, default the last two), as
 * torch.linalg.matrix_norm: ord 'fro' (default), 'nuc' (the sum of the
 * singular values), 2 / -2 (the largest / smallest singular value), 1 / -1
 * (the largest / smallest column sum of |x|), Infinity / -Infinity (row
 * sums). Floating inputs only; `dtype` converts first. Takes ord and axis
 * positionally or in the options.
 * @example
 * gx.linalg.matrixNorm(a)                  // Frobenius, of each matrix of a batch
 * gx.linalg.matrixNorm(a, 'nuc')
 * gx.linalg.matrixNorm(a, { ord: 2, axis: [0, 1], keepdims: true })
 */
export function matrixNorm<D extends DType, R extends FloatDType | undefined = undefined>(x: Tensor<D>, ord?: MatrixNormOrd | MatrixNormOptions<NonNullable<R>>,
  axis?: readonly [number, number], options?: NormOptions<NonNullable<R>>): NormResult<D, R> {
  const fn = 'gx.linalg.matrixNorm';
  if (arguments.length > 4) tooManyArguments(fn, '(x, ord?, axis?, options?)', arguments.length - 4, arguments[4]);
  const a = parseCall(ord, axis, options, fn, MATRIX_KEYS);
  const [t, dtype] = checkInput(x, a.dtype, fn);
  const [d0, d1] = matrixAxes(a.axis, t.shape, fn);
  return matrixNormOf(t, a.ord ?? 'fro', d0, d1, a.keepdims, dtype, fn) as NormResult<D, R>;
}

// --- norm: torch.linalg.norm ---------------------------------------------------------------

/** One axis (a vector norm), two (a matrix norm), or undefined. */
function normAxes(axis: unknown, shape: readonly number[], fn: string): number[] | undefined {
  if (axis === undefined || axis === null) return undefined;
  const list = normalizeAxisList(axis, shape, fn);
  if (list.length < 1 || list.length > 2) {
    throw new RangeError(`${fn}: axis must name one axis (a vector norm) or two (a matrix norm), got ${JSON.stringify(axis)}`);
  }
  return list;
}

/** @internal torch.linalg.norm's dispatch (shared with Tensor.norm's numeric orders). */
function linalgNorm(x: Tensor, ord: unknown, axis: unknown, keepdims: boolean, asked: DType | undefined, fn: string): Tensor {
  const [t, dtype] = checkInput(x, asked, fn);
  const dims = normAxes(axis, t.shape, fn);
  const vector = (dimsOf: number[]): Tensor => {
    if (typeof ord === 'string') {
      throw new RangeError(`${fn}: ord '${ord}' is a matrix norm's; it needs two axes (a 2-d input, or axis [row, column])`);
    }
    return vectorNormOf(t, ord === undefined || ord === null ? 2 : checkOrd(ord, fn), dimsOf, keepdims, dtype, fn);
  };
  if (dims !== undefined) {
    if (dims.length === 1) return vector(t.ndim === 0 ? [] : dims);
    return matrixNormOf(t, ord ?? 'fro', dims[0], dims[1], keepdims, dtype, fn);
  }
  if (ord === undefined || ord === null) return vectorNormOf(t, 2, t.shape.map((_, d) => d), keepdims, dtype, fn);
  if (t.ndim === 1) return vector([0]);
  if (t.ndim === 2) return matrixNormOf(t, ord, 0, 1, keepdims, dtype, fn);
  throw new RangeError(`${fn}: with an ord and no axis the input must be 1-d (a vector norm) or 2-d (a matrix norm), got ` +
    `${formatShape(t.shape)}; name the axes`);
}

/**
 * A vector or matrix norm, as torch.linalg.norm: one axis gives a vector norm
 * (ord default 2), two a matrix norm (ord default 'fro'); with no axis, no
 * ord gives the 2-norm of x as one vector, and an ord asks for a vector norm
 * of a 1-d x or a matrix norm of a 2-d one.
 * @example
 * gx.linalg.norm(x)                       // sqrt of the sum of squares
 * gx.linalg.norm(m, 'nuc')                // a 2-d m: its nuclear norm
 * gx.linalg.norm(x, 1, -1)                // the 1-norm of each row
 * gx.linalg.norm(x, null, [0, 1], { keepdims: true })
 */
export function norm<D extends DType, R extends FloatDType | undefined = undefined>(x: Tensor<D>, ord?: MatrixNormOrd | null | LinalgNormOptions<NonNullable<R>>,
  axis?: Axes | null, options?: NormOptions<NonNullable<R>>): NormResult<D, R> {
  const fn = 'gx.linalg.norm';
  if (arguments.length > 4) tooManyArguments(fn, '(x, ord?, axis?, options?)', arguments.length - 4, arguments[4]);
  const a = parseCall(ord, axis, options, fn, LINALG_KEYS);
  return linalgNorm(x, a.ord, a.axis, a.keepdims, a.dtype, fn) as NormResult<D, R>;
}

/**
 * @internal torch's Tensor.norm(p = 'fro', dim, keepdim, dtype): a number p is
 * a vector norm over any axes; 'fro' the vector 2-norm over all axes, one or
 * two; 'nuc' the nuclear norm of a matrix (a 2-d input, or two axes).
 */
export function tensorNorm(x: Tensor, p: unknown, axis: unknown, options: unknown, fn: string): Tensor {
  const o = options === undefined ? {} : optionsOf<NormOptions>(options, fn, NORM_KEYS);
  const asked = o.dtype === undefined ? undefined : parseDType(o.dtype, fn);
  const keepdims = o.keepdims === true;
  const [t, dtype] = checkInput(x, asked, fn);
  const ord = p === undefined || p === null ? 'fro' : p;
  if (ord === 'nuc') {
    if (axis === undefined || axis === null) {
      if (t.ndim !== 2) throw new RangeError(`${fn}: the nuclear norm without axes needs a 2-d input, got ${formatShape(t.shape)}`);
      return matrixNormOf(t, 'nuc', 0, 1, keepdims, dtype, fn);
    }
    const [d0, d1] = matrixAxes(axis, t.shape, fn);
    return matrixNormOf(t, 'nuc', d0, d1, keepdims, dtype, fn);
  }
  if (ord === 'fro') {
    const dims = vectorAxes(axis, t.shape, fn);
    if (axis !== undefined && axis !== null && dims.length > 2) {
      throw new RangeError(`${fn}: the Frobenius norm takes one or two axes, got ${JSON.stringify(axis)}`);
    }
    return vectorNormOf(t, 2, dims, keepdims, dtype, fn);
  }
  if (typeof ord === 'string') throw new RangeError(`${fn}: p must be a number, 'fro' or 'nuc', got '${ord}'`);
  return vectorNormOf(t, checkOrd(ord, fn), vectorAxes(axis, t.shape, fn), keepdims, dtype, fn);
}
