// Writing at index items: x.set(index, value) and gx.indexPut_ (NOTE [ Index
// expressions ] in ./index-expr.ts, whose reading of the items they share).
//
// NOTE [ index_put under autograd ]
// A write autograd must see (grad mode on, and self, its base or a value
// tensor taking part) records as torch's index_put_ does, through the path
// of every in-place op (NOTE [ Autograd and in-place ops ] in tape/graph.ts):
// computeResult computes its out-of-place twin, indexPutOutOfPlace, from a
// recorded clone of self and copies the result into self. The twin records
// torch's derivative of index_put: self's gradient is g with zeros at the
// indexed places (accumulate: g itself), the value's is g read at them,
// g[indices] in the indexed shape, at every repeat of a repeated index even
// where another repeat's value is the one kept (torch's too), which the
// engine sums down to the value's shape and converts to its dtype; a number
// value gets none. Both are the index ops themselves (the twin and
// indexRead) on the items again, their tensors saved by the node (version
// checked, kept through a dispose), so they record under createGraph and a
// second derivative goes through them.
import { record, requiresGrad, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import { allocate } from '../creation/creation';
import * as ops from '../../generated/ops';
import { describeValue, formatShape } from '../../core/shape';
import { copyValues, Tensor } from '../../core/tensor';
import { booleanOption, optionKeys, tooManyArguments } from '../../core/options';
import { checkOperand, checkTensor, computeResult, optionsOf } from '../common';
import { astypeOp, BINARY, binaryOp, whereOp } from '../elementwise/elementwise';
import { namedForCaller } from '../library';
import {
  geometry, geometryViews, indexRead, indexTensors, layoutOf, parseIndexString, plan, readItems, viewLayout, type IndexItem, type Item,
} from './index-expr';

/** The index argument of set / indexPut_: a string, one item, or an array of items (Python's tuple). */
function itemsOf(index: unknown, fn: string): readonly unknown[] {
  if (typeof index === 'string' && index !== '...') return parseIndexString(index, fn);
  if (Array.isArray(index)) return index as unknown[];
  return [index];
}

/** The value as a tensor of x's dtype on x's device (a new one when converted; a number becomes a 0-d tensor). */
function valueTensor(v: unknown, x: Tensor, fn: string, made: Tensor[]): Tensor {
  const o = checkOperand(v, fn, 'value');
  if (!(o instanceof Tensor)) {
    const t = allocate([], x.dtype, x.device, undefined, fn).fill_(o, fn);
    made.push(t);
    return t;
  }
  let t = o;
  if (!t.device.equals(x.device)) throw new Error(`${fn}: value is on ${t.device} but self is on ${x.device}; move it with .to('${x.device}')`);
  if (t.dtype !== x.dtype) {
    t = astypeOp(t, x.dtype, fn);
    made.push(t);
  }
  return t;
}

/** t viewed with `shape` (broadcast); an Error naming the shapes when it does not broadcast. */
function expandTo(t: Tensor, shape: readonly number[], fn: string, made: Tensor[]): Tensor {
  if (t.shape.length === shape.length && t.shape.every((s, d) => s === shape[d])) return t;
  const lead = shape.length - t.shape.length;
  if (lead < 0 || t.shape.some((s, d) => s !== 1 && s !== shape[d + lead])) {
    throw new Error(`${fn}: shape mismatch: value of shape ${formatShape(t.shape)} cannot be broadcast to the indexed shape ${formatShape(shape)}`);
  }
  const v = t.asStrided(shape, shape.map((_, d) => (d < lead || t.shape[d - lead] === 1 ? 0 : t.strides[d - lead])), t.storageOffset);
  made.push(v);
  return v;
}

/** Writes `value` (or with accumulate, adds it) into x at the items, unrecorded: the kernels' part of both forms. */
function writeAt(x: Tensor, items: Item[], value: unknown, accumulate: boolean, fn: string): void {
  const made: Tensor[] = [];
  try {
    const p = plan(x.shape, items, fn, made);
    const l = viewLayout(layoutOf(x), p);
    const base = x.asStrided(l.shape, l.strides, l.offset);
    made.push(base);
    // The value never shares x's memory here: indexWrite's computeResult writes through a temporary when it (or an
    // index tensor) does, and indexPutOutOfPlace writes into a clone.
    const v = valueTensor(value, x, fn, made);
    if (p.adv.length === 0) {
      const e = expandTo(v, base.shape, fn, made);
      if (accumulate) binaryOp(BINARY.add, base, e, fn, undefined, true);
      else copyValues(base, e, fn);
      return;
    }
    const m = p.adv[0];
    if (p.adv.length === 1 && m.mask && m.t.shape.length === base.shape.length && !accumulate && v.shape.length === 0 && m.t.device.equals(x.device)) {
      whereOp(m.t, v, base, fn, { out: base });  // x[mask] = scalar: elementwise, no index tensors
      return;
    }
    const idx = indexTensors(p.adv, x.device, fn, made);
    const g = geometry(l.shape, idx, fn);
    const { self, indices } = geometryViews(base, l, idx, g, made);
    const values = expandTo(v, g.shape, fn, made);
    ops.indexPut(fn, {
      self: self.handle(fn), indices: indices.map((t) => t.handle(fn)), sizes: g.sizes, strides: g.dims.map((d) => l.strides[d]), dims: g.xdims,
      values: values.handle(fn), accumulate,
    });
  } finally {
    for (const t of made) if (!t.isDisposed) t.dispose();
  }
}

/** An item as index items write it, its tensor left out (`HELD`: the backward takes it from the node's saved tensors). */
const HELD = Symbol('held');
function itemSpec(it: Item): unknown {
  switch (it.kind) {
    case 'int': return it.value;
    case 'slice': return { start: it.start, end: it.end, step: it.step };
    case 'new': return null;
    case 'ellipsis': return '...';
    default: return HELD;
  }
}

/**
 * x with `value` written (or with accumulate, added) at the items, a new tensor: the out-of-place twin of
 * indexWrite, recorded with torch's derivative of index_put (NOTE [ index_put under autograd ]).
 */
export function indexPutOutOfPlace(x: Tensor, rawItems: readonly unknown[], value: unknown, accumulate: boolean, fn: string): Tensor {
  const made: Tensor[] = [];
  try {
    const items = readItems(rawItems, x, fn, made);
    const out = noGrad(() => x.clone());
    try {
      noGrad(() => writeAt(out, items, value, accumulate, fn));
    } catch (e) {
      out.dispose();
      throw e;
    }
    if (!shouldRecord(x, value)) return out;
    const held: Tensor[] = [];
    for (const it of items) if (it.kind === 'tensor' || it.kind === 'mask') held.push(it.t);
    const spec = items.map(itemSpec);
    const selfGrad = requiresGrad(x), valueGrad = requiresGrad(value);  // an input that takes no gradient gets none computed
    return record('indexPut', [x, value], out, held, (g, saved) => {
      let k = 0;
      const again = spec.map((s) => (s === HELD ? saved[k++] : s));
      const gSelf = !selfGrad ? null : accumulate ? g : indexPutOutOfPlace(g, again, 0, false, fn);
      const gValue = valueGrad ? indexRead(g, again, fn) : null;
      return [gSelf, gValue];
    });
  } finally {
    for (const t of made) if (!t.isDisposed) t.dispose();
  }
}

/** @internal x.set(index, value) and gx.indexPut_: writes `value` at the items, in place; returns x. */
export function indexWrite(a: unknown, index: unknown, value: unknown, accumulate: boolean, fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const raw = itemsOf(index, fn);
  const inputs = [value, ...raw.filter((it) => it instanceof Tensor)];
  // Recorded as its twin from a clone of x, copied in, when autograd must see it (NOTE [ index_put under autograd ]).
  const outOfPlace = (self: Tensor): Tensor => indexPutOutOfPlace(self, raw, value, accumulate, fn);
  try {
    // computeResult checks x for in-place writes (autograd, self-overlap) and goes through a temporary when the value or an index shares its memory.
    return computeResult(x.shape, x.dtype, x.device, fn, { inplace: x, inputs, elementwise: false, outOfPlace }, (r) => {
      const made: Tensor[] = [];
      try {
        if (r !== x) copyValues(r, x, fn);
        writeAt(r, readItems(raw, x, fn, made), value, accumulate, fn);
      } finally {
        for (const t of made) if (!t.isDisposed) t.dispose();
      }
    });
  } catch (e) {
    throw namedForCaller(e, fn);
  }
}

export interface IndexPutOptions {
  /** Add the values to what is there (repeated places add up: atomics on CUDA) instead of assigning (default false). */
  accumulate?: boolean;
}
const INDEX_PUT_KEYS = optionKeys<IndexPutOptions>({ accumulate: true });

/** @internal gx.indexPut_ and Tensor.indexPut_. */
export function indexPutImpl(a: unknown, indices: unknown, values: unknown, opts: unknown, fn: string): Tensor {
  const o = optionsOf<IndexPutOptions>(opts, fn, INDEX_PUT_KEYS);
  const accumulate = booleanOption(fn, 'accumulate', o.accumulate, false);
  if (!Array.isArray(indices)) throw new TypeError(`${fn}: indices must be an array of index items (tensors, integers, gx.sl(...), null, '...'), got ${describeValue(indices)}`);
  return indexWrite(a, indices, values, accumulate, fn);
}

/**
 * Writes `values` into x at `indices` (an array of items, Python's tuple:
 * index tensors, masks, integers, gx.sl(...), null, '...'), in place, as
 * torch's index_put_: values broadcast to the indexed shape and are
 * converted to x's dtype; `{ accumulate: true }` adds them instead (repeated
 * places add up; on CUDA with atomics, in no fixed order). Returns x. Under
 * autograd it records as torch's (x and a tensor `values` get gradients); a
 * leaf that requires grad is refused, as every in-place op on one.
 * @example gx.indexPut_(x, [rows, cols], gx.ones([3]), { accumulate: true })
 */
export function indexPut_<T extends Tensor>(x: T, indices: readonly IndexItem[], values: Tensor | number | boolean | bigint, opts?: IndexPutOptions): T {
  if (arguments.length > 4) tooManyArguments('gx.indexPut_', '(x, indices, values, options?)', arguments.length - 4, arguments[4]);
  return indexPutImpl(x, indices, values, opts, 'gx.indexPut_') as T;
}
