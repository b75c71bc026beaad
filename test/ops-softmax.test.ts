// softmax, logSoftmax, logsumexp, var, std and cumsum against plain-JS
// references (float64 math) on random inputs, on every device: every claimed
// dtype with a tolerance per dtype, several axes (negative ones too),
// keepdims, non-contiguous inputs (permuted, transposed and stepped views),
// 0-d and empty inputs, the CUDA paths' shapes (short, register-sized, long
// and odd rows; strided axes; long scans), infinities and NaN, large-mean data
// for var, exact int64 cumsums (wrapping too), `out`, `{ dtype }`, errors that
// name the op, and no leaked tensors.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, poisonOf } from './helpers';
import { ALL_DTYPES, FLOATS, cast, close, closeEach, isFloat, live, make, numel, randomIn, tolerance, values, type V } from './ops-reference';

type Float = (typeof FLOATS)[number];

// --- references ------------------------------------------------------------------

/** The C-order flat indices of every line along `axis` (C order over the other dims); [[0]] for 0-d. */
function lines(shape: readonly number[], axis: number): number[][] {
  if (shape.length === 0) return [[0]];
  const strides = shape.map((_, d) => numel(shape.slice(d + 1)));
  const kept = shape.map((_, d) => d).filter((d) => d !== axis);
  const out: number[][] = [];
  const count = numel(kept.map((d) => shape[d]));
  for (let l = 0; l < count; l++) {
    let rest = l, base = 0;
    for (let k = kept.length - 1; k >= 0; k--) {
      const d = kept[k];
      base += (rest % shape[d]) * strides[d];
      rest = Math.floor(rest / shape[d]);
    }
    out.push(Array.from({ length: shape[axis] }, (_, i) => base + i * strides[axis]));
  }
  return out;
}

/** For each output of a reduction over `axes` (C order), the values it reduces. */
function groups(vals: readonly V[], shape: readonly number[], axes: readonly number[]): number[][] {
  const kept = shape.map((_, i) => i).filter((i) => !axes.includes(i));
  const out: number[][] = Array.from({ length: numel(kept.map((i) => shape[i])) }, () => []);
  const idx = new Array<number>(shape.length).fill(0);
  for (let flat = 0; flat < vals.length; flat++) {
    let o = 0;
    for (const k of kept) o = o * shape[k] + idx[k];
    out[o].push(Number(vals[flat]));
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

function softmaxLine(xs: readonly number[], log: boolean): number[] {
  let mx = -Infinity;
  for (const x of xs) if (x > mx) mx = x;
  let s = 0;
  for (const x of xs) s += Math.exp(x - mx);
  const ls = Math.log(s);
  return xs.map((x) => (log ? x - mx - ls : Math.exp(x - mx) / s));
}

function logsumexpRef(xs: readonly number[]): number {
  if (xs.some((x) => Number.isNaN(x))) return Number.NaN;
  let mx = -Infinity;
  for (const x of xs) if (x > mx) mx = x;
  if (mx === Infinity) return Infinity;
  if (mx === -Infinity) return -Infinity;
  let s = 0;
  for (const x of xs) s += Math.exp(x - mx);
  return mx + Math.log(s);
}

/** Two-pass variance in float64 (the reference): sum((x - mean)^2) / max(0, n - correction). */
function varRef(xs: readonly number[], correction: number): number {
  const n = xs.length;
  let mean = 0;
  for (const x of xs) mean += x;
  mean /= n;
  let m2 = 0, dev = 0;
  for (const x of xs) {
    m2 += (x - mean) ** 2;
    dev += x - mean;
  }
  m2 -= (dev * dev) / n; // the corrected two-pass formula
  return n === 0 ? Number.NaN : m2 / Math.max(0, n - correction);
}

/** softmax/logSoftmax tolerance: the dtype's, scaled by the exponent's size (rounding x - max costs eps * |x - max|). */
function softmaxClose(t: ExecutionContext, got: readonly V[], x: readonly V[], shape: readonly number[], axis: number,
  log: boolean, d: Float, what: string): void {
  t.is(got.length, x.length, `${what}: element count`);
  const tol = Math.max(tolerance(d), d === 'float32' ? 4e-7 : 0) * 4;
  for (const line of lines(shape, axis)) {
    const xs = line.map((i) => Number(x[i]));
    const want = softmaxLine(xs, log);
    let mx = -Infinity;
    for (const v of xs) if (v > mx) mx = v;
    for (let k = 0; k < line.length; k++) {
      const a = Number(got[line[k]]), e = Number(cast(want[k], d));
      const scale = 1 + Math.abs(xs[k] - mx);
      const atol = log ? tol * scale : (d === 'float16' ? 1e-7 : 0);
      const ok = (Number.isNaN(a) && Number.isNaN(e)) || a === e || Math.abs(a - e) <= tol * scale * Math.abs(e) + atol;
      if (!ok) {
        t.fail(`${what}: element ${line[k]} is ${a}, expected ${e} (line ${JSON.stringify(line.slice(0, 4))}..., x ${xs[k]}, max ${mx})`);
        return;
      }
    }
  }
  t.pass();
}

// --- softmax, logSoftmax ---------------------------------------------------------

type SoftName = 'softmax' | 'logSoftmax';
const SOFT: Record<SoftName, (x: gx.Tensor, axis: number, opts?: gx.SoftmaxOptions) => gx.Tensor> = {
  softmax: gx.softmax, logSoftmax: gx.logSoftmax,
};

function checkSoftmax(t: ExecutionContext, name: SoftName, x: gx.Tensor, axis: number, what: string, opts?: gx.SoftmaxOptions): void {
  using r = SOFT[name](x, axis, opts);
  const d = (opts?.dtype ?? x.dtype) as Float;
  t.deepEqual(r.shape, x.shape, `${what}: shape`);
  t.is(r.dtype, opts?.out?.dtype ?? d, `${what}: dtype`);
  const xv = opts?.dtype !== undefined ? values(x).map((v) => cast(v, d)) : values(x);
  const ax = axis < 0 ? axis + Math.max(x.ndim, 1) : axis;
  softmaxClose(t, values(r), xv, x.shape, x.ndim === 0 ? 0 : ax, name === 'logSoftmax', (opts?.out?.dtype ?? d) as Float, what);
}

for (const name of ['softmax', 'logSoftmax'] as const) {
  deviceTest(`${name}: every floating dtype, every axis (negative too), views, 0-d and empty inputs`, (t, device) => {
    let seed = 1;
    for (const d of FLOATS) {
      using x = make(randomIn(d, 60, seed++, { lo: -10, hi: 10 }), d, [3, 4, 5], device);
      for (const axis of [0, 1, 2, -1, -2, -3]) checkSoftmax(t, name, x, axis, `${name}(${d} [3, 4, 5], ${axis}) on ${device}`);
      using tr = x.asStrided([5, 3, 4], [1, 20, 5], 0); // a permuted view
      for (const axis of [0, 1, -1]) checkSoftmax(t, name, tr, axis, `${name}(permuted ${d}, ${axis}) on ${device}`);
      using tt = gx.transpose(x, 0, 2);
      checkSoftmax(t, name, tt, -1, `${name}(transposed ${d}, -1) on ${device}`);
      using st = x.asStrided([3, 2, 5], [20, 10, 1], 0); // every other row
      for (const axis of [1, 2]) checkSoftmax(t, name, st, axis, `${name}(stepped ${d}, ${axis}) on ${device}`);
      using z = make(randomIn(d, 1, seed++, { lo: -10, hi: 10 }), d, [], device);
      for (const axis of [0, -1]) {
        using r = SOFT[name](z, axis);
        t.deepEqual(r.shape, []);
        close(t, values(r), [name === 'softmax' ? 1 : 0], `${name}(0-d ${d}, ${axis}) on ${device}`);
      }
      for (const [shape, axis] of [[[0, 3], 0], [[0, 3], 1], [[3, 0], 1], [[3, 0], 0]] as const) {
        using e = gx.zeros(shape, { dtype: d, device });
        using r = SOFT[name](e, axis);
        t.deepEqual(r.shape, shape, `${name} of an empty ${d} ${JSON.stringify(shape)} along ${axis}`);
        t.is(r.dtype, d);
      }
    }
  });

  deviceTest(`${name}: rows of every length class (warp, block, long, odd, unaligned), strided axes`, (t, device) => {
    let seed = 100;
    const cases: [Float, number[], number][] = [
      ['float32', [7, 1], -1], ['float32', [9, 33], -1], ['float32', [5, 1000], -1], ['float32', [3, 1024], 1],
      ['float32', [3, 1025], 1], ['float32', [2, 4096], -1], ['float32', [2, 5000], -1], ['float32', [2, 16400], -1],
      ['float32', [1, 40000], -1], ['float16', [3, 4096], -1], ['bfloat16', [3, 2056], -1], ['float16', [2, 9001], -1],
      ['float64', [3, 4096], -1], ['float64', [2, 9000], -1], ['float64', [4, 31], -1],
      ['float32', [300, 200], 0], ['float32', [5000, 3], 0], ['float64', [64, 130], 0], ['float16', [40, 6, 50], 1],
    ];
    for (const [d, shape, axis] of cases) {
      using x = make(randomIn(d, numel(shape), seed++, { lo: -20, hi: 20 }), d, shape, device);
      checkSoftmax(t, name, x, axis, `${name}(${d} ${JSON.stringify(shape)}, ${axis}) on ${device}`);
    }
    // Rows that are views: 16-byte aligned row starts (the vector loads), then offset by one element (scalar loads).
    using base = make(randomIn('float32', 8 * 136, seed++, { lo: -20, hi: 20 }), 'float32', [8 * 136], device);
    using al = base.asStrided([8, 128], [136, 1], 0);
    checkSoftmax(t, name, al, 1, `${name}(aligned row views) on ${device}`);
    using un = base.asStrided([8, 128], [136, 1], 1);
    checkSoftmax(t, name, un, -1, `${name}(unaligned row views) on ${device}`);
  });
}

deviceTest('softmax: { dtype } converts first, integer inputs need it, out of another dtype, methods', (t, device) => {
  using i = make(randomIn('int32', 24, 7, { lo: -5, hi: 5 }), 'int32', [4, 6], device);
  checkSoftmax(t, 'softmax', i, 1, `softmax(int32, { dtype: float32 }) on ${device}`, { dtype: 'float32' });
  using f = make(randomIn('float32', 24, 8, { lo: -8, hi: 8 }), 'float32', [4, 6], device);
  checkSoftmax(t, 'logSoftmax', f, 0, `logSoftmax(float32, { dtype: float16 }) on ${device}`, { dtype: 'float16' });
  checkSoftmax(t, 'softmax', f, -1, `softmax(float32, { dtype: float64 }) on ${device}`, { dtype: 'float64' });
  using out = gx.full([4, 6], poisonOf('float64') as number, { dtype: 'float64', device });
  t.is(gx.softmax(f, 1, { out }), out);
  softmaxClose(t, values(out), values(f), [4, 6], 1, false, 'float32', `softmax(float32, { out: float64 }) on ${device}`);
  using m = f.softmax(-1);
  using g = gx.softmax(f, 1);
  close(t, values(m), values(g), `Tensor.softmax on ${device}`);
  using lm = f.logSoftmax(0, { dtype: 'float64' });
  t.is(lm.dtype, 'float64');
  using sum = gx.sum(m, 1);
  close(t, values(sum), [1, 1, 1, 1], `softmax rows sum to 1 on ${device}`, 1e-6);
});

deviceTest('softmax and logSoftmax: -inf, +inf and NaN as torch (register and online CUDA paths)', (t, device) => {
  const ni = -Infinity;
  for (const len of [4, 4096, 20000]) {
    const rows: number[][] = [
      [ni, 0, 1, ni], // -inf gives 0 (logSoftmax: -inf)
      [ni, ni, ni, ni], // only -inf: NaN
      [0, Number.NaN, 1, 2], // NaN: NaN
      [Infinity, 1, 2, 3], // +inf: NaN
    ];
    const data: number[] = [];
    for (const r of rows) for (let k = 0; k < len; k++) data.push(k < 4 ? r[k] : r === rows[0] ? ni : r[k % 4]);
    for (const d of ['float32', 'float64', 'bfloat16'] as const) {
      using x = gx.tensor(data, { dtype: d, device, shape: [rows.length, len] });
      using s = gx.softmax(x, -1);
      using l = gx.logSoftmax(x, 1);
      const sv = values(s), lv = values(l);
      const what = `(${d}, rows of ${len}) on ${device}`;
      const e = Math.exp(0) / (Math.exp(0) + Math.exp(1));
      close(t, [sv[0], sv[1], sv[2], sv[3]], [0, cast(e, d), cast(1 - e, d), 0], `softmax with -inf ${what}`, tolerance(d) * 4 + 1e-7);
      close(t, [lv[0], lv[3]], [ni, ni], `logSoftmax of -inf ${what}`);
      t.true(Number.isNaN(Number(lv[1])) === false && Number(lv[1]) < 0, `logSoftmax finite ${what}`);
      for (let r = 1; r < rows.length; r++) {
        t.true(sv.slice(r * len, (r + 1) * len).every((v) => Number.isNaN(Number(v))), `softmax row ${r} is NaN ${what}`);
        t.true(lv.slice(r * len, (r + 1) * len).every((v) => Number.isNaN(Number(v))), `logSoftmax row ${r} is NaN ${what}`);
      }
    }
  }
  // A strided axis (the general kernels).
  using c = gx.tensor([ni, ni, 0, ni, 1, ni], { device, shape: [3, 2] });
  using sc = gx.softmax(c, 0);
  const v = values(sc);
  t.true(Number.isNaN(Number(v[1])) && Number.isNaN(Number(v[3])) && Number.isNaN(Number(v[5])), `all -inf column is NaN on ${device}`);
  close(t, [v[0], v[2], v[4]], [0, cast(Math.exp(0) / (1 + Math.E), 'float32'), cast(Math.E / (1 + Math.E), 'float32')], `strided -inf on ${device}`, 1e-6);
  // Large logits: the naive formula overflows; the stable one does not.
  using big = gx.tensor([1000, 1000, 999], { device });
  using sb = gx.softmax(big, 0);
  const z = 2 + Math.exp(-1);
  close(t, values(sb), [1 / z, 1 / z, Math.exp(-1) / z].map((q) => cast(q, 'float32')), `softmax of large logits on ${device}`, 1e-6);
});

// --- logsumexp --------------------------------------------------------------------

function checkReduce(t: ExecutionContext, got: gx.Tensor, want: readonly number[], d: gx.DType, rtol: number,
  atol: (i: number) => number, what: string): void {
  const gv = values(got);
  t.is(gv.length, want.length, `${what}: element count`);
  for (let i = 0; i < want.length; i++) {
    const a = Number(gv[i]), e = Number(cast(want[i], d));
    const ok = (Number.isNaN(a) && Number.isNaN(e)) || a === e || Math.abs(a - e) <= rtol * Math.abs(e) + atol(i);
    if (!ok) {
      t.fail(`${what}: output ${i} is ${a}, expected ${e} (from ${want[i]}; rtol ${rtol})`);
      return;
    }
  }
  t.pass();
}

type Axis = number | number[] | undefined;
function axesOf(axis: Axis, ndim: number): number[] {
  if (ndim === 0) return [];
  // An empty list reduces every axis, as torch.var(x, dim=[]) does (NumPy's axis=() reduces none).
  if (axis === undefined || (Array.isArray(axis) && axis.length === 0)) return Array.from({ length: ndim }, (_, i) => i);
  return (typeof axis === 'number' ? [axis] : axis).map((a) => (a < 0 ? a + ndim : a));
}
function reducedShape(shape: readonly number[], axes: readonly number[], keepdims: boolean): number[] {
  return keepdims ? shape.map((s, i) => (axes.includes(i) ? 1 : s)) : shape.filter((_, i) => !axes.includes(i));
}

function checkLse(t: ExecutionContext, x: gx.Tensor, axis: Axis, keepdims: boolean, what: string): void {
  using r = gx.logsumexp(x, { axis, keepdims });
  const axes = axesOf(axis, x.ndim);
  const res = isFloat(x.dtype) ? x.dtype : 'float32';
  t.deepEqual(r.shape, reducedShape(x.shape, axes, keepdims), `${what}: shape`);
  t.is(r.dtype as gx.DType, res, `${what}: dtype`);
  const gs = groups(values(x), x.shape, axes);
  const want = gs.map(logsumexpRef);
  const tol = Math.max(tolerance(res), res === 'float32' ? 1e-6 : 0) * 2;
  checkReduce(t, r, want, res, tol, (i) => tol * (1 + Math.max(...gs[i].map(Math.abs), 0)), what);
}

deviceTest('logsumexp: every dtype (integers give float32), axes, keepdims, views, 0-d, empty, long inputs', (t, device) => {
  let seed = 200;
  for (const d of ALL_DTYPES) {
    const dom = isFloat(d) ? { lo: -30, hi: 30 } : d === 'bool' ? {} : { lo: -20, hi: 20 };
    using x = make(randomIn(d, 60, seed++, dom), d, [3, 4, 5], device);
    for (const axis of [undefined, 0, 1, 2, -1, [0, 2], [-1, -2], [0, 1, 2], []] as Axis[]) {
      for (const keepdims of [false, true]) checkLse(t, x, axis, keepdims, `logsumexp(${d}, ${JSON.stringify(axis)}, ${keepdims}) on ${device}`);
    }
    using tr = x.asStrided([5, 3, 4], [1, 20, 5], 0);
    for (const axis of [0, [1, 2], undefined] as Axis[]) checkLse(t, tr, axis, false, `logsumexp(permuted ${d}, ${JSON.stringify(axis)}) on ${device}`);
    using z = make(randomIn(d, 1, seed++, dom), d, [], device);
    checkLse(t, z, undefined, false, `logsumexp(0-d ${d}) on ${device}`);
    checkLse(t, z, 0, true, `logsumexp(0-d ${d}, 0) on ${device}`);
  }
  for (const d of ['float32', 'float16', 'float64'] as const) {
    using big = make(randomIn(d, 100003, seed++, { lo: -40, hi: 40 }), d, [100003], device);
    checkLse(t, big, undefined, false, `logsumexp(${d} [100003]) on ${device}`);
    using rows = make(randomIn(d, 2 * 30001, seed++, { lo: -40, hi: 40 }), d, [2, 30001], device);
    checkLse(t, rows, 1, false, `logsumexp(${d} [2, 30001], 1) on ${device}`);
    checkLse(t, rows, 0, true, `logsumexp(${d} [2, 30001], 0) on ${device}`);
  }
  using e = gx.zeros([3, 0], { device });
  using er = gx.logsumexp(e, 1);
  close(t, values(er), [-Infinity, -Infinity, -Infinity], `logsumexp over an empty axis on ${device}`);
  using ee = gx.logsumexp(e, 0);
  t.deepEqual(ee.shape, [0]);
  using m = e.logsumexp();
  close(t, values(m), [-Infinity], `logsumexp of an empty tensor on ${device}`);
});

deviceTest('logsumexp: -inf lines give -inf (not NaN), +inf gives +inf, NaN propagates, no overflow', (t, device) => {
  const ni = -Infinity;
  for (const len of [2, 5000]) {
    const rows: [number[], number][] = [
      [[ni, ni], ni], [[ni, 0], 0], [[Infinity, 1], Infinity], [[Infinity, Infinity], Infinity], [[Infinity, ni], Infinity],
      [[Number.NaN, 1], Number.NaN], [[1000, 1000], 1000 + Math.log(2)], [[-1000, -1000], -1000 + Math.log(2)],
    ];
    const data: number[] = [];
    for (const [r] of rows) for (let k = 0; k < len; k++) data.push(k < 2 ? r[k] : ni);
    for (const d of ['float32', 'float64', 'float16'] as const) {
      using x = gx.tensor(data, { dtype: d, device, shape: [rows.length, len] });
      using r = gx.logsumexp(x, -1);
      close(t, values(r), rows.map(([, w]) => cast(w, d)), `logsumexp special rows (${d}, ${len}) on ${device}`, tolerance(d));
      using tr = gx.transpose(x, 0, 1);
      using rt = gx.logsumexp(tr, 0);
      close(t, values(rt), rows.map(([, w]) => cast(w, d)), `logsumexp special columns (${d}, ${len}) on ${device}`, tolerance(d));
    }
  }
});

// --- var, std ---------------------------------------------------------------------

type VarName = 'var' | 'std';
const VARF: Record<VarName, (x: gx.Tensor, opts?: gx.VarOptions | number) => gx.Tensor> = { var: gx.var, std: gx.std };

function checkVar(t: ExecutionContext, name: VarName, x: gx.Tensor, opts: gx.VarOptions, what: string, rtol?: number): void {
  using r = VARF[name](x, opts);
  const axes = axesOf(opts.axis as Axis, x.ndim);
  t.deepEqual(r.shape, reducedShape(x.shape, axes, opts.keepdims === true), `${what}: shape`);
  t.is(r.dtype, x.dtype, `${what}: dtype`);
  const gs = groups(values(x), x.shape, axes);
  const want = gs.map((g) => {
    const v = varRef(g, opts.correction ?? 1);
    return name === 'std' ? Math.sqrt(v) : v;
  });
  const d = x.dtype;
  const tol = rtol ?? Math.max(tolerance(d), d === 'float32' ? 1e-5 : d === 'float64' ? 1e-11 : 0) * 2;
  checkReduce(t, r, want, d, tol, () => 0, what);
}

for (const name of ['var', 'std'] as const) {
  deviceTest(`${name}: every floating dtype, axes, keepdims, corrections, views, 0-d, empty`, (t, device) => {
    let seed = 300;
    for (const d of FLOATS) {
      using x = make(randomIn(d, 60, seed++), d, [3, 4, 5], device);
      for (const axis of [undefined, 0, 1, 2, -1, [0, 2], [-1, 1], [0, 1, 2]] as Axis[]) {
        for (const keepdims of [false, true]) {
          checkVar(t, name, x, { axis, keepdims }, `${name}(${d}, ${JSON.stringify(axis)}, ${keepdims}) on ${device}`);
        }
      }
      for (const correction of [0, 2, 0.5]) checkVar(t, name, x, { axis: 1, correction }, `${name}(${d}, correction ${correction}) on ${device}`);
      checkVar(t, name, x, { axis: [], correction: 0 }, `${name}(${d}, axis []) on ${device}`);
      using tr = x.asStrided([5, 3, 4], [1, 20, 5], 0);
      for (const axis of [0, [1, 2], undefined] as Axis[]) checkVar(t, name, tr, { axis }, `${name}(permuted ${d}, ${JSON.stringify(axis)}) on ${device}`);
      using tt = gx.transpose(x, 0, 2);
      checkVar(t, name, tt, { axis: -1 }, `${name}(transposed ${d}) on ${device}`);
      using z = make(randomIn(d, 1, seed++), d, [], device);
      using z1 = VARF[name](z);
      t.true(Number.isNaN(Number(z1.item())), `${name} of one element, correction 1: NaN`);
      using z0 = VARF[name](z, { correction: 0, axis: 0 });
      t.is(Number(z0.item()), 0);
    }
    // N <= correction: inf (nonzero deviations) or NaN (none), as torch.
    using two = gx.tensor([1, 2], { device });
    using inf = VARF[name](two, { correction: 2 });
    t.is(Number(inf.item()), Infinity);
    using e = gx.zeros([2, 0], { device });
    using er = VARF[name](e, 1);
    t.true(values(er).every((v) => Number.isNaN(Number(v))), `${name} over an empty axis is NaN on ${device}`);
    using ones = gx.ones([3, 4], { device });
    using m = ones.var();
    t.is(Number(m.item()), 0);
  });
}

deviceTest('var and std: data with a large mean keep their precision (float32 1e6 + noise, float64 1e9 + noise)', (t, device) => {
  let seed = 400;
  const noisy = (n: number, mean: number, d: 'float32' | 'float64'): number[] =>
    randomIn('float64', n, seed++, { lo: -1, hi: 1 }).map((v) => Number(cast(mean + Number(v), d)));
  for (const [d, mean, rtol] of [['float32', 1e6, 2e-4], ['float64', 1e9, 1e-9]] as const) {
    using big = gx.tensor(noisy(100003, mean, d), { dtype: d, device });
    checkVar(t, 'var', big, {}, `var(${d} ${mean} + noise [100003]) on ${device}`, rtol);
    checkVar(t, 'std', big, { correction: 0 }, `std(${d} ${mean} + noise [100003]) on ${device}`, rtol);
    using m = gx.tensor(noisy(64 * 1000, mean, d), { dtype: d, device, shape: [64, 1000] });
    checkVar(t, 'var', m, { axis: 1 }, `var(${d} ${mean} + noise [64, 1000], 1) on ${device}`, rtol);
    checkVar(t, 'var', m, { axis: 0 }, `var(${d} ${mean} + noise [64, 1000], 0) on ${device}`, rtol);
    using s = gx.tensor(noisy(4 * 7, mean, d), { dtype: d, device, shape: [4, 7] });
    checkVar(t, 'std', s, { axis: -1, keepdims: true }, `std(${d} ${mean} + noise [4, 7], -1) on ${device}`, rtol);
  }
  // The sanity bound: the variance of 1e6 + U(-1, 1) is about 1/3 (a naive float32 sum of squares gives garbage).
  using x = gx.tensor(noisy(10000, 1e6, 'float32'), { dtype: 'float32', device });
  using v = gx.var(x);
  t.true(Math.abs(Number(v.item()) - 1 / 3) < 0.02, `var(1e6 + U(-1, 1)) = ${Number(v.item())} on ${device}`);
});

// --- cumsum ------------------------------------------------------------------------

function cumsumResult(d: gx.DType, asked?: gx.DType): gx.DType {
  return asked ?? (isFloat(d) ? d : 'int64');
}

function checkCumsum(t: ExecutionContext, x: gx.Tensor, axis: number, what: string, opts?: gx.CumsumOptions): void {
  using r = gx.cumsum(x, axis, opts);
  const res = opts?.out?.dtype ?? cumsumResult(x.dtype, opts?.dtype);
  const compute = cumsumResult(x.dtype, opts?.dtype);
  t.deepEqual(r.shape, x.shape, `${what}: shape`);
  t.is(r.dtype as gx.DType, res, `${what}: dtype`);
  const xv = values(x).map((v) => (opts?.dtype !== undefined ? cast(v, opts.dtype) : v));
  const ax = x.ndim === 0 ? 0 : axis < 0 ? axis + x.ndim : axis;
  const want: V[] = new Array<V>(xv.length);
  const atol: number[] = new Array<number>(xv.length).fill(0);
  for (const line of lines(x.shape, ax)) {
    if (isFloat(compute)) {
      let s = 0, mag = 0;
      for (const i of line) {
        s += Number(xv[i]);
        mag += Math.abs(Number(xv[i]));
        want[i] = cast(s, res);
        atol[i] = (compute === 'float64' ? 1e-13 : 3e-6) * mag + tolerance(res) * Math.abs(s);
      }
    } else {
      let s = 0n;
      for (const i of line) {
        s = BigInt.asIntN(64, s + BigInt(xv[i]));
        want[i] = cast(s, res);
      }
    }
  }
  closeEach(t, values(r), want, atol, what);
}

deviceTest('cumsum: every dtype (integers and bool exact in int64), every axis, views, 0-d, empty', (t, device) => {
  let seed = 500;
  for (const d of ALL_DTYPES) {
    using x = make(randomIn(d, 60, seed++), d, [3, 4, 5], device);
    for (const axis of [0, 1, 2, -1, -3]) checkCumsum(t, x, axis, `cumsum(${d} [3, 4, 5], ${axis}) on ${device}`);
    using tr = x.asStrided([5, 3, 4], [1, 20, 5], 0);
    for (const axis of [0, 2]) checkCumsum(t, tr, axis, `cumsum(permuted ${d}, ${axis}) on ${device}`);
    using st = x.asStrided([3, 2, 5], [20, 10, 1], 0);
    checkCumsum(t, st, 1, `cumsum(stepped ${d}, 1) on ${device}`);
    using z = make(randomIn(d, 1, seed++), d, [], device);
    for (const axis of [0, -1]) checkCumsum(t, z, axis, `cumsum(0-d ${d}, ${axis}) on ${device}`);
    using e = gx.zeros([0, 4], { dtype: d, device });
    using er = gx.cumsum(e, 1);
    t.deepEqual(er.shape, [0, 4]);
    t.is(er.dtype as gx.DType, cumsumResult(d));
  }
  using a5 = gx.arange(5, { dtype: 'int32', device });
  using ar = gx.cumsum(a5, 0);
  t.deepEqual(Array.from(ar.toArraySync() as BigInt64Array), [0n, 1n, 3n, 6n, 10n]);
});

deviceTest('cumsum: long lines (chunked on CUDA), many short lines, strided axes, int64 wraparound', (t, device) => {
  let seed = 600;
  const cases: [gx.DType, number[], number][] = [
    ['float32', [100003], 0], ['int32', [100003], -1], ['float64', [3, 50000], 1], ['int64', [3, 50000], 1],
    ['float16', [2, 3000], 1], ['float32', [50000, 3], 0], ['int16', [3, 50000], 0], ['float32', [2000, 40], 0],
    ['uint8', [600, 300], 1], ['bfloat16', [40, 70], 0],
  ];
  for (const [d, shape, axis] of cases) {
    const dom = d === 'float16' || d === 'bfloat16' ? { lo: -4, hi: 4 } : {};
    using x = make(randomIn(d, numel(shape), seed++, dom), d, shape, device);
    checkCumsum(t, x, axis, `cumsum(${d} ${JSON.stringify(shape)}, ${axis}) on ${device}`);
  }
  // int64 sums wrap as in two's complement (as torch's).
  const h = 2n ** 62n;
  using w = gx.tensor([h, h, h, -h, 5n], { dtype: 'int64', device });
  using wr = gx.cumsum(w, 0);
  t.deepEqual(Array.from(wr.toArraySync() as BigInt64Array), [h, BigInt.asIntN(64, 2n * h), BigInt.asIntN(64, 3n * h), BigInt.asIntN(64, 2n * h), BigInt.asIntN(64, 2n * h + 5n)]);
  // Exact int64 results past 2^53 (a float accumulation would round them).
  using big = gx.full([3000], 2 ** 50 + 1, { dtype: 'int64', device });
  using br = gx.cumsum(big, 0);
  t.is((br.toArraySync() as BigInt64Array)[2999], 3000n * (2n ** 50n + 1n));
});

deviceTest('cumsum: { dtype } converts first, out, methods', (t, device) => {
  using i = make(randomIn('int8', 30, 700), 'int8', [5, 6], device);
  checkCumsum(t, i, 1, `cumsum(int8, { dtype: float64 }) on ${device}`, { dtype: 'float64' });
  checkCumsum(t, i, 0, `cumsum(int8, { dtype: int8 }) wraps as int8 on ${device}`, { dtype: 'int8' });
  checkCumsum(t, i, 0, `cumsum(int8, { dtype: int32 }) on ${device}`, { dtype: 'int32' });
  using f = make(randomIn('float32', 30, 701, { lo: -4, hi: 4 }), 'float32', [5, 6], device);
  checkCumsum(t, f, -1, `cumsum(float32, { dtype: float16 }) on ${device}`, { dtype: 'float16' });
  using out = gx.full([5, 6], poisonOf('float64') as number, { dtype: 'float64', device });
  t.is(gx.cumsum(f, 1, { out }), out);
  checkCumsum(t, f, 1, `cumsum(float32, { out: float64 }) on ${device}`, { out });
  using m = i.cumsum(0);
  t.is(m.dtype, 'int64');
  using g = gx.cumsum(i, 0);
  close(t, values(m), values(g), `Tensor.cumsum on ${device}`);
  using b = gx.tensor([true, false, true, true], { dtype: 'bool', device });
  using br = b.cumsum(0);
  t.deepEqual(Array.from(br.toArraySync() as BigInt64Array), [1n, 1n, 2n, 3n]);
});

// --- errors, leaks -------------------------------------------------------------------

deviceTest('errors name the op, the axis, the shape and the dtype', (t, device) => {
  using x = gx.ones([2, 3], { device });
  using i = gx.ones([2, 3], { dtype: 'int32', device });
  using b = gx.ones([2], { dtype: 'bool', device });
  t.throws(() => gx.softmax(x, 2), { instanceOf: RangeError, message: 'gx.softmax: axis 2 is out of range for an input of shape [2, 3] (2 dimensions; valid: -2 to 1)' });
  t.throws(() => x.logSoftmax(-3), { instanceOf: RangeError, message: /^Tensor\.logSoftmax: axis -3 is out of range for an input of shape \[2, 3\]/ });
  t.throws(() => Reflect.apply(gx.softmax, undefined, [x]), { instanceOf: TypeError, message: 'gx.softmax: the axis is required, as in gx.softmax(x, -1) or gx.softmax(x, { axis: -1 })' });
  t.throws(() => Reflect.apply(x.cumsum, x, [{ dtype: 'float64' }]), { instanceOf: TypeError, message: 'Tensor.cumsum: the axis is required, as in x.cumsum(-1) or x.cumsum({ axis: -1 })' });
  t.throws(() => gx.softmax(x, 0, { axis: 1 }), { instanceOf: TypeError, message: /^gx\.softmax: the axis is given twice, as number 0 and in the options; pass one/ });
  t.throws(() => Reflect.apply(gx.var, undefined, [x, { axis: 0 }, { correction: 0 }]), { instanceOf: TypeError, message: /^gx\.var: takes the axis and options as gx\.var\(x, 1, \{ \.\.\. \}\) or gx\.var\(x, \{ axis: 1, \.\.\. \}\)/ });
  t.throws(() => Reflect.apply(gx.softmax, undefined, [x, 0.5]), { instanceOf: TypeError, message: /^gx\.softmax: axis must be an integer/ });
  t.throws(() => gx.softmax(i, 1), { instanceOf: TypeError, message: /^gx\.softmax: dtype int32 is not supported \(got int32 \[2, 3\]\); softmax needs a floating-point input/ });
  t.throws(() => gx.logSoftmax(b, 0), { instanceOf: TypeError, message: /^gx\.logSoftmax: dtype bool is not supported/ });
  t.throws(() => Reflect.apply(gx.softmax, undefined, [x, 0, { dtype: 'int64' }]), { instanceOf: TypeError, message: /^gx\.softmax: dtype int64 is not supported/ });
  t.throws(() => gx.var(i), { instanceOf: TypeError, message: /^gx\.var: dtype int32 is not supported \(got int32 \[2, 3\]\); var needs a floating-point input/ });
  t.throws(() => b.std(), { instanceOf: TypeError, message: /^Tensor\.std: dtype bool is not supported/ });
  t.throws(() => gx.var(x, { axis: [0, -2] }), { instanceOf: RangeError, message: 'gx.var: axis [0,-2] names dimension 0 twice' });
  t.throws(() => gx.std(x, 5), { instanceOf: RangeError, message: /^gx\.std: axis 5 is out of range for an input of shape \[2, 3\]/ });
  t.throws(() => Reflect.apply(gx.var, undefined, [x, { correction: 'one' }]), { instanceOf: TypeError, message: /^gx\.var: correction must be a finite number/ });
  t.throws(() => gx.logsumexp(x, { axis: -3 }), { instanceOf: RangeError, message: /^gx\.logsumexp: axis -3 is out of range/ });
  t.throws(() => Reflect.apply(gx.logsumexp, undefined, [x, { axis: 'a' }]), { instanceOf: TypeError, message: /^gx\.logsumexp: axis must be a number or an array of numbers/ });
  t.throws(() => gx.cumsum(x, 2), { instanceOf: RangeError, message: 'gx.cumsum: axis 2 is out of range for an input of shape [2, 3] (2 dimensions; valid: -2 to 1)' });
  t.throws(() => Reflect.apply(gx.cumsum, undefined, [x, 0, { dtype: 'bool' }]), { instanceOf: TypeError, message: /^gx\.cumsum: dtype bool is not supported/ });
  using z = gx.zeros([], { device });
  t.throws(() => gx.softmax(z, 1), { instanceOf: RangeError, message: 'gx.softmax: axis 1 is out of range for an input of shape [] (0 dimensions; valid: -1 to 0)' });
  using wrong = gx.empty([3], { device });
  t.throws(() => gx.softmax(x, 0, { out: wrong }), { message: 'gx.softmax: out has shape [3] but the result has shape [2, 3]' });
  using iout = gx.empty([2, 3], { dtype: 'int32', device });
  t.throws(() => gx.softmax(x, 0, { out: iout }), { instanceOf: TypeError, message: 'gx.softmax: the result\'s dtype float32 cannot be written into out of dtype int32' });
  using iout1 = gx.empty([3], { dtype: 'int32', device });
  t.throws(() => gx.std(x, { axis: 0, out: iout1 }), { instanceOf: TypeError, message: /^gx\.std: the result's dtype float32 cannot be written/ });
  using iout3 = gx.empty([2, 3], { dtype: 'int32', device });
  t.throws(() => gx.cumsum(x, 1, { out: iout3 }), { instanceOf: TypeError, message: /^gx\.cumsum: the result's dtype float32 cannot be written/ });
});

deviceTestSerial('softmax, logSoftmax, logsumexp, var, std and cumsum leave no tensors behind', (t, device) => {
  using x = gx.ones([4, 5], { device });
  using big = gx.ones([3, 5000], { device });
  using i = gx.ones([4, 5], { dtype: 'int16', device });
  using iout = gx.empty([4, 5], { dtype: 'int32', device });
  const before = live(device);
  for (const a of [x, big]) {
    gx.softmax(a, -1).dispose();
    gx.softmax(a, 0, { dtype: 'float64' }).dispose();
    gx.logSoftmax(a, 1).dispose();
    a.softmax(0).dispose();
    gx.logsumexp(a).dispose();
    gx.logsumexp(a, { axis: 1, keepdims: true }).dispose();
    gx.var(a, 0).dispose();
    a.std({ axis: 1 }).dispose();
    gx.cumsum(a, 1).dispose();
    gx.cumsum(a, 0, { dtype: 'float16' }).dispose();
  }
  gx.logsumexp(i).dispose();
  gx.cumsum(i, 1).dispose();
  gx.softmax(i, 1, { dtype: 'float32' }).dispose();
  t.throws(() => gx.softmax(x, 5));
  t.throws(() => gx.softmax(i, 0));
  t.throws(() => gx.var(i));
  t.throws(() => gx.softmax(i, 0, { dtype: 'float32', out: iout })); // after the conversion: it must be freed
  t.is(live(device), before);
});

