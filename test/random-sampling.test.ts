// randperm, bernoulli, normal, multinomial and dropout: against JS
// references built from the same seeded draws (NOTE [ Reproducible sampling ]),
// frequencies within a few standard deviations, the same samples on every
// device, and bad input refused.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, rng } from './helpers';

const nums = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint>, Number);

/** The float64 uniform draws a seeded call makes first, read back. */
function drawsOf(seed: number, shape: number[], device: string): number[] {
  gx.manualSeed(seed);
  return nums(gx.rand(shape, { dtype: 'float64', device }));
}

function near(t: ExecutionContext, got: number, want: number, sd: number, what: string): void {
  t.true(Math.abs(got - want) <= 5 * sd, `${what}: ${got} vs ${want} (sd ${sd})`);
}

deviceTest('randperm is the stable argsort of the seeded draws: a permutation, reproducible, the same on the CPU', (t, device) => {
  gx.tidy(() => {
    const n = 1000;
    const u = drawsOf(3, [n], device);
    gx.manualSeed(3);
    const p = nums(gx.randperm(n, { device }));
    t.deepEqual(p, u.map((v, i) => [v, i]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((e) => e[1]));
    t.deepEqual([...p].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
    gx.manualSeed(3);
    t.deepEqual(nums(gx.randperm(n, { device: 'cpu' })), p, 'the same permutation on the CPU');
    const g = new gx.Generator(9);
    const q = gx.randperm(10, { dtype: 'int32', device, generator: g });
    t.is(q.dtype, 'int32');
    t.deepEqual(gx.randperm(0, { device }).shape, [0]);
    t.throws(() => gx.randperm(-1), { instanceOf: RangeError, message: /^gx\.randperm: n must be a non-negative integer/ });
    t.throws(() => gx.randperm(3, { dtype: 'float32' }), { instanceOf: TypeError, message: /^gx\.randperm: dtype must be an integer dtype/ });
  });
});

deviceTest('bernoulli: u < p of the seeded draws, in the input dtype; frequencies; bad probabilities refused', (t, device) => {
  gx.tidy(() => {
    const r = rng(5);
    const pv = Array.from({ length: 2000 }, () => r());
    const p = gx.tensor(pv, { dtype: 'float64', device });
    const u = drawsOf(7, [2000], device);
    gx.manualSeed(7);
    const b = gx.bernoulli(p);
    t.is(b.dtype, 'float64');
    t.deepEqual(nums(b), u.map((v, i) => (v < pv[i] ? 1 : 0)));
    gx.manualSeed(7);
    t.deepEqual(nums(gx.bernoulli(gx.tensor(pv, { dtype: 'float64' }))), nums(b), 'the same on the CPU');
    const n = 20000;
    const f = nums(gx.bernoulli(gx.zeros([n], { device }), 0.3)).reduce((a, c) => a + c, 0) / n;
    near(t, f, 0.3, Math.sqrt(0.3 * 0.7 / n), 'frequency of p = 0.3');
    t.deepEqual(nums(gx.bernoulli(gx.full([50], 1, { device }))), Array<number>(50).fill(1));
    t.throws(() => gx.bernoulli(gx.full([2], 1.5, { device })), { instanceOf: RangeError, message: /^gx\.bernoulli: input must hold probabilities in \[0, 1\]/ });
    t.throws(() => gx.bernoulli(p, 2), { instanceOf: RangeError, message: /^gx\.bernoulli: p must be a probability/ });
    t.throws(() => gx.bernoulli(gx.arange(3, { device })), { instanceOf: TypeError, message: /^gx\.bernoulli: input must be a floating tensor/ });
  });
});

deviceTest('normal: mean + std * randn of the same seed, broadcast; numbers with a shape', (t, device) => {
  gx.tidy(() => {
    const r = rng(11);
    const mv = Array.from({ length: 12 }, () => r() * 10 - 5), sv = Array.from({ length: 4 }, () => r() * 3);
    const mean = gx.tensor(mv, { dtype: 'float64', device }).reshape([3, 4]), std = gx.tensor(sv, { dtype: 'float64', device });
    gx.manualSeed(13);
    const z = nums(gx.randn([3, 4], { dtype: 'float64', device }));
    gx.manualSeed(13);
    const x = gx.normal(mean, std);
    t.deepEqual(x.shape, [3, 4]);
    nums(x).forEach((v, i) => t.true(Math.abs(v - (mv[i] + sv[i % 4] * z[i])) < 1e-12, `element ${i}`));
    const big = nums(gx.normal(2, 3, [40000], { device, dtype: 'float64' }));
    const m = big.reduce((a, c) => a + c, 0) / big.length;
    near(t, m, 2, 3 / Math.sqrt(big.length), 'sample mean');
    near(t, Math.sqrt(big.reduce((a, c) => a + (c - m) ** 2, 0) / big.length), 3, 3 / Math.sqrt(2 * big.length), 'sample std');
    t.false(gx.normal(mean.clone().requiresGrad_(), 1).requiresGrad, 'no gradient, as torch');
    t.throws(() => gx.normal(0, 1), { instanceOf: TypeError, message: /^gx\.normal: with a number mean and std, give the shape/ });
    t.throws(() => gx.normal(mean, gx.full([4], -1, { dtype: 'float64', device })), { instanceOf: RangeError, message: /^gx\.normal: std must be >= 0/ });
  });
});

deviceTest('multinomial: the inverse CDF (with replacement) and exponential races (without) of the seeded draws', (t, device) => {
  gx.tidy(() => {
    const w = [[0.1, 0.6, 0, 0.3], [2, 1, 1, 4]];
    const probs = gx.tensor(w, { dtype: 'float64', device });
    // With replacement: the first category whose cumulative weight exceeds u * total.
    const u = drawsOf(17, [2, 50], device);
    gx.manualSeed(17);
    const s = gx.multinomial(probs, 50, { replacement: true });
    t.deepEqual(s.shape, [2, 50]);
    const want = u.map((v, k) => {
      const row = w[Math.floor(k / 50)], total = row.reduce((a, c) => a + c, 0);
      let c = 0;
      return Math.min(row.findIndex((x) => (c += x) > v * total), 3);
    });
    t.deepEqual(nums(s), want);
    t.false(nums(s).slice(0, 50).includes(2), 'weight 0 is never drawn');
    // Without replacement: categories by finishing time -log(1 - u) / w; distinct; weight 0 never.
    const v = drawsOf(19, [2, 4], device);
    gx.manualSeed(19);
    const d = nums(gx.multinomial(probs, 3));
    const order = (row: number): number[] => [0, 1, 2, 3].map((i) => [-Math.log1p(-v[row * 4 + i]) / w[row][i], i])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]).slice(0, 3).map((e) => e[1]);
    t.deepEqual(d, [...order(0), ...order(1)]);
    // Frequencies of a 1-d draw.
    const n = 20000;
    const f = [0, 0, 0, 0];
    for (const i of nums(gx.multinomial(gx.tensor([0.1, 0.6, 0, 0.3], { device }), n, { replacement: true }))) f[i]++;
    [0.1, 0.6, 0, 0.3].forEach((p, i) => near(t, f[i] / n, p, Math.sqrt(p * (1 - p) / n) + 1e-9, `category ${i}`));
    t.throws(() => gx.multinomial(probs, 4), { instanceOf: RangeError, message: /^gx\.multinomial: cannot draw 4 samples without replacement from a row with 3/ });
    t.throws(() => gx.multinomial(gx.tensor([1, -1], { device }), 1), { instanceOf: RangeError, message: /^gx\.multinomial: the weights must be finite and >= 0/ });
    t.throws(() => gx.multinomial(gx.zeros([2, 3], { device }), 1), { instanceOf: RangeError, message: /^gx\.multinomial: a row of weights sums to 0/ });
  });
});

deviceTest('dropout: the seeded mask u > p, scaled by 1 / (1 - p); nn.functional.dropout is the same; training false', (t, device) => {
  gx.tidy(() => {
    const r = rng(23);
    const xv = Array.from({ length: 4000 }, () => r() * 4 - 2);
    const x = gx.tensor(xv, { device });
    gx.manualSeed(29);
    const u = nums(gx.rand([4000], { device }));
    gx.manualSeed(29);
    const y = nums(gx.dropout(x, 0.25));
    y.forEach((v, i) => t.true(u[i] > 0.25 ? Math.abs(v - Math.fround(xv[i]) / 0.75) < 1e-5 : v === 0, `element ${i}`));
    near(t, y.filter((v) => v === 0).length / 4000, 0.25, Math.sqrt(0.25 * 0.75 / 4000), 'dropped fraction');
    gx.manualSeed(29);
    t.deepEqual(nums(gx.nn.functional.dropout(x, 0.25)), y, 'nn.functional.dropout draws the same');
    t.is(gx.dropout(x, 0.25, { training: false }), x);
    t.true(nums(gx.dropout(x, 1)).every((v) => v === 0), 'p = 1 drops everything');
    t.throws(() => gx.dropout(x, 1.5), { instanceOf: RangeError, message: /^gx\.dropout: p must be a probability/ });
  });
});
