// Indexing as PyTorch and NumPy have it: x.index(...items) reads, x.set(index,
// value) and gx.indexPut_ write (./index-write.ts), and x.get('...') /
// x.set('...', v) take the same items written as Python's subscript. Tensor
// methods in ./methods.ts.
//
// NOTE [ Index expressions ]
// An item is
//   an integer        picks that index and drops the dimension (negative counts from the end)
//   gx.sl(...)        a slice start:end:step (Python's slice(); { start, end, step } is the object it makes)
//   null              a new dimension of size 1 (None)
//   '...'             as many whole dimensions as the other items leave (Ellipsis), at most once
//   an index tensor   int64 or int32: advanced indexing along one dimension
//   a bool tensor     a mask over as many dimensions as it has (advanced: its nonzero() indices)
//   a JS array        of integers or of booleans (nested for several dimensions): as a tensor of them
// Integers, slices, null and '...' are basic indexing: the result is a view
// sharing x's storage (x.index(0, gx.sl(1, null, 2)) is Python's x[0, 1::2]),
// as in PyTorch, with steps >= 1 (PyTorch refuses negative ones, so do we).
// Index and bool tensors are advanced indexing: a copy. Their shapes (a mask
// counts as its nonzero() columns) broadcast together to B; the result has B
// where the advanced dimensions were when they are next to each other (after
// the basic items are applied, as PyTorch decides it), else B first, then
// the other dimensions. x.index(mask) with a mask of all of x's dimensions
// is maskedSelect (one pass, no index tensors). On CUDA, masks and index
// checks read back from the GPU (nonzero's count; the check of the index
// values), as torch's do.
//
// Writing takes the same items: a basic index writes through the view (the
// value broadcast to it, converted to x's dtype), an advanced one through
// the index_put kernel (accumulate: atomics on CUDA, any order). Under
// autograd the write records as torch's index_put_ (NOTE [ Autograd and
// in-place ops ] in tape/graph.ts; index-write.ts).
//
// x.get / x.set's string is the subscript between Python's brackets:
// '0, 1::2, None, ...' (integers, slices with any part left out, None,
// '...'). x.index is the main form: it takes tensors and values computed in
// JS; the string is for literal indices.
import { record, shouldRecord } from '../../tape/graph';
import { allocate, tensor } from '../creation/creation';
import * as ops from '../../generated/ops';
import { broadcastShapes as broadcastShapeList, contiguousStrides, describeValue, formatShape, MAX_DIMS } from '../../core/shape';
import { copyValues, Tensor } from '../../core/tensor';
import { checkTensor, describeOperand } from '../common';
import { resolveRange } from '../layout/layout';
import { namedForCaller } from '../library';
import { maskedSelectRaw, nonzeroRaw } from './scatter-family';

/** A slice start:end:step: what gx.sl makes (any part null or absent: Python's default). */
export interface Slice {
  readonly start?: number | null;
  readonly end?: number | null;
  readonly step?: number | null;
}

/** A nested JS list of integers or booleans: an index (or mask) tensor made from it. */
export type IndexList = readonly (number | boolean | IndexList)[];

/** One item of an index expression (NOTE [ Index expressions ]). */
export type IndexItem = number | Slice | null | '...' | Tensor | IndexList;

/**
 * A slice for x.index, as Python's slice(): `gx.sl(end)`, `gx.sl(start,
 * end)`, `gx.sl(start, end, step)`; null (or undefined) for a part left out.
 * `gx.sl()` is `:`, `gx.sl(1, null)` is `1:`, `gx.sl(null, null, 2)` is `::2`.
 * @example x.index(0, gx.sl(1, null, 2), null, '...') // Python's x[0, 1::2, None, ...]
 */
export function sl(...args: (number | null | undefined)[]): Slice {
  if (args.length > 3) throw new TypeError(`gx.sl: takes at most 3 arguments (start, end, step), got ${args.length}`);
  const [start, end, step] = args.length === 1 ? [null, args[0], null] : args;
  args.forEach((v, i) => {
    if (v !== null && v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v))) {
      throw new TypeError(`gx.sl: argument ${i} must be an integer, null or undefined, got ${describeValue(v)}`);
    }
  });
  return Object.freeze({ start: start ?? null, end: end ?? null, step: step ?? null });
}

// --- reading the items -------------------------------------------------------------

export type Item =
  | { kind: 'int'; value: number }
  | { kind: 'slice'; start: unknown; end: unknown; step: unknown }
  | { kind: 'new' }
  | { kind: 'ellipsis' }
  | { kind: 'tensor'; t: Tensor }
  | { kind: 'mask'; t: Tensor };

const SLICE_KEYS = new Set(['start', 'end', 'step']);

function isSlice(v: unknown): v is Slice {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Tensor) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && Object.keys(v).every((k) => SLICE_KEYS.has(k));
}

/** Whether a nested list holds booleans (a mask) rather than integers; its first leaf decides. */
function listOfBooleans(v: IndexList): boolean {
  let e: unknown = v;
  while (Array.isArray(e) && e.length > 0) e = e[0];
  return typeof e === 'boolean';
}

/**
 * The items, checked; JS lists become tensors on x's device (in `made`, for
 * the caller to dispose).
 */
export function readItems(raw: readonly unknown[], x: Tensor, fn: string, made: Tensor[]): Item[] {
  return raw.map((v, i): Item => {
    if (typeof v === 'number') {
      if (!Number.isSafeInteger(v)) throw new TypeError(`${fn}: index ${i} must be an integer, got ${v}`);
      return { kind: 'int', value: v };
    }
    if (v === null) return { kind: 'new' };
    if (v === '...') return { kind: 'ellipsis' };
    if (v instanceof Tensor) {
      v.handle(fn);
      if (v.dtype === 'bool') return { kind: 'mask', t: v };
      if (v.dtype === 'int64' || v.dtype === 'int32') return { kind: 'tensor', t: v };
      throw new TypeError(`${fn}: a tensor used as an index must be int64, int32 or bool, got ${describeOperand(v)} at index ${i}`);
    }
    if (Array.isArray(v)) {
      const bool = listOfBooleans(v as IndexList);
      const t = tensor(v as never, { dtype: bool ? 'bool' : 'int64', device: x.device });
      made.push(t);
      return bool ? { kind: 'mask', t } : { kind: 'tensor', t };
    }
    if (isSlice(v)) return { kind: 'slice', start: v.start, end: v.end, step: v.step };
    if (typeof v === 'string') {
      throw new TypeError(`${fn}: the string ${JSON.stringify(v)} at index ${i} is not an item; '...' is the one string item ` +
        `(write slices as gx.sl(start, end, step), or the whole expression as x.get('${v}'))`);
    }
    throw new TypeError(`${fn}: index ${i} must be an integer, gx.sl(...), null, '...', a tensor or an array, got ${describeValue(v)}`);
  });
}

const INT = /^[-+]?\d+$/;
const SLICE = /^([-+]?\d+)?\s*:\s*([-+]?\d+)?\s*(?::\s*([-+]?\d+)?)?$/;

/** A list of integers or booleans (True/False), nested or not: '[0, 2]', '[[True, False]]'. */
const LIST = /^\[[\s\d+\-,[\]]*(?:(?:True|False)[\s,[\]]*)*\]$/;

/** The text split at the commas outside brackets. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0, start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '[') depth++;
    else if (c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

/** A list item's text as the JS list it writes, or undefined when it is not one. */
function parseList(p: string): IndexList | undefined {
  if (!p.startsWith('[') || !LIST.test(p.replace(/True|False/g, ''))) return undefined;
  try {
    const v: unknown = JSON.parse(p.replace(/True/g, 'true').replace(/False/g, 'false').replace(/\+(\d)/g, '$1'));
    return Array.isArray(v) ? (v as IndexList) : undefined;
  } catch {
    return undefined;
  }
}

/** Python's subscript text as items: '0, 1::2, None, ..., [0, 2]'. */
export function parseIndexString(expr: string, fn: string): IndexItem[] {
  const text = expr.trim();
  if (text === '') return [];
  const parts = topLevelParts(text);
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();  // a trailing comma, as in Python
  return parts.map((p, i): IndexItem => {
    if (p === '...') return '...';
    if (p === 'None') return null;
    if (INT.test(p)) return Number(p);
    const list = parseList(p);
    if (list !== undefined) return list;
    const m = SLICE.exec(p);
    if (m !== null) {
      const part = (s: string | undefined): number | null => (s === undefined ? null : Number(s));
      return sl(part(m[1]), part(m[2]), part(m[3]));
    }
    throw new SyntaxError(`${fn}: cannot read ${JSON.stringify(p)} (item ${i} of ${JSON.stringify(expr)}): expected an integer, ` +
      "a slice start:end:step (any part may be left out), None, '...' or a list of integers or booleans ([0, 2], [True, False])");
  });
}

// --- basic indexing: the view -------------------------------------------------------

interface Layout {
  shape: readonly number[];
  strides: readonly number[];
  offset: number;
}

/** One dimension of the view: x's dimension `xdim` sliced (first, count, step), or a new one (xdim null). */
interface ViewDim {
  xdim: number | null;
  first: number;
  count: number;
  step: number;
}

/** An advanced item: at the view's dimension `dim` (a mask: its first), from x's dimension `xdim`. */
interface Advanced {
  dim: number;
  xdim: number;
  t: Tensor;
  mask: boolean;
}

/** What the items do to a tensor of x's shape: the view's dimensions, the picked indices, the advanced items. */
export interface Plan {
  dims: ViewDim[];
  fixed: { xdim: number; index: number }[];
  adv: Advanced[];
}

export function plan(shape: readonly number[], items: Item[], fn: string, made: Tensor[]): Plan {
  const ndim = shape.length;
  const consumed = (it: Item): number => (it.kind === 'int' || it.kind === 'slice' || it.kind === 'tensor' ? 1 : it.kind === 'mask' ? it.t.shape.length : 0);
  const ellipses = items.filter((it) => it.kind === 'ellipsis').length;
  if (ellipses > 1) throw new Error(`${fn}: an index can only have a single ellipsis ('...'), got ${ellipses}`);
  const used = items.reduce((s, it) => s + consumed(it), 0);
  if (used > ndim) {
    throw new RangeError(`${fn}: too many indices for a tensor of ${ndim} dimension${ndim === 1 ? '' : 's'} ` +
      `(shape ${formatShape(shape)}): they take ${used}`);
  }
  const p: Plan = { dims: [], fixed: [], adv: [] };
  const whole = (d: number): ViewDim => ({ xdim: d, first: 0, count: shape[d], step: 1 });
  let d = 0;
  for (const it of items) {
    switch (it.kind) {
      case 'int': {
        const size = shape[d];
        const i = it.value;
        if (i < -size || i >= size) throw new RangeError(`${fn}: index ${i} is out of range for dimension ${d} of size ${size}`);
        p.fixed.push({ xdim: d, index: i < 0 ? i + size : i });
        d++;
        break;
      }
      case 'slice': {
        const r = resolveRange(shape[d], it.start, it.end, it.step, fn, '');
        p.dims.push({ xdim: d, first: r.first, count: r.count, step: r.step });
        d++;
        break;
      }
      case 'new':
        p.dims.push({ xdim: null, first: 0, count: 1, step: 1 });
        break;
      case 'ellipsis':
        for (let k = 0; k < ndim - used; k++) p.dims.push(whole(d++));
        break;
      case 'tensor':
        p.adv.push({ dim: p.dims.length, xdim: d, t: it.t, mask: false });
        p.dims.push(whole(d++));
        break;
      case 'mask': {
        const m = it.t;
        if (m.shape.length === 0) {
          // A 0-d mask: a new dimension of size 1, kept (true) or not (false), as PyTorch.
          const one = m.reshape([1]);
          made.push(one);
          p.adv.push({ dim: p.dims.length, xdim: d, t: one, mask: true });
          p.dims.push({ xdim: null, first: 0, count: 1, step: 1 });
          break;
        }
        const covered = shape.slice(d, d + m.shape.length);
        if (m.shape.some((s, k) => s !== covered[k])) {
          throw new Error(`${fn}: the mask of shape ${formatShape(m.shape)} does not match dimensions ${d} to ` +
            `${d + m.shape.length - 1} of the indexed tensor (shape ${formatShape(shape)})`);
        }
        p.adv.push({ dim: p.dims.length, xdim: d, t: m, mask: true });
        for (let k = 0; k < m.shape.length; k++) p.dims.push(whole(d++));
        break;
      }
    }
  }
  while (d < ndim) p.dims.push(whole(d++));
  if (p.dims.length > MAX_DIMS) throw new RangeError(`${fn}: the result would have ${p.dims.length} dimensions; at most ${MAX_DIMS} are supported`);
  return p;
}

/** The view the plan's basic items make of a tensor laid out as `l`. */
export function viewLayout(l: Layout, p: Plan): Layout {
  let offset = l.offset;
  for (const f of p.fixed) offset += f.index * l.strides[f.xdim];
  const shape = p.dims.map((v) => v.count);
  const strides = p.dims.map((v) => (v.xdim === null ? 0 : l.strides[v.xdim] * v.step));
  for (const v of p.dims) if (v.xdim !== null) offset += v.first * l.strides[v.xdim];
  // A new dimension gets the stride a contiguous tensor would have there (as unsqueeze).
  for (let i = p.dims.length - 1; i >= 0; i--) if (p.dims[i].xdim === null) strides[i] = i + 1 < shape.length ? shape[i + 1] * strides[i + 1] : 1;
  return { shape, strides, offset };
}

export const layoutOf = (t: Tensor): Layout => ({ shape: t.shape, strides: t.strides, offset: t.storageOffset });

/** x's view by the plan's basic items, recorded for autograd (its gradient: zeros with g written through the same view). */
function basicView(x: Tensor, p: Plan): Tensor {
  const l = viewLayout(layoutOf(x), p);
  const v = x.asStrided(l.shape, l.strides, l.offset);
  if (shouldRecord(x)) {
    const shape = x.shape.slice(), dtype = x.dtype, device = x.device;
    const dims = p.dims.map((d) => ({ ...d })), fixed = p.fixed.slice();
    record('index', [x], v, [], (g) => {
      const z = allocate(shape, dtype, device, undefined, 'autograd').fill_(0);
      const zl = viewLayout({ shape, strides: contiguousStrides(shape), offset: 0 }, { dims, fixed, adv: [] });
      const w = z.asStrided(zl.shape, zl.strides, zl.offset);
      copyValues(w, g, 'autograd');
      w.dispose();
      return [z];
    });
  }
  return v;
}

// --- advanced indexing ---------------------------------------------------------------

/** An index tensor at the view's dimension `dim`, x's dimension `xdim`. */
interface IndexAt {
  dim: number;
  xdim: number;
  t: Tensor;
}

/** The advanced items as index tensors on `device` (masks as their nonzero() columns); new tensors go to `made`. */
export function indexTensors(adv: Advanced[], device: Tensor['device'], fn: string, made: Tensor[]): IndexAt[] {
  const out: IndexAt[] = [];
  for (const a of adv) {
    let t = a.t;
    if (!t.device.equals(device)) {
      if (t.device.type !== 'cpu') throw new Error(`${fn}: an index tensor is on ${t.device} but the indexed tensor is on ${device}`);
      t = t.to(device);  // CPU indices for a CUDA tensor, as torch allows
      made.push(t);
    }
    if (!a.mask) {
      out.push({ dim: a.dim, xdim: a.xdim, t });
      continue;
    }
    const nz = nonzeroRaw(t, fn);
    made.push(nz);
    const [n, k] = nz.shape;
    for (let j = 0; j < k; j++) {
      const col = nz.asStrided([n], [k], nz.storageOffset + j);
      made.push(col);
      out.push({ dim: a.dim + j, xdim: a.xdim + j, t: col });
    }
  }
  return out;
}

/**
 * Where the advanced dimensions go (NOTE [ Index expressions ]): the
 * result's shape R (the view's dimensions `before`, B, the view's dimensions
 * `after`) and the strides that make each index a view of R (NOTE [
 * Advanced indexing ] in ops/index/advanced_index.h).
 */
interface Geometry {
  shape: number[];
  before: number[];
  after: number[];
  b: readonly number[];
  indexStrides: number[][];
  sizes: number[];
  dims: number[];
  xdims: number[];
}

export function geometry(viewShape: readonly number[], idx: IndexAt[], fn: string): Geometry {
  let b: readonly number[];
  try {
    b = broadcastShapeList(idx.map((i) => i.t.shape), fn);
  } catch {
    throw new Error(`${fn}: shape mismatch: the index tensors could not be broadcast together with shapes ` +
      `${idx.map((i) => formatShape(i.t.shape)).join(', ')}`);
  }
  const dims = idx.map((i) => i.dim);
  const adjacent = dims.every((d, k) => k === 0 || d === dims[k - 1] + 1);
  const rest = viewShape.map((_, d) => d).filter((d) => !dims.includes(d));
  const before = rest.filter((d) => adjacent && d < dims[0]);
  const after = rest.filter((d) => !before.includes(d));
  const shape = [...before.map((d) => viewShape[d]), ...b, ...after.map((d) => viewShape[d])];
  if (shape.length > MAX_DIMS) throw new RangeError(`${fn}: the result would have ${shape.length} dimensions; at most ${MAX_DIMS} are supported`);
  const indexStrides = idx.map((i) => {
    const lead = b.length - i.t.shape.length;
    const inB = b.map((_, k) => (k < lead || i.t.shape[k - lead] === 1 ? 0 : i.t.strides[k - lead]));
    return [...before.map(() => 0), ...inB, ...after.map(() => 0)];
  });
  return { shape, before, after, b, indexStrides, sizes: dims.map((d) => viewShape[d]), dims, xdims: idx.map((i) => i.xdim) };
}

/** The strides that make a view laid out with `strides` (the basic view's) a view of R: 0 along B. */
function selfStrides(g: Geometry, strides: readonly number[]): number[] {
  return [...g.before.map((d) => strides[d]), ...g.b.map(() => 0), ...g.after.map((d) => strides[d])];
}

/** The views of a geometry: `base` (laid out as `l`) and each index restrided to R; new tensors go to `made`. */
export function geometryViews(base: Tensor, l: Layout, idx: IndexAt[], g: Geometry, made: Tensor[]): { self: Tensor; indices: Tensor[] } {
  const self = base.asStrided(g.shape, selfStrides(g, l.strides), l.offset);
  made.push(self);
  const indices = idx.map((i, k) => {
    const v = i.t.asStrided(g.shape, g.indexStrides[k], i.t.storageOffset);
    made.push(v);
    return v;
  });
  return { self, indices };
}

/** base's elements at the advanced items (base is the basic view; its layout `l` in its storage). */
function advancedRead(base: Tensor, adv: Advanced[], fn: string, made: Tensor[]): Tensor {
  // A mask over every dimension: one compaction pass.
  if (adv.length === 1 && adv[0].mask && adv[0].t.shape.length === base.shape.length && adv[0].t.device.equals(base.device)) {
    return maskedSelectRaw(base, adv[0].t, fn);
  }
  const idx = indexTensors(adv, base.device, fn, made);
  const l = layoutOf(base);
  const g = geometry(l.shape, idx, fn);
  const { self, indices } = geometryViews(base, l, idx, g, made);
  const out = allocate(g.shape, base.dtype, base.device, undefined, fn);
  try {
    ops.index(fn, {
      self: self.handle(fn), indices: indices.map((t) => t.handle(fn)), sizes: g.sizes, strides: g.dims.map((d) => l.strides[d]),
      dims: g.xdims, out: out.handle(fn),
    });
  } catch (e) {
    out.dispose();
    throw namedForCaller(e, fn);
  }
  if (shouldRecord(base)) {
    const shape = base.shape.slice(), dtype = base.dtype, device = base.device;
    // The gradient: zeros of base's shape with g added at the same places (index_put with accumulate).
    record('index', [base], out, indices, (grad, saved) => {
      const z = allocate(shape, dtype, device, undefined, 'autograd').fill_(0);
      const cs = contiguousStrides(shape);
      const v = z.asStrided(g.shape, selfStrides(g, cs), 0);
      try {
        ops.indexPut('autograd', {
          self: v.handle('autograd'), indices: saved.map((t) => t.handle('autograd')), sizes: g.sizes, strides: g.dims.map((d) => cs[d]),
          dims: g.xdims, values: grad.handle('autograd'), accumulate: true,
        });
      } finally {
        v.dispose();
      }
      return [z];
    });
  }
  return out;
}

/** @internal x.index(...items). */
export function indexRead(a: unknown, items: readonly unknown[], fn: string): Tensor {
  const x = checkTensor(a, fn, 'self');
  const made: Tensor[] = [];
  try {
    const p = plan(x.shape, readItems(items, x, fn, made), fn, made);
    const base = basicView(x, p);
    if (p.adv.length === 0) return base;
    try {
      return advancedRead(base, p.adv, fn, made);
    } finally {
      base.dispose();
    }
  } finally {
    for (const t of made) if (!t.isDisposed) t.dispose();
  }
}
