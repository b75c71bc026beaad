// Ordering ops, as PyTorch has them: sort, argsort, topk, kthvalue (along an
// axis), unique (of the flattened tensor) and searchsorted. The kernels are in
// ops/sort/ (sort_keys.h has the schemas and NOTE [ Sort keys ]).
//
// NOTE [ Ordering semantics ]
// - Every order is by value with NaN the largest (as torch sorts it, whatever
//   the NaN's sign) and -0.0 equal to 0.0; the same on every device, since the
//   CPU and CUDA compare the same integer keys.
// - sort is always stable (`stable` is accepted for torch's sake and changes
//   nothing): equal elements keep their input order, ascending or descending.
// - topk returns the k best in order (`sorted: false` is accepted and still
//   sorts), ties going to the lower index; kthvalue is the k-th smallest, the
//   element a stable sort puts at place k - 1. So indices are deterministic,
//   where torch leaves ties unspecified.
// - unique always sorts (`sorted: false` too, as torch on CUDA); each NaN is
//   its own value (NaN != NaN), as torch.unique has it. On CUDA it
//   synchronizes once, to learn how many values there are.
// - An axis other than the last is moved last with a contiguous copy, sorted,
//   and the results are views moved back (as torch does the same copy).
// Gradients: sort, topk and kthvalue send the gradient of their values back
// to the places the indices name (a scatter into zeros: the indices of a line
// are distinct); argsort, unique and searchsorted give integers or no
// gradient.
import { allocate } from '../creation/creation';
import { derivativeNotImplemented } from '../../tape/graph';
import { record, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import type { DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { booleanOption, optionKeys } from '../../core/options';
import { describeValue, formatShape } from '../../core/shape';
import { copyValues, Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { axisCallOptions, axisOfCall, normalizeAxis, type AxisOptions } from '../axes';
import { checkOperand, checkTensor, commonDevice, computeResult, describeOperand, optionsOf } from '../common';
import { astypeOp } from '../elementwise/elementwise';
import { SCATTER_ASSIGN, gather } from '../indexing/indexing';
import { checkInt, movedim, narrow, squeeze, unsqueeze } from '../layout/layout';
import { namedForCaller } from '../library';
import { named, type Named } from '../named';
import { resultType } from '../promotion';
import { tooManyArguments } from '../../core/options';
import { axisFunction } from '../axis-function';

/** Where sort, topk and kthvalue may write their results (each must have the result's shape and dtype). */
export interface SortOut<D extends DType = DType> {
  values?: Tensor<D>;
  indices?: Tensor<'int64'>;
}

/** The values and their indices (int64) along the axis. */
export interface SortFields<D extends DType = DType> {
  values: Tensor<D>;
  indices: Tensor<'int64'>;
}

/** `{ values, indices }` that also destructures as `[values, indices]` (NOTE [ Named results ]). */
export type SortResult<D extends DType = DType> = Named<SortFields<D>, [Tensor<D>, Tensor<'int64'>]>;

export interface SortOptions<D extends DType = DType> extends AxisOptions {
  /** Largest first (default false). */
  descending?: boolean;
  /** Accepted for torch's sake: the sort is always stable. */
  stable?: boolean;
  /** Write the results into these tensors. */
  out?: SortOut<D>;
}

export interface ArgsortOptions extends AxisOptions {
  descending?: boolean;
  /** Accepted for torch's sake: the sort is always stable. */
  stable?: boolean;
}

export interface TopkOptions<D extends DType = DType> extends AxisOptions {
  /** The k largest (default true), or the k smallest. */
  largest?: boolean;
  /** Accepted for torch's sake: the k are always in order, best first. */
  sorted?: boolean;
  out?: SortOut<D>;
}

export interface KthvalueOptions<D extends DType = DType> extends AxisOptions {
  /** Keep the axis, with size 1 (default false). */
  keepdims?: boolean;
  out?: SortOut<D>;
}

export interface UniqueOptions {
  /** Accepted for torch's sake: the values are always sorted, ascending. */
  sorted?: boolean;
  /** Also return, for each element, the index of its value among the values (x's shape). */
  returnInverse?: boolean;
  /** Also return how many times each value occurs. */
  returnCounts?: boolean;
}

/** unique's result when inverse or counts are asked for. */
export interface UniqueResult<D extends DType = DType> {
  values: Tensor<D>;
  inverse?: Tensor<'int64'>;
  counts?: Tensor<'int64'>;
}

export interface SearchsortedOptions {
  /** The last place an equal value could go (default false: the first). */
  right?: boolean;
  /** 'left' or 'right': right's other spelling, as torch has both. */
  side?: 'left' | 'right';
  /** int32 results (default int64). */
  outInt32?: boolean;
  /** Indices (int64) that sort each row of an unsorted sequence, as torch's sorter. */
  sorter?: Tensor;
  /** Write the result into this tensor. */
  out?: Tensor;
}

const SORT_KEYS = optionKeys<SortOptions>({ axis: true, dim: true, descending: true, stable: true, out: true });
const ARGSORT_KEYS = optionKeys<ArgsortOptions>({ axis: true, dim: true, descending: true, stable: true });
const TOPK_KEYS = optionKeys<TopkOptions>({ axis: true, dim: true, largest: true, sorted: true, out: true });
const KTH_KEYS = optionKeys<KthvalueOptions>({ axis: true, dim: true, keepdims: true, out: true });
const UNIQUE_KEYS = optionKeys<UniqueOptions>({ sorted: true, returnInverse: true, returnCounts: true });
const SEARCH_KEYS = optionKeys<SearchsortedOptions>({ right: true, side: true, outInt32: true, sorter: true, out: true });
const OUT_PAIR_KEYS = optionKeys<SortOut>({ values: true, indices: true });

/** torch has no topk, kthvalue or searchsorted for bool: neither does gpuext. */
function refuseBool(x: Tensor, fn: string): void {
  if (x.dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (got ${describeOperand(x)}); convert it with .astype('uint8') first`);
}

/** The axis of an ordering op: the given one or -1, normalized (0 for a 0-d x). */
function axisOf(arg: unknown, o: AxisOptions, x: Tensor, fn: string): number {
  const a = axisOfCall(arg, o, fn);
  return normalizeAxis(a === undefined || a === null ? -1 : a, x.shape, fn);
}

/** The length of x along axis (1 for a 0-d x). */
const lengthAlong = (x: Tensor, axis: number): number => (x.ndim === 0 ? 1 : x.shape[axis]);

/** x with `axis` last and contiguous: the rows the kernels work on (x itself when it already is). */
function rowsOf(x: Tensor, axis: number): Tensor {
  const last = x.ndim === 0 || axis === x.ndim - 1;
  if (last && x.isContiguous()) return x;
  if (last) return x.contiguous();
  using moved = movedim(x, axis, -1);
  return moved.contiguous();
}

/** A result computed with axis last, as a view with that axis back at `axis` (t itself when it is last). */
function moveBack<D extends DType>(t: Tensor<D>, axis: number): Tensor<D> {
  if (t.ndim === 0 || axis === t.ndim - 1) return t;
  const v = movedim(t, -1, axis);
  t.dispose();
  return v;
}

/**
 * Runs a rows op (sort, topk) on x along `axis`: values and indices with that
 * axis `len` long, as views in x's axis order. No autograd.
 */
function alongAxis(x: Tensor, axis: number, len: number, fn: string,
  call: (rows: Tensor, values: Tensor, indices: Tensor) => void): SortFields {
  return noGrad(() => {
    const rows = rowsOf(x, axis);
    const shape = rows.ndim === 0 ? [] : [...rows.shape.slice(0, -1), len];
    const values = allocate(shape, x.dtype, x.device, undefined, fn);
    const indices = allocate(shape, 'int64', x.device, undefined, fn);
    try {
      call(rows, values, indices);
    } catch (e) {
      values.dispose();
      indices.dispose();
      throw namedForCaller(e, fn);
    } finally {
      if (rows !== x) rows.dispose();
    }
    return { values: moveBack(values, axis), indices: moveBack(indices as Tensor<'int64'>, axis) };
  });
}

function sortRaw(x: Tensor, axis: number, descending: boolean, fn: string): SortFields {
  return alongAxis(x, axis, lengthAlong(x, axis), fn, (rows, values, indices) =>
    ops.sort(fn, { self: rows.handle(fn), descending, values: values.handle(fn), indices: indices.handle(fn) }));
}

function topkRaw(x: Tensor, k: number, axis: number, largest: boolean, fn: string): SortFields {
  // A 0-d input gives a 0-d result, one element, for k 0 as for k 1 (torch.topk(tensor(5.), 0) is 5):
  // the kernel must write that element, not leave it unwritten.
  const kk = x.ndim === 0 ? 1 : k;
  return alongAxis(x, axis, kk, fn, (rows, values, indices) =>
    ops.topk(fn, { self: rows.handle(fn), k: kk, largest, values: values.handle(fn), indices: indices.handle(fn) }));
}

/**
 * Records values = x gathered along axis at indices (the indices of a line
 * distinct): the gradient is g scattered into zeros of x's shape.
 * `expand`: kthvalue without keepdims, whose g and indices lack the axis.
 */
function recordGathered(name: string, x: Tensor, axis: number, r: SortFields, expand = false): void {
  if (!shouldRecord(x)) return;
  const shape = x.shape.slice(), dtype = x.dtype, device = x.device;  // read now: x may be gone by backward time
  record(name, [x], r.values, [r.indices], (g, saved) => {
    const z = allocate(shape, dtype, device, undefined, 'autograd').fill_(0);
    const index = expand && shape.length > 0 ? unsqueeze(saved[0], axis) : saved[0];
    const src = expand && shape.length > 0 ? unsqueeze(g, axis) : g;
    try {
      ops.scatter('autograd', { self: z.handle('autograd'), axis, index: index.handle('autograd'), src: src.handle('autograd'), reduce: SCATTER_ASSIGN });
    } catch (e) {
      z.dispose();
      throw e;
    } finally {
      if (index !== saved[0]) index.dispose();
      if (src !== g) src.dispose();
    }
    return [z];
  });
}

/** The `out` option of sort, topk and kthvalue, checked before anything runs: undefined or { values?, indices? }. */
function outPair(out: unknown, fn: string): Partial<SortOut> | undefined {
  if (out === undefined || out === null) return undefined;
  if (typeof out !== 'object' || out instanceof Tensor || Array.isArray(out)) {
    throw new TypeError(`${fn}: options.out must be an object { values, indices } of tensors, got ${describeValue(out)}`);
  }
  return optionsOf<SortOut>(out, `${fn} (options.out)`, OUT_PAIR_KEYS);
}

const ORDER = ['values', 'indices'] as const;

/** Writes r into the caller's `out` tensors where given (each of the result's shape and dtype); returns what the caller gets. */
function deliver<D extends DType>(r: SortFields<D>, out: Partial<SortOut> | undefined, x: Tensor, fn: string): SortResult<D> {
  if (out === undefined) return named(r, ORDER);
  let values: Tensor<D>;
  try {
    values = into(r.values, out.values, x, fn, 'out.values');
  } catch (e) {
    r.indices.dispose();
    throw e;
  }
  try {
    return named({ values, indices: into(r.indices, out.indices, x, fn, 'out.indices') }, ORDER);
  } catch (e) {
    if (values !== out.values) values.dispose();
    throw e;
  }
}

/** `t` copied into `target` (then disposed), or t itself without a target. */
function into<D extends DType>(t: Tensor<D>, target: unknown, x: Tensor, fn: string, name: string): Tensor<D> {
  if (target === undefined || target === null) return t;
  try {
    if (target instanceof Tensor && target.dtype !== t.dtype) {
      throw new TypeError(`${fn}: ${name} is ${target.dtype} but the result is ${t.dtype}`);
    }
    return computeResult(t.shape, t.dtype, t.device, fn, { out: target, inputs: [x], elementwise: false }, (d) => copyValues(d, t, fn)) as Tensor<D>;
  } finally {
    t.dispose();
  }
}

// --- sort, argsort --------------------------------------------------------------

/** @internal gx.sort and Tensor.sort. */
export function sortImpl(a: unknown, arg: unknown, opts: unknown, fn: string): SortResult {
  const x = checkTensor(a, fn, 'input');
  const o = axisCallOptions<SortOptions>(arg, opts, fn, SORT_KEYS);
  const axis = axisOf(arg, o, x, fn);
  const descending = booleanOption(fn, 'descending', o.descending, false);
  booleanOption(fn, 'stable', o.stable, true);
  const out = outPair(o.out, fn);
  const r = sortRaw(x, axis, descending, fn);
  if (out === undefined) recordGathered('sort', x, axis, r);
  return deliver(r, out, x, fn);
}

/** @internal gx.argsort and Tensor.argsort. */
export function argsortImpl(a: unknown, arg: unknown, opts: unknown, fn: string): Tensor<'int64'> {
  const x = checkTensor(a, fn, 'input');
  const o = axisCallOptions<ArgsortOptions>(arg, opts, fn, ARGSORT_KEYS);
  const axis = axisOf(arg, o, x, fn);
  const descending = booleanOption(fn, 'descending', o.descending, false);
  booleanOption(fn, 'stable', o.stable, true);
  const r = sortRaw(x, axis, descending, fn);
  r.values.dispose();
  return r.indices;
}

export interface SortFn {
  <D extends DType>(x: Tensor<D>, axis?: number, opts?: SortOptions<D>): SortResult<D>;
  <D extends DType>(x: Tensor<D>, opts: SortOptions<D>): SortResult<D>;
}

/**
 * Sorts x along `axis` (default -1), ascending unless `descending`, as
 * torch.sort: `{ values, indices }` (int64, the places along the axis the
 * values came from). Always stable; NaN sorts as the largest value
 * (NOTE [ Ordering semantics ]). Gradients flow to x through the indices.
 * @example const { values, indices } = gx.sort(x); gx.sort(x, 0, { descending: true }); gx.sort(x, { axis: 1 })
 */
export const sort = axisFunction<SortFn>('sort', 'axis?', sortImpl);

/**
 * x sorted along its first axis, values only, as torch.msort (gx.sort(x, 0).values; a 0-d x is itself).
 * Gradients flow to x through the sort.
 * @example gx.msort(gx.tensor([[3, 1], [1, 2]])) // [[1, 1], [3, 2]]
 */
export function msort<D extends DType>(x: Tensor<D>): Tensor<D> {
  if (arguments.length > 1) tooManyArguments('gx.msort', '(x)', arguments.length - 1, arguments[1]);
  const values: Tensor = tidy(() => sortImpl(x, 0, undefined, 'gx.msort').values);
  return values as Tensor<D>;
}

export interface ArgsortFn {
  (x: Tensor, axis?: number, opts?: ArgsortOptions): Tensor<'int64'>;
  (x: Tensor, opts: ArgsortOptions): Tensor<'int64'>;
}

/**
 * The indices (int64) that sort x along `axis` (default -1), as
 * torch.argsort: gx.sort's indices. Stable.
 * @example gx.argsort(gx.tensor([3, 1, 2])) // [1, 2, 0]; gx.argsort(x, 0, { descending: true })
 */
export const argsort = axisFunction<ArgsortFn>('argsort', 'axis?', argsortImpl);

// --- topk, kthvalue --------------------------------------------------------------

/** k checked against the length along axis: an integer in [lo, len]. */
function checkK(k: unknown, lo: number, len: number, axis: number, x: Tensor, fn: string): number {
  const v = checkInt(k, fn, 'k');
  if (v < lo || v > len) {
    throw new RangeError(`${fn}: k ${v} is out of range for axis ${axis} of size ${len} (input of shape ${formatShape(x.shape)}; ` +
      `valid: ${lo} to ${len})`);
  }
  return v;
}

/** @internal gx.topk and Tensor.topk. */
export function topkImpl(a: unknown, kArg: unknown, arg: unknown, opts: unknown, fn: string): SortResult {
  const x = checkTensor(a, fn, 'input');
  refuseBool(x, fn);
  const o = axisCallOptions<TopkOptions>(arg, opts, fn, TOPK_KEYS);
  const axis = axisOf(arg, o, x, fn);
  const k = checkK(kArg, 0, lengthAlong(x, axis), axis, x, fn);
  const largest = booleanOption(fn, 'largest', o.largest, true);
  booleanOption(fn, 'sorted', o.sorted, true);
  const out = outPair(o.out, fn);
  const r = topkRaw(x, k, axis, largest, fn);
  if (out === undefined) recordGathered('topk', x, axis, r);
  return deliver(r, out, x, fn);
}

/** @internal gx.kthvalue and Tensor.kthvalue. */
export function kthvalueImpl(a: unknown, kArg: unknown, arg: unknown, opts: unknown, fn: string): SortResult {
  const x = checkTensor(a, fn, 'input');
  refuseBool(x, fn);
  const o = axisCallOptions<KthvalueOptions>(arg, opts, fn, KTH_KEYS);
  const axis = axisOf(arg, o, x, fn);
  const k = checkK(kArg, 1, lengthAlong(x, axis), axis, x, fn);
  const keepdims = booleanOption(fn, 'keepdims', o.keepdims, false);
  const out = outPair(o.out, fn);
  const best = topkRaw(x, k, axis, false, fn);
  // The k-th smallest is the last of the k smallest: its own storage, not a view of all k.
  const pick = (t: Tensor): Tensor => noGrad(() => {
    if (x.ndim === 0) return t;
    using one = narrow(t, axis, k - 1, 1);
    const shaped = keepdims ? one : squeeze(one, axis);
    const c = shaped.clone();
    if (shaped !== one) shaped.dispose();
    t.dispose();
    return c;
  });
  const r: SortFields = { values: pick(best.values), indices: pick(best.indices) as Tensor<'int64'> };
  if (out === undefined) recordGathered('kthvalue', x, axis, r, !keepdims);
  return deliver(r, out, x, fn);
}

export interface TopkFn {
  <D extends DType>(x: Tensor<D>, k: number, axis?: number, opts?: TopkOptions<D>): SortResult<D>;
  <D extends DType>(x: Tensor<D>, k: number, opts: TopkOptions<D>): SortResult<D>;
}

/**
 * The k largest elements of x along `axis` (default -1), or the k smallest
 * with `{ largest: false }`, as torch.topk: `{ values, indices }`, best first,
 * ties going to the lower index (NOTE [ Ordering semantics ]). On CUDA, k up
 * to 32 never sorts the rows. Gradients flow to x through the indices.
 * @example gx.topk(logits, 5); gx.topk(x, 3, 0, { largest: false }); gx.topk(x, 2, { axis: 1 })
 */
export const topk = axisFunction<TopkFn>('topk', 'k, axis?', topkImpl);

export interface KthvalueFn {
  <D extends DType>(x: Tensor<D>, k: number, axis?: number, opts?: KthvalueOptions<D>): SortResult<D>;
  <D extends DType>(x: Tensor<D>, k: number, opts: KthvalueOptions<D>): SortResult<D>;
}

/**
 * The k-th smallest element (k from 1) of x along `axis` (default -1) and its
 * index, as torch.kthvalue: `{ values, indices }` without that axis (kept
 * with `{ keepdims: true }`). Among equal elements, the one a stable sort
 * puts k-th. Gradients flow to x through the indices.
 * @example gx.kthvalue(x, 2); const median = gx.kthvalue(x, (n + 1) >> 1, 0).values
 */
export const kthvalue = axisFunction<KthvalueFn>('kthvalue', 'k, axis?', kthvalueImpl);

// --- unique --------------------------------------------------------------------------

/** @internal gx.unique and Tensor.unique. */
export function uniqueImpl(a: unknown, opts: unknown, fn: string): Tensor | UniqueResult {
  const x = checkTensor(a, fn, 'input');
  derivativeNotImplemented(fn, x);
  const o = optionsOf<UniqueOptions>(opts, fn, UNIQUE_KEYS);
  booleanOption(fn, 'sorted', o.sorted, true);
  const wantInverse = booleanOption(fn, 'returnInverse', o.returnInverse, false);
  const wantCounts = booleanOption(fn, 'returnCounts', o.returnCounts, false);
  return noGrad(() => {
    const n = x.numel;
    const reshaped = x.reshape([n]);
    const flat = reshaped.isContiguous() ? reshaped : reshaped.contiguous();
    if (flat !== reshaped) reshaped.dispose();
    const values = allocate([n], x.dtype, x.device, undefined, fn);
    const inverse = wantInverse ? allocate([n], 'int64', x.device, undefined, fn) : undefined;
    const counts = wantCounts ? allocate([n], 'int64', x.device, undefined, fn) : undefined;
    let m: number;
    try {
      m = ops.unique(fn, { self: flat.handle(fn), inverse: inverse?.handle(fn) ?? null, counts: counts?.handle(fn) ?? null, values: values.handle(fn) });
    } catch (e) {
      for (const t of [values, inverse, counts]) t?.dispose();
      throw namedForCaller(e, fn);
    } finally {
      if (flat !== x) flat.dispose();
    }
    // The first m: in their own storage when fewer than n.
    const first = <E extends DType>(t: Tensor<E>): Tensor<E> => {
      if (m === n) return t;
      using head = narrow(t, 0, 0, m);
      const c = head.clone();
      t.dispose();
      return c;
    };
    const v = first(values);
    if (!wantInverse && !wantCounts) return v;
    const r: UniqueResult = { values: v };
    if (inverse !== undefined) {
      r.inverse = inverse.reshape(x.shape as number[]) as Tensor<'int64'>;
      if (r.inverse !== inverse) inverse.dispose();
    }
    if (counts !== undefined) r.counts = first(counts as Tensor<'int64'>);
    return r;
  });
}

export interface UniqueFn {
  <D extends DType>(x: Tensor<D>, opts: UniqueOptions & ({ returnInverse: true } | { returnCounts: true })): UniqueResult<D>;
  <D extends DType>(x: Tensor<D>, opts?: UniqueOptions & { returnInverse?: false; returnCounts?: false }): Tensor<D>;
  <D extends DType>(x: Tensor<D>, opts?: UniqueOptions): Tensor<D> | UniqueResult<D>;
}

/**
 * The distinct values of x (flattened), ascending, as torch.unique without
 * dim; with `returnInverse`, also each element's index among them (x's
 * shape), with `returnCounts` how often each occurs: then the result is
 * `{ values, inverse?, counts? }`. Each NaN is its own value. On CUDA it
 * synchronizes once (the number of values decides the result's size).
 * @example gx.unique(gx.tensor([3, 1, 3])) // [1, 3]; const { values, counts } = gx.unique(x, { returnCounts: true })
 */
export const unique: UniqueFn = (function (x: unknown, opts?: unknown): Tensor | UniqueResult {
  if (arguments.length > 2) tooManyArguments('gx.unique', '(x, options?)', arguments.length - 2, arguments[2]);
  return uniqueImpl(x, opts, 'gx.unique');
}) as UniqueFn;

// --- searchsorted -------------------------------------------------------------------

/**
 * Where each of `values` would go in `sortedSequence` to keep it sorted, as
 * torch.searchsorted: the first place i with sequence[i] >= value, or with
 * `{ right: true }` (`{ side: 'right' }`) the first with sequence[i] > value.
 * A 1-d sequence serves values of any shape; an N-d one is searched row by
 * row along its last axis, with values of the same leading shape. The
 * sequence and values are compared in their common dtype. `sorter` gives
 * indices that sort an unsorted sequence; `outInt32` int32 results.
 * @example gx.searchsorted(gx.tensor([1, 3, 5, 7]), gx.tensor([3, 6])) // [1, 3]
 */
export function searchsorted(sortedSequence: Tensor, values: Tensor | number, opts?: SearchsortedOptions): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.searchsorted', '(sortedSequence, values, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.searchsorted';
  const seq0 = checkTensor(sortedSequence, fn, 'sortedSequence');
  const given = checkOperand(values, fn, 'values');
  if (typeof given === 'bigint' || typeof given === 'boolean') {
    throw new TypeError(`${fn}: values must be a Tensor or a number, got ${describeOperand(given)}`);
  }
  const o = optionsOf<SearchsortedOptions>(opts, fn, SEARCH_KEYS);
  if (seq0.ndim === 0) throw new RangeError(`${fn}: sortedSequence must have at least one dimension, got a 0-d tensor`);
  if (given instanceof Tensor) commonDevice([seq0, given], ['sortedSequence', 'values'], fn);
  let right = booleanOption(fn, 'right', o.right, false);
  if (o.side !== undefined) {
    if (o.side !== 'left' && o.side !== 'right') throw new TypeError(`${fn}: side must be 'left' or 'right', got ${describeValue(o.side)}`);
    if (o.right === true && o.side === 'left') throw new TypeError(`${fn}: side 'left' and right: true disagree; pass one`);
    right = o.side === 'right';
  }
  const outDtype = booleanOption(fn, 'outInt32', o.outInt32, false) ? 'int32' : 'int64';
  const dtype = resultType(seq0, given);
  if (dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported; convert with .astype('uint8') first`);
  const m = seq0.shape[seq0.ndim - 1];
  const vshape = given instanceof Tensor ? given.shape : [];
  const lead = seq0.shape.slice(0, -1);
  if (lead.length > 0 && (vshape.length !== seq0.ndim || lead.some((s, d) => s !== vshape[d]))) {
    throw new Error(`${fn}: values of shape ${formatShape(vshape)} do not match sortedSequence of shape ${formatShape(seq0.shape)}: ` +
      'an N-d sequence needs values with the same leading dimensions');
  }
  const made: Tensor[] = [];
  const keep = (t: Tensor): Tensor => { made.push(t); return t; };
  try {
    const result = noGrad(() => {
      let seq = seq0;
      if (o.sorter !== undefined && o.sorter !== null) {
        const sorter = checkTensor(o.sorter, fn, 'sorter');
        if (sorter.dtype !== 'int64') throw new TypeError(`${fn}: sorter must be an int64 tensor, got ${describeOperand(sorter)}`);
        if (sorter.shape.length !== seq.ndim || sorter.shape.some((s, d) => s !== seq.shape[d])) {
          throw new Error(`${fn}: sorter of shape ${formatShape(sorter.shape)} must have sortedSequence's shape ${formatShape(seq.shape)}`);
        }
        seq = keep(gather(seq, -1, sorter));
      }
      if (seq.dtype !== dtype) seq = keep(astypeOp(seq, dtype, fn));
      let vals: Tensor = given instanceof Tensor ? given : keep(allocate([], dtype, seq0.device, undefined, fn).fill_(given));
      if (vals.dtype !== dtype) vals = keep(astypeOp(vals, dtype, fn));
      const rows = lead.reduce((p, s) => p * s, 1);
      const k = lead.length > 0 ? vshape[vshape.length - 1] : vals.numel;
      const seq2 = keep(keep(seq.reshape([lead.length > 0 ? rows : 1, m])).contiguous());
      const vals2 = keep(keep(vals.reshape([lead.length > 0 ? rows : 1, k])).contiguous());
      const r = allocate(vshape, outDtype, seq0.device, undefined, fn);
      try {
        using r2 = r.view([lead.length > 0 ? rows : 1, k]);
        ops.searchsorted(fn, { sortedSequence: seq2.handle(fn), self: vals2.handle(fn), right, out: r2.handle(fn) });
      } catch (e) {
        r.dispose();
        throw namedForCaller(e, fn);
      }
      return r;
    });
    if (o.out === undefined || o.out === null) return result;
    return into(result, o.out, seq0, fn, 'out');
  } finally {
    for (const t of made) if (t !== seq0 && t !== given) t.dispose();
  }
}
