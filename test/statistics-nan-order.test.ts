// mode, nanmedian and nanquantile against JS references on random inputs
// (many ties, NaNs, lines of NaNs only), against torch's figures, with their
// gradients (to the element picked) and refusals, on every device.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, rng } from './helpers';

/** [rows, cols] of random values drawn from a few levels (so ties are common), some NaN, one row all NaN when asked. */
function randomRows(rows: number, cols: number, seed: number, nanRate: number, allNanRow = -1): number[][] {
  const r = rng(seed);
  return Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, () => (i === allNanRow || r() < nanRate ? NaN : Math.floor(r() * 5) - 2 + 0.5)));
}

const same = (a: number, b: number): boolean => (Number.isNaN(b) ? Number.isNaN(a) : Math.abs(a - b) <= 1e-12 * (1 + Math.abs(b)));
function check(t: ExecutionContext, got: gx.Tensor, want: number[], what: string): void {
  const g = Array.from(got.toArraySync() as ArrayLike<number | bigint>, Number);
  t.is(g.length, want.length, `${what}: length`);
  const bad = g.findIndex((v, i) => !same(v, want[i]));
  t.is(bad, -1, `${what}: element ${bad} is ${g[bad]}, expected ${want[bad]}`);
}

/**
 * torch.mode of a line: the smallest most frequent value and the index of its last occurrence. NaN never
 * equals itself, so each counts once and sorts last: a line of NaNs only gives its first.
 */
function modeRef(line: number[]): [number, number] {
  const present = line.filter((v) => !Number.isNaN(v));
  if (present.length === 0) return [NaN, 0];
  const count = (v: number): number => present.filter((u) => u === v).length;
  const best = Math.max(...present.map(count));
  const value = Math.min(...present.filter((v) => count(v) === best));
  return [value, line.lastIndexOf(value)];
}

/** torch.nanmedian of a line: the lower middle of the values that are not NaN (its first index among equals). */
function nanmedianRef(line: number[]): [number, number] {
  const order = line.map((v, i) => [v, i]).filter(([v]) => !Number.isNaN(v)).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (order.length === 0) return [NaN, 0];
  return order[(order.length - 1) >> 1] as [number, number];
}

/** torch.nanquantile of a line. */
function nanquantileRef(line: number[], q: number, how: string): number {
  const s = line.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const rank = q * (s.length - 1), lo = Math.floor(rank), hi = Math.ceil(rank), f = rank - lo;
  switch (how) {
    case 'lower': return s[lo];
    case 'higher': return s[hi];
    case 'midpoint': return s[lo] + 0.5 * (s[hi] - s[lo]);
    case 'nearest': return s[f === 0.5 ? (lo % 2 === 0 ? lo : hi) : Math.round(rank)];
    default: return f < 0.5 ? s[lo] + f * (s[hi] - s[lo]) : s[hi] - (1 - f) * (s[hi] - s[lo]);
  }
}

const tensorOf = (rows: number[][], d: string): gx.Tensor => gx.tensor(rows.flat(), { dtype: 'float64', device: d }).reshape([rows.length, rows[0].length]);
const columns = (rows: number[][]): number[][] => rows[0].map((_, j) => rows.map((r) => r[j]));

deviceTest('mode against a reference on random lines with ties and NaNs: values, indices, both axes, keepdims, integers, 0-d, the method', (t, d) => {
  gx.tidy(() => {
    for (const [seed, cols, nanRate] of [[1, 9, 0], [2, 17, 0.15], [3, 40, 0.3], [4, 1, 0]] as const) {
      const rows = randomRows(6, cols, seed, nanRate, nanRate > 0.2 ? 2 : -1);
      const x = tensorOf(rows, d);
      const [v, i] = gx.mode(x, 1);
      check(t, v, rows.map((l) => modeRef(l)[0]), `values ${seed}`);
      check(t, i, rows.map((l) => modeRef(l)[1]), `indices ${seed}`);
      const c = gx.mode(x, 0, { keepdims: true });
      t.deepEqual(c.values.shape, [1, cols]);
      check(t, c.indices, columns(rows).map((l) => modeRef(l)[1]), `axis 0 ${seed}`);
      check(t, gx.mode(x).values, rows.map((l) => modeRef(l)[0]), `default axis -1 ${seed}`);
      check(t, x.mode({ axis: 1 }).indices, rows.map((l) => modeRef(l)[1]), `method ${seed}`);
    }
    const ints = gx.tensor([3, 1, 3, 1, 2, 7, 7, 0, 0, 0], { dtype: 'int32', device: d }).reshape([2, 5]);
    const m = gx.mode(ints, 1);
    t.is(m.values.dtype, 'int32');
    t.deepEqual(m.values.toNested(), [1, 0]);
    t.deepEqual(m.indices.toNested(), [3, 4]);
    const s = gx.mode(gx.tensor(2.5, { device: d }));
    t.deepEqual([s.values.shape, s.values.item(), s.indices.item()], [[], 2.5, 0]);
  });
});

deviceTest('mode, nanmedian and nanquantile give torch\'s figures', (t, d) => {
  gx.tidy(() => {
    // torch 2.13.0 (CPU): torch.mode(x, 1) of these rows gave values [1, 4, 7], indices [5, 4, 6].
    const x = gx.tensor([[1, 2, 2, 3, 3, 1, 0], [5, 5, 4, 4, 4, 5, 9], [7, 7, 7, 7, 7, 7, 7]], { dtype: 'float32', device: d });
    const [v, i] = gx.mode(x, 1);
    t.deepEqual([v.toNested(), i.toNested()], [[1, 4, 7], [5, 4, 6]]);
    // torch.nanmedian(y, 1): values [2, nan, 3] (indices [0, ?, 1]: torch's index of a line of NaNs is unspecified);
    // torch.nanmedian(y): 2; torch.nanquantile(y, 0.4, 1): [1.8, nan, 2.6]; with 'nearest': [2, nan, 3].
    const y = gx.tensor([[2, NaN, 1, 5], [NaN, NaN, NaN, NaN], [4, 3, NaN, 1]], { dtype: 'float32', device: d });
    const nm = gx.nanmedian(y, 1);
    check(t, nm.values, [2, NaN, 3], 'nanmedian values');
    check(t, nm.indices, [0, 0, 1], 'nanmedian indices');
    t.is(gx.nanmedian(y).item(), 2);
    const q = Array.from(gx.nanquantile(y, 0.4, 1).toArraySync() as Float32Array);
    t.true(Math.abs(q[0] - 1.8) < 1e-6 && Number.isNaN(q[1]) && Math.abs(q[2] - 2.6) < 1e-6, `${q}`);
    check(t, gx.nanquantile(y, 0.4, 1, { interpolation: 'nearest' }), [2, NaN, 3], 'nearest');
  });
});

deviceTest('nanmedian and nanquantile against references on random lines with NaNs and lines of NaNs only, every interpolation', (t, d) => {
  gx.tidy(() => {
    for (const [seed, cols] of [[5, 8], [6, 13], [7, 1]] as const) {
      const rows = randomRows(5, cols, seed, 0.3, 3);
      const x = tensorOf(rows, d);
      const [v, i] = gx.nanmedian(x, 1);
      check(t, v, rows.map((l) => nanmedianRef(l)[0]), `nanmedian ${seed}`);
      check(t, i, rows.map((l) => nanmedianRef(l)[1]), `nanmedian indices ${seed}`);
      check(t, x.nanmedian(0).values, columns(rows).map((l) => nanmedianRef(l)[0]), `nanmedian axis 0 ${seed}`);
      check(t, gx.nanmedian(x), [nanmedianRef(rows.flat())[0]], `nanmedian of all ${seed}`);
      t.deepEqual((gx.nanmedian(x, { keepdims: true }) as gx.Tensor).shape, [1, 1]);
      const qs = [0, 0.25, 0.4, 0.5, 0.9, 1];
      for (const how of ['linear', 'lower', 'higher', 'nearest', 'midpoint'] as const) {
        const got = gx.nanquantile(x, qs, 1, { interpolation: how });
        t.deepEqual(got.shape, [qs.length, 5]);
        check(t, got, qs.flatMap((q) => rows.map((l) => nanquantileRef(l, q, how))), `nanquantile ${how} ${seed}`);
      }
      const k = x.nanquantile(0.3, 0, { keepdims: true });
      t.deepEqual(k.shape, [1, cols]);
      check(t, k, columns(rows).map((l) => nanquantileRef(l, 0.3, 'linear')), `nanquantile axis 0 ${seed}`);
      check(t, gx.nanquantile(x, gx.tensor([0.2, 0.7], { dtype: 'float64', device: d })), [0.2, 0.7].map((q) => nanquantileRef(rows.flat(), q, 'linear')), `of all ${seed}`);
      // Without NaNs they are median and quantile.
      const clean = gx.nanToNum(x, { nan: 0.25 });
      check(t, gx.nanquantile(clean, 0.35, 1), Array.from(gx.quantile(clean, 0.35, 1).toArraySync() as Float64Array), `as quantile ${seed}`);
      check(t, gx.nanmedian(clean, 1).indices, Array.from(gx.median(clean, 1).indices.toArraySync() as BigInt64Array, Number), `as median ${seed}`);
    }
  });
});

deviceTest('gradients reach the elements picked (NaNs get none), as torch\'s', (t, d) => {
  gx.tidy(() => {
    // torch: mode([1, 2, 2, 3, 3]).values.backward() puts 1 at index 2; nanmedian([1, 2, nan, 3]) at index 1.
    const a = gx.tensor([1, 2, 2, 3, 3], { dtype: 'float64', device: d }).requiresGrad_();
    gx.mode(a, 0).values.backward();
    t.deepEqual(a.grad?.toNested(), [0, 0, 1, 0, 0]);
    const b = gx.tensor([1, 2, NaN, 3], { dtype: 'float64', device: d }).requiresGrad_();
    gx.nanmedian(b).backward();
    t.deepEqual(b.grad?.toNested(), [0, 1, 0, 0]);
    const rows = randomRows(4, 6, 9, 0.25);
    const c = tensorOf(rows, d).requiresGrad_();
    gx.sum(gx.nanquantile(c, [0.3, 0.8], 1)).backward();
    const g = (c.grad?.toNested() as number[][]).flat();
    t.true(rows.flat().every((v, i) => !Number.isNaN(v) || g[i] === 0), 'no gradient at NaNs');
    // Each row's weights sum to 1 per quantile (two quantiles): the sum of the gradient over a row is 2.
    (c.grad?.toNested() as number[][]).forEach((r, k) => t.true(Math.abs(r.reduce((s, v) => s + v, 0) - (rows[k].every(Number.isNaN) ? 0 : 2)) < 1e-12, `row ${k}`));
    const r = gx.autograd.gradcheck((x) => gx.nanquantile(x, [0.3, 0.65], 1, { interpolation: 'midpoint' }), [gx.rand([3, 5], { dtype: 'float64', device: d }).requiresGrad_()], { raiseException: false });
    t.true(r.ok, JSON.stringify(r.worst));
  });
});

deviceTest('median and nanmedian of every element split the gradient between ties; along an axis it goes to the index returned, as torch\'s', (t, d) => {
  gx.tidy(() => {
    // torch 2.13: x = torch.tensor(v, dtype=torch.float64, requires_grad=True); (f(x) * 3).backward(); x.grad
    const cases: [string, (x: gx.Tensor) => gx.Tensor, number[] | number[][], number[] | number[][]][] = [
      ['median, three tied', gx.median, [1, 2, 2, 3, 2, 5], [0, 1, 1, 0, 1, 0]],
      ['median, one NaN', gx.median, [[1, 2], [2, NaN]], [[0, 0], [0, 3]]],
      ['median, two NaNs', gx.median, [[1, NaN], [2, NaN]], [[0, 1.5], [0, 1.5]]],
      ['nanmedian, two tied', gx.nanmedian, [2, NaN, 2, 1], [1.5, 0, 1.5, 0]],
      ['nanmedian, NaNs only', gx.nanmedian, [NaN, NaN], [1.5, 1.5]],
      ['Tensor.median', (x) => x.median(), [4, 4], [1.5, 1.5]],
    ];
    for (const [what, f, v, want] of cases) {
      const x = gx.tensor(v, { dtype: 'float64', device: d }).requiresGrad_();
      gx.mul(f(x), 3).backward();
      t.deepEqual(x.grad?.toNested(), want, what);
    }
    // torch: v, i = torch.median(x, 1) on [[1, 2, 2, 3], [5, 5, 5, 1]] gives i [1, 0] and v.sum().backward() one there.
    for (const f of [gx.median, gx.nanmedian]) {
      const x = gx.tensor([[1, 2, 2, 3], [5, 5, 5, 1]], { dtype: 'float64', device: d }).requiresGrad_();
      const { values, indices } = f(x, 1);
      t.deepEqual(indices.toNested(), [1, 0]);
      gx.sum(values).backward();
      t.deepEqual(x.grad?.toNested(), [[0, 1, 0, 0], [1, 0, 0, 0]]);
    }
    const float32 = gx.tensor([3, 1, 3, 3], { device: d }).requiresGrad_();
    gx.median(float32).backward();
    t.deepEqual(float32.grad?.toNested(), [1 / 3, 0, 1 / 3, 1 / 3].map(Math.fround));
  });
});

deviceTest('refusals name the function and the argument', (t, d) => {
  gx.tidy(() => {
    const x = gx.rand([2, 3], { device: d });
    t.throws(() => gx.mode(gx.ones([2, 0], { device: d }), 1), { instanceOf: RangeError, message: /^gx\.mode: cannot take it of zero elements/ });
    t.throws(() => x.mode(2), { instanceOf: RangeError, message: /^Tensor\.mode: axis 2 is out of range/ });
    t.throws(() => gx.nanquantile(gx.ones([3], { dtype: 'int32', device: d }), 0.5), { instanceOf: TypeError, message: /^gx\.nanquantile: dtype int32 is not supported/ });
    t.throws(() => gx.nanquantile(x, 1.5), { instanceOf: RangeError, message: /^gx\.nanquantile: q must be in \[0, 1\], got 1\.5/ });
    t.throws(() => gx.nanquantile(x, 0.5, 1, { interpolation: 'cubic' as 'linear' }), { instanceOf: TypeError, message: /^gx\.nanquantile: interpolation must be one of/ });
    t.throws(() => gx.nanmedian(x, 5), { instanceOf: RangeError, message: /^gx\.nanmedian: axis 5 is out of range/ });
  });
});
