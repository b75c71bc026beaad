// Layout ops: transpose, permute, movedim, squeeze, unsqueeze, expand,
// broadcastTo, flatten, slice, narrow, sliceDims, cat, stack. PyTorch
// semantics; NumPy's where PyTorch has none. Tensor methods of the same names
// are in ./methods.ts.
//
// NOTE [ Layout views ]
// Every op here except cat and stack returns a view: a new Tensor (dispose it
// like any other) sharing its input's storage, with a new shape, strides and
// storage offset; writing through it writes the input. flatten is a view when
// the strides allow it and a contiguous copy otherwise, as reshape. cat and
// stack allocate their output once and copy each input into its slice of it
// (copy_ lays out non-contiguous inputs). All arguments are checked before
// anything is allocated, so a bad call throws, naming the op and the argument,
// and changes nothing.
//
// Axes may be negative (counting from the end) and are checked by axes.ts. As
// in PyTorch, a 0-d tensor takes axis 0 or -1 where an existing axis is asked
// for (transpose, squeeze, flatten). squeeze, unsqueeze, cat and stack take
// their axis positionally or as { axis } (NOTE [ Axis forms ] in axes.ts).
import { allocate } from '../creation/creation';
import type { DType } from '../../core/dtype';
import { optionKeys, tooManyArguments } from '../../core/options';
import { contiguousStrides, describeValue, formatShape, MAX_DIMS } from '../../core/shape';
import { record, shouldRecord } from '../../tape/graph';
import { copyValues, Tensor } from '../../core/tensor';
import { axisCallOptions, axisOfCall, normalizeAxis, normalizeAxisList, type Axes, type AxisOptions } from '../axes';


/**
 * One dimension of a {@link sliceDims} call: an integer picks that index and
 * drops the dim (negative counts from the end); `null` or `undefined` keeps
 * the whole dim (`:`; not NumPy's newaxis, see {@link unsqueeze}); an array
 * `[start, end, step]` is Python's `start:end:step`, any part null or left
 * out (`[2]` is `2:`, `[null, null, 2]` is `::2`).
 */
export type DimSlice = number | null | undefined | readonly [start?: number | null, end?: number | null, step?: number | null];

interface Layout {
  shape: number[];
  strides: number[];
  offset: number;
}

/** The input's layout; throws naming `fn` when it is not a live Tensor. */
function layoutOf(input: unknown, fn: string, arg = 'input'): Layout {
  if (!(input instanceof Tensor)) throw new TypeError(`${fn}: argument '${arg}' must be a Tensor, got ${describeValue(input)}`);
  input.handle(fn);  // a disposed tensor is an error naming the op
  return { shape: input.shape.slice(), strides: input.strides.slice(), offset: input.storageOffset };
}

function view<D extends DType>(input: Tensor<D>, l: Layout): Tensor<D> {
  return input.asStrided(l.shape, l.strides, l.offset);
}

/** Records `out`, a view or copy of `input`, for autograd: `back` maps its gradient to input's. */
function grad<D extends DType>(name: string, input: Tensor, out: Tensor<D>, back: (g: Tensor) => Tensor): Tensor<D> {
  if (shouldRecord(input)) record(name, [input], out, [], (g) => [back(g)]);
  return out;
}

/**
 * grad() for `out`, a view that picks some of input's elements (scatterBack): its backward is made only when
 * recorded, since making it copies input's shape and closes over it (a tenth of an unrecorded narrow's time).
 */
function gradPick<D extends DType>(name: string, input: Tensor, out: Tensor<D>, pick: (z: Tensor) => Tensor): Tensor<D> {
  if (shouldRecord(input)) {
    const back = scatterBack(input, pick);
    record(name, [input], out, [], (g) => [back(g)]);
  }
  return out;
}

/** The gradient of a view that picks some of input's elements: zeros, with g written through the same view. */
// (input's shape, dtype and device are read now: by backward time input may be disposed.)
function scatterBack(input: Tensor, pick: (z: Tensor) => Tensor): (g: Tensor) => Tensor {
  const shape = input.shape.slice();
  const dtype = input.dtype, device = input.device;
  return (g) => {
    const z = allocate(shape, dtype, device, undefined, 'autograd').fill_(0);
    const v = pick(z);
    copyValues(v, g, 'autograd');
    v.dispose();
    // Differentiated again (backward with createGraph): this embedding is linear in g, its own derivative picks the same elements.
    if (shouldRecord(g)) record('sliceBackward', [g], z, [], (gg) => [pick(gg)]);
    return z;
  };
}

/** v, checked to be a safe integer; a TypeError naming `fn` and `arg` otherwise. */
export function checkInt(v: unknown, fn: string, arg: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw new TypeError(`${fn}: ${arg} must be an integer, got ${describeValue(v)}`);
  }
  return v;
}

function formatList(list: readonly unknown[]): string {
  return `[${list.map(String).join(', ')}]`;
}

const AXIS_KEYS = optionKeys<AxisOptions<Axes>>({ axis: true, dim: true });

/** The axis of `f(input, axis)` or `f(input, { axis })`. */
function axisArg(arg: unknown, fn: string, required = false): unknown {
  return axisOfCall(arg, axisCallOptions<AxisOptions<Axes>>(arg, undefined, fn, AXIS_KEYS), fn, required);
}

function checkRank(ndim: number, fn: string): void {
  if (ndim > MAX_DIMS) throw new RangeError(`${fn}: the result would have ${ndim} dimensions; at most ${MAX_DIMS} are supported`);
}

/**
 * A view with axes `axis0` and `axis1` swapped.
 * @example
 * const a = gx.arange(6).view(2, 3);
 * const at = gx.transpose(a, 0, 1); // shape [3, 2], shares a's storage
 */
export function transpose<D extends DType>(input: Tensor<D>, axis0: number, axis1: number): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.transpose', '(input, axis0, axis1)', arguments.length - 3, arguments[3]);
  const fn = 'gx.transpose';
  const l = layoutOf(input, fn);
  const a = normalizeAxis(axis0, l.shape, fn, 'axis0');
  const b = normalizeAxis(axis1, l.shape, fn, 'axis1');
  if (l.shape.length > 0) {
    [l.shape[a], l.shape[b]] = [l.shape[b], l.shape[a]];
    [l.strides[a], l.strides[b]] = [l.strides[b], l.strides[a]];
  }
  return grad('transpose', input, view(input, l), (g) => transpose(g, a, b));
}

function permuteImpl<D extends DType>(input: Tensor<D>, l: Layout, order: readonly number[]): Tensor<D> {
  const out = view(input, { shape: order.map((d) => l.shape[d]), strides: order.map((d) => l.strides[d]), offset: l.offset });
  const inverse = order.map((_, i) => order.indexOf(i));
  return grad('permute', input, out, (g) => permute(g, inverse));
}

/**
 * A view whose axis i is the input's axis `axes[i]`; `axes` names every axis once.
 * @example gx.permute(gx.zeros([2, 3, 4]), [2, 0, 1]) // shape [4, 2, 3]
 */
export function permute<D extends DType>(input: Tensor<D>, axes: readonly number[]): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.permute', '(input, axes)', arguments.length - 2, arguments[2]);
  const fn = 'gx.permute';
  const l = layoutOf(input, fn);
  if (!Array.isArray(axes)) throw new TypeError(`${fn}: axes must be an array of integers, got ${describeValue(axes)}`);
  if (axes.length !== l.shape.length) {
    throw new RangeError(`${fn}: axes ${formatList(axes)} has ${axes.length} entries but the tensor has ${l.shape.length} dimensions (shape ${formatShape(l.shape)})`);
  }
  return permuteImpl(input, l, normalizeAxisList(axes, l.shape, fn, 'axes', 'axis'));
}

/**
 * A view with axes `source` moved to positions `destination`; the other axes
 * keep their order.
 * @example gx.movedim(gx.zeros([2, 3, 4]), 0, -1) // shape [3, 4, 2]
 */
export function movedim<D extends DType>(input: Tensor<D>, source: number | readonly number[], destination: number | readonly number[]): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.movedim', '(input, source, destination)', arguments.length - 3, arguments[3]);
  const fn = 'gx.movedim';
  const l = layoutOf(input, fn);
  const n = l.shape.length;
  const src = normalizeAxisList(source, l.shape, fn, 'source');
  const dst = normalizeAxisList(destination, l.shape, fn, 'destination');
  if (src.length !== dst.length) {
    throw new RangeError(`${fn}: source names ${src.length} axes but destination names ${dst.length}; they must match`);
  }
  if (n === 0) return view(input, l);
  const order = new Array<number>(n).fill(-1);
  src.forEach((s, i) => { order[dst[i]] = s; });
  const rest = l.shape.map((_, d) => d).filter((d) => !src.includes(d));
  for (let i = 0, k = 0; i < n; i++) if (order[i] < 0) order[i] = rest[k++];
  return permuteImpl(input, l, order);
}

/**
 * A view without size-1 axes: all of them, or those among `axis` (an axis of
 * another size is left alone, as in PyTorch).
 * @example gx.squeeze(gx.zeros([1, 3, 1]), 0) // shape [3, 1]; gx.squeeze(x, { axis: [0, 2] })
 */
export function squeeze<D extends DType>(input: Tensor<D>, axis?: Axes | AxisOptions<Axes>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.squeeze', '(input, axis?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.squeeze';
  const a = axisArg(axis, fn);
  const l = layoutOf(input, fn);
  const drop = a === undefined ? l.shape.map((_, d) => d) : normalizeAxisList(a, l.shape, fn);
  const keep = l.shape.map((s, d) => s !== 1 || !drop.includes(d));
  const out = view(input, { shape: l.shape.filter((_, d) => keep[d]), strides: l.strides.filter((_, d) => keep[d]), offset: l.offset });
  const inShape = l.shape.slice();
  return grad('squeeze', input, out, (g) => g.reshape(inShape));
}

/**
 * A view with a new size-1 axis at position `axis` of the result (in
 * [-ndim - 1, ndim]).
 * @example gx.unsqueeze(gx.zeros([3]), -1) // shape [3, 1]
 */
export function unsqueeze<D extends DType>(input: Tensor<D>, axis: number | AxisOptions & { axis: number }): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.unsqueeze', '(input, axis)', arguments.length - 2, arguments[2]);
  const fn = 'gx.unsqueeze';
  const a = axisArg(axis, fn, true);
  const l = layoutOf(input, fn);
  const n = l.shape.length;
  const d = normalizeAxis(a, l.shape, fn, 'axis', 'insert');
  checkRank(n + 1, fn);
  // The stride a contiguous tensor would have there, as PyTorch.
  const stride = d < n ? l.shape[d] * l.strides[d] : 1;
  const inShape = l.shape.slice();
  l.shape.splice(d, 0, 1);
  l.strides.splice(d, 0, stride);
  return grad('unsqueeze', input, view(input, l), (g) => g.reshape(inShape));
}

function expandImpl<D extends DType>(input: Tensor<D>, shape: readonly number[], fn: string): Tensor<D> {
  const l = layoutOf(input, fn);
  if (!Array.isArray(shape)) throw new TypeError(`${fn}: shape must be an array of integers, got ${describeValue(shape)}`);
  shape.forEach((s: unknown, i) => {
    if (checkInt(s, fn, `shape[${i}]`) < -1) throw new RangeError(`${fn}: shape[${i}] must be >= 0 or -1, got ${String(s)}`);
  });
  const n = shape.length, lead = n - l.shape.length;
  if (lead < 0) {
    throw new RangeError(`${fn}: shape ${formatShape(shape)} has ${n} dims, fewer than the tensor's ${l.shape.length} (shape ${formatShape(l.shape)})`);
  }
  checkRank(n, fn);
  const outShape = new Array<number>(n), outStrides = new Array<number>(n);
  for (let i = n - 1; i >= 0; i--) {
    const k = i - lead;
    let want = shape[i];
    if (k < 0) {
      if (want === -1) throw new RangeError(`${fn}: shape[${i}] is -1 but dimension ${i} is a new leading one; only existing dims can be kept with -1`);
      outShape[i] = want;
      outStrides[i] = want !== 1 ? 0 : i + 1 < n ? outShape[i + 1] * outStrides[i + 1] : 1;
      continue;
    }
    const size = l.shape[k];
    if (want === -1) want = size;
    if (want === size) {
      outShape[i] = size;
      outStrides[i] = l.strides[k];
    } else if (size === 1) {
      outShape[i] = want;
      outStrides[i] = 0;
    } else {
      throw new Error(
        `${fn}: the tensor's dimension ${k} has size ${size}, which is not 1, so it cannot become ${want} ` +
          `(tensor shape ${formatShape(l.shape)}, requested ${formatShape(shape)})`,
      );
    }
  }
  // The engine sums the gradient back over the repeated dims (sumToShape).
  return grad('expand', input, view(input, { shape: outShape, strides: outStrides, offset: l.offset }), (g) => g);
}

/**
 * A view repeating size-1 dims to `shape` without copying (stride 0): -1
 * keeps a dim, and new dims may be added in front. Writing through an
 * expanded view writes each element many times: treat it as read-only.
 * @example gx.expand(gx.tensor([[1], [2]]), [2, 3]) // [[1, 1, 1], [2, 2, 2]]
 */
export function expand<D extends DType>(input: Tensor<D>, shape: readonly number[]): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.expand', '(input, shape)', arguments.length - 2, arguments[2]);
  return expandImpl(input, shape, 'gx.expand');
}

/**
 * The input broadcast to `shape` (NumPy rules), as a stride-0 view: the same
 * as {@link expand}.
 * @example gx.broadcastTo(gx.tensor([1, 2, 3]), [4, 3])
 */
export function broadcastTo<D extends DType>(input: Tensor<D>, shape: readonly number[]): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.broadcastTo', '(input, shape)', arguments.length - 2, arguments[2]);
  return expandImpl(input, shape, 'gx.broadcastTo');
}

/**
 * Axes `startAxis`..`endAxis` (inclusive) merged into one. A view when the
 * strides allow it, else a contiguous copy (as reshape). A 0-d tensor
 * becomes shape [1].
 * @example gx.flatten(gx.zeros([2, 3, 4]), 1) // shape [2, 12]
 */
export function flatten<D extends DType>(input: Tensor<D>, startAxis = 0, endAxis = -1): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.flatten', '(input, startAxis?, endAxis?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.flatten';
  const l = layoutOf(input, fn);
  const n = l.shape.length;
  const s = normalizeAxis(startAxis, l.shape, fn, 'startAxis');
  const e = normalizeAxis(endAxis, l.shape, fn, 'endAxis');
  if (s > e) throw new RangeError(`${fn}: startAxis (${startAxis}) must not come after endAxis (${endAxis}) for a ${n}-d tensor`);
  if (n === 0) return grad('flatten', input, view(input, { shape: [1], strides: [1], offset: l.offset }), (g) => g.reshape([]));
  if (s === e) return grad('flatten', input, view(input, l), (g) => g);
  const merged = l.shape.slice(s, e + 1).reduce((a, b) => a * b, 1);
  return input.reshape([...l.shape.slice(0, s), merged, ...l.shape.slice(e + 1)]);
}

/** @internal Python's start:end:step over a dim of `size`: the first index and the count. */
export function resolveRange(size: number, start: unknown, end: unknown, step: unknown, fn: string, what: string): { first: number; count: number; step: number } {
  const st = step === null || step === undefined ? 1 : checkInt(step, fn, `${what}step`);
  if (st < 1) {
    throw new RangeError(`${fn}: ${what}step must be a positive integer, got ${st} (negative steps are not supported, as in PyTorch)`);
  }
  const bound = (v: unknown, name: string, dflt: number): number => {
    if (v === null || v === undefined) return dflt;
    const i = checkInt(v, fn, `${what}${name}`);
    return Math.min(Math.max(i < 0 ? i + size : i, 0), size);
  };
  const first = bound(start, 'start', 0);
  const last = bound(end, 'end', size);
  return { first, count: last > first ? Math.ceil((last - first) / st) : 0, step: st };
}

/**
 * A view of `start:end:step` along `axis`, as Python slicing: null start/end
 * mean the ends, negative ones count from the end, and both are clamped to
 * the axis (so the result may be empty). `step` must be >= 1.
 * @example gx.slice(gx.arange(10), 0, 1, -1, 3) // [1, 4, 7]
 */
export function slice<D extends DType>(input: Tensor<D>, axis: number, start?: number | null, end?: number | null, step = 1): Tensor<D> {
  if (arguments.length > 5) tooManyArguments('gx.slice', '(input, axis, start?, end?, step?)', arguments.length - 5, arguments[5]);
  const fn = 'gx.slice';
  const l = layoutOf(input, fn);
  const d = normalizeAxis(axis, l.shape, fn, 'axis', 'strict');
  const r = resolveRange(l.shape[d], start, end, step, fn, '');
  l.offset += r.first * l.strides[d];
  l.shape[d] = r.count;
  l.strides[d] *= r.step;
  return gradPick('slice', input, view(input, l), (z) => slice(z, d, start, end, step));
}

/**
 * A view of `length` elements along `axis` from `start` (negative counts from
 * the end); unlike slice, the range must lie inside the axis.
 * @example gx.narrow(gx.zeros([4, 6]), 1, 2, 3) // shape [4, 3]
 */
export function narrow<D extends DType>(input: Tensor<D>, axis: number, start: number, length: number): Tensor<D> {
  if (arguments.length > 4) tooManyArguments('gx.narrow', '(input, axis, start, length)', arguments.length - 4, arguments[4]);
  const fn = 'gx.narrow';
  const l = layoutOf(input, fn);
  const d = normalizeAxis(axis, l.shape, fn, 'axis', 'strict');
  const size = l.shape[d];
  let s = checkInt(start, fn, 'start');
  checkInt(length, fn, 'length');
  if (s < -size || s > size) throw new RangeError(`${fn}: start ${s} is out of range for dimension ${d} of size ${size}`);
  if (s < 0) s += size;
  if (length < 0 || s + length > size) {
    throw new RangeError(`${fn}: start ${s} + length ${length} does not fit dimension ${d} of size ${size}`);
  }
  l.offset += s * l.strides[d];
  l.shape[d] = length;
  return gradPick('narrow', input, view(input, l), (z) => narrow(z, d, s, length));
}

/**
 * NumPy-style basic indexing: one {@link DimSlice} per leading dim, the rest
 * kept whole. `gx.sliceDims(t, [0, 4, 2], null, 3)` is Python's
 * `t[0:4:2, :, 3]`. Always a view. Integers out of range are an error;
 * ranges are clamped, as in Python. Steps must be >= 1 (PyTorch rejects
 * negative steps).
 * @example
 * const t = gx.arange(60).view(5, 4, 3);
 * const v = gx.sliceDims(t, [0, 4, 2], null, -1); // t[0:4:2, :, -1], shape [2, 4]
 * const row = t.sliceDims(2);                     // t[2], shape [4, 3]
 */
export function sliceDims<D extends DType>(input: Tensor<D>, ...specs: DimSlice[]): Tensor<D> {
  const fn = 'gx.sliceDims';
  const l = layoutOf(input, fn);
  const n = l.shape.length;
  if (specs.length > n) throw new RangeError(`${fn}: ${specs.length} indices for a ${n}-d tensor (shape ${formatShape(l.shape)})`);
  const out: Layout = { shape: [], strides: [], offset: l.offset };
  for (let d = 0; d < n; d++) {
    const spec: unknown = specs[d];
    const size = l.shape[d], stride = l.strides[d];
    if (spec === null || spec === undefined) {
      out.shape.push(size);
      out.strides.push(stride);
    } else if (typeof spec === 'number') {
      const i = checkInt(spec, fn, `index ${d}`);
      if (i < -size || i >= size) throw new RangeError(`${fn}: index ${i} is out of range for dimension ${d} of size ${size}`);
      out.offset += (i < 0 ? i + size : i) * stride;
    } else if (Array.isArray(spec) && spec.length <= 3) {
      const r = resolveRange(size, spec[0], spec[1], spec[2], fn, `index ${d} `);
      out.offset += r.first * stride;
      out.shape.push(r.count);
      out.strides.push(stride * r.step);
    } else {
      throw new TypeError(`${fn}: index ${d} must be an integer, null, or a [start, end, step] array, got ${describeValue(spec)}`);
    }
  }
  return gradPick('sliceDims', input, view(input, out), (z) => sliceDims(z, ...specs));
}

/** Checks a list of same-dtype, same-device live tensors; returns them. */
function checkInputs(tensors: unknown, fn: string): Tensor[] {
  if (!Array.isArray(tensors)) throw new TypeError(`${fn}: tensors must be an array of Tensors, got ${describeValue(tensors)}`);
  if (tensors.length === 0) throw new RangeError(`${fn}: tensors is empty; expected at least one tensor`);
  tensors.forEach((x: unknown, i) => {
    if (!(x instanceof Tensor)) throw new TypeError(`${fn}: tensors[${i}] must be a Tensor, got ${describeValue(x)}`);
    if (x.isDisposed) throw new Error(`${fn}: tensors[${i}] was disposed; it cannot be used after dispose()`);
  });
  const list = tensors as Tensor[];
  const { dtype, device } = list[0];
  list.forEach((x, i) => {
    if (x.dtype !== dtype) {
      throw new TypeError(`${fn}: tensors[${i}] has dtype ${x.dtype} but tensors[0] has ${dtype}; all inputs must have the same dtype`);
    }
    if (!x.device.equals(device)) {
      throw new Error(`${fn}: tensors[${i}] is on ${x.device} but tensors[0] is on ${device}; all inputs must be on the same device`);
    }
  });
  return list;
}

/** Allocates the output, then copies input i into its view `parts[i]`; disposes the output on failure. */
function copyInto<D extends DType>(inputs: readonly Tensor[], shape: number[], parts: (Layout | undefined)[]): Tensor<D> {
  const first = inputs[0];
  const out = allocate(shape, first.dtype as D, first.device);
  try {
    inputs.forEach((x, i) => {
      const p = parts[i];
      if (p === undefined) return;
      using dst = out.asStrided(p.shape, p.strides, p.offset);
      copyValues(dst, x, 'gx.cat');
    });
  } catch (err) {
    out.dispose();
    throw err;
  }
  return out;
}

/**
 * The inputs joined along `axis` (default 0) into a new tensor. Shapes must
 * match except in `axis`; 1-d empty tensors (shape [0]) are skipped, as in
 * PyTorch. All inputs must share a dtype and device. Always a copy.
 * @example gx.cat([gx.zeros([2, 3]), gx.ones([1, 3])]) // shape [3, 3]; gx.cat([a, b], 1); gx.cat([a, b], { axis: 1 })
 */
export function cat<D extends DType>(tensors: readonly Tensor<D>[], axis: number | AxisOptions = 0): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.cat', '(tensors, axis?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.cat';
  const dim = axisArg(axis, fn) ?? 0;
  const inputs = checkInputs(tensors, fn);
  const skip = (x: Tensor): boolean => x.ndim === 1 && x.shape[0] === 0;
  const refIndex = inputs.findIndex((x) => !skip(x));
  if (refIndex < 0) {
    checkInt(dim, fn, 'axis');
    return copyInto<D>(inputs, [0], []);
  }
  inputs.forEach((x, i) => {
    if (x.ndim === 0) throw new RangeError(`${fn}: tensors[${i}] is zero-dimensional and cannot be concatenated (unsqueeze it, or use gx.stack)`);
  });
  const ref = inputs[refIndex].shape;
  const d = normalizeAxis(dim, ref, fn, 'axis', 'strict');
  let total = 0;
  inputs.forEach((x, i) => {
    if (skip(x)) return;
    const s = x.shape;
    if (s.length !== ref.length || s.some((v, k) => k !== d && v !== ref[k])) {
      throw new Error(`${fn}: tensors[${i}] has shape ${formatShape(s)} but tensors[${refIndex}] has shape ${formatShape(ref)}; sizes must match except in dimension ${d}`);
    }
    total += s[d];
  });
  const shape = ref.slice();
  shape[d] = total;
  checkRank(shape.length, fn);
  const outStrides = contiguousStrides(shape);
  let at = 0;
  const parts = inputs.map((x): Layout | undefined => {
    if (skip(x) || x.numel === 0) return undefined;
    const p = { shape: x.shape.slice(), strides: outStrides, offset: at * outStrides[d] };
    at += x.shape[d];
    return p;
  });
  const result = copyInto<D>(inputs, shape, parts);
  if (shouldRecord(...inputs)) {
    const offsets = parts.map((p) => (p === undefined ? 0 : p.offset / outStrides[d]));
    const sizes = parts.map((p) => (p === undefined ? 0 : p.shape[d]));
    record('cat', inputs, result, [], (g) => parts.map((p, i) => (p === undefined ? null : narrow(g, d, offsets[i], sizes[i]))));
  }
  return result;
}

/**
 * The inputs, all of one shape, stacked along a new axis `axis` (default 0,
 * in [-ndim - 1, ndim]) into a new tensor. All inputs must share a dtype and
 * device. Always a copy.
 * @example gx.stack([gx.zeros([3]), gx.ones([3])], 1) // shape [3, 2]
 */
export function stack<D extends DType>(tensors: readonly Tensor<D>[], axis: number | AxisOptions = 0): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.stack', '(tensors, axis?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.stack';
  const dim = axisArg(axis, fn) ?? 0;
  const inputs = checkInputs(tensors, fn);
  const ref = inputs[0].shape;
  const n = ref.length;
  const d = normalizeAxis(dim, ref, fn, 'axis', 'insert');
  inputs.forEach((x, i) => {
    const s = x.shape;
    if (s.length !== n || s.some((v, k) => v !== ref[k])) {
      throw new Error(`${fn}: tensors[${i}] has shape ${formatShape(s)} but tensors[0] has shape ${formatShape(ref)}; stack needs equal shapes`);
    }
  });
  checkRank(n + 1, fn);
  const shape = ref.slice();
  shape.splice(d, 0, inputs.length);
  const outStrides = contiguousStrides(shape);
  const partStrides = outStrides.filter((_, k) => k !== d);
  const parts = inputs.map((x, i): Layout | undefined =>
    x.numel === 0 ? undefined : { shape: ref.slice(), strides: partStrides, offset: i * outStrides[d] });
  const result = copyInto<D>(inputs, shape, parts);
  if (shouldRecord(...inputs)) record('stack', inputs, result, [], (g) => inputs.map((_, i) => narrow(g, d, i, 1).squeeze(d)));
  return result;
}
