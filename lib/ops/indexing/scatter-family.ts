// The scatter family beyond scatter and scatterAdd (./indexing.ts), as
// PyTorch has it: scatterReduce, indexAdd (writes into a copy, or in place),
// maskedSelect and nonzero (results whose size the data decides), bincount
// and histc (histograms). The kernels are in ops/index/ (scatter_reduce,
// nonzero, histogram); Tensor methods in ./methods.ts.
//
// Syncs on CUDA, as in torch: nonzero and maskedSelect read the count back
// before allocating their result; bincount reads the input's min and max
// (one read), histc the data's range when it is to find it (min == max).
// Out of range index values are errors naming the value, the dimension and
// its size (a sync per call, as gather's).
//
// Gradients (floating inputs): indexAdd passes g to self and g picked at
// index (times alpha) to source; maskedSelect scatters g back to the kept
// places; scatterReduce has torch's for every reduction ('amax', 'amin' and
// 'prod' in ./scatter-reduce-backward.ts); histc has none and refuses an input
// that requires grad, as torch's backward does.
import { allocate } from '../creation/creation';
import { derivativeNotImplemented } from '../../tape/graph';
import { record, shouldRecord } from '../../tape/graph';
import { INTEGER_RANGE, type DType, type IntegerDType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { booleanOption, optionKeys, tooManyArguments } from '../../core/options';
import { broadcastShapes as broadcastShapeList, describeValue, formatShape } from '../../core/shape';
import { copyValues, Tensor } from '../../core/tensor';
import { checkTensor, commonDevice, computeResult, describeOperand, optionsOf } from '../common';
import { astypeOp, BINARY, binaryOp, whereOp } from '../elementwise/elementwise';
import { axisOf, checkIndex, gatherRaw, padTo, SCATTER_ADD, SCATTER_ASSIGN, scatterArgs, scatterRaw } from './indexing';
import { sliceDims } from '../layout/layout';
import { namedForCaller } from '../library';
import { isFloating } from '../promotion';
import { REDUCE, reduceOp } from '../reduce/reduction';
import { scatterExtremumBackward, scatterProdBackward } from './scatter-reduce-backward';

// --- scatterReduce ------------------------------------------------------------------

/** How scatterReduce combines: torch.scatter_reduce's reductions. */
export type ScatterReduction = 'sum' | 'prod' | 'mean' | 'amax' | 'amin';

export interface ScatterReduceOptions {
  /** Whether self's own values take part (default true, as torch); false: the scattered places get src's reduction alone. */
  includeSelf?: boolean;
}
const SCATTER_REDUCE_KEYS = optionKeys<ScatterReduceOptions>({ includeSelf: true });

// ops/op-list.js scatter_reduce's codes (mean sums, then divides).
const REDUCE_CODE: Record<ScatterReduction, number> = { sum: 0, prod: 1, mean: 0, amax: 2, amin: 3 };
/** The integer 'mean''s division: rounding down, as torch's. */
const FLOOR = { roundingMode: 'floor' } as const;

/** The value a reduction starts from (the scattered places of includeSelf: false). */
function identity(reduce: ScatterReduction, dtype: DType): number | bigint {
  if (reduce === 'sum' || reduce === 'mean') return 0;
  if (reduce === 'prod') return 1;
  const range: readonly [bigint, bigint] | undefined = INTEGER_RANGE[dtype as IntegerDType];
  if (range === undefined) return reduce === 'amax' ? -Infinity : Infinity;
  return reduce === 'amax' ? range[0] : range[1];
}

function checkReduction(v: unknown, fn: string): ScatterReduction {
  if (v === 'sum' || v === 'prod' || v === 'mean' || v === 'amax' || v === 'amin') return v;
  throw new TypeError(`${fn}: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got ${describeValue(v)}`);
}

/** The options of scatterReduce: includeSelf, a boolean (default true). */
function includeSelfOf(opts: unknown, fn: string): boolean {
  const o = optionsOf<ScatterReduceOptions>(opts, fn, SCATTER_REDUCE_KEYS);
  return booleanOption(fn, 'includeSelf', o.includeSelf, true);
}

/**
 * Reduces src into r (which holds self's values) along axis at index; for
 * 'mean' returns the counts (self's shape and dtype, zero counts made 1) when
 * `keepCounts`, and `touched` (where any src went) when includeSelf is false.
 */
function scatterReduceInto(r: Tensor, axis: number, index: Tensor, src: Tensor, reduce: ScatterReduction, includeSelf: boolean,
  fn: string, keepCounts = false): { counts?: Tensor; touched?: Tensor } {
  const handle = r.handle(fn), idx = index.handle(fn);
  if (!includeSelf) {
    // The scattered places start from the reduction's identity.
    const start = allocate(index.shape, r.dtype, r.device, undefined, fn).fill_(identity(reduce, r.dtype));
    try {
      ops.scatter(fn, { self: handle, axis, index: idx, src: start.handle(fn), reduce: SCATTER_ASSIGN });
    } finally {
      start.dispose();
    }
  }
  ops.scatterReduce(fn, { self: handle, axis, index: idx, src: src.handle(fn), reduce: REDUCE_CODE[reduce] });
  if (reduce !== 'mean') return {};
  // mean: divide by how many values each place got (self's counting as one).
  const counts = allocate(r.shape, r.dtype, r.device, undefined, fn).fill_(includeSelf ? 1 : 0);
  let touched: Tensor | undefined;
  try {
    const ones = allocate(index.shape, r.dtype, r.device, undefined, fn).fill_(1);
    try {
      ops.scatter(fn, { self: counts.handle(fn), axis, index: idx, src: ones.handle(fn), reduce: SCATTER_ADD });
    } finally {
      ones.dispose();
    }
    if (keepCounts && !includeSelf) touched = binaryOp(BINARY.ne, counts, 0, fn);
    const zero = binaryOp(BINARY.eq, counts, 0, fn);
    try {
      whereOp(zero, 1, counts, fn, { out: counts });
    } finally {
      zero.dispose();
    }
    // Integers divide rounding down in their dtype, exactly, as torch's sum.div_(count, rounding_mode='floor').
    binaryOp(BINARY.div, r, counts, fn, isFloating(r.dtype) ? undefined : FLOOR, true);
  } catch (e) {
    counts.dispose();
    touched?.dispose();
    throw e;
  }
  if (keepCounts) return { counts, touched };
  counts.dispose();
  return {};
}

/** @internal scatterReduce and its in-place form. */
export function scatterReduceImpl(a: unknown, axisArg: unknown, indexArg: unknown, srcArg: unknown, reduceArg: unknown, opts: unknown,
  inplace: boolean, fn: string): Tensor {
  const reduce = checkReduction(reduceArg, fn);
  const includeSelf = includeSelfOf(opts, fn);
  const { x, axis, index, src, srcGiven, dispose } = scatterArgs(a, axisArg, indexArg, srcArg, fn);
  try {
    if (x.dtype === 'bool') throw new TypeError(`${fn}: bool tensors are not supported; convert with .astype('uint8') first`);
    if (inplace) {
      const outOfPlace = (self: Tensor): Tensor => scatterReduceImpl(self, axisArg, indexArg, srcArg, reduceArg, opts, false, fn);
      return computeResult(x.shape, x.dtype, x.device, fn, { inplace: x, inputs: [index, src], elementwise: false, outOfPlace }, (r) => {
        if (r !== x) copyValues(r, x, fn);
        scatterReduceInto(r, axis, index, src, reduce, includeSelf, fn);
      });
    }
    const recording = shouldRecord(x, srcGiven);
    const r = allocate(x.shape, x.dtype, x.device, undefined, fn);
    let saved: { counts?: Tensor; touched?: Tensor } = {};
    try {
      copyValues(r, x, fn);
      saved = scatterReduceInto(r, axis, index, src, reduce, includeSelf, fn, recording);
    } catch (e) {
      r.dispose();
      throw namedForCaller(e, fn);
    }
    if (recording && (reduce === 'sum' || reduce === 'mean')) recordScatterReduce(x, srcGiven, r, axis, index, src.shape, reduce, includeSelf, saved);
    else if (recording) recordScatterSelect(x, srcGiven, src, r, axis, index, reduce, includeSelf);
    saved.counts?.dispose();
    saved.touched?.dispose();
    return r;
  } finally {
    dispose();
  }
}

function recordScatterReduce(x: Tensor, srcGiven: unknown, out: Tensor, axis: number, index: Tensor, srcShape: readonly number[],
  reduce: ScatterReduction, includeSelf: boolean, s: { counts?: Tensor; touched?: Tensor }): void {
  const save = [index, ...(s.counts !== undefined ? [s.counts] : []), ...(s.touched !== undefined ? [s.touched] : [])];
  record('scatterReduce', [x, srcGiven], out, save, (g, saved) => {
    const [idx, counts, touched] = saved;
    const fn = 'autograd';
    // The gradient that reached each place, per value that went into it.
    const share = counts !== undefined ? binaryOp(BINARY.div, g, counts, fn) : g;
    try {
      let gx: Tensor;
      if (includeSelf) gx = share === g ? g : share.clone();
      else if (touched !== undefined) gx = whereOp(touched, 0, g, fn);
      else {
        const zeros = allocate(idx.shape, g.dtype, g.device, undefined, fn).fill_(0);
        gx = scatterRaw(g, axis, idx, zeros, SCATTER_ASSIGN, fn);
        zeros.dispose();
      }
      const gs = srcGiven instanceof Tensor ? padTo(gatherRaw(share, axis, idx, false, fn), srcShape) : null;
      return [gx, gs];
    } finally {
      if (share !== g) share.dispose();
    }
  });
}

/** Records amax, amin and prod (./scatter-reduce-backward.ts), saving self, the part of src read, index and the result. */
function recordScatterSelect(x: Tensor, srcGiven: unknown, src: Tensor, out: Tensor, axis: number, index: Tensor,
  reduce: ScatterReduction, includeSelf: boolean): void {
  const srcShape = src.shape.slice();
  using read = sliceDims(src, ...index.shape.map((n): [number, number] => [0, n]));
  record('scatterReduce', [x, srcGiven], out, [x, read, index, out], (g, [sx, ss, idx, r]) => {
    const reduceCopy = (self: Tensor, s: Tensor): Tensor => {
      const c = self.clone();
      scatterReduceInto(c, axis, idx, s, reduce, includeSelf, 'autograd');
      return c;
    };
    const [gSelf, gSrc] = reduce === 'prod' ? scatterProdBackward(g, sx, ss, idx, r, axis, includeSelf, reduceCopy)
      : scatterExtremumBackward(g, sx, ss, idx, r, axis, includeSelf);
    return [gSelf, srcGiven instanceof Tensor ? padTo(gSrc, srcShape) : null];
  });
}

/**
 * A copy of x with src's values reduced into it at `index` along `axis`, as
 * torch.scatter_reduce: out[i][index[i][j]] = reduce(out[i][index[i][j]],
 * src[i][j]) for axis 1, reduce 'sum', 'prod', 'mean', 'amax' or 'amin' (NaN
 * propagates through the max and min). With `includeSelf: false` the places
 * src goes to start from src's values alone; 'mean' divides by the count
 * (integers rounding down, exactly at any size, as torch's). Index and src
 * as for scatter. CUDA combines with atomics (compare-and-swap loops for
 * products, float max and min, 8- and 16-bit dtypes), so float sums and
 * products may differ in the last bits from run to run; the CPU goes in C
 * order of index.
 * @example gx.scatterReduce(gx.zeros([3]), 0, idx, src, 'amax', { includeSelf: false })
 */
export function scatterReduce<D extends DType>(x: Tensor<D>, axis: number, index: Tensor, src: Tensor<D> | number,
  reduce: ScatterReduction, opts?: ScatterReduceOptions): Tensor<D> {
  if (arguments.length > 6) tooManyArguments('gx.scatterReduce', '(x, axis, index, src, reduce, options?)', arguments.length - 6, arguments[6]);
  return scatterReduceImpl(x, axis, index, src, reduce, opts, false, 'gx.scatterReduce') as Tensor<D>;
}

// --- indexAdd -------------------------------------------------------------------------

export interface IndexAddOptions {
  /** A factor for source (default 1; an integer for integer tensors). */
  alpha?: number;
}
const INDEX_ADD_KEYS = optionKeys<IndexAddOptions>({ alpha: true });

/** @internal indexAdd and its in-place form. */
export function indexAddImpl(a: unknown, axisArg: unknown, indexArg: unknown, sourceArg: unknown, opts: unknown, inplace: boolean, fn: string): Tensor {
  const o = optionsOf<IndexAddOptions>(opts, fn, INDEX_ADD_KEYS);
  const x = checkTensor(a, fn, 'self');
  const index = checkIndex(indexArg, fn);
  const source = checkTensor(sourceArg, fn, 'source');
  commonDevice([x, index, source], ['self', 'index', 'source'], fn);
  const axis = axisOf(axisArg, x, fn);
  if (index.shape.length > 1) throw new Error(`${fn}: index must be 0-d or 1-d, got shape ${formatShape(index.shape)}`);
  if (source.dtype !== x.dtype) {
    throw new TypeError(`${fn}: source (${describeOperand(source)}) must have self's dtype ${x.dtype}; convert it with .astype('${x.dtype}')`);
  }
  const alpha = o.alpha ?? 1;
  if (typeof alpha !== 'number' || Number.isNaN(alpha)) throw new TypeError(`${fn}: alpha must be a number, got ${describeValue(alpha)}`);
  if (!isFloating(x.dtype) && !Number.isInteger(alpha)) {
    throw new TypeError(`${fn}: alpha must be an integer for ${x.dtype} tensors, got ${alpha}`);
  }
  const want = x.shape.map((s, d) => (d === axis ? index.numel : s));
  if (source.shape.length !== x.shape.length || source.shape.some((s, d) => s !== want[d])) {
    throw new Error(`${fn}: source has shape ${formatShape(source.shape)} but self of shape ${formatShape(x.shape)} with an index of ` +
      `${index.numel} needs ${formatShape(want)}`);
  }
  // index along axis, stride 0 elsewhere: the scatter kernel adds source[..., j, ...] at index[j].
  const spread = index.asStrided(source.shape, source.shape.map((_, d) => (d === axis && index.shape.length === 1 ? index.strides[0] : 0)),
    index.storageOffset);
  const scaled = alpha === 1 ? source : binaryOp(BINARY.mul, source, alpha, fn);
  try {
    if (inplace) {
      const outOfPlace = (self: Tensor): Tensor => indexAddImpl(self, axisArg, indexArg, sourceArg, opts, false, fn);
      return computeResult(x.shape, x.dtype, x.device, fn, { inplace: x, inputs: [index, source], elementwise: false, outOfPlace }, (r) => {
        if (r !== x) copyValues(r, x, fn);
        ops.scatter(fn, { self: r.handle(fn), axis, index: spread.handle(fn), src: scaled.handle(fn), reduce: SCATTER_ADD });
      });
    }
    const out = scatterRaw(x, axis, spread, scaled, SCATTER_ADD, fn);
    if (shouldRecord(x, source)) {
      record('indexAdd', [x, source], out, [spread], (g, s) => {
        const picked = gatherRaw(g, axis, s[0], false, 'autograd');
        if (alpha === 1) return [g, picked];
        const r = binaryOp(BINARY.mul, picked, alpha, 'autograd');
        picked.dispose();
        return [g, r];
      });
    }
    return out;
  } finally {
    spread.dispose();
    if (scaled !== source) scaled.dispose();
  }
}

/**
 * A copy of x with alpha * source added at `index` (0-d or 1-d) along
 * `axis`, as torch.index_add: out[..., index[j], ...] += alpha * source[...,
 * j, ...]. source has x's shape except along axis, where it has index.numel
 * elements; repeated indices add up (atomics on CUDA, any order).
 * @example gx.indexAdd(gx.zeros([3, 2]), 0, gx.tensor([2, 0, 2], { dtype: 'int64' }), gx.ones([3, 2])) // rows [1, 0, 2]
 */
export function indexAdd<D extends DType>(x: Tensor<D>, axis: number, index: Tensor, source: Tensor<D>, opts?: IndexAddOptions): Tensor<D> {
  if (arguments.length > 5) tooManyArguments('gx.indexAdd', '(x, axis, index, source, options?)', arguments.length - 5, arguments[5]);
  return indexAddImpl(x, axis, index, source, opts, false, 'gx.indexAdd') as Tensor<D>;
}

// --- maskedSelect, nonzero -------------------------------------------------------------

/** t viewed with `shape` (NumPy broadcasting, stride 0 where t has size 1 or no dimension); t itself when it has it. */
function broadcastView(t: Tensor, shape: readonly number[]): Tensor {
  if (t.shape.length === shape.length && t.shape.every((s, d) => s === shape[d])) return t;
  const lead = shape.length - t.shape.length;
  return t.asStrided(shape, shape.map((_, d) => (d < lead || t.shape[d - lead] === 1 ? 0 : t.strides[d - lead])), t.storageOffset);
}

/** @internal The indices of x's nonzero elements, int64 [n, ndim]; no autograd. */
export function nonzeroRaw(x: Tensor, fn: string): Tensor {
  return new Tensor(ops.nonzero(fn, { self: x.handle(fn) }));
}

/** @internal maskedSelect without the argument checks: mask is bool, on x's device; broadcasting and autograd here. */
export function maskedSelectRaw(x: Tensor, mask: Tensor, fn: string): Tensor {
  const shape = broadcastShapeList([x.shape, mask.shape], fn);
  const xs = broadcastView(x, shape), ms = broadcastView(mask, shape);
  let out: Tensor;
  try {
    out = new Tensor(ops.maskedSelect(fn, { self: xs.handle(fn), mask: ms.handle(fn) }));
  } catch (e) {
    throw namedForCaller(e, fn);
  } finally {
    if (xs !== x) xs.dispose();
  }
  try {
    if (shouldRecord(x)) {
      const dtype = x.dtype, device = x.device, numel = shape.reduce((p, s) => p * s, 1);
      record('maskedSelect', [x], out, [ms], (g, s) => {
        // g back at the kept places of the broadcast shape; the engine sums it down to x's shape.
        const flat = s[0].reshape([numel]);
        const nz = nonzeroRaw(flat, 'autograd');
        const idx = nz.reshape([nz.shape[0]]);
        const z = allocate([numel], dtype, device, undefined, 'autograd').fill_(0);
        ops.scatter('autograd', { self: z.handle('autograd'), axis: 0, index: idx.handle('autograd'), src: g.handle('autograd'), reduce: SCATTER_ASSIGN });
        for (const t of [flat, nz, idx]) if (t !== s[0]) t.dispose();
        const r = z.reshape(shape);
        if (r !== z) z.dispose();
        return [r];
      });
    }
  } finally {
    if (ms !== mask) ms.dispose();
  }
  return out;
}

/** @internal */
export function maskedSelectImpl(a: unknown, maskArg: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const mask = checkTensor(maskArg, fn, 'mask');
  if (mask.dtype !== 'bool') throw new TypeError(`${fn}: mask must be a bool tensor, got ${describeOperand(mask)}`);
  commonDevice([x, mask], ['self', 'mask'], fn);
  return maskedSelectRaw(x, mask, fn);
}

/**
 * x's elements where `mask` (bool; x and mask broadcast together) is true,
 * as a new 1-d tensor in C order, as torch.masked_select. On CUDA the count
 * is read back before the result is allocated (one sync).
 * @example gx.maskedSelect(x, x.gt(0)) // the positive elements
 */
export function maskedSelect<D extends DType>(x: Tensor<D>, mask: Tensor): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.maskedSelect', '(x, mask)', arguments.length - 2, arguments[2]);
  return maskedSelectImpl(x, mask, 'gx.maskedSelect') as Tensor<D>;
}

export interface NonzeroOptions {
  /** Give one 1-d int64 tensor per dimension (torch's as_tuple) instead of one [n, ndim] tensor. */
  asTuple?: boolean;
}
const NONZERO_KEYS = optionKeys<NonzeroOptions>({ asTuple: true });

/** @internal */
export function nonzeroImpl(a: unknown, opts: unknown, fn: string): Tensor | Tensor[] {
  const o = optionsOf<NonzeroOptions>(opts, fn, NONZERO_KEYS);
  const x = checkTensor(a, fn, 'self');
  const asTuple = booleanOption(fn, 'asTuple', o.asTuple, false);
  let nz: Tensor;
  try {
    nz = nonzeroRaw(x, fn);
  } catch (e) {
    throw namedForCaller(e, fn);
  }
  if (!asTuple) return nz;
  const [n, ndim] = nz.shape;
  if (ndim === 0) {
    nz.dispose();
    return [allocate([n], 'int64', x.device, undefined, fn).fill_(0)];
  }
  const cols = Array.from({ length: ndim }, (_, j) => nz.asStrided([n], [ndim], nz.storageOffset + j));
  nz.dispose();
  return cols;
}

/**
 * The indices of x's nonzero elements (NaN counts as nonzero), as
 * torch.nonzero: an int64 tensor [n, ndim], one row per element in C order;
 * with `{ asTuple: true }` one 1-d int64 tensor per dimension (ready to
 * index with: `x.index(...gx.nonzero(m, { asTuple: true }))`). On CUDA the
 * count is read back before the result is allocated (one sync).
 * @example gx.nonzero(gx.tensor([[0, 1], [2, 0]])) // [[0, 1], [1, 0]]
 */
export function nonzero(x: Tensor, opts: NonzeroOptions & { asTuple: true }): Tensor<'int64'>[];
export function nonzero(x: Tensor, opts?: NonzeroOptions & { asTuple?: false }): Tensor<'int64'>;
export function nonzero(x: Tensor, opts?: NonzeroOptions): Tensor<'int64'> | Tensor<'int64'>[];
export function nonzero(x: Tensor, opts?: NonzeroOptions): Tensor<'int64'> | Tensor<'int64'>[] {
  if (arguments.length > 2) tooManyArguments('gx.nonzero', '(x, options?)', arguments.length - 2, arguments[2]);
  return nonzeroImpl(x, opts, 'gx.nonzero') as Tensor<'int64'> | Tensor<'int64'>[];
}

// --- bincount, histc --------------------------------------------------------------------

export interface BincountOptions {
  /** One weight per element (1-d, x's length): out[v] sums the weights of the elements equal to v. float32 weights give float32, others float64. */
  weights?: Tensor;
  /** The least length of the result (default 0). */
  minlength?: number;
}
const BINCOUNT_KEYS = optionKeys<BincountOptions>({ weights: true, minlength: true });

const COUNTABLE = new Set<DType>(['int8', 'int16', 'int32', 'int64', 'uint8']);

/** The values of a 0-d tensor pair [min, max], read in one go (one sync on CUDA). */
function rangeOf(x: Tensor, fn: string): [number, number] {
  const lo = reduceOp(REDUCE.min, x, undefined, undefined, fn), hi = reduceOp(REDUCE.max, x, undefined, undefined, fn);
  const both = allocate([2], x.dtype, x.device, undefined, fn);
  try {
    const v0 = both.asStrided([], [], both.storageOffset), v1 = both.asStrided([], [], both.storageOffset + 1);
    copyValues(v0, lo, fn);
    copyValues(v1, hi, fn);
    v0.dispose();
    v1.dispose();
    const host = both.toArraySync() as ArrayLike<number | bigint>;
    return [Number(host[0]), Number(host[1])];
  } finally {
    lo.dispose();
    hi.dispose();
    both.dispose();
  }
}

/** x as a contiguous 1-d tensor (itself when it is one). */
function flatContiguous(x: Tensor): Tensor {
  if (x.isContiguous()) return x.shape.length === 1 ? x : x.reshape([x.numel]);
  const c = x.contiguous();
  const flat = c.reshape([x.numel]);
  c.dispose();
  return flat;
}

/** @internal */
export function bincountImpl(a: unknown, opts: unknown, fn: string): Tensor {
  const o = optionsOf<BincountOptions>(opts, fn, BINCOUNT_KEYS);
  const x = checkTensor(a, fn, 'self');
  derivativeNotImplemented(fn, o.weights);
  if (x.shape.length !== 1 || !COUNTABLE.has(x.dtype)) {
    throw new TypeError(`${fn}: self must be a 1-d tensor of non-negative integers (int8, int16, int32, int64 or uint8), got ${describeOperand(x)}`);
  }
  const minlength = o.minlength ?? 0;
  if (typeof minlength !== 'number' || !Number.isSafeInteger(minlength) || minlength < 0) {
    throw new RangeError(`${fn}: minlength must be a non-negative integer, got ${describeValue(minlength)}`);
  }
  const w = o.weights === undefined || o.weights === null ? undefined : checkTensor(o.weights, fn, 'weights');
  if (w !== undefined) {
    commonDevice([x, w], ['self', 'weights'], fn);
    if (w.shape.length !== 1 || w.shape[0] !== x.shape[0]) {
      throw new Error(`${fn}: weights must be 1-d with self's length ${x.shape[0]}, got shape ${formatShape(w.shape)}`);
    }
    if (w.dtype === 'bool') throw new TypeError(`${fn}: weights must be numeric, got ${describeOperand(w)}`);
  }
  let length = minlength;
  if (x.numel > 0) {
    const [lo, hi] = rangeOf(x, fn);
    if (lo < 0) throw new RangeError(`${fn}: self must hold non-negative integers, got ${lo}`);
    length = Math.max(hi + 1, minlength);
  }
  const dtype: DType = w === undefined ? 'int64' : w.dtype === 'float32' ? 'float32' : 'float64';
  const out = allocate([length], dtype, x.device, undefined, fn).fill_(0);
  const xs = flatContiguous(x);
  const ws = w === undefined ? undefined : w.dtype === dtype && w.isContiguous() ? w : astypeOp(w, dtype, fn);
  try {
    ops.bincount(fn, { self: xs.handle(fn), weights: ws === undefined ? null : ws.handle(fn), out: out.handle(fn) });
  } catch (e) {
    out.dispose();
    throw namedForCaller(e, fn);
  } finally {
    if (xs !== x) xs.dispose();
    if (ws !== undefined && ws !== w) ws.dispose();
  }
  return out;
}

/**
 * How often each non-negative integer occurs in the 1-d integer tensor x,
 * as torch.bincount: out[v] counts the elements equal to v (int64), or sums
 * their `weights` (float32 for float32 weights, else float64); the length is
 * max(x) + 1, at least `minlength`. Reads x's range first (one sync on CUDA);
 * CUDA counts with per-block bins in shared memory when they fit.
 * @example gx.bincount(gx.tensor([1, 1, 3], { dtype: 'int64' })) // [0, 2, 0, 1]
 */
export function bincount(x: Tensor, opts?: BincountOptions): Tensor {
  if (arguments.length > 2) tooManyArguments('gx.bincount', '(x, { weights?, minlength? })', arguments.length - 2, arguments[2]);  // torch's positional minlength was dropped
  return bincountImpl(x, opts, 'gx.bincount');
}

export interface HistcOptions {
  /** How many equal bins (default 100). */
  bins?: number;
  /** The range [min, max] (default 0, 0): min == max means the data's own range. */
  min?: number;
  max?: number;
}
const HISTC_KEYS = optionKeys<HistcOptions>({ bins: true, min: true, max: true });

/** @internal */
export function histcImpl(a: unknown, opts: unknown, fn: string): Tensor {
  const o = optionsOf<HistcOptions>(opts, fn, HISTC_KEYS);
  const x = checkTensor(a, fn, 'self');
  derivativeNotImplemented(fn, x);
  if (x.dtype === 'bool') throw new TypeError(`${fn}: self must be numeric, got ${describeOperand(x)}`);
  const bins = o.bins ?? 100;
  if (typeof bins !== 'number' || !Number.isSafeInteger(bins) || bins < 1) throw new RangeError(`${fn}: bins must be a positive integer, got ${describeValue(bins)}`);
  const num = (v: unknown, name: string): number => {
    if (v === undefined) return 0;
    if (typeof v !== 'number' || Number.isNaN(v)) throw new TypeError(`${fn}: ${name} must be a number, got ${describeValue(v)}`);
    return v;
  };
  let lo = num(o.min, 'min'), hi = num(o.max, 'max');
  if (lo > hi) throw new RangeError(`${fn}: max must be larger than min, got min ${lo} and max ${hi}`);
  if (lo === hi && x.numel > 0) [lo, hi] = rangeOf(x, fn);  // the data's range, as torch
  if (lo === hi) {
    lo -= 1;
    hi += 1;
  }
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) throw new RangeError(`${fn}: range of [${lo}, ${hi}] is not finite`);
  const counts = allocate([bins], 'int64', x.device, undefined, fn).fill_(0);
  const xs = flatContiguous(x);
  try {
    ops.histc(fn, { self: xs.handle(fn), min: lo, max: hi, out: counts.handle(fn) });
  } catch (e) {
    counts.dispose();
    throw namedForCaller(e, fn);
  } finally {
    if (xs !== x) xs.dispose();
  }
  if (x.dtype === 'int64') return counts;
  const out = astypeOp(counts, x.dtype, fn);
  counts.dispose();
  return out;
}

/**
 * A histogram of x's elements in `bins` equal bins over [min, max], as
 * torch.histc: the result has x's dtype; min == max (the default 0, 0)
 * means the data's smallest and largest (read back: a sync); elements
 * outside the range and NaN are left out, the top edge goes in the last bin.
 * CUDA counts with per-block bins in shared memory when they fit, else
 * global atomics.
 * @example gx.histc(x, { bins: 4, min: 0, max: 4 })
 */
export function histc<D extends DType>(x: Tensor<D>, opts?: HistcOptions): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.histc', '(x, options?)', arguments.length - 2, arguments[2]);
  return histcImpl(x, opts, 'gx.histc') as Tensor<D>;
}
