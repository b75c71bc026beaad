// scatterReduce, indexAdd, maskedSelect, nonzero, bincount and histc (and
// their Tensor methods, in place where torch has them) against plain-JS
// references on random inputs, on every device: every reduction with and
// without self, every numeric dtype, every axis, int64 and int32 indices,
// transposed and sliced (non-contiguous) inputs, broadcast masks, inputs
// large enough for several CUDA blocks and segments, the histograms' global
// (bins beyond shared memory) and shared paths, empty tensors, gradients
// (gradcheck), errors, and no leaked tensors.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, rng } from './helpers';
import { cast, unravel, ravel, numel as numelOf, numbers } from './ops-reference';


const make = (v: number[], dtype: gx.DType, shape: number[], device: string): gx.Tensor =>
  gx.tensor(dtype === 'bool' ? v.map(Boolean) : dtype === 'int64' ? v.map(BigInt) : v, { dtype, device, shape } as never) as gx.Tensor;

function noLeaks(t: ExecutionContext, device: string, body: () => void): void {
  const live = gx.memory.stats(device as never).liveTensors;
  gx.tidy(body);
  t.is(gx.memory.stats(device as never).liveTensors, live, 'no tensor left behind');
}

/** A tensor with values `v` of logical shape `shape`, made transposed (non-contiguous) when asked. */
function layoutOf(v: number[], dtype: gx.DType, shape: number[], device: string, transposed: boolean): gx.Tensor {
  if (!transposed || shape.length < 2) return make(v, dtype, shape, device);
  const s = [shape[1], shape[0], ...shape.slice(2)];
  const tv = Array.from({ length: v.length }, (_, p) => {
    const c = unravel(p, s);
    return v[ravel([c[1], c[0], ...c.slice(2)], shape)];
  });
  return make(tv, dtype, s, device).transpose(0, 1);
}

// --- scatterReduce -----------------------------------------------------------------------

type Red = gx.ScatterReduction;
const REDUCTIONS: Red[] = ['sum', 'prod', 'mean', 'amax', 'amin'];

/** The value of combining in dtype: integers wrap, 16-bit floats round every step (as the kernels do). */
function refScatterReduce(x: number[], xs: number[], axis: number, idx: number[], is: number[], src: number[], ss: number[], reduce: Red,
  includeSelf: boolean, dtype: gx.DType): number[] {
  const out = x.slice();
  const count = x.map(() => (includeSelf ? 1 : 0));
  const touched = new Set<number>();
  const isFloat = dtype.startsWith('float') || dtype === 'bfloat16';
  idx.forEach((k, p) => {
    const c = unravel(p, is);
    const v = src[ravel(c, ss)];
    c[axis] = k;
    const o = ravel(c, xs);
    if (!includeSelf && !touched.has(o)) {
      touched.add(o);
      out[o] = reduce === 'prod' ? 1 : reduce === 'amax' ? -Infinity : reduce === 'amin' ? Infinity : 0;
    }
    count[o]++;
    const a = out[o];
    let r: number;
    switch (reduce) {
      case 'sum': case 'mean': r = a + v; break;
      case 'prod': r = a * v; break;
      case 'amax': r = Number.isNaN(a) || Number.isNaN(v) ? NaN : Math.max(a, v); break;
      default: r = Number.isNaN(a) || Number.isNaN(v) ? NaN : Math.min(a, v); break;
    }
    out[o] = Number(cast(r, dtype));
  });
  if (reduce === 'mean') {
    return out.map((v, o) => {
      const n = Math.max(count[o], 1);
      return Number(cast(isFloat ? v / n : Math.floor(v / n), dtype));
    });
  }
  return out;
}

const REDUCE_DTYPES: gx.DType[] = ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8'];

/** Small integers (exact sums and products in every dtype and order), some NaN for the floats' max and min. */
function smallValues(dtype: gx.DType, n: number, r: () => number, reduce: Red): number[] {
  return Array.from({ length: n }, () => {
    if (reduce === 'prod') return [1, -1, 2, 1, -2, 1][Math.floor(r() * 6)];
    const v = Math.floor(r() * 16) - (dtype === 'uint8' ? 0 : 8);
    return dtype.startsWith('float') && (reduce === 'amax' || reduce === 'amin') && r() < 0.03 ? NaN : v;
  }).map((v) => (dtype === 'uint8' ? Math.abs(v) : v));
}

deviceTestSerial('scatterReduce matches the reference: every reduction, includeSelf, dtype and axis, non-contiguous', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(7);
    const xs = [5, 6, 3];
    for (const dtype of REDUCE_DTYPES) {
      for (const reduce of REDUCTIONS) {
        for (const includeSelf of [true, false]) {
          const axis = Math.floor(r() * 3);
          const is = xs.map((n, d) => (d === axis ? n + 3 : Math.max(1, n - 1)));
          const ss = is.map((n) => n + (r() < 0.5 ? 1 : 0));
          const xv = smallValues(dtype, numelOf(xs), r, reduce);
          const sv = smallValues(dtype, numelOf(ss), r, reduce);
          const iv = Array.from({ length: numelOf(is) }, () => Math.floor(r() * xs[axis]));
          const x = layoutOf(xv, dtype, xs, device, r() < 0.5);
          const src = layoutOf(sv, dtype, ss, device, r() < 0.5);
          const index = layoutOf(iv, r() < 0.5 ? 'int64' : 'int32', is, device, r() < 0.5);
          const want = refScatterReduce(numbers(x), xs, axis, iv, is, numbers(src), ss, reduce, includeSelf, dtype);
          const what = `${dtype} ${reduce} includeSelf ${includeSelf} axis ${axis}`;
          const got = gx.scatterReduce(x, axis, index, src, reduce, { includeSelf });
          t.deepEqual(numbers(got), want, what);
          const y = x.clone();
          t.is(y.scatterReduce_(axis - 3, index, src, reduce, { includeSelf }), y);
          t.deepEqual(numbers(y), want, `${what} (in place)`);
        }
      }
    }
    // A number as src; an empty index leaves x as it is.
    const z = gx.zeros([4], { device, dtype: 'int32' });
    t.deepEqual(numbers(z.scatterReduce(0, gx.tensor([1, 1, 3], { dtype: 'int64', device }), 5, 'sum')), [0, 10, 0, 5]);
    t.deepEqual(numbers(gx.scatterReduce(z, 0, gx.zeros([0], { dtype: 'int64', device }), gx.zeros([0], { device, dtype: 'int32' }), 'amin')), [0, 0, 0, 0]);
  });
});

deviceTest('scatterReduce mean of integers is exact past 2^53 and rounds down, as torch (int64, int32, int8 counts wrapping)', (t, device) => {
  noLeaks(t, device, () => {
    const big = (v: bigint[]) => gx.tensor(v, { dtype: 'int64', device });
    const x = big([2n ** 61n + 1n, -7n, -(2n ** 61n) - 3n, 2n ** 63n - 1n, 2n ** 60n + 1n, -(2n ** 63n)]);
    const index = big([0n, 1n, 2n, 0n, 2n]), src = big([2n ** 61n + 4n, 0n, 0n, 3n, 1n]);
    const strings = (y: gx.Tensor): string[] => Array.from(y.toArraySync() as BigInt64Array, String);
    // torch 2.13: x.scatter_reduce(0, index, src, 'mean'[, include_self=False]).tolist()
    t.deepEqual(strings(gx.scatterReduce(x, 0, index, src, 'mean')),
      ['1537228672809129304', '-4', '-768614336404564652', '9223372036854775807', '1152921504606846977', '-9223372036854775808']);
    t.deepEqual(strings(gx.scatterReduce(x, 0, index, src, 'mean', { includeSelf: false })),
      ['1152921504606846979', '0', '0', '9223372036854775807', '1152921504606846977', '-9223372036854775808']);
    const x32 = gx.tensor([7, -7, -(2 ** 31), 2 ** 31 - 1], { dtype: 'int32', device });
    const got32 = gx.scatterReduce(x32, 0, big([0n, 0n, 1n, 2n]), gx.tensor([1, 1, 0, 1], { dtype: 'int32', device }), 'mean');
    t.deepEqual(numbers(got32), [3, -4, -1073741824, 2147483647]);
    // int8: the sum (900) and the count (301) wrap in int8 as torch's do: -124 / 45 rounds down to -3.
    const got8 = gx.scatterReduce(gx.zeros([2], { dtype: 'int8', device }), 0, gx.zeros([300], { dtype: 'int64', device }), gx.full([300], 3, { dtype: 'int8', device }), 'mean');
    t.deepEqual(numbers(got8), [-3, 0]);
  });
});

deviceTest('scatterAdd takes every numeric dtype on every device (atomics: compare-and-swap loops on CUDA)', (t, device) => {
  noLeaks(t, device, () => {
    for (const dtype of ['float16', 'bfloat16', 'int8', 'int16', 'uint8'] as gx.DType[]) {
      const x = make([1, 2, 3], dtype, [3], device);
      const idx = gx.tensor([0, 2, 2, 2, 0], { dtype: 'int64', device });
      const got = gx.scatterAdd(x, 0, idx, make([1, 1, 2, 3, 4], dtype, [5], device));
      t.deepEqual(numbers(got), [6, 2, 9], dtype);
    }
  });
});

deviceTestSerial('scatterReduce on many elements into few places (contended atomics) and into many', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(9);
    const n = 50000;
    for (const [places, dtype] of [[7, 'int32'], [3, 'float16'], [5000, 'int8'], [11, 'float32']] as [number, gx.DType][]) {
      const iv = Array.from({ length: n }, () => Math.floor(r() * places));
      const sv = Array.from({ length: n }, () => Math.floor(r() * 7) - 3);
      const index = make(iv, 'int64', [n], device), src = make(sv, dtype, [n], device);
      const x = gx.zeros([places], { device, dtype });
      for (const reduce of ['amax', 'amin', 'sum'] as Red[]) {
        if (reduce === 'sum' && dtype !== 'int32') continue;  // exact in int32 only
        const want = refScatterReduce(numbers(x), [places], 0, iv, [n], sv, [n], reduce, false, dtype);
        t.deepEqual(numbers(gx.scatterReduce(x, 0, index, src, reduce, { includeSelf: false })), want, `${dtype} ${reduce} into ${places}`);
      }
    }
  });
});

deviceTestSerial('gather and take over runs of 4 positions (CUDA reads them as one vector): dtypes, int32 and int64, wrap, errors', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(12);
    for (const dtype of ['float32', 'float64', 'float16', 'uint8'] as gx.DType[]) {
      for (const idt of ['int64', 'int32'] as gx.DType[]) {
        const xs = [3, 10], is = [3, 8];
        const xv = Array.from({ length: 30 }, () => Math.floor(r() * 100));
        const iv = Array.from({ length: 24 }, () => Math.floor(r() * 10));
        const x = make(xv, dtype, xs, device), index = make(iv, idt, is, device);
        t.deepEqual(numbers(gx.gather(x, 1, index)), iv.map((k, p) => xv[Math.floor(p / 8) * 10 + k]), `${dtype} ${idt} gather`);
        const tv = iv.map((k, p) => (p % 3 === 0 ? k - 30 : k));
        t.deepEqual(numbers(gx.take(x, make(tv, idt, is, device))), tv.map((k) => xv[k < 0 ? k + 30 : k]), `${dtype} ${idt} take`);
      }
    }
    const x = gx.zeros([2, 8], { device });
    t.throws(() => gx.gather(x, 1, gx.tensor([[0, 1, 2, 9, 0, 0, 0, 0]], { dtype: 'int64', device })), { message: 'gx.gather: index 9 is out of range for dimension 1 of size 8' });
    t.throws(() => gx.take(x, gx.tensor([0, -17, 1, 2], { dtype: 'int32', device })), { message: 'gx.take: index -17 is out of range for dimension 0 of size 16' });
  });
});

// --- indexAdd ----------------------------------------------------------------------------

deviceTestSerial('indexAdd matches the reference: alpha, repeated indices, every axis, dtypes, in place', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(3);
    const xs = [4, 5, 3];
    for (const dtype of ['float64', 'float32', 'int64', 'int32', 'float16', 'uint8'] as gx.DType[]) {
      for (let axis = 0; axis < 3; axis++) {
        const m = 7;
        const iv = Array.from({ length: m }, () => Math.floor(r() * xs[axis]));
        const ss = xs.map((n, d) => (d === axis ? m : n));
        const xv = Array.from({ length: numelOf(xs) }, () => Math.floor(r() * 10));
        const sv = Array.from({ length: numelOf(ss) }, () => Math.floor(r() * 10));
        const alpha = dtype === 'uint8' ? 1 : 2;
        const want = xv.slice();
        sv.forEach((v, p) => {
          const c = unravel(p, ss);
          c[axis] = iv[c[axis]];
          const o = ravel(c, xs);
          want[o] = Number(cast(want[o] + alpha * v, dtype));
        });
        const x = layoutOf(xv, dtype, xs, device, axis !== 0);
        const src = layoutOf(sv, dtype, ss, device, axis === 2);
        const index = make(iv, axis === 1 ? 'int32' : 'int64', [m], device);
        t.deepEqual(numbers(gx.indexAdd(x, axis, index, src, { alpha })), want, `${dtype} axis ${axis}`);
        const y = x.clone();
        t.is(y.indexAdd_(axis, index, src, { alpha }), y);
        t.deepEqual(numbers(y), want, `${dtype} axis ${axis} in place`);
      }
    }
    const z = gx.zeros([3, 2], { device });
    t.deepEqual(numbers(z.indexAdd(0, gx.tensor([2, 0, 2], { dtype: 'int64', device }), gx.ones([3, 2], { device }))), [1, 1, 0, 0, 2, 2]);
    t.deepEqual(gx.indexAdd(z, 1, gx.zeros([0], { dtype: 'int64', device }), gx.zeros([3, 0], { device })).shape, [3, 2], 'an empty index');
  });
});

// --- maskedSelect, nonzero -------------------------------------------------------------------

deviceTestSerial('maskedSelect matches the reference: broadcast masks, layouts, dtypes, many elements', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(4);
    for (const [xs, ms] of [[[3, 4, 5], [3, 4, 5]], [[3, 4, 5], [4, 1]], [[4, 1], [2, 4, 6]], [[100003], [100003]], [[2, 0, 3], [3]]] as number[][][]) {
      for (const dtype of ['float32', 'int64', 'float16', 'uint8', 'bool'] as gx.DType[]) {
        const xv = Array.from({ length: numelOf(xs) }, () => (dtype === 'bool' ? (r() < 0.5 ? 1 : 0) : Math.floor(r() * 100)));
        const mv = Array.from({ length: numelOf(ms) }, () => (r() < 0.4 ? 1 : 0));
        const x = layoutOf(xv, dtype, xs, device, r() < 0.5);
        const mask = layoutOf(mv, 'bool', ms, device, r() < 0.5);
        const n = Math.max(xs.length, ms.length);
        const shape = Array.from({ length: n }, (_, k) => {
          const a = xs[k - n + xs.length] ?? 1, b = ms[k - n + ms.length] ?? 1;
          return a === 1 ? b : a;
        });
        const at = (v: number[], s: number[], c: number[]): number => v[ravel(c.slice(n - s.length).map((e, k) => (s[k] === 1 ? 0 : e)), s)];
        const want: number[] = [];
        for (let p = 0; p < numelOf(shape); p++) {
          const c = unravel(p, shape);
          if (at(mv, ms, c)) want.push(at(xv, xs, c));
        }
        const got = gx.maskedSelect(x, mask);
        t.deepEqual(got.shape, [want.length], `${dtype} ${JSON.stringify(xs)} mask ${JSON.stringify(ms)}: shape`);
        t.deepEqual(numbers(got), want, `${dtype} ${JSON.stringify(xs)} mask ${JSON.stringify(ms)}`);
        t.deepEqual(numbers(x.maskedSelect(mask)), want, 'the method');
      }
    }
  });
});

deviceTestSerial('nonzero matches the reference: dtypes (NaN counts), layouts, 0-d, empty, asTuple, many elements', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(6);
    for (const xs of [[4, 5], [2, 3, 4], [7], [], [0, 3], [70001], [3, 1, 40000]]) {
      for (const dtype of ['float32', 'int32', 'bool', 'float64', 'int8'] as gx.DType[]) {
        const xv = Array.from({ length: numelOf(xs) }, () => (r() < 0.5 ? 0 : dtype === 'bool' ? 1 : r() < 0.1 && dtype.startsWith('float') ? NaN : Math.floor(r() * 5) + 1));
        const x = layoutOf(xv, dtype, xs, device, r() < 0.5);
        const rows: number[] = [];
        xv.forEach((v, p) => { if (v !== 0) rows.push(...unravel(p, xs)); });
        const n = xv.filter((v) => v !== 0).length;
        const got = gx.nonzero(x);
        t.is(got.dtype, 'int64');
        t.deepEqual(got.shape, [n, xs.length], `${dtype} ${JSON.stringify(xs)}`);
        t.deepEqual(numbers(got), rows, `${dtype} ${JSON.stringify(xs)}`);
        const cols = x.nonzero({ asTuple: true });
        t.is(cols.length, Math.max(xs.length, 1));
        if (xs.length > 0) cols.forEach((c, j) => t.deepEqual(numbers(c), rows.filter((_, k) => k % xs.length === j)));
        else t.deepEqual(numbers(cols[0]), new Array<number>(n).fill(0), '0-d: zeros, one per nonzero');
      }
    }
    // nonzero's columns index x back to its nonzero elements.
    const x = gx.tensor([[0, 3], [4, 0]], { device });
    t.deepEqual(numbers(x.index(...gx.nonzero(x, { asTuple: true }))), [3, 4]);
  });
});

// --- bincount, histc -----------------------------------------------------------------------------

deviceTestSerial('bincount matches the reference: weights (float32 and others), minlength, dtypes, many bins', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(8);
    for (const [n, top] of [[1000, 10], [60000, 50000], [5, 3]]) {
      for (const dtype of ['int64', 'int32', 'uint8', 'int16'] as gx.DType[]) {
        const hi = Math.min(top, dtype === 'uint8' ? 255 : dtype === 'int16' ? 32767 : top);
        const xv = Array.from({ length: n }, () => Math.floor(r() * hi));
        const wv = Array.from({ length: n }, () => Math.floor(r() * 8) / 4);
        const x = make(xv, dtype, [n], device);
        const len = Math.max(...xv) + 1;
        const counts = new Array<number>(len).fill(0), sums = new Array<number>(len).fill(0);
        xv.forEach((v, i) => { counts[v]++; sums[v] += wv[i]; });
        const c = gx.bincount(x);
        t.is(c.dtype, 'int64');
        t.deepEqual(numbers(c), counts, `${dtype} ${n} counts`);
        const w32 = gx.bincount(x, { weights: make(wv, 'float32', [n], device) });
        t.is(w32.dtype, 'float32');
        t.deepEqual(numbers(w32), sums, `${dtype} float32 weights`);
        const w64 = x.bincount({ weights: make(wv.map((v) => v * 4), 'int32', [n], device), minlength: len + 3 });
        t.is(w64.dtype, 'float64', 'other weights: float64');
        t.deepEqual(numbers(w64), [...sums.map((v) => v * 4), 0, 0, 0], `${dtype} int32 weights, minlength`);
      }
    }
    t.deepEqual(numbers(gx.bincount(gx.zeros([0], { dtype: 'int64', device }), { minlength: 3 })), [0, 0, 0], 'empty');
    const s = gx.arange(10, { device, dtype: 'int64' }).slice(0, 1, null, 3);  // [1, 4, 7], strided
    t.deepEqual(numbers(s.bincount()), [0, 1, 0, 0, 1, 0, 0, 1]);
  });
});

/** torch's histc bin (float math as the kernels: v, lo, hi as `f`). */
function refHistc(v: number[], bins: number, lo: number, hi: number, f: (x: number) => number): number[] {
  const out = new Array<number>(bins).fill(0);
  for (const x of v) {
    if (!(x >= lo && x <= hi)) continue;
    let b = Math.trunc(f(f(f(x - lo) * bins) / f(hi - lo)));
    if (b >= bins) b = bins - 1;
    out[b]++;
  }
  return out;
}

deviceTestSerial('histc matches the reference: ranges given and found, outside values and NaN left out, top edge, dtypes, both CUDA paths', (t, device) => {
  noLeaks(t, device, () => {
    const r = rng(10);
    const f32 = Math.fround;
    for (const [n, bins] of [[1000, 10], [100000, 256], [30000, 20000], [7, 1]]) {
      const xv = Array.from({ length: n }, () => f32(r() * 6 - 1));
      xv[0] = 4;  // the top edge
      if (n > 3) xv[1] = NaN;
      const x = gx.tensor(xv, { device });
      const got = gx.histc(x, { bins, min: 0, max: 4 });
      t.is(got.dtype, 'float32');
      t.deepEqual(numbers(got), refHistc(xv, bins, 0, 4, f32), `${n} into ${bins}`);
    }
    const d = gx.tensor([1, 2, 2, 5], { device, dtype: 'float64' });
    t.deepEqual(numbers(d.histc({ bins: 4 })), [1, 2, 0, 1], 'the data range (min == max == 0)');
    t.deepEqual(numbers(gx.histc(gx.tensor([3, 3], { device }), { bins: 2 })), [0, 2], 'one value: [v - 1, v + 1]');
    t.deepEqual(numbers(gx.histc(gx.tensor([3, 9, 4], { device, dtype: 'int32' }), { bins: 3, min: 3, max: 6 })), [1, 1, 0], 'integers');
    t.deepEqual(numbers(gx.histc(gx.tensor([1, 2], { device, dtype: 'float16' }).transpose(0, 0), { bins: 2, min: 1, max: 2 })), [1, 1]);
    t.deepEqual(numbers(gx.histc(gx.zeros([0], { device }), { bins: 3 })), [0, 0, 0], 'empty');
    t.deepEqual(numbers(gx.histc(gx.arange(12, { device, dtype: 'float32' }).reshape([3, 4]).transpose(0, 1), { bins: 3, min: 0, max: 12 })),
      [4, 4, 4], 'a transposed input');
  });
});

// --- gradients ---------------------------------------------------------------------------------

deviceTestSerial('gradients: indexAdd, maskedSelect, scatterReduce with every reduction (gradcheck); histc refused', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.tensor(Array.from({ length: 12 }, (_, i) => Math.cos(i) * 2), { dtype: 'float64', device, shape: [3, 4] });
    const s = gx.tensor(Array.from({ length: 8 }, (_, i) => Math.sin(i) + 2), { dtype: 'float64', device, shape: [2, 4] });
    x.requiresGrad = true;
    s.requiresGrad = true;
    const idx = gx.tensor([2, 2], { dtype: 'int64', device });
    const sidx = gx.tensor([[0, 2, 2, 1], [2, 0, 2, 2]], { dtype: 'int64', device });
    const ok = (f: (...v: gx.Tensor[]) => gx.Tensor, inputs: gx.Tensor[], what: string): void => {
      t.true(gx.autograd.gradcheck(f, inputs).ok, what);
    };
    ok((a, b) => gx.indexAdd(a, 0, idx, b, { alpha: 3 }), [x, s], 'indexAdd');
    const m = gx.tensor([true, false, true, true], { device });
    ok((a) => gx.maskedSelect(a, m), [x], 'maskedSelect (a broadcast mask)');
    for (const includeSelf of [true, false]) {
      ok((a, b) => gx.scatterReduce(a, 0, sidx, b, 'sum', { includeSelf }), [x, s], `sum includeSelf ${includeSelf}`);
      ok((a, b) => gx.scatterReduce(a, 0, sidx, b, 'mean', { includeSelf }), [x, s], `mean includeSelf ${includeSelf}`);
    }
    // amax, amin, prod: tie-free values here (ties and zeros are checked against torch's figures in test/linalg-grad.test.ts).
    for (const includeSelf of [true, false]) {
      for (const reduce of ['amax', 'amin', 'prod'] as const) {
        ok((a, b) => gx.scatterReduce(a, 0, sidx, b, reduce, { includeSelf }), [x, s], `${reduce} includeSelf ${includeSelf}`);
      }
    }
    ok((a) => gx.scatterReduce(a, 0, sidx, 0.5, 'prod'), [x], 'prod of a number src');
    // Without self, a place that got one src value is that value: its gradient is all of g, even where self held the
    // same value (torch 2.13 counts self in the split there and gives 0.5).
    const lone = gx.tensor([2], { dtype: 'float64', device }).requiresGrad_();
    const start = gx.tensor([2, 5], { dtype: 'float64', device });
    gx.sum(gx.scatterReduce(start, 0, gx.tensor([0], { dtype: 'int64', device }), lone, 'amax', { includeSelf: false })).backward();
    t.deepEqual(Array.from(lone.grad?.toArraySync() ?? []), [1]);
    t.throws(() => gx.histc(x), { message: /^gx\.histc: the derivative is not implemented; detach\(\)/ });
    t.deepEqual(gx.histc(x.detach(), { bins: 2 }).shape, [2], 'fine detached');
    // In place on a leaf that requires grad: refused, as torch's (written into a recorded tensor they record: test/inplace-grad.test.ts).
    t.throws(() => x.indexAdd_(0, idx, s), { message: /^Tensor\.indexAdd_: self is a leaf tensor that requires grad/ });
    t.throws(() => x.scatterReduce_(0, sidx, s, 'sum'), { message: /^Tensor\.scatterReduce_: self is a leaf tensor that requires grad/ });
  });
});

// --- errors ------------------------------------------------------------------------------------

deviceTest('errors name the function, the argument and the value', (t, device) => {
  gx.tidy(() => {
    const x = gx.zeros([2, 5], { device });
    const i64 = (v: number[]) => gx.tensor(v, { dtype: 'int64', device });
    t.throws(() => gx.scatterReduce(x, 1, i64([7]).reshape([1, 1]), x, 'sum'), { message: 'gx.scatterReduce: index 7 is out of range for dimension 1 of size 5' });
    t.throws(() => gx.scatterReduce(x, 1, i64([0]).reshape([1, 1]), x, 'max' as never), { instanceOf: TypeError, message: /^gx\.scatterReduce: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got/ });
    t.throws(() => gx.scatterReduce(x, 1, i64([0]).reshape([1, 1]), x, 'sum', { include_self: false } as never), { instanceOf: TypeError, message: /include_self/ });
    t.throws(() => gx.scatterReduce(gx.zeros([2], { dtype: 'bool', device }), 0, i64([0]), gx.zeros([1], { dtype: 'bool', device }), 'sum'), { instanceOf: TypeError, message: /bool tensors are not supported/ });
    t.throws(() => gx.indexAdd(x, 0, i64([0, 2]), gx.zeros([2, 5], { device })), { message: 'gx.indexAdd: index 2 is out of range for dimension 0 of size 2' });
    t.throws(() => gx.indexAdd(x, 0, i64([0]), gx.zeros([2, 5], { device })), { message: /^gx\.indexAdd: source has shape \[2, 5\] but self of shape \[2, 5\] with an index of 1 needs \[1, 5\]/ });
    t.throws(() => gx.indexAdd(x, 0, i64([0]), gx.zeros([1, 5], { device, dtype: 'float64' })), { instanceOf: TypeError, message: /must have self's dtype float32/ });
    t.throws(() => gx.indexAdd(gx.zeros([2], { dtype: 'int32', device }), 0, i64([0]), gx.zeros([1], { dtype: 'int32', device }), { alpha: 0.5 }), { instanceOf: TypeError, message: /alpha must be an integer for int32 tensors/ });
    t.throws(() => gx.maskedSelect(x, x), { instanceOf: TypeError, message: /^gx\.maskedSelect: mask must be a bool tensor/ });
    t.throws(() => gx.maskedSelect(x, gx.zeros([3], { dtype: 'bool', device })), { message: /^gx\.maskedSelect:/ });
    t.throws(() => gx.nonzero(x, { as_tuple: true } as never), { instanceOf: TypeError, message: /as_tuple/ });
    t.throws(() => gx.bincount(i64([1, -2])), { instanceOf: RangeError, message: 'gx.bincount: self must hold non-negative integers, got -2' });
    t.throws(() => gx.bincount(x), { instanceOf: TypeError, message: /^gx\.bincount: self must be a 1-d tensor of non-negative integers/ });
    t.throws(() => gx.bincount(i64([1]), { weights: gx.zeros([2], { device }) }), { message: /^gx\.bincount: weights must be 1-d with self's length 1/ });
    t.throws(() => gx.bincount(i64([1]), { minlength: -1 }), { instanceOf: RangeError, message: /minlength must be a non-negative integer/ });
    t.throws(() => gx.histc(x, { bins: 0 }), { instanceOf: RangeError, message: /^gx\.histc: bins must be a positive integer/ });
    t.throws(() => gx.histc(x, { min: 2, max: 1 }), { instanceOf: RangeError, message: 'gx.histc: max must be larger than min, got min 2 and max 1' });
    t.throws(() => gx.histc(gx.tensor([1, Infinity], { device })), { instanceOf: RangeError, message: 'gx.histc: range of [1, Infinity] is not finite' });
    t.throws(() => gx.histc(x, { bin: 3 } as never), { instanceOf: TypeError, message: /bin/ });
  });
});
