// sort, argsort, topk, kthvalue, unique and searchsorted against plain-JS
// references, on every device: every dtype, NaN / inf / -0.0, ties (stable
// order, the lower index first), every axis, transposed views, row lengths
// that reach each CUDA path (block sort tiers, per-row and segmented device
// sorts, topk's register path in one and two passes, its sort fallback),
// `out`, gradients (gradcheck), errors naming the op, and no leaked tensors.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, randomValues, rng } from './helpers';

type Num = number;

const ALL: gx.DType[] = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'int16', 'int32', 'int64', 'uint8', 'bool'];
const isFloat = (d: gx.DType): boolean => d.startsWith('float') || d === 'bfloat16';

const numbers = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint | boolean>, Number);
const numelOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

function make(v: readonly Num[], dtype: gx.DType, shape: readonly number[], device: string): gx.Tensor {
  const data = dtype === 'bool' ? v.map(Boolean) : dtype === 'int64' ? v.map((e) => BigInt(e)) : v.slice();
  return gx.tensor(data as never, { dtype, device } as never).reshape(shape as number[]);
}

/**
 * n values of `dtype` (exactly representable) with many ties: drawn from a
 * small set when `ties`, with NaN, +-inf, 0 and -0 mixed in for floats.
 */
function valuesOf(dtype: gx.DType, n: number, seed: number, ties = true): Num[] {
  const r = rng(seed);
  if (dtype === 'bool') return Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0));
  const raw = Array.from(randomValues(dtype, n, seed) as ArrayLike<number | bigint>, Number);
  return raw.map((v, i) => {
    if (isFloat(dtype)) {
      const p = r();
      if (p < 0.03) return Number.NaN;
      if (p < 0.05) return [Infinity, -Infinity, 0, -0][i % 4];
      return ties && p < 0.5 ? Math.round(v / 16) * 2 : v;
    }
    return ties && r() < 0.5 ? (dtype === 'uint8' ? 7 : -3) + (i % 3) : v;
  });
}

/** -1, 0, 1 in torch's order: NaN largest, -0 equal to 0. */
function cmp(a: Num, b: Num): number {
  const na = Number.isNaN(a), nb = Number.isNaN(b);
  if (na || nb) return (na ? 1 : 0) - (nb ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The flat positions of each line of `shape` along `axis`, lines in C order of the other axes. */
function linesOf(shape: readonly number[], axis: number): number[][] {
  if (shape.length === 0) return [[0]];
  const st = shape.map((_, d) => numelOf(shape.slice(d + 1)));
  const out: number[][] = [];
  for (let i = 0; i < numelOf(shape); i++) {
    if (Math.floor(i / st[axis]) % shape[axis] !== 0) continue;
    out.push(Array.from({ length: shape[axis] }, (_, k) => i + k * st[axis]));
  }
  return out;
}

/** Stable order of a line's indices (0..n-1) by value. */
const order = (line: Num[], descending: boolean): number[] =>
  line.map((_, i) => i).sort((i, j) => (descending ? cmp(line[j], line[i]) : cmp(line[i], line[j])));

/** The sort reference: values and indices (x's shape, axis sorted). */
function sortRef(v: Num[], shape: readonly number[], axis: number, descending: boolean): { values: Num[]; indices: number[] } {
  const values = v.slice(), indices = new Array<number>(v.length).fill(0);
  for (const at of linesOf(shape, axis)) {
    const line = at.map((p) => v[p]);
    order(line, descending).forEach((j, k) => { values[at[k]] = line[j]; indices[at[k]] = j; });
  }
  return { values, indices };
}

/** topk's reference: the first k of the stable order (largest: descending), as [lines, k] flattened in x's axis order. */
function topkRef(v: Num[], shape: readonly number[], axis: number, k: number, largest: boolean): { values: Num[]; indices: number[]; shape: number[] } {
  const outShape = shape.length === 0 ? [] : shape.map((s, d) => (d === axis ? k : s));
  const values = new Array<Num>(numelOf(outShape)).fill(0), indices = new Array<number>(values.length).fill(0);
  const outLines = linesOf(outShape, axis), inLines = linesOf(shape, axis);
  inLines.forEach((at, l) => {
    const line = at.map((p) => v[p]);
    order(line, largest).slice(0, k).forEach((j, q) => { values[outLines[l][q]] = line[j]; indices[outLines[l][q]] = j; });
  });
  return { values, indices, shape: outShape };
}

/** Values equal bit for bit where it shows in JS: NaN is NaN, -0 is -0. */
function same(t: ExecutionContext, got: readonly Num[], want: readonly Num[], what: string): void {
  t.is(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) {
      t.fail(`${what}: element ${i} is ${got[i]}, expected ${want[i]}`);
      return;
    }
  }
  t.pass();
}

function noLeaks(t: ExecutionContext, device: string, body: () => void): void {
  const live = gx.memory.stats(device as never).liveTensors;
  gx.tidy(body);
  t.is(gx.memory.stats(device as never).liveTensors, live, 'no tensor left behind');
}

deviceTestSerial('sort and argsort match the stable reference: every dtype, axis, NaN, -0, ties, descending, views', (t, device) => {
  noLeaks(t, device, () => {
    const shape = [3, 4, 37];
    for (const dtype of ALL) {
      const v = valuesOf(dtype, numelOf(shape), 5);
      const x = make(v, dtype, shape, device);
      for (const axis of [0, 1, 2, -1]) {
        const a = (axis + 3) % 3;
        for (const descending of [false, true]) {
          const want = sortRef(v, shape, a, descending);
          const r = gx.sort(x, axis, { descending });
          t.is(r.values.dtype, dtype);
          t.is(r.indices.dtype, 'int64');
          t.deepEqual(r.values.shape, shape);
          same(t, numbers(r.values), want.values, `${dtype} axis ${axis} descending ${descending} values`);
          t.deepEqual(numbers(r.indices), want.indices, `${dtype} axis ${axis} descending ${descending} indices`);
          t.deepEqual(numbers(gx.argsort(x, axis, { descending })), want.indices, 'argsort');
        }
      }
    }
    // A transposed view, a 0-d tensor, an empty axis, one element.
    const v = valuesOf('float32', 30, 9);
    const xt = make(v, 'float32', [5, 6], device).transpose(0, 1);  // [6, 5]
    const vt = Array.from({ length: 30 }, (_, p) => v[(p % 5) * 6 + Math.floor(p / 5)]);
    const rt = xt.sort(1, { stable: true });
    same(t, numbers(rt.values), sortRef(vt, [6, 5], 1, false).values, 'transposed input');
    const z = gx.sort(gx.tensor(2.5, { device }));
    t.deepEqual([z.values.shape, numbers(z.values), numbers(z.indices)], [[], [2.5], [0]]);
    t.deepEqual(gx.sort(gx.zeros([3, 0], { device })).values.shape, [3, 0]);
    t.deepEqual(gx.sort(gx.zeros([0, 3], { device }), 0).indices.shape, [0, 3]);
    t.deepEqual(numbers(gx.sort(gx.tensor([[7]], { device }), { axis: 0 }).indices), [0]);
  });
});

/** Rows long enough to reach every CUDA sort path (NOTE [ Row sorts on CUDA ]); the CPU runs them too. */
const PATHS: { shape: number[]; dtype: gx.DType; what: string }[] = [
  { shape: [5, 100], dtype: 'float32', what: 'block sort, 128 tier' },
  { shape: [9, 700], dtype: 'int16', what: 'block sort, 1024 tier' },
  { shape: [3, 3000], dtype: 'float64', what: 'block sort, 4096 tier, 8-byte keys' },
  { shape: [2, 8192], dtype: 'float32', what: 'block sort, 8192 tier' },
  { shape: [2, 5000], dtype: 'int64', what: 'per-row device sort, 8-byte keys' },
  { shape: [3, 9000], dtype: 'bfloat16', what: 'per-row device sort, 2-byte keys' },
  { shape: [70, 8500], dtype: 'float32', what: 'segmented sort' },
  { shape: [64, 4100], dtype: 'float64', what: 'segmented sort, 8-byte keys' },
  { shape: [1, 1 << 20], dtype: 'float32', what: 'one long row' },
];

deviceTestSerial('sort reaches every row-sort path and matches the reference on each', (t, device) => {
  noLeaks(t, device, () => {
    for (const { shape, dtype, what } of PATHS) {
      const v = valuesOf(dtype, numelOf(shape), shape[1]);
      const x = make(v, dtype, shape, device);
      for (const descending of [false, true]) {
        const want = sortRef(v, shape, 1, descending);
        const r = x.sort({ descending });
        same(t, numbers(r.values), want.values, `${what} ${dtype} ${shape.join('x')} descending ${descending}: values`);
        t.deepEqual(numbers(r.indices), want.indices, `${what}: indices`);
        r.values.dispose();
        r.indices.dispose();
      }
      x.dispose();
    }
  });
});

deviceTestSerial('topk and kthvalue match the reference: k on each side of 8, 16, 32, both ends, ties, long rows in two passes', (t, device) => {
  noLeaks(t, device, () => {
    const cases: { shape: number[]; dtype: gx.DType; ks: number[] }[] = [
      { shape: [4, 3000], dtype: 'float32', ks: [1, 5, 8, 9, 16, 17, 32, 33, 3000] },
      { shape: [3, 2000], dtype: 'float64', ks: [1, 7, 20] },
      { shape: [5, 1500], dtype: 'int8', ks: [3, 32] },
      { shape: [2, 1800], dtype: 'float16', ks: [10] },
      { shape: [2, 100000], dtype: 'float32', ks: [1, 10, 32] },
      { shape: [2, 70000], dtype: 'int64', ks: [4] },
      { shape: [6, 50], dtype: 'uint8', ks: [1, 50] },
    ];
    for (const { shape, dtype, ks } of cases) {
      const v = valuesOf(dtype, numelOf(shape), 3 + shape[1]);
      const x = make(v, dtype, shape, device);
      for (const k of ks) {
        for (const largest of [true, false]) {
          const want = topkRef(v, shape, 1, k, largest);
          const r = gx.topk(x, k, -1, { largest, sorted: false });
          t.deepEqual(r.values.shape, want.shape);
          same(t, numbers(r.values), want.values, `topk ${dtype} ${shape.join('x')} k ${k} largest ${largest}: values`);
          t.deepEqual(numbers(r.indices), want.indices, `topk ${dtype} k ${k} largest ${largest}: indices`);
        }
        const kth = x.kthvalue(k);
        const ref = topkRef(v, shape, 1, k, false);
        same(t, numbers(kth.values), ref.values.filter((_, i) => i % k === k - 1), `kthvalue ${dtype} k ${k}`);
        t.deepEqual(numbers(kth.indices), ref.indices.filter((_, i) => i % k === k - 1), `kthvalue ${dtype} k ${k}: indices`);
      }
      x.dispose();
    }
    // Another axis, keepdims, a view, 0-d.
    const v = valuesOf('float32', 60, 4);
    const x = make(v, 'float32', [3, 4, 5], device);
    const want = topkRef(v, [3, 4, 5], 1, 2, true);
    const r = x.topk(2, 1);
    t.deepEqual(r.values.shape, [3, 2, 5]);
    same(t, numbers(r.values), want.values, 'topk along axis 1');
    t.deepEqual(numbers(r.indices), want.indices);
    const kth = gx.kthvalue(x, 3, 0, { keepdims: true });
    t.deepEqual(kth.values.shape, [1, 4, 5]);
    same(t, numbers(kth.values), topkRef(v, [3, 4, 5], 0, 3, false).values.slice(40), 'kthvalue along axis 0, keepdims');
    const k0 = gx.kthvalue(gx.tensor(4, { device }), 1);
    t.deepEqual([k0.values.shape, numbers(k0.values), numbers(k0.indices)], [[], [4], [0]]);
    t.deepEqual(gx.topk(x, 0).values.shape, [3, 4, 0]);
  });
});

deviceTestSerial('unique: values, inverse and counts for every dtype; NaN each its own; -0 with 0; empty', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of ALL) {
      const shape = [7, 23];
      const v = valuesOf(dtype, numelOf(shape), 11);
      const x = make(v, dtype, shape, device).transpose(0, 1);  // a view: the flattening follows its own C order
      const flat = Array.from({ length: v.length }, (_, p) => v[(p % 7) * 23 + Math.floor(p / 7)]);
      const idx = order(flat, false);
      const wantValues: Num[] = [], wantCounts: number[] = [], wantInverse = new Array<number>(flat.length).fill(0);
      idx.forEach((j, q) => {
        const prev = q > 0 ? flat[idx[q - 1]] : undefined;
        if (q === 0 || cmp(flat[j], prev as Num) !== 0 || Number.isNaN(flat[j])) {
          wantValues.push(flat[j]);
          wantCounts.push(0);
        }
        wantCounts[wantCounts.length - 1]++;
        wantInverse[j] = wantValues.length - 1;
      });
      const u = gx.unique(x, { returnInverse: true, returnCounts: true });
      same(t, numbers(u.values), wantValues, `${dtype} values`);
      t.deepEqual(u.inverse?.shape, [23, 7]);
      t.deepEqual(numbers(u.inverse as gx.Tensor), wantInverse, `${dtype} inverse`);
      t.deepEqual(numbers(u.counts as gx.Tensor), wantCounts, `${dtype} counts`);
      same(t, numbers(x.unique()), wantValues, `${dtype} values alone`);
      t.deepEqual(Object.keys(gx.unique(x, { returnCounts: true, sorted: false })).sort(), ['counts', 'values']);
    }
    same(t, numbers(gx.unique(gx.tensor([0, -0, NaN, NaN, 1, -0], { device }))), [0, NaN, NaN, 1].sort(cmp), '0 and -0 one value (the first seen), NaNs apart');
    const e = gx.unique(gx.zeros([0, 3], { device }), { returnInverse: true, returnCounts: true });
    t.deepEqual([e.values.shape, e.inverse?.shape, e.counts?.shape], [[0], [0, 3], [0]]);
    // Many values, few distinct (CUDA: the scan spans several blocks).
    const n = 200000;
    const big = Array.from({ length: n }, (_, i) => (i * 7919) % 1000);
    const ub = gx.unique(make(big, 'int32', [n], device), { returnCounts: true });
    t.deepEqual(numbers(ub.values), Array.from({ length: 1000 }, (_, i) => i));
    t.deepEqual(numbers(ub.counts as gx.Tensor), new Array<number>(1000).fill(200));
  });
});

/** torch's searchsorted in JS. */
function searchRef(seq: Num[], v: Num, right: boolean): number {
  let lo = 0, hi = seq.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const past = right ? !(seq[mid] > v) : !(seq[mid] >= v);
    if (past) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

deviceTestSerial('searchsorted: 1-d and batched sequences, left and right, sorter, int32, out, numbers, promotion', (t, device) => {
  noLeaks(t, device, () => {
    const seq = [-Infinity, -2, 0, 0, 1.5, 3, 3, 3, 7, NaN];
    const vals = [-3, -2, 0, 0.5, 3, 3.5, 7, 9, Infinity, NaN, -Infinity];
    for (const dtype of ['float32', 'float64', 'float16', 'bfloat16'] as gx.DType[]) {
      const s = make(seq, dtype, [seq.length], device), v = make(vals, dtype, [vals.length], device);
      for (const right of [false, true]) {
        t.deepEqual(numbers(gx.searchsorted(s, v, { right })), vals.map((e) => searchRef(seq, e, right)), `${dtype} right ${right}`);
      }
      t.deepEqual(numbers(gx.searchsorted(s, v, { side: 'right' })), vals.map((e) => searchRef(seq, e, true)), 'side right');
    }
    // Integers, batched, values of another dtype (promoted), int32 results, out.
    const iseq = [[1, 3, 5, 7], [-5, 0, 0, 10], [2, 2, 2, 2]];
    const ivals = [[0, 3, 8], [0, -6, 11], [2, 1, 3]];
    const s = make(iseq.flat(), 'int32', [3, 4], device), v = make(ivals.flat(), 'int64', [3, 3], device);
    const want = ivals.flatMap((row, r) => row.map((e) => searchRef(iseq[r], e, false)));
    const got = gx.searchsorted(s, v, { outInt32: true });
    t.is(got.dtype, 'int32');
    t.deepEqual(numbers(got), want);
    const out = gx.zeros([3, 3], { dtype: 'int64', device });
    t.is(gx.searchsorted(s, v, { out }), out);
    t.deepEqual(numbers(out), want);
    t.deepEqual(numbers(gx.searchsorted(s, make(ivals.flat().map((e) => e + 0.5), 'float32', [3, 3], device))),
      ivals.flatMap((row, r) => row.map((e) => searchRef(iseq[r], e + 0.5, false))), 'float values into an int sequence');
    // A number, values of any shape for a 1-d sequence, sorter.
    const one = gx.searchsorted(make([1, 3, 5], 'int64', [3], device), 4);
    t.deepEqual([one.shape, numbers(one)], [[], [2]]);
    const grid = gx.searchsorted(make([10, 20, 30], 'float32', [3], device), make([5, 25, 35, 20], 'float32', [2, 2], device), { right: true });
    t.deepEqual([grid.shape, numbers(grid)], [[2, 2], [0, 2, 3, 2]]);
    const unsorted = make([30, 10, 20], 'float32', [3], device);
    const sorter = gx.argsort(unsorted);
    t.deepEqual(numbers(gx.searchsorted(unsorted, make([15, 25], 'float32', [2], device), { sorter })), [1, 2]);
    t.deepEqual(gx.searchsorted(make([], 'float32', [0], device), make([1, 2], 'float32', [2], device)).toArraySync(), new BigInt64Array([0n, 0n]));
  });
});

deviceTestSerial('out: sort, topk and kthvalue write into given tensors; argsort keeps no values', (t, device) => {
  noLeaks(t, device, () => {
    const v = [3, 1, 2, 5, 4, 0];
    const x = make(v, 'float32', [2, 3], device);
    const values = gx.zeros([2, 3], { device }), indices = gx.zeros([2, 3], { dtype: 'int64', device });
    const r = gx.sort(x, 1, { out: { values, indices } });
    t.is<gx.Tensor, gx.Tensor>(r.values, values);
    t.is(r.indices, indices);
    t.deepEqual(numbers(values), [1, 2, 3, 0, 4, 5]);
    t.deepEqual(numbers(indices), [1, 2, 0, 2, 1, 0]);
    const tv = gx.zeros([2, 2], { device }).transpose(0, 1);  // a strided out
    const tk = gx.topk(x, 2, { out: { values: tv } });
    t.is<gx.Tensor, gx.Tensor>(tk.values, tv);
    t.deepEqual(numbers(tv), [3, 2, 5, 4]);
    t.deepEqual(numbers(tk.indices), [0, 2, 0, 1]);
    const kv = gx.zeros([2], { device });
    t.deepEqual(numbers(x.kthvalue(1, 1, { out: { values: kv } }).values), [1, 0]);
    t.deepEqual(numbers(kv), [1, 0]);
    t.throws(() => gx.sort(x, { out: { values: gx.zeros([2, 3], { dtype: 'float64', device }) } }), { instanceOf: TypeError, message: /^gx\.sort: out\.values is float64 but the result is float32/ });
    t.throws(() => gx.sort(x, { out: { values: gx.zeros([3, 2], { device }) } }), { message: /^gx\.sort: out has shape \[3, 2\] but the result has shape \[2, 3\]/ });
    t.throws(() => gx.sort(x, { out: values } as never), { instanceOf: TypeError, message: /^gx\.sort: options\.out must be an object \{ values, indices \}/ });
    t.throws(() => gx.topk(x, 1, { out: { valeus: values } } as never), { instanceOf: TypeError, message: /^gx\.topk \(options\.out\): unknown option 'valeus'; did you mean 'values'/ });
  });
});

deviceTestSerial('gradients: sort, topk and kthvalue send the gradient back through the indices (gradcheck)', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(21);
    // Distinct values: finite differences must not cross a tie.
    const v = Array.from({ length: 24 }, (_, i) => i * 0.37 + r() * 0.1).sort(() => r() - 0.5);
    const x = make(v, 'float64', [2, 3, 4], device).requiresGrad_();
    const check = (f: (x: gx.Tensor) => gx.Tensor, what: string): void => {
      const report = gx.autograd.gradcheck(f, [x], { raiseException: false });
      t.true(report.ok, `${what}: ${JSON.stringify(report.worst)}`);
    };
    check((a) => gx.sort(a, 1).values, 'sort axis 1');
    check((a) => a.sort(-1, { descending: true }).values, 'sort descending');
    check((a) => gx.topk(a, 2, 2).values, 'topk');
    check((a) => gx.topk(a, 2, 0, { largest: false }).values, 'topk smallest axis 0');
    check((a) => gx.kthvalue(a, 2, 1).values, 'kthvalue');
    check((a) => gx.kthvalue(a, 1, -1, { keepdims: true }).values, 'kthvalue keepdims');
    // float16 reaches x too (a scatter, not atomics).
    const h = make([3, 1, 2], 'float16', [3], device).requiresGrad_();
    gx.sum(gx.mul(gx.sort(h).values, make([1, 2, 3], 'float16', [3], device))).backward();
    t.deepEqual(numbers(h.grad as gx.Tensor), [3, 1, 2]);
    // Indices and unique carry no gradient.
    t.false(gx.argsort(x).requiresGrad);
    t.false(gx.sort(x).indices.requiresGrad);
  });
});

deviceTest('errors name the op and the argument', (t, device) => {
  gx.tidy(() => {
    const x = gx.zeros([2, 5], { device });
    t.throws(() => gx.topk(x, 6), { instanceOf: RangeError, message: 'gx.topk: k 6 is out of range for axis 1 of size 5 (input of shape [2, 5]; valid: 0 to 5)' });
    t.throws(() => x.kthvalue(0, 0), { instanceOf: RangeError, message: /^Tensor\.kthvalue: k 0 is out of range for axis 0 of size 2/ });
    t.throws(() => gx.topk(x, 1.5), { instanceOf: TypeError, message: /^gx\.topk: k must be an integer/ });
    t.throws(() => gx.topk(gx.zeros([3], { dtype: 'bool', device }), 1), { instanceOf: TypeError, message: /^gx\.topk: dtype bool is not supported/ });
    t.throws(() => gx.sort(x, 2), { instanceOf: RangeError, message: /^gx\.sort: axis 2 is out of range for an input of shape \[2, 5\]/ });
    t.throws(() => gx.sort(x, { descending: 1 } as never), { instanceOf: TypeError, message: 'gx.sort: descending must be a boolean, got number 1' });
    t.throws(() => x.sort({ decending: true } as never), { instanceOf: TypeError, message: /^Tensor\.sort: unknown option 'decending'; did you mean 'descending'/ });
    t.throws(() => gx.unique(x, { return_counts: true } as never), { instanceOf: TypeError, message: /^gx\.unique: unknown option 'return_counts'; did you mean 'returnCounts'/ });
    t.throws(() => gx.searchsorted(gx.zeros([2, 3], { device }), gx.zeros([3, 1], { device })), { message: /^gx\.searchsorted: values of shape \[3, 1\] do not match sortedSequence of shape \[2, 3\]/ });
    t.throws(() => gx.searchsorted(gx.zeros([3], { device }), 1, { side: 'left', right: true }), { instanceOf: TypeError, message: /side 'left' and right: true disagree/ });
    t.throws(() => gx.searchsorted(gx.tensor(1, { device }), 1), { instanceOf: RangeError, message: /at least one dimension/ });
    t.throws(() => gx.sort('x' as never), { instanceOf: TypeError, message: /^gx\.sort: argument 'input' must be a Tensor/ });
  });
});
