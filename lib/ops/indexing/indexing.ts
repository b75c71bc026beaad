// Indexing by tensors, as PyTorch has it: gather, indexSelect, take (reads),
// scatter, scatterAdd (writes into a copy of the input), maskedFill. The
// kernels are in ops/index/ (NOTE [ Walking an index ] there).
//
// Index tensors are int64 (as torch requires) or int32 (accepted too: no
// conversion is made). gather, indexSelect and scatter take values in
// [0, size) of the indexed axis; take, like torch.take, also takes
// [-numel, numel) counting from the end. A value out of range is an Error
// naming the op, the value, the axis and its size; on CUDA finding it costs a
// sync per call. indexSelect is gather with its 1-d index broadcast (a view)
// to the result's shape, so both run the same kernel.
//
// Gradients (floating inputs): gather, indexSelect and take send the
// gradient back with scatterAdd; scatterAdd passes it to self and gathers it
// for src; scatter passes it to self with the scattered positions zeroed and
// gathers it for src; maskedFill is where's.
import { allocate } from '../creation/creation';
import { record, shouldRecord } from '../../tape/graph';
import type { DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { describeValue, formatShape } from '../../core/shape';
import { copyValues, Tensor } from '../../core/tensor';
import { normalizeAxis } from '../axes';
import { checkOperand, checkTensor, commonDevice, computeResult, describeOperand, optionsOf } from '../common';
import { optionKeys, tooManyArguments } from '../../core/options';
import { astypeOp, whereOp } from '../elementwise/elementwise';
import { sliceDims } from '../layout/layout';
import { namedForCaller } from '../library';

const SCATTER_ASSIGN = 0;
const SCATTER_ADD = 1;

/** @internal The index argument: an int64 or int32 tensor. */
export function checkIndex(v: unknown, fn: string, name = 'index'): Tensor {
  const t = checkTensor(v, fn, name);
  if (t.dtype !== 'int64' && t.dtype !== 'int32') {
    throw new TypeError(`${fn}: ${name} must be an int64 or int32 tensor, got ${describeOperand(t)}`);
  }
  return t;
}

/** @internal The axis of x (0 for a 0-d x, as torch). */
export function axisOf(axis: unknown, x: Tensor, fn: string): number {
  return normalizeAxis(axis, x.shape.length === 0 ? [1] : x.shape, fn);
}

/**
 * torch's shape rule for gather and scatter: index has x's rank (0-d and 1-d
 * count alike), and no dimension of index exceeds x's (other than axis) or
 * `walked`'s (every dimension; scatter's src).
 */
function checkIndexShape(x: Tensor, axis: number, index: Tensor, fn: string, walked?: { t: Tensor; name: string }): void {
  const rank = (t: Tensor) => Math.max(t.shape.length, 1);
  const bad = (what: string) => new Error(`${fn}: index of shape ${formatShape(index.shape)} ${what}`);
  if (rank(index) !== rank(x)) throw bad(`must have as many dimensions as self (shape ${formatShape(x.shape)})`);
  if (walked !== undefined && rank(walked.t) !== rank(x)) {
    throw new Error(`${fn}: ${walked.name} of shape ${formatShape(walked.t.shape)} must have as many dimensions as ` +
      `self (shape ${formatShape(x.shape)})`);
  }
  for (let d = 0; d < index.shape.length; d++) {
    const n = index.shape[d];
    if (d !== axis && n > (x.shape[d] ?? 1)) {
      throw bad(`is larger than self (shape ${formatShape(x.shape)}) in dimension ${d}`);
    }
    if (walked !== undefined && n > (walked.t.shape[d] ?? 1)) {
      throw bad(`is larger than ${walked.name} (shape ${formatShape(walked.t.shape)}) in dimension ${d}`);
    }
  }
}

/** index with x's rank (0-d beside 1-d or the other way round, as torch allows), a view; the caller disposes it when new. */
function matchRank(t: Tensor, x: Tensor): Tensor {
  if (t.shape.length === x.shape.length) return t;
  return t.reshape(x.shape.length === 0 ? [] : [t.numel]);
}

/** @internal gather without autograd: out (index's shape, x's dtype) = x[..., index[...], ...] along axis. */
export function gatherRaw(x: Tensor, axis: number, index: Tensor, wrap: boolean, fn: string): Tensor {
  return computeResult(index.shape, x.dtype, x.device, fn, { inputs: [x, index], elementwise: false },
    (r) => ops.gather(fn, { self: x.handle(fn), axis, index: index.handle(fn), wrap, out: r.handle(fn) }));
}

/** @internal A copy of x with src scattered (assigned or added) into it along axis; no autograd. */
export function scatterRaw(x: Tensor, axis: number, index: Tensor, src: Tensor, reduce: number, fn: string): Tensor {
  const r = allocate(x.shape, x.dtype, x.device, undefined, fn);
  try {
    copyValues(r, x, fn);
    ops.scatter(fn, { self: r.handle(fn), axis, index: index.handle(fn), src: src.handle(fn), reduce });
  } catch (e) {
    r.dispose();
    throw namedForCaller(e, fn);
  }
  return r;
}

/** @internal zeros of `shape` with `values` written into its leading corner (values' shape): src's gradient when src is larger than index. */
export function padTo(values: Tensor, shape: readonly number[]): Tensor {
  if (values.shape.every((n, d) => n === shape[d])) return values;
  const z = allocate(shape, values.dtype, values.device, undefined, 'autograd').fill_(0);
  const v = sliceDims(z, ...values.shape.map((n): [number, number] => [0, n]));
  copyValues(v, values, 'autograd');
  v.dispose();
  values.dispose();
  return z;
}

/** The gradient of a gather: zeros of x's shape with g added at the gathered places. */
function gatherBack(x: Tensor, axis: number): (g: Tensor, index: Tensor) => Tensor {
  const shape = x.shape.slice(), dtype = x.dtype, device = x.device;  // read now: x may be gone by backward time
  return (g, index) => {
    const z = allocate(shape, dtype, device, undefined, 'autograd').fill_(0);
    try {
      ops.scatter('autograd', { self: z.handle('autograd'), axis, index: index.handle('autograd'), src: g.handle('autograd'), reduce: SCATTER_ADD });
    } catch (e) {
      z.dispose();
      throw e;
    }
    return z;
  };
}

/** @internal gather(x, axis, index) for gx.gather and Tensor.gather. */
export function gatherImpl(a: unknown, axisArg: unknown, indexArg: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const given = checkIndex(indexArg, fn);
  commonDevice([x, given], ['self', 'index'], fn);
  const axis = axisOf(axisArg, x, fn);
  checkIndexShape(x, axis, given, fn);
  const index = matchRank(given, x);
  try {
    const out = gatherRaw(x, axis, index, false, fn);
    if (shouldRecord(x)) {
      const back = gatherBack(x, axis);
      record('gather', [x], out, [index], (g, s) => [back(g, s[0])]);
    }
    return out;
  } finally {
    if (index !== given) index.dispose();
  }
}

/**
 * Picks values along `axis` by `index`, as torch.gather: out[i][j] =
 * x[i][index[i][j]] for axis 1. `index` (int64 or int32) has x's rank and is
 * no larger than x in the other dimensions; the result has index's shape.
 * @example gx.gather(gx.tensor([[1, 2], [3, 4]]), 1, gx.tensor([[0, 0], [1, 0]], { dtype: 'int64' })) // [[1, 1], [4, 3]]
 */
export function gather<D extends DType>(x: Tensor<D>, axis: number, index: Tensor): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.gather', '(x, axis, index)', arguments.length - 3, arguments[3]);
  return gatherImpl(x, axis, index, 'gx.gather') as Tensor<D>;
}

/** @internal */
export function indexSelectImpl(a: unknown, axisArg: unknown, indexArg: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const index = checkIndex(indexArg, fn);
  commonDevice([x, index], ['self', 'index'], fn);
  if (index.shape.length > 1) throw new Error(`${fn}: index must be 0-d or 1-d, got shape ${formatShape(index.shape)}`);
  const axis = axisOf(axisArg, x, fn);
  const outShape = x.shape.length === 0 ? [] : x.shape.map((n, d) => (d === axis ? index.numel : n));
  // index along axis, stride 0 elsewhere: gather reads x[..., index[j], ...] at every position.
  const strides = outShape.map((_, d) => (d === axis ? (index.shape.length === 0 ? 0 : index.strides[0]) : 0));
  const spread = index.asStrided(outShape, strides, index.storageOffset);
  try {
    const out = gatherRaw(x, axis, spread, false, fn);
    if (shouldRecord(x)) {
      const back = gatherBack(x, axis);
      record('indexSelect', [x], out, [spread], (g, s) => [back(g, s[0])]);
    }
    return out;
  } finally {
    spread.dispose();
  }
}

/**
 * The slices of x along `axis` at `index` (0-d or 1-d, int64 or int32), as
 * torch.index_select: the result has x's shape with that axis index.numel long.
 * @example gx.indexSelect(x, 0, gx.tensor([2, 0], { dtype: 'int64' })) // rows 2 and 0
 */
export function indexSelect<D extends DType>(x: Tensor<D>, axis: number, index: Tensor): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.indexSelect', '(x, axis, index)', arguments.length - 3, arguments[3]);
  return indexSelectImpl(x, axis, index, 'gx.indexSelect') as Tensor<D>;
}

/** @internal */
export function takeImpl(a: unknown, indexArg: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const index = checkIndex(indexArg, fn);
  commonDevice([x, index], ['self', 'index'], fn);
  if (x.numel === 0 && index.numel > 0) throw new Error(`${fn}: cannot take from an empty tensor (shape ${formatShape(x.shape)})`);
  const flat = x.reshape([x.numel]);
  const flatIndex = index.reshape([index.numel]);
  let out: Tensor | undefined;
  try {
    const picked = gatherRaw(flat, 0, flatIndex, true, fn);
    out = picked.reshape(index.shape);
    picked.dispose();
  } finally {
    if (flat !== x) flat.dispose();
    if (flatIndex !== index) flatIndex.dispose();
  }
  if (shouldRecord(x)) {
    const shape = x.shape.slice(), dtype = x.dtype, device = x.device, numel = x.numel;
    record('take', [x], out, [index], (g, s) => {
      // Negative indices count from the end: make them plain for scatterAdd.
      const idx = s[0].reshape([s[0].numel]);
      const neg = idx.lt(0);
      const shifted = idx.add(numel);
      const plain = whereOp(neg, shifted, idx, 'autograd');
      const g1 = g.reshape([g.numel]);
      const z = allocate([numel], dtype, device, undefined, 'autograd').fill_(0);
      ops.scatter('autograd', { self: z.handle('autograd'), axis: 0, index: plain.handle('autograd'), src: g1.handle('autograd'), reduce: SCATTER_ADD });
      for (const t of [idx, neg, shifted, plain, g1]) if (t !== s[0] && t !== g) t.dispose();
      const r = z.reshape(shape);
      if (r !== z) z.dispose();
      return [r];
    });
  }
  return out;
}

/**
 * x's elements at `index` as if x were 1-d (C order), as torch.take: the
 * result has index's shape; negative indices count from the end.
 * @example gx.take(gx.tensor([[1, 2], [3, 4]]), gx.tensor([0, -1], { dtype: 'int64' })) // [1, 4]
 */
export function take<D extends DType>(x: Tensor<D>, index: Tensor): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.take', '(x, index)', arguments.length - 2, arguments[2]);
  return takeImpl(x, index, 'gx.take') as Tensor<D>;
}

/** @internal The checked arguments of scatter, scatterAdd and scatterReduce; src is index-ranked and of x's dtype (a new tensor when converted). */
export function scatterArgs(a: unknown, axisArg: unknown, indexArg: unknown, srcArg: unknown, fn: string) {
  const x = checkTensor(a, fn, 'self');
  const given = checkIndex(indexArg, fn);
  const s = checkOperand(srcArg, fn, 'src');
  const tensors = s instanceof Tensor ? [x, given, s] : [x, given];
  commonDevice(tensors, ['self', 'index', 'src'], fn);
  const axis = axisOf(axisArg, x, fn);
  if (s instanceof Tensor && s.dtype !== x.dtype) {
    throw new TypeError(`${fn}: src (${describeOperand(s)}) must have self's dtype ${x.dtype}; convert it with .astype('${x.dtype}')`);
  }
  checkIndexShape(x, axis, given, fn, s instanceof Tensor ? { t: s, name: 'src' } : undefined);
  const index = matchRank(given, x);
  // A number src is that value at every index position.
  const src = s instanceof Tensor ? matchRank(s, x) : allocate(index.shape, x.dtype, x.device, undefined, fn).fill_(s as number);
  return { x, axis, index, src, srcGiven: s, dispose: () => {
    if (index !== given) index.dispose();
    if (src !== s) src.dispose();
  } };
}

function scatterImpl(a: unknown, axisArg: unknown, indexArg: unknown, srcArg: unknown, reduce: number, fn: string): Tensor {
  const { x, axis, index, src, srcGiven, dispose } = scatterArgs(a, axisArg, indexArg, srcArg, fn);
  try {
    const out = scatterRaw(x, axis, index, src, reduce, fn);
    if (shouldRecord(x, srcGiven)) {
      const srcShape = src.shape.slice();
      const back = (g: Tensor, idx: Tensor): (Tensor | null)[] => {
        // self: g, minus the overwritten places for an assignment.
        const gx = reduce === SCATTER_ADD ? g : (() => {
          const zeros = allocate(idx.shape, g.dtype, g.device, undefined, 'autograd').fill_(0);
          const r = scatterRaw(g, axis, idx, zeros, SCATTER_ASSIGN, 'autograd');
          zeros.dispose();
          return r;
        })();
        const gs = srcGiven instanceof Tensor ? padTo(gatherRaw(g, axis, idx, false, 'autograd'), srcShape) : null;
        return [gx, gs];
      };
      record(reduce === SCATTER_ADD ? 'scatterAdd' : 'scatter', [x, srcGiven], out, [index], (g, s) => back(g, s[0]) as Tensor[]);
    }
    return out;
  } finally {
    dispose();
  }
}

/**
 * A copy of x with src's values written at `index` along `axis`, as
 * torch.scatter: out[i][index[i][j]] = src[i][j] for axis 1. src (x's dtype,
 * or a number) is no smaller than index anywhere; with repeated indices the
 * CPU keeps the last in C order and CUDA any one.
 * `{ reduce: 'add' }` adds instead (torch's scatter(reduce='add'), gx.scatterAdd).
 * @example gx.scatter(gx.zeros([3]), 0, gx.tensor([2, 0], { dtype: 'int64' }), gx.tensor([5, 6])) // [6, 0, 5]
 */
export function scatter<D extends DType>(x: Tensor<D>, axis: number, index: Tensor, src: Tensor<D> | number, opts?: ScatterOptions): Tensor<D> {
  if (arguments.length > 5) tooManyArguments('gx.scatter', '(x, axis, index, src, options?)', arguments.length - 5, arguments[5]);
  return scatterImpl(x, axis, index, src, scatterMode(opts, 'gx.scatter'), 'gx.scatter') as Tensor<D>;
}

export interface ScatterOptions {
  /** 'add': add src at the places instead of writing it (torch's reduce='add'); for products and others, gx.scatterReduce. */
  reduce?: 'add';
}
const SCATTER_KEYS = optionKeys<ScatterOptions>({ reduce: true });

/** @internal The scatter kernel's mode for `opts` (the options were ignored, and reduce: 'add' silently assigned). */
export function scatterMode(opts: unknown, fn: string): number {
  const { reduce } = optionsOf<ScatterOptions>(opts, fn, SCATTER_KEYS);
  if (reduce === undefined) return SCATTER_ASSIGN;
  if (reduce === 'add') return SCATTER_ADD;
  throw new TypeError(`${fn}: reduce must be 'add', got ${describeValue(reduce)}; ` +
    "for 'multiply' and the other reductions use gx.scatterReduce(x, axis, index, src, 'prod' | 'sum' | 'mean' | 'amax' | 'amin')");
}

/**
 * A copy of x with src's values added at `index` along `axis`, as
 * torch.scatter_add: out[i][index[i][j]] += src[i][j] for axis 1. The CPU
 * adds in C order of index (deterministic); CUDA uses atomics, in no fixed
 * order (compare-and-swap loops for the 8- and 16-bit dtypes: NOTE [ Atomics
 * for every dtype ] in ops/index/atomics.cuh).
 * @example gx.scatterAdd(gx.zeros([3]), 0, gx.tensor([2, 2], { dtype: 'int64' }), gx.tensor([1, 2])) // [0, 0, 3]
 */
export function scatterAdd<D extends DType>(x: Tensor<D>, axis: number, index: Tensor, src: Tensor<D> | number): Tensor<D> {
  if (arguments.length > 4) tooManyArguments('gx.scatterAdd', '(x, axis, index, src)', arguments.length - 4, arguments[4]);
  return scatterImpl(x, axis, index, src, SCATTER_ADD, 'gx.scatterAdd') as Tensor<D>;
}

/** @internal Tensor.scatter_: scatter into x itself. */
export function scatterInPlace(a: unknown, axisArg: unknown, indexArg: unknown, srcArg: unknown, reduce: number, fn: string): Tensor {
  const { x, axis, index, src, dispose } = scatterArgs(a, axisArg, indexArg, srcArg, fn);
  try {
    // computeResult checks x for in-place writes (autograd, self-overlap) and goes through a temporary when src or index share its memory.
    const outOfPlace = (self: Tensor): Tensor => scatterImpl(self, axisArg, indexArg, srcArg, reduce, fn);  // recorded (NOTE [ Autograd and in-place ops ])
    return computeResult(x.shape, x.dtype, x.device, fn, { inplace: x, inputs: [index, src], elementwise: false, outOfPlace }, (r) => {
      if (r !== x) copyValues(r, x, fn);
      ops.scatter(fn, { self: r.handle(fn), axis, index: index.handle(fn), src: src.handle(fn), reduce });
    });
  } finally {
    dispose();
  }
}
export { SCATTER_ADD, SCATTER_ASSIGN };

/** @internal */
export function maskedFillImpl(a: unknown, maskArg: unknown, value: unknown, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const mask = checkTensor(maskArg, fn, 'mask');
  if (mask.dtype !== 'bool') throw new TypeError(`${fn}: mask must be a bool tensor, got ${describeOperand(mask)}`);
  const v = checkOperand(value, fn, 'value');
  if (v instanceof Tensor && v.shape.length !== 0) throw new Error(`${fn}: value must be a number or a 0-d tensor, got ${describeOperand(v)}`);
  const r = whereOp(mask, v, x, fn);
  if (!r.shape.every((n, d) => n === x.shape[d]) || r.shape.length !== x.shape.length) {
    r.dispose();
    throw new Error(`${fn}: mask of shape ${formatShape(mask.shape)} does not broadcast to self's shape ${formatShape(x.shape)}`);
  }
  if (r.dtype === x.dtype) return r;
  // The value is converted to x's dtype, as torch does.
  const c = astypeOp(r, x.dtype, fn);
  r.dispose();
  return c;
}

/**
 * x with `value` (a number or 0-d tensor, converted to x's dtype) where
 * `mask` (bool, broadcasting to x's shape) is true, as torch.masked_fill.
 * @example gx.maskedFill(x, x.lt(0), 0)
 */
export function maskedFill<D extends DType>(x: Tensor<D>, mask: Tensor, value: number | boolean | Tensor): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.maskedFill', '(x, mask, value)', arguments.length - 3, arguments[3]);
  return maskedFillImpl(x, mask, value, 'gx.maskedFill') as Tensor<D>;
}
