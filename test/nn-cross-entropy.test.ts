// The native class-index cross entropy and nll loss (ops/loss/, lib/ops/loss/cross-entropy.ts) on every
// device: values and input gradients against a plain-JS float64 reference (the gradient by central
// differences of that reference) for every combination of weight, ignoreIndex (rows ignored, an ignored
// class inside [0, C), every row ignored), labelSmoothing and reduction, over [N, C], [N, C, d1, d2] and
// [C]; every floating dtype; gradcheck of first and second order; one native call each way; the CPU
// against CUDA.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { cudaTest, deviceTest, rng, type TestDevice } from './helpers';
import { close, values } from './nn-helpers';

const F = gx.nn.functional;
type Reduction = 'none' | 'sum' | 'mean';
interface Opts { weight: number[] | null; ignoreIndex: number; labelSmoothing: number; reduction: Reduction; logProbs: boolean }

/** The loss of x (flat, [N, C, D] in C order) for targets t ([N D]) in float64: per row for 'none', else one value. */
function reference(x: readonly number[], [n, c, d]: number[], t: readonly number[], o: Opts): number[] {
  const rows: number[] = [];
  let denom = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < d; k++) {
      const m = i * d + k, at = (j: number): number => x[(i * c + j) * d + k];
      if (t[m] === o.ignoreIndex) { rows.push(0); continue; }
      let lse = 0;
      if (!o.logProbs) {
        let mx = -Infinity;
        for (let j = 0; j < c; j++) mx = Math.max(mx, at(j));
        let se = 0;
        for (let j = 0; j < c; j++) se += Math.exp(at(j) - mx);
        lse = mx + Math.log(se);
      }
      const w = (j: number): number => (o.weight === null ? 1 : o.weight[j]);
      let smooth = 0;
      for (let j = 0; j < c; j++) smooth -= w(j) * (at(j) - lse);
      const nll = -w(t[m]) * (at(t[m]) - lse);
      rows.push((1 - o.labelSmoothing) * nll + (o.labelSmoothing / c) * smooth);
      denom += w(t[m]);
    }
  }
  const total = rows.reduce((p, q) => p + q, 0);
  return o.reduction === 'none' ? rows : o.reduction === 'sum' ? [total] : [total / denom];
}

/** d <cot, loss(x)> / dx by central differences of the reference (torch's 0 for a mean over no rows). */
function referenceGrad(x: readonly number[], shape: number[], t: readonly number[], o: Opts, cot: readonly number[]): number[] {
  const h = 1e-6, xs = [...x];
  const dot = (): number => reference(xs, shape, t, o).reduce((p, q, i) => p + q * cot[i], 0);
  if (o.reduction === 'mean' && t.every((v) => v === o.ignoreIndex)) return xs.map(() => 0);
  return xs.map((v, i) => {
    xs[i] = v + h;
    const up = dot();
    xs[i] = v - h;
    const down = dot();
    xs[i] = v;
    return (up - down) / (2 * h);
  });
}

const LAYOUTS: { input: number[]; nd: number[] }[] = [
  { input: [6, 5], nd: [6, 5, 1] },
  { input: [3, 4, 2, 3], nd: [3, 4, 6] },
  { input: [7], nd: [1, 7, 1] },
];

interface Case { x: number[]; t: number[]; nd: number[]; input: number[]; target: number[] }

/** Random scores and targets for a layout; `ignore` rows set to ignoreIndex ('all': every row). */
function makeCase(layout: (typeof LAYOUTS)[number], ignoreIndex: number, ignore: 'some' | 'all', seed: number): Case {
  const r = rng(seed);
  const [n, c, d] = layout.nd;
  const x = Array.from({ length: n * c * d }, () => (r() - 0.5) * 6);
  const t = Array.from({ length: n * d }, (_, m) => (ignore === 'all' || m % 3 === 1 ? ignoreIndex : Math.floor(r() * c)));
  return { x, t, nd: layout.nd, input: layout.input, target: layout.input.length === 1 ? [] : [layout.input[0], ...layout.input.slice(2)] };
}

function lossOf(x: gx.Tensor, t: gx.Tensor, o: Opts, device: TestDevice): gx.Tensor {
  const weight = o.weight === null ? null : gx.tensor(o.weight, { dtype: 'float64', device }).astype(x.dtype);
  const common = { weight, ignoreIndex: o.ignoreIndex, reduction: o.reduction };
  return o.logProbs ? F.nllLoss(x, t, common) : F.crossEntropy(x, t, { ...common, labelSmoothing: o.labelSmoothing });
}

function checkCase(t: ExecutionContext, device: TestDevice, cs: Case, o: Opts, what: string): void {
  gx.tidy(() => {
    const x = gx.tensor(cs.x, { dtype: 'float64', device }).reshape(cs.input).requiresGrad_();
    const target = gx.tensor(cs.t, { dtype: 'int64', device }).reshape(cs.target);
    const y = lossOf(x, target, o, device);
    const want = reference(cs.x, cs.nd, cs.t, o);
    const cot = want.map((_, i) => 0.5 + ((i * 7) % 5) / 4);
    gx.sum(gx.mul(y, gx.tensor(cot, { dtype: 'float64', device }).reshape(y.shape))).backward();
    const got = values(y);
    if (want.some(Number.isNaN)) t.deepEqual(got.map(Number.isNaN), want.map(Number.isNaN), `${what}: NaN where the reference has it`);
    else close(t, got, want, `${what} value`, 1e-12, 1e-12);
    close(t, values(x.grad as gx.Tensor), referenceGrad(cs.x, cs.nd, cs.t, o, cot), `${what} grad`, 1e-7, 1e-6);
  });
}

deviceTest('crossEntropy and nllLoss on class indices match a float64 reference for every option, layout and reduction', (t, device) => {
  const weight = [0.5, 1.25, 2, 0.75, 1.5, 0.3, 1.1];
  let seed = 1;
  for (const layout of LAYOUTS) {
    const c = layout.nd[1];
    for (const logProbs of [false, true]) {
      for (const w of [null, weight.slice(0, c)]) {
        for (const [ignoreIndex, ignore] of [[-100, 'some'], [2, 'some'], [-100, 'all']] as const) {
          for (const labelSmoothing of logProbs ? [0] : [0, 0.2]) {
            for (const reduction of ['none', 'sum', 'mean'] as const) {
              const o = { weight: w, ignoreIndex, labelSmoothing, reduction, logProbs };
              const cs = makeCase(layout, ignoreIndex, ignore, seed++);
              if (logProbs) cs.x = logSoftmaxRows(cs.x, cs.nd);
              checkCase(t, device, cs, o, `${logProbs ? 'nll' : 'ce'} ${JSON.stringify(layout.input)} ${JSON.stringify({ ...o, weight: w !== null, ignore })}`);
            }
          }
        }
      }
    }
  }
});

/** Log-probabilities of [N, C, D] scores along C (nllLoss's input). */
function logSoftmaxRows(x: readonly number[], [n, c, d]: number[]): number[] {
  const out = [...x];
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < d; k++) {
      const ix = (j: number): number => (i * c + j) * d + k;
      let mx = -Infinity;
      for (let j = 0; j < c; j++) mx = Math.max(mx, x[ix(j)]);
      let se = 0;
      for (let j = 0; j < c; j++) se += Math.exp(x[ix(j)] - mx);
      for (let j = 0; j < c; j++) out[ix(j)] = x[ix(j)] - mx - Math.log(se);
    }
  }
  return out;
}

deviceTest('crossEntropy computes float16, bfloat16 and float32 in float32 and returns their dtype; int32 targets too', (t, device) => {
  gx.tidy(() => {
    const cs = makeCase(LAYOUTS[1], -100, 'some', 99);
    const o: Opts = { weight: [0.5, 1.25, 2, 0.75], ignoreIndex: -100, labelSmoothing: 0.1, reduction: 'mean', logProbs: false };
    for (const [dtype, tol] of [['float32', 1e-6], ['float16', 2e-3], ['bfloat16', 1e-2]] as const) {
      const x = gx.tensor(cs.x, { dtype: 'float64', device }).astype(dtype).reshape(cs.input).requiresGrad_();
      const xs = values(x);  // the values as rounded to dtype: the reference's input
      const target = gx.tensor(cs.t, { dtype: 'int32', device }).reshape(cs.target);
      const y = lossOf(x, target, o, device);
      t.is(y.dtype, dtype);
      close(t, values(y), reference(xs, cs.nd, cs.t, o), `${dtype} value`, tol, tol);
      y.backward();
      t.is((x.grad as gx.Tensor).dtype, dtype);
      close(t, values(x.grad as gx.Tensor), referenceGrad(xs, cs.nd, cs.t, o, [1]), `${dtype} grad`, tol, 10 * tol);
    }
  });
});

deviceTest('gradcheck of the class-index losses, first and second order, every reduction', (t, device) => {
  gx.tidy(() => {
    const r = rng(7);
    const P = (shape: number[]): gx.Tensor => gx.tensor(Array.from({ length: shape.reduce((p, q) => p * q, 1) }, () => (r() - 0.5) * 4), { dtype: 'float64', device }).reshape(shape).requiresGrad_();
    const w = gx.tensor([0.5, 1.25, 2, 0.75, 1.5], { dtype: 'float64', device });
    const t2 = gx.tensor([1, -100, 0, 4], { dtype: 'int64', device }), t3 = gx.tensor([0, 4, -100, 1, 1, 3], { dtype: 'int64', device }).reshape([2, 3]);
    for (const reduction of ['none', 'sum', 'mean'] as const) {
      const cases: [string, (x: gx.Tensor) => gx.Tensor, gx.Tensor][] = [
        ['ce', (x) => F.crossEntropy(x, t2, { weight: w, labelSmoothing: 0.15, reduction }), P([4, 5])],
        ['ce [N, C, d]', (x) => F.crossEntropy(x, t3, { labelSmoothing: 0.3, reduction }), P([2, 5, 3])],
        ['nll', (x) => F.nllLoss(x, t2, { weight: w, reduction }), P([4, 5])],
      ];
      for (const [name, fn, x] of cases) {
        const first = gx.autograd.gradcheck(fn, [x], { raiseException: false });
        t.true(first.ok, `${name} ${reduction}: ${JSON.stringify(first.worst)}`);
        // Second order: the vector-Jacobian product, made with createGraph, checked as a function of x and v.
        const v = P([...fn(x).shape]);
        const vjp = (a: gx.Tensor, b: gx.Tensor): gx.Tensor => gx.autograd.functional.vjp(fn, a, b, { createGraph: true })[1];
        const second = gx.autograd.gradcheck(vjp, [x, v], { raiseException: false });
        t.true(second.ok, `${name} ${reduction} second order: ${JSON.stringify(second.worst)}`);
      }
    }
  });
});

deviceTest('one native call forward and one backward; bad targets name the class, int32 too, and leave nothing behind', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const x = gx.tensor(makeCase(LAYOUTS[0], -100, 'some', 3).x, { dtype: 'float32', device }).reshape([6, 5]).requiresGrad_();
    const target = gx.tensor([1, 4, -100, 2, 0, 3], { dtype: 'int64', device });
    let loss: gx.Tensor | undefined;
    const fwd = gx.profiler.profile(() => { loss = F.crossEntropy(x, target, { labelSmoothing: 0.1 }); });
    t.deepEqual(fwd.events.map((e) => e.name), ['cross_entropy_loss']);
    const seed = gx.onesLike(loss as gx.Tensor);  // made before: a device may fill it with a kernel
    const bwd = gx.profiler.profile(() => (loss as gx.Tensor).backward(seed));
    t.is(bwd.events.filter((e) => e.name === 'cross_entropy_loss_backward').length, 1, bwd.events.map((e) => e.name).join(', '));
    t.is(bwd.events.length, 1, bwd.events.map((e) => e.name).join(', '));
    const bad = gx.tensor([1, 4, 9, 2, 0, 3], { dtype: 'int32', device });
    t.throws(() => F.crossEntropy(x, bad), { instanceOf: RangeError, message: /^gx\.nn\.functional\.crossEntropy: argument 'target' holds class 9, out of range \[0, 5\) \(ignoreIndex is -100\)$/ });
    t.throws(() => F.nllLoss(x, gx.tensor([1, 4, 3, 2, -1, 3], { dtype: 'int64', device }), { ignoreIndex: 3, reduction: 'none' }),
      { instanceOf: RangeError, message: /^gx\.nn\.functional\.nllLoss: argument 'target' holds class -1, out of range \[0, 5\) \(ignoreIndex is 3\)$/ });
    t.throws(() => F.crossEntropy(x, target, { weight: gx.ones([5], { device }).requiresGrad_() }), { instanceOf: TypeError, message: /^gx\.nn\.functional\.crossEntropy: option 'weight' requires grad/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTest('a non-contiguous input and target give what their contiguous copies give, gradients included', (t, device) => {
  gx.tidy(() => {
    const cs = makeCase(LAYOUTS[0], -100, 'some', 5);
    const base = gx.tensor(cs.x, { dtype: 'float64', device }).reshape([5, 6]);  // transposed below: [6, 5], not contiguous
    const targets = gx.tensor(cs.t.flatMap((v) => [v, 7]), { dtype: 'int64', device }).reshape([6, 2]).slice(1, 0, 1).squeeze(1);  // stride 2
    t.false(targets.isContiguous());
    const run = (x0: gx.Tensor, tt: gx.Tensor): [number[], number[]] => {
      const x = x0.detach().requiresGrad_();
      const y = F.crossEntropy(x.transpose(0, 1), tt, { labelSmoothing: 0.2, reduction: 'none' });
      gx.sum(gx.mul(y, gx.arange(6, { dtype: 'float64', device }))).backward();
      return [values(y), values(x.grad as gx.Tensor)];
    };
    const [y1, g1] = run(base, targets), [y2, g2] = run(base, targets.contiguous());
    t.deepEqual(y1, y2);
    t.deepEqual(g1, g2);
    const o: Opts = { weight: null, ignoreIndex: -100, labelSmoothing: 0.2, reduction: 'none', logProbs: false };
    const xt = values(base.transpose(0, 1).contiguous());
    close(t, y1, reference(xt, [6, 5, 1], values(targets.contiguous()), o), 'value', 1e-12, 1e-12);
  });
});

cudaTest('the CPU and CUDA agree: the same sums in the same order, up to exp and log ulps', (t) => {
  gx.tidy(() => {
    const r = rng(11);
    for (const [shape, dtype] of [[[300, 77], 'float32'], [[4, 50, 9], 'float32'], [[700, 10], 'bfloat16'], [[33, 1000], 'float64']] as const) {
      const n = shape.reduce((p: number, q: number) => p * q, 1), c = shape[1];
      const rows = n / c;
      const xv = Array.from({ length: n }, () => (r() - 0.5) * 8);
      const tv = Array.from({ length: rows }, (_, m) => (m % 5 === 2 ? -100 : Math.floor(r() * c)));
      const wv = Array.from({ length: c }, () => 0.25 + r());
      for (const reduction of ['none', 'mean'] as const) {
        const run = (device: 'cpu' | 'cuda'): [number[], number[]] => gx.tidy(() => {
          const x = gx.tensor(xv, { dtype: 'float64', device }).astype(dtype).reshape([...shape]).requiresGrad_();
          const target = gx.tensor(tv, { dtype: 'int64', device }).reshape(shape.length === 2 ? [shape[0]] : [shape[0], shape[2]]);
          const y = F.crossEntropy(x, target, { weight: gx.tensor(wv, { dtype, device }), labelSmoothing: 0.1, reduction });
          gx.sum(y).backward();
          return [values(y), values(x.grad as gx.Tensor)];
        });
        const [yc, gc] = run('cpu'), [yg, gg] = run('cuda');
        const tol = dtype === 'float64' ? 1e-13 : dtype === 'float32' ? 2e-6 : 1e-2;
        close(t, yg, yc, `${JSON.stringify(shape)} ${dtype} ${reduction} value`, tol, tol);
        close(t, gg, gc, `${JSON.stringify(shape)} ${dtype} ${reduction} grad`, tol, tol);
      }
    }
  });
});

// torch 2.13's figures (F.cross_entropy / F.nll_loss in float64, the gradient of the loss's sum) for
// x = X below, targets [0, 0, 1]: class weights zero for every target present ([0, 0, 2]) or for all.
const X = [[0.5, -1, 2], [1.5, 0.25, -0.75], [-0.5, 1, 0]];
const SUM_S02 = 0.5715136920229769;
const NONE_S02 = [0.032174839554287606, 0.34408968125429656, 0.19524917121439264];
const GRAD_S02 = [0.023372052285338226, 0.005215009769424993, -0.028587062054763215, 0.09579204548680866, 0.027444880533020206,
  -0.12323692601982886, 0.018699251088811798, 0.083804229228235, -0.1025034803170468];

deviceTest('a mean over a total weight of 0 is NaN as torch\'s, label smoothing too; its gradient NaN where torch\'s is', (t, device) => {
  gx.tidy(() => {
    const target = gx.tensor([0, 0, 1], { dtype: 'int64', device });
    const run = (weight: number[], o: { labelSmoothing?: number; reduction: Reduction; nll?: boolean; target?: gx.Tensor }): [number[], number[]] => {
      const x = gx.tensor(X, { dtype: 'float64', device }).requiresGrad_();
      const w = gx.tensor(weight, { dtype: 'float64', device });
      const tt = o.target ?? target;
      const y = o.nll === true ? F.nllLoss(x, tt, { weight: w, reduction: o.reduction })
        : F.crossEntropy(x, tt, { weight: w, labelSmoothing: o.labelSmoothing ?? 0, reduction: o.reduction });
      gx.sum(y).backward();
      const plain = (v: number[]): number[] => v.map((q) => (q === 0 ? 0 : q));  // torch's -0 and 0 alike
      return [plain(values(y)), plain(values(x.grad as gx.Tensor))];
    };
    const nan9 = Array<number>(9).fill(NaN), zero9 = Array<number>(9).fill(0);
    for (const weight of [[0, 0, 2], [0, 0, 0]]) {
      for (const labelSmoothing of [0, 0.2]) {
        // torch: (1 - s) N / W + s / C S / W, N / W = 0 / 0; the log_softmax backward spreads the NaN over each row.
        t.deepEqual(run(weight, { labelSmoothing, reduction: 'mean' }), [[NaN], nan9], `ce ${JSON.stringify(weight)} s=${labelSmoothing} mean`);
      }
      // nll_loss's backward writes the targets' classes only.
      t.deepEqual(run(weight, { reduction: 'mean', nll: true }), [[NaN], [NaN, 0, 0, NaN, 0, 0, 0, NaN, 0]], `nll ${JSON.stringify(weight)} mean`);
      t.deepEqual(run(weight, { reduction: 'sum', nll: true }), [[0], zero9], `nll ${JSON.stringify(weight)} sum`);
      t.deepEqual(run(weight, { reduction: 'sum' }), [[0], zero9], `ce ${JSON.stringify(weight)} sum`);
    }
    const [sumV, sumG] = run([0, 0, 2], { labelSmoothing: 0.2, reduction: 'sum' });
    close(t, sumV, [SUM_S02], 'sum s=0.2', 1e-15, 1e-15);
    close(t, sumG, GRAD_S02, 'sum s=0.2 grad', 1e-15, 1e-15);
    const [noneV, noneG] = run([0, 0, 2], { labelSmoothing: 0.2, reduction: 'none' });
    close(t, noneV, NONE_S02, 'none s=0.2', 1e-15, 1e-15);
    close(t, noneG, GRAD_S02, 'none s=0.2 grad', 1e-15, 1e-15);
    t.deepEqual(run([0, 0, 0], { labelSmoothing: 0.2, reduction: 'none' }), [[0, 0, 0], zero9]);
    // Every target ignored: torch's mean is NaN, its gradient 0.
    const ignored = gx.tensor([-100, -100, -100], { dtype: 'int64', device });
    for (const labelSmoothing of [0, 0.2]) {
      t.deepEqual(run([0.5, 1, 2], { labelSmoothing, reduction: 'mean', target: ignored }), [[NaN], zero9], `all ignored s=${labelSmoothing}`);
    }
    t.deepEqual(run([0.5, 1, 2], { reduction: 'mean', nll: true, target: ignored }), [[NaN], zero9], 'nll all ignored');
  });
});
