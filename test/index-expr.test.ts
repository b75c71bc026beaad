// x.index, x.get, x.set and gx.indexPut_ (lib/ops/indexing/index-expr.ts) against a
// plain-JS reference of PyTorch's indexing, on every device: random
// expressions mixing every item form (integers, negative ones, gx.sl in its
// three spellings, null, '...', int64 and int32 index tensors, bool masks
// over one or several dimensions and 0-d, JS arrays of integers and of
// booleans), on transposed and sliced inputs and transposed index tensors,
// several dtypes; basic indexing is a view; the placement of the advanced
// dimensions; the string form; writes (assign and accumulate, repeated
// indices, broadcast and converted values); empty tensors; gradients
// (gradcheck); in-place refusal under autograd; the errors; no leaks.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, rng } from './helpers';
import { unravel, ravel, numel as numelOf, numbers } from './ops-reference';

// --- the reference -------------------------------------------------------------------

interface Arr {
  shape: number[];
  values: number[];
}
type RItem = { int: number } | { slice: (number | null)[] } | 'new' | '...' | { idx: Arr } | { mask: Arr };


/** Python's range(n)[start:end:step] for step >= 1. */
function pySlice(n: number, start: number | null | undefined, end: number | null | undefined, step: number | null | undefined): number[] {
  const st = step ?? 1;
  const norm = (v: number | null | undefined, dflt: number): number => {
    if (v === null || v === undefined) return dflt;
    const w = v < 0 ? v + n : v;
    return Math.min(Math.max(w, 0), n);
  };
  const out: number[] = [];
  for (let i = norm(start, 0); i < norm(end, n); i += st) out.push(i);
  return out;
}

function broadcast(shapes: readonly (readonly number[])[]): number[] {
  const n = Math.max(0, ...shapes.map((s) => s.length));
  return Array.from({ length: n }, (_, k) => {
    let size = 1;
    for (const s of shapes) {
      const v = s[k - (n - s.length)] ?? 1;
      if (v !== 1) size = v;
    }
    return size;
  });
}

/** What x[items] reads, as PyTorch: the result's shape and, per element, the flat index into x it comes from. */
function refIndex(xshape: readonly number[], items: RItem[]): { shape: number[]; from: number[] } {
  const takes = (it: RItem): number => (it === 'new' || it === '...' ? 0 : 'mask' in it ? it.mask.shape.length : 1);
  const used = items.reduce((s, it) => s + takes(it), 0);
  const vdims: { xdim: number | null; idx: number[] }[] = [];
  const fixed = new Map<number, number>();
  const adv: { vdim: number; shape: number[]; values: number[] }[] = [];
  let d = 0;
  const whole = (): void => {
    vdims.push({ xdim: d, idx: pySlice(xshape[d], null, null, 1) });
    d++;
  };
  for (const it of items) {
    if (it === '...') for (let k = 0; k < xshape.length - used; k++) whole();
    else if (it === 'new') vdims.push({ xdim: null, idx: [0] });
    else if ('int' in it) { fixed.set(d, it.int < 0 ? it.int + xshape[d] : it.int); d++; }
    else if ('slice' in it) { vdims.push({ xdim: d, idx: pySlice(xshape[d], it.slice[0], it.slice[1], it.slice[2]) }); d++; }
    else if ('idx' in it) { adv.push({ vdim: vdims.length, shape: it.idx.shape, values: it.idx.values }); whole(); }
    else {
      const m = it.mask;
      const kept = m.values.map((v, i) => (v ? i : -1)).filter((i) => i >= 0);
      if (m.shape.length === 0) {
        adv.push({ vdim: vdims.length, shape: [kept.length], values: kept.map(() => 0) });
        vdims.push({ xdim: null, idx: [0] });
      } else {
        for (let j = 0; j < m.shape.length; j++) {
          adv.push({ vdim: vdims.length + j, shape: [kept.length], values: kept.map((i) => unravel(i, m.shape)[j]) });
        }
        for (let j = 0; j < m.shape.length; j++) whole();
      }
    }
  }
  while (d < xshape.length) whole();
  const xOf = (vc: number[]): number => {
    const xc = xshape.map((_, k) => fixed.get(k) ?? 0);
    vdims.forEach((v, k) => { if (v.xdim !== null) xc[v.xdim] = v.idx[vc[k]]; });
    return ravel(xc, xshape);
  };
  if (adv.length === 0) {
    const shape = vdims.map((v) => v.idx.length);
    return { shape, from: Array.from({ length: numelOf(shape) }, (_, p) => xOf(unravel(p, shape))) };
  }
  const b = broadcast(adv.map((a) => a.shape));
  const advDims = adv.map((a) => a.vdim);
  const adjacent = advDims.every((v, k) => k === 0 || v === advDims[k - 1] + 1);
  const rest = vdims.map((_, k) => k).filter((k) => !advDims.includes(k));
  const before = adjacent ? rest.filter((k) => k < advDims[0]) : [];
  const after = rest.filter((k) => !before.includes(k));
  const shape = [...before.map((k) => vdims[k].idx.length), ...b, ...after.map((k) => vdims[k].idx.length)];
  const from = Array.from({ length: numelOf(shape) }, (_, p) => {
    const rc = unravel(p, shape);
    const vc = vdims.map(() => 0);
    before.forEach((k, i) => { vc[k] = rc[i]; });
    after.forEach((k, i) => { vc[k] = rc[before.length + b.length + i]; });
    const bc = rc.slice(before.length, before.length + b.length);
    for (const a of adv) {
      const lead = b.length - a.shape.length;
      const ac = a.shape.map((s, k) => (s === 1 ? 0 : bc[k + lead]));
      const v = a.values[ravel(ac, a.shape)];
      const n = vdims[a.vdim].idx.length;
      vc[a.vdim] = v < 0 ? v + n : v;
    }
    return xOf(vc);
  });
  return { shape, from };
}

// --- random expressions ------------------------------------------------------------

const arrOf = (t: gx.Tensor): Arr => ({ shape: t.shape.slice(), values: numbers(t) });

/** An index tensor of `shape` with values in [-n, n), int64 or int32, sometimes transposed (non-contiguous). */
function indexTensor(shape: number[], n: number, r: () => number, device: string): gx.Tensor {
  const dtype = r() < 0.5 ? 'int64' : 'int32';
  const transposed = shape.length === 2 && r() < 0.5;
  const made = transposed ? [shape[1], shape[0]] : shape;
  const v = Array.from({ length: numelOf(made) }, () => Math.floor(r() * 2 * n) - n);
  const t = gx.tensor(dtype === 'int64' ? v.map(BigInt) : v, { dtype, device, shape: made } as never) as gx.Tensor;
  if (!transposed) return t;
  const tt = t.transpose(0, 1);
  t.dispose();
  return tt;
}

/** A random expression over `shape`: its gx items and reference items. */
function randomExpr(shape: readonly number[], r: () => number, device: string, made: gx.Tensor[]): { items: gx.IndexItem[]; ref: RItem[] } {
  const items: gx.IndexItem[] = [], ref: RItem[] = [];
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const b = pick([[3], [2, 3], [1], [4]]);
  let d = 0, ellipsis = false;
  const ndim = shape.length;
  while (d < ndim) {
    const n = shape[d];
    const left = ndim - d;
    const kind = pick(['int', 'slice', 'slice', 'idx', 'idx', 'mask', 'new', 'ellipsis', 'list', 'stop']);
    if (kind === 'stop' && items.length > 0) break;
    if (kind === 'int') {
      const i = Math.floor(r() * 2 * n) - n;
      items.push(i); ref.push({ int: i }); d++;
    } else if (kind === 'slice') {
      const part = (): number | null => (r() < 0.3 ? null : Math.floor(r() * (2 * n + 3)) - n - 1);
      const s = [part(), part(), r() < 0.5 ? null : 1 + Math.floor(r() * 3)];
      const form = r();
      if (form < 0.2 && s[0] === null && s[2] === null) items.push(gx.sl(s[1]));
      else if (form < 0.4) items.push({ start: s[0], end: s[1], step: s[2] });
      else items.push(gx.sl(s[0], s[1], s[2]));
      ref.push({ slice: s }); d++;
    } else if (kind === 'idx') {
      const shp = b.slice(r() < 0.3 ? 1 : 0);
      const t = indexTensor(shp.length === 0 ? [] : shp, n, r, device);
      made.push(t);
      items.push(t); ref.push({ idx: arrOf(t) }); d++;
    } else if (kind === 'list') {
      const v = Array.from({ length: 2 }, () => Math.floor(r() * 2 * n) - n);
      items.push(v); ref.push({ idx: { shape: [2], values: v } }); d++;
    } else if (kind === 'mask') {
      const k = left >= 2 && r() < 0.4 ? 2 : 1;
      const mshape = shape.slice(d, d + k);
      const mv = Array.from({ length: numelOf(mshape) }, () => (r() < 0.5 ? 1 : 0));
      if (r() < 0.3 && k === 1) {
        items.push(mv.map(Boolean));
      } else {
        const m = gx.tensor(mv.map(Boolean), { dtype: 'bool', device, shape: mshape });
        made.push(m);
        items.push(m);
      }
      ref.push({ mask: { shape: mshape, values: mv } }); d += k;
    } else if (kind === 'new') {
      items.push(null); ref.push('new');
    } else if (kind === 'ellipsis' && !ellipsis) {
      ellipsis = true;
      const skip = Math.floor(r() * (left + 1));
      items.push('...'); ref.push('...');
      d += skip;
      // The reference expands '...' over what the rest leaves: keep the count right by ending the rest here.
      const restItems: RItem[] = [];
      for (let k = d; k < ndim; k++) {
        if (r() < 0.5) { const i = Math.floor(r() * shape[k]); items.push(i); restItems.push({ int: i }); }
        else { items.push(gx.sl(null, null, 2)); restItems.push({ slice: [null, null, 2] }); }
      }
      ref.push(...restItems);
      break;
    }
  }
  // A broadcast of the index shapes may fail (a mask's count against a tensor's): drop the masks then.
  return { items, ref };
}

function broadcastable(ref: RItem[]): boolean {
  const shapes: number[][] = [];
  for (const it of ref) {
    if (typeof it !== 'object') continue;
    if ('idx' in it) shapes.push(it.idx.shape);
    if ('mask' in it) shapes.push([it.mask.values.filter(Boolean).length]);
  }
  const b = broadcast(shapes);
  return shapes.every((s) => s.every((v, k) => v === 1 || v === b[k + b.length - s.length]));
}

const DTYPES: gx.DType[] = ['float32', 'float64', 'float16', 'int64', 'int32', 'uint8', 'bool'];

function valuesOf(dtype: gx.DType, n: number, r: () => number): number[] {
  if (dtype === 'bool') return Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0));
  if (dtype === 'uint8') return Array.from({ length: n }, () => Math.floor(r() * 256));
  return Array.from({ length: n }, () => Math.floor(r() * 200) - 100);
}
const make = (v: number[], dtype: gx.DType, shape: number[], device: string): gx.Tensor =>
  gx.tensor(dtype === 'bool' ? v.map(Boolean) : dtype === 'int64' ? v.map(BigInt) : v, { dtype, device, shape } as never) as gx.Tensor;

function noLeaks(t: ExecutionContext, device: string, body: () => void): void {
  const live = gx.memory.stats(device as never).liveTensors;
  gx.tidy(body);
  t.is(gx.memory.stats(device as never).liveTensors, live, 'no tensor left behind');
}

/** A random input of `shape`: contiguous, transposed, or a stepped slice of a bigger one. */
function input(shape: number[], dtype: gx.DType, r: () => number, device: string): gx.Tensor {
  const form = r();
  if (form < 0.4 || shape.length < 2) return make(valuesOf(dtype, numelOf(shape), r), dtype, shape, device);
  if (form < 0.7) {
    const s = shape.slice();
    [s[0], s[1]] = [s[1], s[0]];
    return make(valuesOf(dtype, numelOf(s), r), dtype, s, device).transpose(0, 1);
  }
  const s = shape.slice();
  s[0] = 2 * s[0] + 1;
  return make(valuesOf(dtype, numelOf(s), r), dtype, s, device).slice(0, 1, null, 2);
}

// --- the tests ------------------------------------------------------------------------

deviceTestSerial('x.index matches the reference on random expressions: every item form, views, dtypes, layouts', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(11);
    const shapes = [[4, 5, 6], [3, 1, 4, 2], [7], [2, 3, 4, 5]];
    let checked = 0, advanced = 0;
    for (let trial = 0; trial < 240; trial++) {
      const shape = shapes[trial % shapes.length];
      const dtype = DTYPES[trial % DTYPES.length];
      const x = input(shape, dtype, r, device);
      const xv = numbers(x);
      const made: gx.Tensor[] = [];
      const { items, ref } = randomExpr(shape, r, device, made);
      if (!broadcastable(ref)) continue;
      const want = refIndex(shape, ref);
      const got = x.index(...items);
      const what = `trial ${trial}: ${dtype} ${JSON.stringify(shape)} [${ref.map((i) => JSON.stringify(i)).join(', ')}]`;
      t.deepEqual(got.shape, want.shape, `${what}: shape`);
      t.deepEqual(numbers(got), want.from.map((o) => xv[o]), `${what}: values`);
      t.is(got.dtype, dtype);
      checked++;
      if (ref.some((i) => typeof i === 'object' && ('idx' in i || 'mask' in i))) advanced++;
    }
    t.true(checked > 150 && advanced > 60, `${checked} expressions checked, ${advanced} with advanced items`);
  });
});

deviceTest('basic indexing is a view (writes go through); advanced indexing is a copy', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.arange(24, { device, dtype: 'float32' }).reshape([2, 3, 4]);
    const v = x.index(1, gx.sl(null, null, 2), null);
    t.deepEqual(v.shape, [2, 1, 4]);
    v.fill_(-1);
    t.deepEqual(numbers(x.index(1)), [-1, -1, -1, -1, 16, 17, 18, 19, -1, -1, -1, -1]);
    const c = x.index(gx.tensor([0], { dtype: 'int64', device }));
    c.fill_(7);
    t.deepEqual(numbers(x.index(0, 0)), [0, 1, 2, 3], 'the copy is not x');
    t.deepEqual(x.index().shape, [2, 3, 4], 'no items: all of x');
    t.deepEqual(x.index('...', null).shape, [2, 3, 4, 1]);
    t.deepEqual(x.index(0, 0, 0).shape, [], 'every dimension picked: 0-d');
  });
});

deviceTest('the placement of the advanced dimensions follows PyTorch', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.zeros([5, 6, 7, 8], { device });
    const i = gx.tensor([[0, 1, 2]], { dtype: 'int64', device });  // [1, 3]
    const j = gx.tensor([1, 2, 3], { dtype: 'int32', device });    // [3]
    t.deepEqual(x.index(gx.sl(), i, j).shape, [5, 1, 3, 8], 'adjacent: in place');
    t.deepEqual(x.index(i, gx.sl(), j).shape, [1, 3, 6, 8], 'apart: first');
    t.deepEqual(x.index(0, gx.sl(), j).shape, [6, 3, 8], 'an integer is applied first (PyTorch, not NumPy)');
    t.deepEqual(x.index(i, null, j).shape, [1, 3, 1, 7, 8], 'a new dimension between them: apart');
    t.deepEqual(x.index('...', j).shape, [5, 6, 7, 3]);
    t.deepEqual(x.index(gx.tensor(2, { dtype: 'int64', device })).shape, [6, 7, 8], 'a 0-d index drops the dimension');
    t.deepEqual(x.index(gx.tensor(true, { device })).shape, [1, 5, 6, 7, 8], 'a 0-d true mask: a new dimension');
    t.deepEqual(x.index(gx.tensor(false, { device })).shape, [0, 5, 6, 7, 8], 'a 0-d false mask: an empty one');
  });
});

deviceTest('x.get parses the subscript; x.set writes with it', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.arange(60, { device }).reshape([3, 4, 5]);
    const same = (a: gx.Tensor, b: gx.Tensor, what: string): void => {
      t.deepEqual(a.shape, b.shape, what);
      t.deepEqual(numbers(a), numbers(b), what);
    };
    same(x.get('0, 1::2, None, ...'), x.index(0, gx.sl(1, null, 2), null, '...'), '0, 1::2, None, ...');
    same(x.get(' -1 , : , 4 '), x.index(-1, gx.sl(), 4), 'spaces, a bare colon');
    same(x.get('::2,'), x.index(gx.sl(null, null, 2)), 'a trailing comma');
    same(x.get('1:-1, :3:2'), x.index(gx.sl(1, -1), gx.sl(null, 3, 2)), 'parts left out');
    same(x.get(''), x, 'nothing: all of x');
    const y = gx.zeros([3, 4], { device, dtype: 'int32' });
    y.set('1, 1:3', 5);
    y.set('::2, -1', gx.tensor([7, 8], { device }));  // float into int32: converted
    t.deepEqual(numbers(y), [0, 0, 0, 7, 0, 5, 5, 0, 0, 0, 0, 8]);
    t.throws(() => x.get('0, 1:2:3:4'), { instanceOf: SyntaxError, message: /^Tensor\.get: cannot read "1:2:3:4" \(item 1 of "0, 1:2:3:4"\)/ });
    t.throws(() => x.get('a'), { instanceOf: SyntaxError });
    t.throws(() => x.index('1:2' as never), { instanceOf: TypeError, message: /x\.get\('1:2'\)/ });
  });
});

/** The reference of x[items] = value (broadcast) or += (accumulate: repeated places add). */
function refSet(xv: number[], xshape: number[], ref: RItem[], value: Arr, accumulate: boolean): number[] {
  const { shape, from } = refIndex(xshape, ref);
  const out = xv.slice();
  const lead = shape.length - value.shape.length;
  from.forEach((o, p) => {
    const c = unravel(p, shape).slice(lead).map((v, k) => (value.shape[k] === 1 ? 0 : v));
    const v = value.values[ravel(c, value.shape)];
    out[o] = accumulate ? out[o] + v : v;
  });
  return out;
}

deviceTestSerial('x.set and gx.indexPut_ match the reference: assign and accumulate, every form, broadcast values', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(5);
    const shapes = [[4, 5, 6], [6, 3], [2, 3, 4, 5]];
    let checked = 0;
    for (let trial = 0; trial < 120; trial++) {
      const shape = shapes[trial % shapes.length];
      const dtype: gx.DType = (['float64', 'float32', 'int64', 'int32'] as const)[trial % 4];
      const made: gx.Tensor[] = [];
      const { items, ref } = randomExpr(shape, r, device, made);
      if (!broadcastable(ref)) continue;
      const want = refIndex(shape, ref);
      // Distinct places for an assignment (any one of repeated writes may win on CUDA); any for accumulate.
      const accumulate = trial % 2 === 1;
      if (!accumulate && new Set(want.from).size !== want.from.length) continue;
      const x = input(shape, dtype, r, device);
      const xv = numbers(x);
      const vshape = want.shape.slice(r() < 0.5 ? 1 : 0);
      const value: Arr = { shape: vshape, values: valuesOf(dtype, numelOf(vshape), r) };
      const vt = make(value.values, dtype, vshape, device);
      const expected = refSet(xv, shape, ref, value, accumulate);
      const what = `trial ${trial}: ${dtype} ${JSON.stringify(shape)} [${ref.map((i) => JSON.stringify(i)).join(', ')}] accumulate ${accumulate}`;
      if (accumulate || r() < 0.5) t.is(gx.indexPut_(x, items, vt, { accumulate }), x);
      else t.is(x.set(items, vt), x);
      t.deepEqual(numbers(x), expected, what);
      checked++;
    }
    t.true(checked > 50, `${checked} writes checked`);
    // A number, a mask with a number (the where path), a bool mask with a tensor value.
    const y = gx.arange(6, { device, dtype: 'float32' }).reshape([2, 3]);
    y.set(y.gt(3), -1);
    t.deepEqual(numbers(y), [0, 1, 2, 3, -1, -1]);
    y.set(y.lt(0), gx.tensor([8, 9], { device }));
    t.deepEqual(numbers(y), [0, 1, 2, 3, 8, 9]);
    y.set(0, 2.5);
    t.deepEqual(numbers(y), [2.5, 2.5, 2.5, 3, 8, 9]);
    y.set([[1, 1], [0, 0]], gx.tensor([1, 2], { device }));
    const one = numbers(y)[3];
    t.true(one === 1 || one === 2, 'a list index: x[[1, 1], [0, 0]] = [1, 2] keeps one of the repeats (the CPU the last)');
    t.deepEqual(numbers(y), [2.5, 2.5, 2.5, device === 'cpu' ? 2 : one, 8, 9]);
    y.indexPut_([[1, 1], [0, 0]], 1, { accumulate: true });
    t.deepEqual(numbers(y), [2.5, 2.5, 2.5, one + 2, 8, 9], 'repeats add up with accumulate');
    // The value is a view of x: read before written.
    const z = gx.arange(5, { device, dtype: 'float32' });
    z.set(gx.sl(1, null), z.index(gx.sl(4)));  // z[1:] = z[:4]
    t.deepEqual(numbers(z), [0, 0, 1, 2, 3]);
    const w = gx.arange(5, { device, dtype: 'float32' });
    w.set(gx.tensor([1, 2, 3, 4], { dtype: 'int64', device }), w.index(gx.sl(null, 4)));
    t.deepEqual(numbers(w), [0, 0, 1, 2, 3]);
  });
});

deviceTest('every dtype reads and writes through an advanced index; accumulate on every numeric dtype', (t, device) => {
  noLeaks(t, device, () => {
    const all: gx.DType[] = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'int16', 'int32', 'int64', 'uint8', 'bool'];
    const idx = gx.tensor([2, 0, 2, 3], { dtype: 'int64', device });
    for (const dtype of all) {
      const x = make([1, 0, 3, 4, 5].map((v) => (dtype === 'bool' ? v % 2 : v)), dtype, [5], device);
      t.deepEqual(numbers(x.index(idx)), (dtype === 'bool' ? [1, 1, 1, 0] : [3, 1, 3, 4]), `${dtype} read`);
      const y = make([0, 0, 0, 0, 0], dtype, [5], device);
      y.indexPut_([idx], 1, { accumulate: true });
      t.deepEqual(numbers(y), dtype === 'bool' ? [1, 0, 1, 1, 0] : [1, 0, 2, 1, 0], `${dtype} accumulate`);
      y.set(gx.tensor([4], { dtype: 'int32', device }), 1);
      t.is(numbers(y)[4], 1, `${dtype} assign`);
    }
  });
});

deviceTest('empty tensors, empty indices, masks with nothing kept', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.zeros([0, 3], { device });
    t.deepEqual(x.index(gx.sl(), 1).shape, [0]);
    t.deepEqual(x.index(gx.tensor([], { dtype: 'int64', device })).shape, [0, 3]);
    t.deepEqual(x.index(gx.zeros([0, 3], { dtype: 'bool', device })).shape, [0]);
    const y = gx.ones([2, 3], { device });
    t.deepEqual(y.index(gx.zeros([2, 3], { dtype: 'bool', device })).shape, [0]);
    t.deepEqual(y.index(gx.zeros([2], { dtype: 'bool', device })).shape, [0, 3]);
    t.deepEqual(y.index(gx.tensor([], { dtype: 'int32', device }), gx.sl()).shape, [0, 3]);
    y.set(gx.zeros([2], { dtype: 'bool', device }), 5);
    y.indexPut_([gx.tensor([], { dtype: 'int64', device })], gx.zeros([0, 3], { device }), { accumulate: true });
    t.deepEqual(numbers(y), [1, 1, 1, 1, 1, 1]);
  });
});

deviceTestSerial('gradients of index reads: basic views and advanced indices (gradcheck)', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.tensor(Array.from({ length: 24 }, (_, i) => Math.sin(i) * 3), { dtype: 'float64', device, shape: [2, 3, 4] });
    x.requiresGrad = true;
    const i = gx.tensor([[0, 2], [2, 1]], { dtype: 'int64', device });
    const m = gx.tensor([true, false, true], { device });
    const check = (f: (v: gx.Tensor) => gx.Tensor, what: string): void => {
      t.true(gx.autograd.gradcheck(f, [x]).ok, what);
    };
    check((v) => v.index(1, gx.sl(null, null, 2), null), 'basic');
    check((v) => v.index(gx.sl(), i), 'an index (repeated: the gradient adds up)');
    const i0 = gx.tensor([1, 0, 1], { dtype: 'int64', device }), i2 = gx.tensor([3, 1, 3], { dtype: 'int32', device });
    check((v) => v.index(i0, gx.sl(), i2), 'two indices, apart');
    check((v) => v.index(gx.sl(), m, gx.sl(1, 3)), 'a mask and a slice');
    const mk = x.gt(0.5).detach();
    check((v) => v.index(mk), 'a mask over every dimension (maskedSelect)');
    check((v) => v.transpose(0, 2).index(gx.tensor([3, 0, 3], { dtype: 'int32', device }), 1), 'a transposed input');
    // The gradient lands where the elements came from.
    const y = x.index(gx.sl(), i);
    gx.sum(y).backward();
    const g = numbers(x.grad as gx.Tensor);
    t.deepEqual(g.slice(0, 12), [1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2], 'index 2 twice, 0 and 1 once');
    x.grad?.dispose();
  });
});

// Under autograd a write records (test/indexput-grad.test.ts); into a leaf that requires grad it is refused, as torch's.
deviceTest('writes are refused on a leaf that requires grad, and allowed inside gx.noGrad', (t, device) => {
  noLeaks(t, device, () => {
    const w = gx.zeros([3], { device, dtype: 'float64' });
    w.requiresGrad = true;
    t.throws(() => w.set(0, 1), { message: /^Tensor\.set: self is a leaf tensor that requires grad/ });
    t.throws(() => gx.indexPut_(w, [gx.tensor([1], { dtype: 'int64', device })], 1, { accumulate: true }), { message: /^gx\.indexPut_: self is a leaf tensor/ });
    gx.noGrad(() => w.set(gx.tensor([1], { dtype: 'int64', device }), 4));
    t.deepEqual(numbers(w), [0, 4, 0]);
  });
});

deviceTest('errors name the call, the dimension and its size', (t, device) => {
  gx.tidy(() => {
    const x = gx.zeros([2, 3], { device });
    const i64 = (v: number[]) => gx.tensor(v, { dtype: 'int64', device });
    t.throws(() => x.index(0, 5), { instanceOf: RangeError, message: 'Tensor.index: index 5 is out of range for dimension 1 of size 3' });
    t.throws(() => x.index(-3), { instanceOf: RangeError, message: 'Tensor.index: index -3 is out of range for dimension 0 of size 2' });
    t.throws(() => x.index(gx.sl(), i64([0, 5])), { message: 'Tensor.index: index 5 is out of range for dimension 1 of size 3' });
    t.throws(() => x.index(null, gx.sl(), gx.tensor([-4], { dtype: 'int32', device })), { message: 'Tensor.index: index -4 is out of range for dimension 1 of size 3' });
    t.throws(() => x.set(i64([2]), 1), { message: 'Tensor.set: index 2 is out of range for dimension 0 of size 2' });
    t.throws(() => x.get('5'), { message: 'Tensor.get: index 5 is out of range for dimension 0 of size 2' });
    t.throws(() => x.index(gx.sl(null, null, -1)), { instanceOf: RangeError, message: /^Tensor\.index: step must be a positive integer, got -1 \(negative steps are not supported, as in PyTorch\)/ });
    t.throws(() => x.get('::-1'), { instanceOf: RangeError, message: /negative steps are not supported/ });
    t.throws(() => x.index(gx.sl(null, null, 0)), { instanceOf: RangeError, message: /step must be a positive integer, got 0/ });
    t.throws(() => x.index(0, 0, 0), { instanceOf: RangeError, message: /^Tensor\.index: too many indices for a tensor of 2 dimensions \(shape \[2, 3\]\): they take 3/ });
    t.throws(() => x.index('...', 0, '...'), { message: /^Tensor\.index: an index can only have a single ellipsis/ });
    t.throws(() => x.index(gx.zeros([3], { dtype: 'bool', device })), { message: /^Tensor\.index: the mask of shape \[3\] does not match dimensions 0 to 0 of the indexed tensor \(shape \[2, 3\]\)/ });
    t.throws(() => x.index(i64([0, 1]), i64([0, 1, 2])), { message: /^Tensor\.index: shape mismatch: the index tensors could not be broadcast together with shapes \[2\], \[3\]/ });
    t.throws(() => x.index(gx.zeros([1], { device })), { instanceOf: TypeError, message: /^Tensor\.index: a tensor used as an index must be int64, int32 or bool, got float32 \[1\]/ });
    t.throws(() => x.index(1.5), { instanceOf: TypeError, message: /^Tensor\.index: index 0 must be an integer, got 1\.5/ });
    t.throws(() => x.index({ start: 1, stop: 2 } as never), { instanceOf: TypeError, message: /^Tensor\.index: index 0 must be an integer, gx\.sl/ });
    t.throws(() => x.set(i64([0]), gx.zeros([4], { device })), { message: /^Tensor\.set: shape mismatch: value of shape \[4\] cannot be broadcast to the indexed shape \[1, 3\]/ });
    t.throws(() => gx.indexPut_(x, i64([0]) as never, 1), { instanceOf: TypeError, message: /^gx\.indexPut_: indices must be an array/ });
    t.throws(() => gx.indexPut_(x, [0], 1, { accumlate: true } as never), { instanceOf: TypeError, message: /accumlate/ });
    t.throws(() => gx.sl(1, 2, 3, 4 as never), { instanceOf: TypeError, message: /^gx\.sl: takes at most 3 arguments/ });
    t.throws(() => gx.sl(0.5), { instanceOf: TypeError, message: /^gx\.sl: argument 0 must be an integer/ });
  });
});

deviceTest('index tensors on the CPU index a CUDA tensor (as torch allows)', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.arange(6, { device, dtype: 'float32' });
    const i = gx.tensor([5, 0], { dtype: 'int64' });
    t.deepEqual(numbers(x.index(i)), [5, 0]);
    const m = gx.tensor([true, false, true, false, false, false]);
    t.deepEqual(numbers(x.index(m)), [0, 2]);
    t.deepEqual(numbers(x.index([true, false, false, false, false, true])), [0, 5], 'a JS list of booleans');
  });
});
