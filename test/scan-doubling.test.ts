// cumprod, cummax and cummin against running JS references on random inputs
// (with zeros, ties and NaNs), on every device; gradients by gradcheck.
import * as gx from '../lib';
import { deviceTest, rng } from './helpers';

/** Rows of random values from a few levels (so ties happen), some 0, some NaN when nanRate > 0. */
function rows(n: number, m: number, seed: number, nanRate = 0): number[][] {
  const r = rng(seed);
  return Array.from({ length: n }, () => Array.from({ length: m }, () => (r() < nanRate ? NaN : Math.round(r() * 8 - 4) / 2)));
}

/** The running max/min of a line and its index: later index on ties, the first NaN sticks (torch's rule). */
function runningRef(line: number[], largest: boolean): [number[], number[]] {
  const vs: number[] = [], is: number[] = [];
  let v = line[0], k = 0;
  line.forEach((x, i) => {
    if (i > 0 && !Number.isNaN(v) && (Number.isNaN(x) || (largest ? x >= v : x <= v))) { v = x; k = i; }
    vs.push(v);
    is.push(k);
  });
  return [vs, is];
}

const sameNums = (a: number[], b: number[], tol = 0): boolean =>
  a.length === b.length && a.every((x, i) => (Number.isNaN(b[i]) ? Number.isNaN(x) : Math.abs(x - b[i]) <= tol * (1 + Math.abs(b[i]))));

deviceTest('cummax and cummin against a running reference, with ties and NaNs, along each axis', (t, device) => {
  gx.tidy(() => {
    for (const [n, m, seed] of [[3, 17, 1], [5, 1, 2], [2, 64, 3]]) {
      const v = rows(n, m, seed, 0.1);
      const x = gx.tensor(v.flat(), { dtype: 'float64', device }).reshape([n, m]);
      for (const largest of [true, false]) {
        const [values, indices] = largest ? gx.cummax(x, 1) : x.cummin(1);
        const want = v.map((l) => runningRef(l, largest));
        t.true(sameNums((values.toNested() as number[][]).flat(), want.flatMap((w) => w[0])), `values ${largest} ${n}x${m}`);
        t.deepEqual(indices.toNested(), want.map((w) => w[1]), `indices ${largest} ${n}x${m}`);
        // Along axis 0: the columns.
        const cols = v[0].map((_, j) => v.map((l) => l[j]));
        const byCol = cols.map((c) => runningRef(c, largest));
        const r0 = largest ? gx.cummax(x, { axis: 0 }) : gx.cummin(x, 0);
        t.deepEqual(r0.indices.toNested(), v.map((_, i) => byCol.map((c) => c[1][i])), `axis 0 ${largest}`);
      }
    }
    const ints = gx.tensor([3, 1, 4, 1, 5, 9, 2, 6], { dtype: 'int32', device });
    t.deepEqual(gx.cummax(ints, 0).values.toNested(), [3, 3, 4, 4, 5, 9, 9, 9]);
    t.deepEqual(gx.cummin(ints, 0).indices.toNested(), [0, 1, 1, 3, 3, 3, 3, 3]);
    t.throws(() => gx.cummax(ints as gx.Tensor, undefined as never), { instanceOf: TypeError, message: /^gx\.cummax: the axis is required/ });
  });
});

deviceTest('cumprod against a running product: zeros, integers to int64, dtype, every length', (t, device) => {
  gx.tidy(() => {
    for (const m of [1, 2, 7, 33]) {
      const v = rows(3, m, 10 + m);
      const x = gx.tensor(v.flat(), { dtype: 'float64', device }).reshape([3, m]);
      const want = v.flatMap((l) => { let p = 1; return l.map((e) => (p *= e)); });
      t.true(sameNums(Array.from(gx.cumprod(x, 1).toArraySync() as Float64Array), want, 1e-12), `length ${m}`);
    }
    const ints = gx.tensor([2, -3, 1, 4, 0, 5], { dtype: 'int8', device });
    const p = gx.cumprod(ints, 0);
    t.is(p.dtype, 'int64');
    t.deepEqual(p.toNested(), [2, -6, -6, -24, 0, 0]);
    t.is(gx.cumprod(ints, 0, { dtype: 'float32' }).dtype, 'float32');
    t.deepEqual(x32(gx.cumprod(gx.tensor([[1, 2], [3, 4]], { device }), { axis: 0 })), [1, 2, 3, 8]);
  });
  function x32(r: gx.Tensor): number[] { return Array.from(r.toArraySync() as Float32Array); }
});

deviceTest('gradients of cumprod (zeros included), cummax and cummin by gradcheck', (t, device) => {
  gx.tidy(() => {
    const r = rng(7);
    const v = Array.from({ length: 15 }, (_, i) => (i === 6 ? 0 : i + r() * 0.5));  // distinct, one zero
    const x = gx.tensor(v, { dtype: 'float64', device }).reshape([3, 5]).requiresGrad_();
    t.true(gx.autograd.gradcheck((a) => gx.cumprod(a, 1), [x], { raiseException: false }).ok, 'cumprod');
    t.true(gx.autograd.gradcheck((a) => gx.cummax(a, 1).values, [x], { raiseException: false }).ok, 'cummax');
    t.true(gx.autograd.gradcheck((a) => gx.cummin(a, 0).values, [x], { raiseException: false }).ok, 'cummin');
  });
});
