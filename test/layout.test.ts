// Layout ops (lib/layout.ts) against plain-JS references: views share
// storage, copies (cat, stack, flatten of a strided input) lay out any input,
// edge cases (0-d, zero-size), several dtypes, errors, and no leaks.

import * as gx from '../lib';
import { native } from '../lib/core/native';
import { deviceTest, deviceTestSerial, randomValues, rejects, rng, sameValues, type TestDevice } from './helpers';

type Value = number | bigint;

/**
 * A reference for a tensor: where each element lives in a flat array of
 * values. Inputs are made with asStrided, not with the ops under test.
 */
interface Ref {
  values: ArrayLike<Value>;
  shape: number[];
  strides: number[];
  offset: number;
}

function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function cStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  for (let d = shape.length - 1, acc = 1; d >= 0; d--) { s[d] = acc; acc *= Math.max(shape[d], 1); }
  return s;
}

function get(r: Ref, idx: readonly number[]): Value {
  let at = r.offset;
  idx.forEach((i, d) => { at += i * r.strides[d]; });
  return r.values[at];
}

/** Every index of `shape` in C order. */
function* indices(shape: readonly number[]): Generator<number[]> {
  if (shape.some((s) => s === 0)) return;
  const idx = new Array<number>(shape.length).fill(0);
  for (;;) {
    yield idx.slice();
    let d = shape.length - 1;
    while (d >= 0 && ++idx[d] === shape[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/** The expected C-order values of an output of `shape` whose element idx is `at(idx)`. */
function expected(shape: readonly number[], at: (idx: number[]) => Value): Value[] {
  return Array.from(indices(shape), at);
}

/** C-order values of a reference. */
function valuesOf(r: Ref): Value[] {
  return expected(r.shape, (idx) => get(r, idx));
}

/** A random input of `shape` and its reference. With `strided`, a non-contiguous view (doubled column-major strides, offset 1). */
function input(device: TestDevice, dtype: gx.DType, shape: number[], seed: number, strided = false): { x: gx.Tensor; ref: Ref } {
  const n = numel(shape);
  const values = randomValues(dtype, strided ? 2 * n + 2 : n, seed);
  const base = gx.tensor(values, { dtype, device });
  if (!strided) {
    using b = base;
    return { x: b.asStrided(shape, cStrides(shape), 0), ref: { values, shape, strides: cStrides(shape), offset: 0 } };
  }
  const strides: number[] = [];
  let acc = 2;
  for (const s of shape) { strides.push(acc); acc *= Math.max(s, 1); }
  using b = base;
  return { x: b.asStrided(shape, strides, 1), ref: { values, shape, strides, offset: 1 } };
}

function storage(x: gx.Tensor): bigint {
  return native.describe(x.handle()).storagePtr;
}

function randomShape(r: () => number, ndim: number, max = 4): number[] {
  return Array.from({ length: ndim }, () => 1 + Math.floor(r() * max));
}

/** Python's range(start, end, step) over a dim of `size` (CPython's slice rules), step >= 1. */
function pyRange(size: number, start: number | null, end: number | null, step: number): number[] {
  const norm = (v: number | null, dflt: number): number => (v === null ? dflt : v < 0 ? Math.max(v + size, 0) : Math.min(v, size));
  const out: number[] = [];
  for (let i = norm(start, 0); i < norm(end, size); i += step) out.push(i);
  return out;
}

const DTYPES: gx.DType[] = ['float32', 'int64', 'bool', 'float16', 'int8', 'float64'];

deviceTest('transpose, permute and movedim match the reference and share storage', (t, device) => {
  const r = rng(11);
  for (let trial = 0; trial < 12; trial++) {
    const dtype = DTYPES[trial % DTYPES.length];
    const ndim = 2 + (trial % 3);
    const { x, ref } = input(device, dtype, randomShape(r, ndim), 100 + trial, trial % 2 === 1);
    using a = x;
    const d0 = Math.floor(r() * ndim) - (trial % 2 ? ndim : 0), d1 = Math.floor(r() * ndim);
    using tr = gx.transpose(a, d0, d1);
    const w0 = (d0 + ndim) % ndim, w1 = d1;
    const swap = (idx: number[]): number[] => { const s = idx.slice(); [s[w0], s[w1]] = [idx[w1], idx[w0]]; return s; };
    t.deepEqual(tr.shape, swap(ref.shape));
    t.is(tr.dtype, dtype);
    t.is(storage(tr), storage(a));
    sameValues(t, tr.toArraySync(), expected(tr.shape, (idx) => get(ref, swap(idx))), `transpose ${dtype}`);

    const dims = ref.shape.map((_, d) => d).sort(() => r() - 0.5).map((d) => (r() < 0.5 ? d - ndim : d));
    const order = dims.map((d) => (d + ndim) % ndim);
    using p = a.permute(dims);
    using p2 = gx.permute(a, dims);
    t.deepEqual(p.shape, order.map((d) => ref.shape[d]));
    t.deepEqual(p2.strides, p.strides);
    t.is(storage(p), storage(a));
    const unpermute = (idx: number[]): number[] => { const s = new Array<number>(ndim); order.forEach((d, i) => { s[d] = idx[i]; }); return s; };
    sameValues(t, p.toArraySync(), expected(p.shape, (idx) => get(ref, unpermute(idx))), `permute ${dtype}`);

    // movedim(0, -1) is the permutation [1, ..., n-1, 0].
    using m = a.movedim(0, -1);
    const rot = [...ref.shape.map((_, d) => d).slice(1), 0];
    t.deepEqual(m.shape, rot.map((d) => ref.shape[d]));
    sameValues(t, m.toArraySync(), expected(m.shape, (idx) => get(ref, [idx[ndim - 1], ...idx.slice(0, ndim - 1)])), 'movedim');
  }
});

deviceTest('movedim with lists keeps the other dims in order', (t, device) => {
  using a = gx.zeros([2, 3, 4, 5], { device });
  using m = gx.movedim(a, [0, -1], [2, 0]);
  t.deepEqual(m.shape, [5, 3, 2, 4]);
  using same = a.movedim([], []);
  t.deepEqual(same.shape, [2, 3, 4, 5]);
});

deviceTest('squeeze and unsqueeze change only size-1 dims, as views', (t, device) => {
  const { x, ref } = input(device, 'int64', [1, 3, 1, 2], 5, true);
  using a = x;
  const vals = valuesOf(ref);
  using all = a.squeeze();
  t.deepEqual(all.shape, [3, 2]);
  sameValues(t, all.toArraySync(), vals);
  using s0 = gx.squeeze(a, 0);
  t.deepEqual(s0.shape, [3, 1, 2]);
  using s1 = a.squeeze(1); // size 3: left alone, as in PyTorch
  t.deepEqual(s1.shape, [1, 3, 1, 2]);
  using sl = a.squeeze([-2, 0, 3]);
  t.deepEqual(sl.shape, [3, 2]);
  t.is(storage(sl), storage(a));
  sameValues(t, sl.toArraySync(), vals);

  using u0 = a.unsqueeze(0);
  t.deepEqual(u0.shape, [1, 1, 3, 1, 2]);
  using uEnd = gx.unsqueeze(a, -1);
  t.deepEqual(uEnd.shape, [1, 3, 1, 2, 1]);
  using uMid = a.unsqueeze(-3);
  t.deepEqual(uMid.shape, [1, 3, 1, 1, 2]);
  sameValues(t, uMid.toArraySync(), vals);
  t.is(storage(uMid), storage(a));
  // A contiguous tensor stays contiguous.
  using c = gx.zeros([2, 3], { device });
  using cu = c.unsqueeze(1);
  t.deepEqual(cu.strides, [3, 3, 1]);
  t.true(cu.isContiguous());
});

deviceTest('expand and broadcastTo repeat size-1 dims with stride 0', (t, device) => {
  for (const dtype of ['float32', 'bool', 'int64', 'float16'] as const) {
    const { x, ref } = input(device, dtype, [3, 1, 2], 21, true);
    using a = x;
    const want = [4, 3, 5, 2];
    using e = a.expand(want);
    using e2 = a.expand(4, -1, 5, -1);
    using b = gx.broadcastTo(a, want);
    for (const v of [e, e2, b]) {
      t.deepEqual(v.shape, want);
      t.is(v.strides[0], 0);
      t.is(v.strides[2], 0);
      t.is(storage(v), storage(a));
      sameValues(t, v.toArraySync(), expected(want, (idx) => get(ref, [idx[1], 0, idx[3]])), `expand ${dtype}`);
    }
  }
  // 0-d and size-0 targets.
  using s = gx.tensor(7, { device });
  using se = s.expand(2, 3);
  sameValues(t, se.toArraySync(), new Array(6).fill(7));
  using one = gx.ones([1], { device });
  using none = one.expand(0);
  t.deepEqual(none.shape, [0]);
  using lead = one.expand(1, 1, 3);
  t.deepEqual(lead.shape, [1, 1, 3]);
});

deviceTest('writes through views show in the base', (t, device) => {
  using a = gx.zeros([4, 6], { dtype: 'int32', device });
  const ref = new Array<number>(24).fill(0);
  using tr = a.transpose(0, 1);
  using col = tr.sliceDims(2); // a[:, 2]
  col.fill_(5);
  for (let i = 0; i < 4; i++) ref[i * 6 + 2] = 5;
  using blk = a.sliceDims([1, 3], [null, null, 3]); // a[1:3, ::3]
  using src = gx.tensor([[1, 2], [3, 4]], { dtype: 'int32', device });
  blk.copy_(src);
  ref[6] = 1; ref[9] = 2; ref[12] = 3; ref[15] = 4;
  using n = gx.tidy(() => a.narrow(0, -1, 1).squeeze(0).slice(0, 1, null, 2)); // a[3, 1::2]
  n.fill_(-1);
  ref[19] = -1; ref[21] = -1; ref[23] = -1;
  using f = a.flatten(); // contiguous: a view
  t.is(storage(f), storage(a));
  using f3 = f.slice(0, 0, 1);
  f3.fill_(9);
  ref[0] = 9;
  using p = gx.tidy(() => a.unsqueeze(0).permute(2, 0, 1));
  using p0 = p.sliceDims(4, 0, 0); // a[0, 4]
  p0.fill_(8);
  ref[4] = 8;
  sameValues(t, a.toArraySync(), ref);
});

deviceTest('flatten is a view of contiguous dims and a copy otherwise', (t, device) => {
  for (const [i, dtype] of DTYPES.entries()) {
    const shape = [2, 3, 4];
    const c = input(device, dtype, shape, 30 + i);
    using a = c.x;
    using f = gx.flatten(a);
    t.deepEqual(f.shape, [24]);
    t.is(storage(f), storage(a));
    sameValues(t, f.toArraySync(), valuesOf(c.ref));
    using f12 = a.flatten(1);
    t.deepEqual(f12.shape, [2, 12]);
    using f01 = a.flatten(0, -2);
    t.deepEqual(f01.shape, [6, 4]);
    t.is(storage(f01), storage(a));

    const s = input(device, dtype, shape, 40 + i, true);
    using b = s.x;
    t.false(b.isContiguous());
    using g = b.flatten();
    t.deepEqual(g.shape, [24]);
    t.not(storage(g), storage(b));
    sameValues(t, g.toArraySync(), valuesOf(s.ref), `flatten strided ${dtype}`);
    using same = b.flatten(1, 1);
    t.deepEqual(same.shape, shape);
    t.is(storage(same), storage(b));
  }
  // A stepped view whose inner dims stay mergeable: still a view.
  using base = gx.tidy(() => gx.arange(48, { dtype: 'float32', device }).view(4, 2, 6));
  using v = base.slice(0, null, null, 2); // [2, 2, 6], strides [24, 6, 1]
  using fv = v.flatten(1);
  t.is(storage(fv), storage(base));
  sameValues(t, fv.toArraySync(), [...Array.from({ length: 12 }, (_, k) => k), ...Array.from({ length: 12 }, (_, k) => 24 + k)]);
});

deviceTest('slice follows Python slicing, clamped, with steps', (t, device) => {
  using a10 = gx.arange(10, { device });
  const known: [number | null, number | null, number, number[]][] = [
    [1, -1, 3, [1, 4, 7]], [-100, 100, 4, [0, 4, 8]], [5, 2, 1, []], [null, null, 1, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    [-3, null, 1, [7, 8, 9]], [10, null, 1, []], [null, -8, 2, [0]],
  ];
  for (const [s, e, step, want] of known) {
    using v = a10.slice(0, s, e, step);
    sameValues(t, v.toArraySync(), want.map(BigInt), `[${s}:${e}:${step}]`);
  }
  const r = rng(3);
  for (let trial = 0; trial < 40; trial++) {
    const dtype = DTYPES[trial % DTYPES.length];
    const shape = randomShape(r, 3, 6);
    const { x, ref } = input(device, dtype, shape, 200 + trial, trial % 3 === 0);
    using a = x;
    const dim = Math.floor(r() * 3);
    const size = shape[dim];
    const pick = (): number | null => (r() < 0.2 ? null : Math.floor(r() * (2 * size + 4)) - size - 2);
    const start = pick(), end = pick(), step = 1 + Math.floor(r() * 3);
    using v = gx.slice(a, dim - (trial % 2 ? 3 : 0), start, end, step);
    const pos = pyRange(size, start, end, step);
    const wantShape = shape.slice();
    wantShape[dim] = pos.length;
    t.deepEqual(v.shape, wantShape);
    t.is(storage(v), storage(a));
    sameValues(t, v.toArraySync(), expected(wantShape, (idx) => { const s = idx.slice(); s[dim] = pos[idx[dim]]; return get(ref, s); }),
      `slice dim ${dim} [${start}:${end}:${step}] of ${JSON.stringify(shape)}`);
  }
});

deviceTest('sliceDims indexes several dims at once, NumPy style', (t, device) => {
  using t3 = gx.tidy(() => gx.arange(60, { dtype: 'int32', device }).view(5, 4, 3));
  using v = gx.sliceDims(t3, [0, 4, 2], null, -1); // t[0:4:2, :, -1]
  t.deepEqual(v.shape, [2, 4]);
  sameValues(t, v.toArraySync(), [2, 5, 8, 11, 26, 29, 32, 35]);
  using row = t3.sliceDims(2);
  t.deepEqual(row.shape, [4, 3]);
  using el = t3.sliceDims(-1, 3, 0);
  t.deepEqual(el.shape, []);
  t.is(el.item(), 57);
  using tail = t3.sliceDims([3], [null, null, 2], [1]); // t[3:, ::2, 1:]
  t.deepEqual(tail.shape, [2, 2, 2]);
  sameValues(t, tail.toArraySync(), [37, 38, 43, 44, 49, 50, 55, 56]);
  using none = t3.sliceDims();
  t.deepEqual(none.shape, [5, 4, 3]);
  using empty = t3.sliceDims([4, 1], 0);
  t.deepEqual(empty.shape, [0, 3]);
  t.is(empty.toArraySync().length, 0);

  const r = rng(17);
  for (let trial = 0; trial < 30; trial++) {
    const dtype = DTYPES[trial % DTYPES.length];
    const shape = randomShape(r, 1 + (trial % 4), 5);
    const { x, ref } = input(device, dtype, shape, 300 + trial, trial % 2 === 0);
    using a = x;
    const nspec = Math.floor(r() * (shape.length + 1));
    const specs: gx.DimSlice[] = [];
    const keep: { dim: number; pos: number[] }[] = [];
    const fixed = new Array<number>(shape.length).fill(0);
    shape.forEach((size, d) => {
      const k = d < nspec ? r() : -1;
      if (k < 0 || k < 0.2) {
        if (k >= 0) specs.push(null);
        keep.push({ dim: d, pos: Array.from({ length: size }, (_, i) => i) });
      } else if (k < 0.5) {
        const i = Math.floor(r() * size);
        specs.push(r() < 0.5 ? i : i - size);
        fixed[d] = i;
      } else {
        const s = r() < 0.2 ? null : Math.floor(r() * (2 * size + 2)) - size - 1;
        const e = r() < 0.2 ? null : Math.floor(r() * (2 * size + 2)) - size - 1;
        const st = 1 + Math.floor(r() * 2);
        specs.push([s, e, st]);
        keep.push({ dim: d, pos: pyRange(size, s, e, st) });
      }
    });
    using v = a.sliceDims(...specs);
    const wantShape = keep.map((k) => k.pos.length);
    t.deepEqual(v.shape, wantShape, JSON.stringify(specs));
    t.is(storage(v), storage(a));
    sameValues(t, v.toArraySync(), expected(wantShape, (idx) => {
      const s = fixed.slice();
      keep.forEach((k, j) => { s[k.dim] = k.pos[idx[j]]; });
      return get(ref, s);
    }), `sliceDims ${JSON.stringify(specs)} of ${JSON.stringify(shape)}`);
  }
});

deviceTest('cat joins contiguous and strided inputs along any dim', (t, device) => {
  const r = rng(23);
  for (let trial = 0; trial < 18; trial++) {
    const dtype = DTYPES[trial % DTYPES.length];
    const ndim = 1 + (trial % 3);
    const base = randomShape(r, ndim);
    const dim = Math.floor(r() * ndim);
    const count = 1 + Math.floor(r() * 3);
    const parts = Array.from({ length: count }, (_, i) => {
      const s = base.slice();
      s[dim] = Math.floor(r() * 4); // zero-size parts included
      return input(device, dtype, s, 400 + 10 * trial + i, r() < 0.5);
    });
    try {
      using out = gx.cat(parts.map((p) => p.x), trial % 2 ? dim - ndim : dim);
      const sizes = parts.map((p) => p.ref.shape[dim]);
      const wantShape = base.slice();
      wantShape[dim] = sizes.reduce((a, b) => a + b, 0);
      t.deepEqual(out.shape, wantShape);
      t.is(out.dtype, dtype);
      t.is(out.device.type, device);
      t.true(out.isContiguous());
      parts.forEach((p) => { if (p.x.numel > 0) t.not(storage(out), storage(p.x)); }); // empty storages have no pointer
      sameValues(t, out.toArraySync(), expected(wantShape, (idx) => {
        let k = 0, at = idx[dim];
        while (at >= sizes[k]) at -= sizes[k++];
        const s = idx.slice();
        s[dim] = at;
        return get(parts[k].ref, s);
      }), `cat ${dtype} dim ${dim} of ${parts.map((p) => JSON.stringify(p.ref.shape)).join(' ')}`);
    } finally {
      parts.forEach((p) => p.x.dispose());
    }
  }
});

deviceTest('cat: a transposed, stepped view; 1-d empty inputs are skipped; a single input is copied', (t, device) => {
  using base = gx.tidy(() => gx.arange(24, { dtype: 'float32', device }).view(4, 6));
  using tv = gx.tidy(() => base.transpose(0, 1).slice(0, null, null, 2)); // [3, 4]: base[0:4, ::2].T
  t.false(tv.isContiguous());
  using top = gx.full([1, 4], -1, { device });
  using skipped = gx.zeros([0], { device });
  using out = gx.cat([top, tv, skipped]);
  t.deepEqual(out.shape, [4, 4]);
  sameValues(t, out.toArraySync(), [-1, -1, -1, -1, 0, 6, 12, 18, 2, 8, 14, 20, 4, 10, 16, 22]);
  using e0 = gx.zeros([0], { dtype: 'int64', device });
  using e1 = gx.zeros([0], { dtype: 'int64', device });
  using ee = gx.cat([e0, e1]);
  t.deepEqual(ee.shape, [0]);
  t.is(ee.dtype, 'int64');
  using only = gx.cat([tv], 1);
  t.deepEqual(only.shape, [3, 4]);
  t.not(storage(only), storage(base));
  using z20 = gx.zeros([2, 0], { device });
  using z30 = gx.zeros([3, 0], { device });
  using o23 = gx.ones([2, 3], { device });
  using z = gx.cat([z20, o23], 1);
  t.deepEqual(z.shape, [2, 3]);
  sameValues(t, z.toArraySync(), new Array(6).fill(1));
  using zz = gx.cat([z20, z30]);
  t.deepEqual(zz.shape, [5, 0]);
});

deviceTest('stack adds a dim; inputs may be strided, 0-d or empty', (t, device) => {
  const r = rng(29);
  for (let trial = 0; trial < 12; trial++) {
    const dtype = DTYPES[trial % DTYPES.length];
    const ndim = trial % 3;
    const shape = randomShape(r, ndim);
    const dim = Math.floor(r() * (ndim + 1));
    const count = 1 + Math.floor(r() * 3);
    const parts = Array.from({ length: count }, (_, i) => input(device, dtype, shape, 500 + 10 * trial + i, i % 2 === 0));
    try {
      using out = gx.stack(parts.map((p) => p.x), trial % 2 ? dim - ndim - 1 : dim);
      const wantShape = shape.slice();
      wantShape.splice(dim, 0, count);
      t.deepEqual(out.shape, wantShape);
      t.is(out.dtype, dtype);
      sameValues(t, out.toArraySync(), expected(wantShape, (idx) => {
        const s = idx.slice();
        const [k] = s.splice(dim, 1);
        return get(parts[k].ref, s);
      }), `stack ${dtype} dim ${dim} of ${count} x ${JSON.stringify(shape)}`);
    } finally {
      parts.forEach((p) => p.x.dispose());
    }
  }
  using a = gx.zeros([0, 3], { device });
  using b = gx.zeros([0, 3], { device });
  using s = gx.stack([a, b], 1);
  t.deepEqual(s.shape, [0, 2, 3]);
  using base = gx.tidy(() => gx.arange(12, { dtype: 'int64', device }).view(3, 4));
  using tv = gx.tidy(() => base.transpose(0, 1).slice(0, 1, null, 2)); // [2, 3]: columns 1 and 3
  using st = gx.stack([tv, tv], -1);
  t.deepEqual(st.shape, [2, 3, 2]);
  sameValues(t, st.toArraySync(), [1n, 1n, 5n, 5n, 9n, 9n, 3n, 3n, 7n, 7n, 11n, 11n]);
});

deviceTest('0-d tensors: dims 0 and -1 name the tensor itself', (t, device) => {
  using s = gx.tensor(3.5, { device });
  for (const v of [s.transpose(0, -1), s.squeeze(), s.squeeze(0), s.permute([]), s.sliceDims(), s.movedim(0, -1), s.expand([])]) {
    using x = v;
    t.deepEqual(x.shape, []);
    t.is(x.item(), 3.5);
  }
  using u = s.unsqueeze(-1);
  t.deepEqual(u.shape, [1]);
  using f = s.flatten();
  t.deepEqual(f.shape, [1]);
  t.is(storage(f), storage(s));
  using st = gx.stack([s, s], -1);
  t.deepEqual(st.shape, [2]);
  sameValues(t, st.toArraySync(), [3.5, 3.5]);
});

deviceTest('bad axes are errors naming the op, the argument and the range', (t, device) => {
  using a = gx.tidy(() => gx.arange(24, { dtype: 'float32', device }).view(2, 3, 4));
  using s = gx.tensor(1, { device });
  rejects(t, device, () => a.transpose(0, 3), RangeError, /^gx\.transpose: axis1 3 is out of range for an input of shape \[2, 3, 4\] \(3 dimensions; valid: -3 to 2\)/);
  rejects(t, device, () => gx.transpose(a, -4, 0), RangeError, /gx\.transpose: axis0 -4 is out of range/);
  rejects(t, device, () => a.transpose(0.5, 1), TypeError, /gx\.transpose: axis0 must be an integer, got number 0\.5/);
  rejects(t, device, () => s.transpose(0, 1), RangeError, /gx\.transpose: axis1 1 is out of range for an input of shape \[\] \(0 dimensions; valid: -1 to 0\)/);
  rejects(t, device, () => a.permute(0, 1), RangeError, /gx\.permute: axes \[0, 1\] has 2 entries but the tensor has 3 dimensions \(shape \[2, 3, 4\]\)/);
  rejects(t, device, () => a.permute(0, 1, -3), RangeError, /gx\.permute: axes \[0,1,-3\] names dimension 0 twice/);
  rejects(t, device, () => a.permute([0, 1, 3]), RangeError, /gx\.permute: axis 3 is out of range/);
  rejects(t, device, () => a.movedim([0, 1], [2]), RangeError, /gx\.movedim: source names 2 axes but destination names 1/);
  rejects(t, device, () => a.movedim(0, [1, 1] as unknown as number), RangeError, /gx\.movedim: destination \[1,1\] names dimension 1 twice/);
  rejects(t, device, () => a.squeeze(3), RangeError, /gx\.squeeze: axis 3 is out of range for an input of shape \[2, 3, 4\]/);
  rejects(t, device, () => a.squeeze([0, -3]), RangeError, /gx\.squeeze: axis \[0,-3\] names dimension 0 twice/);
  rejects(t, device, () => a.unsqueeze(4), RangeError, /gx\.unsqueeze: axis 4 is out of range for an input of shape \[2, 3, 4\] \(3 dimensions; valid: -4 to 3, a place in the 4-d result\)/);
  rejects(t, device, () => a.flatten(2, 1), RangeError, /gx\.flatten: startAxis \(2\) must not come after endAxis \(1\)/);
  rejects(t, device, () => a.flatten(0, 5), RangeError, /gx\.flatten: endAxis 5 is out of range/);
  rejects(t, device, () => a.slice(3, 0, 1), RangeError, /gx\.slice: axis 3 is out of range/);
  rejects(t, device, () => s.slice(0, 0, 1), RangeError, /gx\.slice: axis 0 is out of range for an input of shape \[\] \(0 dimensions; it has none\)/);
  rejects(t, device, () => a.slice(0, null, null, -1), RangeError, /gx\.slice: step must be a positive integer, got -1 \(negative steps are not supported, as in PyTorch\)/);
  rejects(t, device, () => a.slice(0, null, null, 0), RangeError, /gx\.slice: step must be a positive integer, got 0/);
  rejects(t, device, () => a.slice(0, 1.5), TypeError, /gx\.slice: start must be an integer/);
  rejects(t, device, () => a.narrow(1, 2, 2), RangeError, /gx\.narrow: start 2 \+ length 2 does not fit dimension 1 of size 3/);
  rejects(t, device, () => a.narrow(1, -4, 1), RangeError, /gx\.narrow: start -4 is out of range for dimension 1 of size 3/);
  using d16 = gx.zeros(new Array(16).fill(1), { device });
  rejects(t, device, () => gx.unsqueeze(d16, 0), RangeError, /gx\.unsqueeze: the result would have 17 dimensions; at most 16/);
});

deviceTest('bad indices, shapes and inputs are errors naming the op', (t, device) => {
  using a = gx.tidy(() => gx.arange(24, { dtype: 'float32', device }).view(2, 3, 4));
  rejects(t, device, () => a.sliceDims(0, 3), RangeError, /gx\.sliceDims: index 3 is out of range for dimension 1 of size 3/);
  rejects(t, device, () => a.sliceDims(-3), RangeError, /gx\.sliceDims: index -3 is out of range for dimension 0 of size 2/);
  rejects(t, device, () => a.sliceDims(0, 0, 0, 0), RangeError, /gx\.sliceDims: 4 indices for a 3-d tensor \(shape \[2, 3, 4\]\)/);
  rejects(t, device, () => a.sliceDims(null, [0, 2, -1]), RangeError, /gx\.sliceDims: index 1 step must be a positive integer, got -1 \(negative steps are not supported/);
  rejects(t, device, () => a.sliceDims('1' as unknown as number), TypeError, /gx\.sliceDims: index 0 must be an integer, null, or a \[start, end, step\] array, got a string/);
  rejects(t, device, () => a.sliceDims([0, 1, 1, 1] as unknown as gx.DimSlice), TypeError, /gx\.sliceDims: index 0 must be/);
  rejects(t, device, () => a.expand(2, 5, 4), Error, /gx\.expand: the tensor's dimension 1 has size 3, which is not 1, so it cannot become 5 \(tensor shape \[2, 3, 4\], requested \[2, 5, 4\]\)/);
  rejects(t, device, () => a.expand(3, 4), RangeError, /gx\.expand: shape \[3, 4\] has 2 dims, fewer than the tensor's 3 \(shape \[2, 3, 4\]\)/);
  rejects(t, device, () => a.expand(-1, 2, 3, 4), RangeError, /gx\.expand: shape\[0\] is -1 but dimension 0 is a new leading one/);
  rejects(t, device, () => a.expand(2, -2, 4), RangeError, /gx\.expand: shape\[1\] must be >= 0 or -1, got -2/);
  rejects(t, device, () => gx.broadcastTo(a, [2, 3, 5]), Error, /gx\.broadcastTo: the tensor's dimension 2 has size 4.*requested \[2, 3, 5\]/);
  rejects(t, device, () => gx.transpose([1, 2] as unknown as gx.Tensor, 0, 1), TypeError, /gx\.transpose: argument 'input' must be a Tensor, got an array/);
  const gone = gx.zeros([2], { device });
  gone.dispose();
  rejects(t, device, () => gone.flatten(), Error, /gx\.flatten: this tensor was disposed/);
});

deviceTest('cat and stack reject mismatched inputs, naming the op and the input', (t, device) => {
  using a = gx.zeros([2, 3], { device });
  using b = gx.zeros([2, 4], { device });
  using i = gx.zeros([2, 3], { dtype: 'int32', device });
  using s = gx.tensor(1, { device });
  rejects(t, device, () => gx.cat([a, b]), Error, /^gx\.cat: tensors\[1\] has shape \[2, 4\] but tensors\[0\] has shape \[2, 3\]; sizes must match except in dimension 0/);
  using e = gx.zeros([0], { device });
  using b3 = b.unsqueeze(0);
  rejects(t, device, () => gx.cat([a, e, b3], 1), Error, /gx\.cat: tensors\[2\] has shape \[1, 2, 4\] but tensors\[0\] has shape \[2, 3\]/);
  rejects(t, device, () => gx.cat([a, i]), TypeError, /gx\.cat: tensors\[1\] has dtype int32 but tensors\[0\] has float32; all inputs must have the same dtype/);
  rejects(t, device, () => gx.cat([a, b], 2), RangeError, /gx\.cat: axis 2 is out of range for an input of shape \[2, 3\] \(2 dimensions; valid: -2 to 1\)/);
  rejects(t, device, () => gx.cat([s, s]), RangeError, /gx\.cat: tensors\[0\] is zero-dimensional and cannot be concatenated/);
  rejects(t, device, () => gx.cat([]), RangeError, /gx\.cat: tensors is empty/);
  rejects(t, device, () => gx.cat([a, 3 as unknown as gx.Tensor]), TypeError, /gx\.cat: tensors\[1\] must be a Tensor, got number 3/);
  rejects(t, device, () => gx.cat(a as unknown as gx.Tensor[]), TypeError, /gx\.cat: tensors must be an array of Tensors/);
  rejects(t, device, () => gx.stack([a, b]), Error, /^gx\.stack: tensors\[1\] has shape \[2, 4\] but tensors\[0\] has shape \[2, 3\]; stack needs equal shapes/);
  rejects(t, device, () => gx.stack([a, i], 0), TypeError, /gx\.stack: tensors\[1\] has dtype int32 but tensors\[0\] has float32/);
  rejects(t, device, () => gx.stack([a, a], 3), RangeError, /gx\.stack: axis 3 is out of range for an input of shape \[2, 3\] \(2 dimensions; valid: -3 to 2, a place in the 3-d result\)/);
  const gone = gx.zeros([2, 3], { device });
  gone.dispose();
  rejects(t, device, () => gx.stack([a, gone]), Error, /gx\.stack: tensors\[1\] was disposed/);
  if (device === 'cuda') {
    using c = gx.zeros([2, 3]);
    rejects(t, device, () => gx.cat([a, c]), Error, /gx\.cat: tensors\[1\] is on cpu but tensors\[0\] is on cuda:0; all inputs must be on the same device/);
    rejects(t, device, () => gx.stack([c, a]), Error, /gx\.stack: tensors\[1\] is on cuda:0 but tensors\[0\] is on cpu/);
  }
});

deviceTestSerial('layout ops and their errors leave no live tensors behind', (t, device) => {
  const before = gx.memory.stats(device);
  for (let i = 0; i < 50; i++) {
    using a = gx.tidy(() => gx.arange(24, { dtype: 'float32', device }).view(2, 3, 4));
    using tr = a.transpose(0, 2);
    using f = tr.flatten(); // a copy
    using c = gx.cat([tr, tr], 1);
    using a0 = a.sliceDims(0);
    using a1 = gx.tidy(() => a.slice(0, 1, 2).squeeze(0));
    using s = gx.stack([a0, a1]);
    using u = a.unsqueeze(0);
    using e = u.expand(3, -1, -1, -1);
    using m = gx.tidy(() => a.movedim(0, -1).narrow(0, 1, 2));
    t.is(f.numel + c.numel + s.numel + e.numel + m.numel, 24 + 48 + 24 + 72 + 16);
    t.throws(() => gx.cat([a, tr]));
    t.throws(() => gx.stack([a, tr]));
    t.throws(() => a.expand(5, 5, 5));
    t.throws(() => a.sliceDims(9));
  }
  const after = gx.memory.stats(device);
  t.is(after.liveTensors, before.liveTensors, 'live tensors');
  t.is(after.allocatedBytes, before.allocatedBytes, 'allocated bytes');
});

// A second axis given as its own argument was dropped: x.flip(0, 1) flipped axis 0 only. Tensor.flip takes the axes
// either way (torch's Tensor.flip(*dims)); gx.flip, squeeze and unsqueeze refuse the extra argument, naming the form.
deviceTest('x.flip(0, 1) flips both axes; gx.flip(x, 0, 1), squeeze(0, 2) and unsqueeze(0, 1) refuse the second axis', (t, device) => {
  gx.tidy(() => {
    const m = gx.tensor([[1, 2, 3], [4, 5, 6]], { device });
    t.deepEqual(Array.from(m.flip(0, 1).toArraySync() as Float32Array), [6, 5, 4, 3, 2, 1]);
    t.deepEqual(Array.from(m.flip([0, 1]).toArraySync() as Float32Array), [6, 5, 4, 3, 2, 1]);
    t.deepEqual(Array.from(m.flip(1).toArraySync() as Float32Array), [3, 2, 1, 6, 5, 4]);
    t.throws(() => (gx.flip as (...a: unknown[]) => unknown)(m, 0, 1), { instanceOf: TypeError, message: /^gx\.flip: takes \(x, axes\)/ });
    t.throws(() => (m.reshape(1, 2, 1, 3).squeeze as (...a: unknown[]) => unknown)(0, 2), { instanceOf: TypeError, message: /^Tensor\.squeeze: takes \(axis\?\)/ });
    t.throws(() => (m.unsqueeze as (...a: unknown[]) => unknown)(0, 1), { instanceOf: TypeError, message: /^Tensor\.unsqueeze: takes one axis/ });
  });
});
