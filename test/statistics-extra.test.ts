// nansum, nanmean, countNonzero, amax, amin, aminmax, median, quantile and
// diff against float64 JS references on random inputs (with NaNs and ties
// where they matter), on every device; gradients by gradcheck.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, rng } from './helpers';

type Lines = number[][];

/** A [rows, cols] float64 tensor of random values (some NaN when nanRate > 0, ties from rounding) and its rows. */
function randomRows(rows: number, cols: number, seed: number, device: string, nanRate = 0): { x: gx.Tensor<'float64'>; lines: Lines } {
  const r = rng(seed);
  const lines = Array.from({ length: rows }, () => Array.from({ length: cols }, () => (r() < nanRate ? NaN : Math.round(r() * 40 - 20) / 4)));
  return { x: gx.tensor(lines.flat(), { dtype: 'float64', device }).reshape([rows, cols]), lines };
}

const close = (t: ExecutionContext, got: unknown, want: number[], what: string, tol = 1e-12): void => {
  const g = (Array.isArray(got) ? got.flat(3) : [got]) as number[];
  t.is(g.length, want.length, what);
  g.forEach((v, i) => t.true(Number.isNaN(want[i]) ? Number.isNaN(v) : Math.abs(v - want[i]) <= tol * (1 + Math.abs(want[i])), `${what}[${i}]: ${v} vs ${want[i]}`));
};

/** torch.quantile's linear rule on a sorted line. */
function quantileRef(line: number[], q: number, how: string): number {
  if (line.some(Number.isNaN)) return NaN;
  const s = [...line].sort((a, b) => a - b);
  const rank = q * (s.length - 1), lo = Math.floor(rank), hi = Math.ceil(rank), f = rank - lo;
  switch (how) {
    case 'lower': return s[lo];
    case 'higher': return s[hi];
    case 'midpoint': return (s[lo] + s[hi]) / 2;
    case 'nearest': return s[f === 0.5 ? (lo % 2 === 0 ? lo : hi) : Math.round(rank)];
    default: return s[lo] + f * (s[hi] - s[lo]);
  }
}

deviceTest('nansum, nanmean, countNonzero, amax, amin, aminmax against references', (t, device) => {
  gx.tidy(() => {
    const { x, lines } = randomRows(5, 7, 11, device, 0.2);
    const cols = lines[0].map((_, j) => lines.map((l) => l[j]));
    const ok = (v: number[]): number[] => v.filter((e) => !Number.isNaN(e));
    const sum = (v: number[]): number => v.reduce((a, b) => a + b, 0);
    close(t, gx.nansum(x, 1).toNested(), lines.map((l) => sum(ok(l))), 'nansum rows');
    close(t, gx.nansum(x).toNested(), [sum(ok(lines.flat()))], 'nansum all');
    close(t, x.nanmean(0).toNested(), cols.map((c) => (ok(c).length === 0 ? NaN : sum(ok(c)) / ok(c).length)), 'nanmean cols');
    close(t, gx.nanmean(x, { axis: 1, keepdims: true }).toNested(), lines.map((l) => sum(ok(l)) / ok(l).length), 'nanmean keepdims');
    t.deepEqual(gx.nanmean(x, { axis: 1, keepdims: true }).shape, [5, 1]);
    t.deepEqual(gx.countNonzero(x, 1).toNested(), lines.map((l) => l.filter((v) => v !== 0).length));
    t.is(gx.countNonzero(gx.gt(x, 0)).item(), lines.flat().filter((v) => v > 0).length);
    const clean = randomRows(4, 6, 12, device);
    const c = clean.lines;
    t.deepEqual(gx.amax(clean.x, 1).toNested(), c.map((l) => Math.max(...l)));
    t.deepEqual(clean.x.amin(-1).toNested(), c.map((l) => Math.min(...l)));
    const [lo, hi] = gx.aminmax(clean.x, 0);
    t.deepEqual(lo.toNested(), c[0].map((_, j) => Math.min(...c.map((l) => l[j]))));
    t.deepEqual(hi.toNested(), c[0].map((_, j) => Math.max(...c.map((l) => l[j]))));
    const all = clean.x.aminmax();
    t.deepEqual([all.min.item(), all.max.item()], [Math.min(...c.flat()), Math.max(...c.flat())]);
    // Integers: nansum sums in int64, nanmean refuses.
    const ints = gx.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'int32', device });
    t.deepEqual([gx.nansum(ints, 0).dtype, gx.nansum(ints, 0).toNested()], ['int64', [5, 7, 9]]);
    t.throws(() => gx.nanmean(ints), { instanceOf: TypeError, message: /^gx\.nanmean: dtype int32 is not supported/ });
  });
});

deviceTest('median and quantile against references, with ties, NaNs and every interpolation', (t, device) => {
  gx.tidy(() => {
    for (const [cols, seed] of [[7, 21], [8, 22], [1, 23]]) {
      const { x, lines } = randomRows(6, cols, seed, device, 0.08);
      const lower = (l: number[]): number => (l.some(Number.isNaN) ? NaN : [...l].sort((a, b) => a - b)[(l.length - 1) >> 1]);
      const [values, indices] = gx.median(x, 1);
      close(t, values.toNested(), lines.map(lower), `median ${cols}`);
      // The index names an element of that value (the first NaN where there is one).
      (indices.toNested() as number[]).forEach((j, i) => {
        const v = lines[i][j], want = lower(lines[i]);
        t.true(Number.isNaN(want) ? Number.isNaN(v) : v === want, `median index ${cols}/${i}`);
      });
      t.deepEqual(gx.median(x, { axis: 1, keepdims: true }).values.shape, [6, 1]);
      const noNan = gx.where(gx.isnan(x), 0, x);
      close(t, [gx.median(noNan).item()], [lower((noNan.toNested() as number[][]).flat())], 'median of all');
      for (const how of ['linear', 'lower', 'higher', 'nearest', 'midpoint'] as const) {
        const qs = [0, 0.1, 0.25, 0.5, 0.625, 0.9, 1];
        const got = gx.quantile(x, qs, 1, { interpolation: how });
        t.deepEqual(got.shape, [qs.length, 6]);
        close(t, got.toNested(), qs.flatMap((q) => lines.map((l) => quantileRef(l, q, how))), `quantile ${how} ${cols}`);
      }
      const one = gx.quantile(x, 0.3, 0, { keepdims: true });
      t.deepEqual(one.shape, [1, cols]);
      close(t, one.toNested(), lines[0].map((_, j) => quantileRef(lines.map((l) => l[j]), 0.3, 'linear')), `quantile axis 0 ${cols}`);
      const flat = gx.quantile(noNan, gx.tensor([0.2, 0.8], { dtype: 'float64', device }));
      close(t, flat.toNested(), [0.2, 0.8].map((q) => quantileRef((noNan.toNested() as number[][]).flat(), q, 'linear')), 'quantile of all');
    }
    const x = randomRows(2, 3, 5, device).x;
    t.throws(() => gx.quantile(x, 1.5), { instanceOf: RangeError, message: /^gx\.quantile: q must be in \[0, 1\], got 1\.5/ });
    t.throws(() => gx.quantile(x, 0.5, 0, { interpolation: 'cubic' as never }), { message: /^gx\.quantile: interpolation must be one of/ });
    t.throws(() => gx.median(gx.zeros([2, 0], { device }), 1), { instanceOf: RangeError, message: /^gx\.median: cannot take it of zero elements/ });
    t.throws(() => gx.quantile(gx.arange(4, { device }), 0.5), { instanceOf: TypeError, message: /^gx\.quantile: dtype int64 is not supported/ });
  });
});

deviceTest('diff against a reference: n, axis, prepend, append, bool', (t, device) => {
  gx.tidy(() => {
    const { x, lines } = randomRows(4, 6, 31, device);
    const d1 = (v: number[]): number[] => v.slice(1).map((e, i) => e - v[i]);
    close(t, gx.diff(x).toNested(), lines.flatMap(d1), 'diff');
    close(t, x.diff(2).toNested(), lines.flatMap((l) => d1(d1(l))), 'diff n=2');
    const cols = lines[0].map((_, j) => lines.map((l) => l[j]));
    const byCol = cols.map(d1);
    close(t, gx.diff(x, 1, 0).toNested(), byCol[0].flatMap((_, i) => byCol.map((c) => c[i])), 'diff axis 0');
    const pre = gx.zeros([4, 1], { dtype: 'float64', device });
    const app = gx.ones([4, 2], { dtype: 'float64', device });
    close(t, gx.diff(x, 1, { axis: 1, prepend: pre, append: app }).toNested(), lines.flatMap((l) => d1([0, ...l, 1, 1])), 'prepend, append');
    t.deepEqual(gx.diff(gx.tensor([true, true, false, true], { device })).toNested(), [false, true, true]);
    t.deepEqual(gx.diff(x, 7).shape, [4, 0]);
    t.throws(() => gx.diff(gx.tensor(1, { device })), { instanceOf: RangeError, message: /^gx\.diff: needs a tensor of 1 dimension or more/ });
    t.throws(() => gx.diff(x, -1), { instanceOf: RangeError, message: /^gx\.diff: n must be >= 0/ });
  });
});

deviceTest('gradients of nansum, nanmean, median, quantile and diff by gradcheck', (t, device) => {
  gx.tidy(() => {
    const r = rng(41);
    // Distinct values (no ties: median and quantile pick one element each).
    const x = gx.tensor(Array.from({ length: 20 }, (_, i) => i + r() * 0.5), { dtype: 'float64', device }).reshape([4, 5]).requiresGrad_();
    const fns: [string, (a: gx.Tensor) => gx.Tensor][] = [
      ['nansum', (a) => gx.nansum(a, 1)], ['nanmean', (a) => gx.nanmean(a, 0)],
      ['median', (a) => gx.median(a, 1).values], ['median all', (a) => gx.median(a)],
      ['quantile', (a) => gx.quantile(a, [0.2, 0.7], 1)], ['diff', (a) => gx.diff(a, 2, 1)], ['amax', (a) => gx.amax(a, 0)],
    ];
    for (const [name, f] of fns) t.true(gx.autograd.gradcheck(f, [x], { raiseException: false }).ok, name);
    // nansum's gradient is 0 at the NaNs.
    const y = gx.tensor([1, NaN, 2], { dtype: 'float64', device }).requiresGrad_();
    gx.nansum(y).backward();
    t.deepEqual(y.grad?.toNested(), [1, 0, 1]);
  });
});
