// gx.optim on every device: SGD (momentum, dampening, Nesterov, weight
// decay, maximize), Adam, AdamW and AMSGrad against their update rules
// computed here in plain JS, to 1e-6 in float64; param groups; LBFGS on
// the Rosenbrock function against torch.optim.LBFGS's own trajectory and on
// a least-squares problem against its closed form; stateDict round trips;
// the errors; zeroGrad; no tensor left behind after many steps.
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { strongWolfe } from '../lib/optim/line-search';
import { TorchScalars } from '../lib/optim/torch-scalars';
import { twoLoop, twoLoopOneLaunch, twoLoopOps } from '../lib/optim/two-loop';
import { deviceTest, deviceTestSerial } from './helpers';

type Vec = number[];

// A small least-squares problem: loss(w) = mean((X w - y)^2), X 4 x 3.
const X = [[1, 2, -1], [0.5, -1, 2], [-1.5, 0.3, 1], [2, 1, 0.5]];
const Y = [1, -2, 0.5, 3];
const W0 = [0.5, -0.3, 0.8];

/** d loss / d w, by hand. */
function lsqGrad(w: Vec): Vec {
  const g = w.map(() => 0);
  X.forEach((row, i) => {
    const r = row.reduce((s, x, j) => s + x * w[j], 0) - Y[i];
    row.forEach((x, j) => { g[j] += (2 / X.length) * r * x; });
  });
  return g;
}

/** The loss in gx ops (X w as a broadcast product summed over its last axis). */
function lsqLoss(w: gx.Tensor): gx.Tensor {
  const x = gx.tensor(X, { dtype: w.dtype, device: w.device });
  const y = gx.tensor(Y, { dtype: w.dtype, device: w.device });
  return gx.mean(gx.pow(gx.sub(gx.sum(gx.mul(x, w), 1), y), 2));
}

interface SgdRef { lr: number; momentum?: number; dampening?: number; weightDecay?: number; nesterov?: boolean; maximize?: boolean }

/** torch.optim.SGD's update rule on plain numbers. */
function sgdRef(o: SgdRef, steps: number, w0 = W0): Vec {
  const { lr, momentum = 0, dampening = 0, weightDecay = 0, nesterov = false, maximize = false } = o;
  let w = w0.slice();
  let buf: Vec | undefined;
  for (let s = 0; s < steps; s++) {
    let g = lsqGrad(w).map((v, j) => (maximize ? -v : v) + weightDecay * w[j]);
    if (momentum !== 0) {
      const b: Vec = buf === undefined ? g.slice() : buf.map((v, j) => momentum * v + (1 - dampening) * g[j]);
      buf = b;
      g = nesterov ? g.map((v, j) => v + momentum * b[j]) : b;
    }
    w = w.map((v, j) => v - lr * g[j]);
  }
  return w;
}

interface AdamRef { lr: number; betas?: [number, number]; eps?: number; weightDecay?: number; amsgrad?: boolean; maximize?: boolean; decoupled?: boolean }

/** torch.optim.Adam's (and with decoupled, AdamW's) update rule on plain numbers. */
function adamRef(o: AdamRef, steps: number): Vec {
  const { lr, betas: [b1, b2] = [0.9, 0.999], eps = 1e-8, weightDecay = 0, amsgrad = false, maximize = false, decoupled = false } = o;
  let w = W0.slice();
  let m = w.map(() => 0), v = w.map(() => 0), vmax = w.map(() => 0);
  for (let t = 1; t <= steps; t++) {
    let g = lsqGrad(w).map((x) => (maximize ? -x : x));
    if (decoupled) w = w.map((x) => x * (1 - lr * weightDecay));
    else g = g.map((x, j) => x + weightDecay * w[j]);
    m = m.map((x, j) => b1 * x + (1 - b1) * g[j]);
    v = v.map((x, j) => b2 * x + (1 - b2) * g[j] * g[j]);
    vmax = vmax.map((x, j) => Math.max(x, v[j]));
    const vv = amsgrad ? vmax : v;
    const bc1 = 1 - b1 ** t, bc2 = 1 - b2 ** t;
    w = w.map((x, j) => x - (lr / bc1) * m[j] / (Math.sqrt(vv[j]) / Math.sqrt(bc2) + eps));
  }
  return w;
}

function near(t: ExecutionContext, got: ArrayLike<number>, want: ArrayLike<number>, tol: number, what: string): void {
  t.is(got.length, want.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  t.true(worst <= tol, `${what}: worst error ${worst} > ${tol} (got ${Array.from(got).join(', ')}, want ${Array.from(want).join(', ')})`);
}

const values = (x: gx.Tensor): number[] => Array.from(x.toArraySync() as Float64Array, Number);

/** Runs `steps` steps of the optimizer `make` builds on the least-squares problem from W0; the final w. */
function train(device: string, make: (w: gx.Tensor) => gx.optim.Optimizer, steps: number, dtype: 'float32' | 'float64' = 'float64'): number[] {
  const w = gx.tensor(W0, { dtype, device }).requiresGrad_();
  const opt = make(w);
  for (let s = 0; s < steps; s++) {
    opt.zeroGrad();
    gx.tidy(() => lsqLoss(w).backward());
    opt.step();
  }
  const out = values(w);
  opt.dispose();
  w.dispose();
  return out;
}

deviceTestSerial('optim: SGD (plain, momentum, dampening, Nesterov, weight decay, maximize) follows its update rule', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const cases: SgdRef[] = [
    { lr: 0.05 },
    { lr: 0.05, momentum: 0.9 },
    { lr: 0.05, momentum: 0.9, dampening: 0.3 },
    { lr: 0.05, momentum: 0.8, nesterov: true },
    { lr: 0.05, weightDecay: 0.1 },
    { lr: 0.02, momentum: 0.5, weightDecay: 0.05, nesterov: true },
    { lr: 0.01, momentum: 0.9, maximize: true },
  ];
  for (const c of cases) {
    const got = train(device, (w) => new gx.optim.SGD([w], c), 6);
    near(t, got, sgdRef(c, 6), 1e-6, `SGD ${JSON.stringify(c)}`);
  }
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('optim: Adam, AdamW and AMSGrad follow their update rules', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const cases: AdamRef[] = [
    { lr: 0.1 },
    { lr: 0.05, betas: [0.8, 0.99], eps: 1e-6 },
    { lr: 0.1, weightDecay: 0.1 },
    { lr: 0.1, amsgrad: true },
    { lr: 0.1, maximize: true },
  ];
  for (const c of cases) {
    const { decoupled: _, ...opts } = c;
    near(t, train(device, (w) => new gx.optim.Adam([w], opts), 7), adamRef(c, 7), 1e-6, `Adam ${JSON.stringify(c)}`);
  }
  const wCases: AdamRef[] = [{ lr: 0.1 }, { lr: 0.1, weightDecay: 0.3 }, { lr: 0.1, weightDecay: 0.2, amsgrad: true }];
  for (const c of wCases) {
    // AdamW's default weight decay is 1e-2.
    const ref = adamRef({ weightDecay: 1e-2, ...c, decoupled: true }, 7);
    near(t, train(device, (w) => new gx.optim.AdamW([w], c), 7), ref, 1e-6, `AdamW ${JSON.stringify(c)}`);
  }
  // In float32 the state is float32 on the parameter's device, and the result agrees to float32's precision.
  const w = gx.tensor(W0, { device }).requiresGrad_();
  const opt = new gx.optim.Adam([w], { lr: 0.1, amsgrad: true });
  for (let s = 0; s < 5; s++) {
    opt.zeroGrad();
    gx.tidy(() => lsqLoss(w).backward());
    opt.step();
  }
  const st = opt.state.get(w) ?? {};
  t.is(st.step, 5);
  for (const k of ['expAvg', 'expAvgSq', 'maxExpAvgSq']) {
    const s = st[k] as gx.Tensor;
    t.is(s.dtype, 'float32', k);
    t.true(s.device.equals(w.device), k);
  }
  near(t, values(w), adamRef({ lr: 0.1, amsgrad: true }, 5), 1e-5, 'Adam in float32');
  opt.dispose();
  w.dispose();
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('optim: param groups override the options for their tensors; lr can change between steps', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    // Two independent copies of the problem, one per group.
    const a = gx.tensor(W0, { dtype: 'float64', device }).requiresGrad_();
    const b = gx.tensor(W0, { dtype: 'float64', device }).requiresGrad_();
    const opt = new gx.optim.SGD([{ params: [a] }, { params: b, lr: 0.01, momentum: 0.9 }], { lr: 0.05 });
    t.is(opt.paramGroups[0].lr, 0.05);
    t.is(opt.paramGroups[1].momentum, 0.9);
    t.deepEqual(opt.params, [a, b]);
    for (let s = 0; s < 4; s++) {
      opt.zeroGrad();
      gx.add(lsqLoss(a), lsqLoss(b)).backward();
      opt.step();
    }
    near(t, values(a), sgdRef({ lr: 0.05 }, 4), 1e-6, 'group 0');
    near(t, values(b), sgdRef({ lr: 0.01, momentum: 0.9 }, 4), 1e-6, 'group 1');
    // A schedule: change lr, then step.
    opt.paramGroups[0].lr = 0.025;
    const before = values(a);
    opt.zeroGrad();
    lsqLoss(a).backward();
    opt.step();
    near(t, values(a), sgdRef({ lr: 0.025 }, 1, before), 1e-6, 'after lr changed');
    // addParamGroup: a new tensor, the optimizer's options for what it does not say.
    const c = gx.tensor(W0, { dtype: 'float64', device }).requiresGrad_();
    opt.addParamGroup({ params: [c], momentum: 0.5 });
    t.is(opt.paramGroups[2].lr, 0.05);
    t.is(opt.paramGroups[2].momentum, 0.5);
    t.is(new gx.optim.SGD([{ params: [c], lr: undefined }], { lr: 0.3 }).paramGroups[0].lr, 0.3, 'an undefined option is not given');
    t.throws(() => opt.addParamGroup({ params: [a] }), { message: /SGD.addParamGroup: group\[0\]\.params\[0\] appears more than once/ });
    opt.dispose();
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

// torch.optim.LBFGS (torch 2.13, CPU, float64) on the Rosenbrock function from (-1.5, 2),
// x and y separate one-element parameters: after each step(closure), the loss step returned,
// x, y, state['func_evals'] and state['n_iter'].
const TORCH_STRONG_WOLFE: [number, number, number, number, number][] = [
  [12.5, -0.08511855589860293, -0.028757058413769698, 25, 19],
  [1.3070983150500495, 0.9995835472529905, 0.9991550319577943, 50, 38],
  [1.884048137837783e-07, 0.9999979943196398, 0.9999973438921637, 53, 41],
  [1.8769270132829514e-10, 0.9999979943196398, 0.9999973438921637, 54, 42],
];
// The same with lr 0.01, historySize 5 and no line search.
const TORCH_FIXED_STEP: [number, number, number, number, number][] = [
  [12.5, -1.4806645775714773, 2.006432173823397, 20, 20],
  [9.61089469270515, -1.4701598073296092, 2.0096372723120606, 40, 40],
  [8.403967262701267, -1.4610547435749497, 2.011248344517906, 60, 60],
];

function rosenbrock(x: gx.Tensor, y: gx.Tensor): gx.Tensor {
  return gx.add(gx.pow(gx.sub(1, x), 2), gx.mul(100, gx.pow(gx.sub(y, gx.mul(x, x)), 2))).sum();
}

deviceTestSerial('optim: LBFGS minimizes the Rosenbrock function step for step as torch.optim.LBFGS', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const runs: [gx.optim.LBFGSOptions, typeof TORCH_STRONG_WOLFE][] = [
    [{ lineSearchFn: 'strong_wolfe' }, TORCH_STRONG_WOLFE],
    [{ lr: 0.01, historySize: 5 }, TORCH_FIXED_STEP],
  ];
  for (const [opts, want] of runs) {
    const x = gx.tensor([-1.5], { dtype: 'float64', device }).requiresGrad_();
    const y = gx.tensor([2], { dtype: 'float64', device }).requiresGrad_();
    const opt = new gx.optim.LBFGS([x, y], opts);
    let calls = 0;
    const closure = (): gx.Tensor => {
      calls++;
      opt.zeroGrad();
      const loss = rosenbrock(x, y);
      loss.backward();
      return loss;
    };
    want.forEach(([loss, wx, wy, funcEvals, nIter], i) => {
      const got = opt.step(closure);
      const st = opt.state.get(x) ?? {};
      const what = `${opts.lineSearchFn ?? 'fixed step'}, step ${i}`;
      near(t, [got.item(), x.item(), y.item()].map(Number), [loss, wx, wy], 1e-9, what);
      t.deepEqual([st.funcEvals, st.nIter], [funcEvals, nIter], `${what}: closure calls and iterations as torch's`);
      got.dispose();
    });
    t.is(calls, want[want.length - 1][3], 'every closure call counted');
    if (opts.lineSearchFn === 'strong_wolfe') near(t, [x.item(), y.item()].map(Number), [1, 1], 1e-5, 'the minimum (1, 1)');
    opt.dispose();
    x.dispose();
    y.dispose();
  }
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('optim: LBFGS with strong Wolfe decreases the loss every iteration and solves least squares', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  // One iteration per step: the loss each step starts from is the accepted point's, and the line search only accepts decrease.
  // (maxEval given: its default, 1 for one iteration, leaves the line search no call but its first, as torch's.)
  {
    const x = gx.tensor([-1.5], { dtype: 'float64', device }).requiresGrad_();
    const y = gx.tensor([2], { dtype: 'float64', device }).requiresGrad_();
    using opt = new gx.optim.LBFGS([x, y], { maxIter: 1, maxEval: 25, lineSearchFn: 'strong_wolfe' });
    const losses: number[] = [];
    for (let s = 0; s < 60; s++) {
      const l = opt.step(() => {
        opt.zeroGrad();
        const loss = rosenbrock(x, y);
        loss.backward();
        return loss;
      });
      losses.push(Number(l.item()));
      l.dispose();
    }
    const rises = losses.slice(1).filter((l, i) => l > losses[i]);
    t.deepEqual(rises, [], `losses: ${losses.slice(0, 10).join(', ')} ...`);
    t.true(losses[losses.length - 1] < 1e-8, `converged: ${losses[losses.length - 1]}`);
    x.dispose();
    y.dispose();
  }
  // Least squares: the normal equations X'X w = X'y, solved here by Gaussian elimination.
  const a = [0, 1, 2].map((i) => [0, 1, 2].map((j) => X.reduce((s, r) => s + r[i] * r[j], 0)));
  const rhs = [0, 1, 2].map((i) => X.reduce((s, r, k) => s + r[i] * Y[k], 0));
  for (let c = 0; c < 3; c++) {
    for (let r = c + 1; r < 3; r++) {
      const f = a[r][c] / a[c][c];
      for (let k = c; k < 3; k++) a[r][k] -= f * a[c][k];
      rhs[r] -= f * rhs[c];
    }
  }
  const exact = [0, 0, 0];
  for (let r = 2; r >= 0; r--) exact[r] = (rhs[r] - a[r].slice(r + 1).reduce((s, v, k) => s + v * exact[r + 1 + k], 0)) / a[r][r];
  // With torch's default tolerances it stops where torch's does (torch 2.13, CPU, float64: 9 iterations, 9 closure calls);
  // with tighter ones, at the solution.
  const torchStop = [0.2604833033013358, 1.097631586466653, 0.10282472207739791];
  for (const [opts, want, tol, iters] of [
    [{}, torchStop, 1e-9, 9],
    [{ toleranceChange: 1e-12, toleranceGrad: 1e-10 }, exact, 1e-6, 10],
  ] as const) {
    const w = gx.tensor(W0, { dtype: 'float64', device }).requiresGrad_();
    const opt = new gx.optim.LBFGS([w], { lineSearchFn: 'strong_wolfe', ...opts });
    const first = opt.step(() => {
      opt.zeroGrad();
      const loss = lsqLoss(w);
      loss.backward();
      return loss;
    });
    const st = opt.state.get(w) ?? {};
    near(t, values(w), want, tol, `least squares ${JSON.stringify(opts)}`);
    near(t, [Number(first.item())], [gx.tidy(() => Number(gx.noGrad(() => lsqLoss(gx.tensor(W0, { dtype: 'float64', device }))).item()))], 1e-12, 'step returns the first loss');
    // A quadratic in 3 unknowns: a handful of iterations, not the 20 allowed.
    t.deepEqual([st.nIter, st.funcEvals], [iters, iters], 'iterations and closure calls');
    first.dispose();
    opt.dispose();
    w.dispose();
  }
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('optim: stateDict and loadStateDict carry on training where it stopped', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const stepOn = (w: gx.Tensor, opt: gx.optim.Optimizer): void => {
      opt.zeroGrad();
      lsqLoss(w).backward();
      opt.step();
    };
    for (const make of [
      (p: gx.Tensor[]): gx.optim.Optimizer => new gx.optim.Adam(p, { lr: 0.1, amsgrad: true }),
      (p: gx.Tensor[]): gx.optim.Optimizer => new gx.optim.SGD(p, { lr: 0.05, momentum: 0.9 }),
    ]) {
      const w1 = gx.tensor(W0, { dtype: 'float64', device }).requiresGrad_();
      const opt1 = make([w1]);
      for (let s = 0; s < 3; s++) stepOn(w1, opt1);
      const w2 = w1.detach().clone().requiresGrad_();
      const opt2 = make([w2]);
      (opt2.paramGroups[0] as { lr?: number }).lr = 123;
      opt2.loadStateDict(opt1.stateDict());
      t.is((opt2.paramGroups[0] as { lr?: number }).lr, (opt1.paramGroups[0] as { lr?: number }).lr, 'the options come back');
      const s1 = opt1.state.get(w1) ?? {}, s2 = opt2.state.get(w2) ?? {};
      t.deepEqual(Object.keys(s2).sort(), Object.keys(s1).sort());
      for (const k of Object.keys(s1)) if (s1[k] instanceof gx.Tensor) t.not(s2[k], s1[k], `${k} is a copy`);
      for (let s = 0; s < 3; s++) {
        stepOn(w1, opt1);
        stepOn(w2, opt2);
      }
      near(t, values(w2), values(w1), 1e-12, 'the restored optimizer steps as the original');
      opt1.dispose();
      opt2.dispose();
    }
    // LBFGS's history comes back too.
    const x1 = gx.tensor(W0, { dtype: 'float64', device }).requiresGrad_();
    const lb1 = new gx.optim.LBFGS([x1], { maxIter: 2, lineSearchFn: 'strong_wolfe' });
    const closureFor = (w: gx.Tensor, opt: gx.optim.Optimizer) => (): gx.Tensor => {
      opt.zeroGrad();
      const loss = lsqLoss(w);
      loss.backward();
      return loss;
    };
    lb1.step(closureFor(x1, lb1));
    const x2 = x1.detach().clone().requiresGrad_();
    const lb2 = new gx.optim.LBFGS([x2], { maxIter: 2, lineSearchFn: 'strong_wolfe' });
    lb2.loadStateDict(lb1.stateDict());
    lb1.step(closureFor(x1, lb1));
    lb2.step(closureFor(x2, lb2));
    near(t, values(x2), values(x1), 1e-12, 'LBFGS restored');
    t.throws(() => lb2.loadStateDict({ state: {}, paramGroups: [] }), { message: /LBFGS.loadStateDict: the state dict has 0 param groups, the optimizer 1/ });
    lb1.dispose();
    lb2.dispose();
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('optim: errors name the optimizer and the argument', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const w = gx.tensor([1, 2], { device }).requiresGrad_();
    t.throws(() => new gx.optim.SGD([w], { lr: -1 }), { instanceOf: RangeError, message: 'gx.optim.SGD: Invalid learning rate: -1' });
    t.throws(() => new gx.optim.Adam([w], { lr: Number.NaN }), { instanceOf: RangeError, message: 'gx.optim.Adam: Invalid learning rate: NaN' });
    t.throws(() => new gx.optim.LBFGS([w], { lr: -0.5 }), { instanceOf: RangeError, message: 'gx.optim.LBFGS: Invalid learning rate: -0.5' });
    t.throws(() => new gx.optim.SGD([w], { momentum: -0.1 }), { message: 'gx.optim.SGD: Invalid momentum value: -0.1' });
    t.throws(() => new gx.optim.SGD([w], { weightDecay: -1 }), { message: 'gx.optim.SGD: Invalid weight_decay value: -1' });
    t.throws(() => new gx.optim.SGD([w], { nesterov: true }), { message: /gx.optim.SGD: Nesterov momentum requires a momentum and zero dampening/ });
    t.throws(() => new gx.optim.Adam([w], { betas: [0.9, 1] }), { message: 'gx.optim.Adam: Invalid beta parameter at index 1: 1' });
    t.throws(() => new gx.optim.AdamW([w], { eps: -1 }), { message: 'gx.optim.AdamW: Invalid epsilon value: -1' });
    t.throws(() => new gx.optim.SGD([w], { lr: '0.1' as unknown as number }), { instanceOf: TypeError, message: /gx.optim.SGD: lr must be a number, got a string/ });
    t.throws(() => new gx.optim.LBFGS([w], { maxIter: 0 }), { message: 'gx.optim.LBFGS: maxIter must be a positive integer, got 0' });
    t.throws(() => new gx.optim.LBFGS([w], { lineSearchFn: 'armijo' as 'strong_wolfe' }), { message: /gx.optim.LBFGS: lineSearchFn: only 'strong_wolfe' is supported/ });
    t.throws(() => new gx.optim.SGD([{ params: [w], lr: -2 }]), { message: 'gx.optim.SGD: Invalid learning rate: -2' });
    t.throws(() => new gx.optim.SGD([{ params: [w], lrr: 2 } as gx.optim.ParamGroupSpec<gx.optim.SGDOptions>]),
      { instanceOf: TypeError, message: /^gx.optim.SGD params\[0\]: unknown option 'lrr'; did you mean 'lr'\?/ });

    // The parameters.
    const made = gx.mul(w, 2);
    t.throws(() => new gx.optim.SGD([w, made]), { message: /gx.optim.SGD: params\[1\] is not a leaf tensor \(mul made it\)/ });
    t.throws(() => new gx.optim.Adam([gx.ones([2], { device })]), { message: /gx.optim.Adam: params\[0\] does not require grad.*requiresGrad_\(\)/ });
    t.throws(() => new gx.optim.SGD([{ params: [w] }, { params: [gx.ones([1], { device })] }]), { message: /gx.optim.SGD: params\[1\]\.params\[0\] does not require grad/ });
    t.throws(() => new gx.optim.SGD(w as unknown as gx.Tensor[]), { instanceOf: TypeError, message: /gx.optim.SGD: params must be an array of tensors or of param groups.*got a Tensor; pass \[tensor\]/ });
    t.throws(() => new gx.optim.SGD([]), { message: /gx.optim.SGD: params is empty/ });
    t.throws(() => new gx.optim.SGD([w, w]), { message: /gx.optim.SGD: params\[1\] appears more than once/ });
    t.throws(() => new gx.optim.SGD([w, 3] as unknown as gx.Tensor[]), { instanceOf: TypeError, message: /gx.optim.SGD: params\[1\] must be a Tensor, got number 3/ });
    const other = gx.tensor([1], { dtype: 'float64', device }).requiresGrad_();
    t.throws(() => new gx.optim.LBFGS([w, other]), { message: /gx.optim.LBFGS: all parameters must be on one device and of one dtype: params\[1\] is float64/ });
    t.throws(() => new gx.optim.LBFGS([{ params: [w] }, { params: [other] }]), { message: /LBFGS doesn't support per-parameter options \(parameter groups\)/ });

    // The closure.
    const lb = new gx.optim.LBFGS([w]);
    t.throws(() => (lb.step as () => unknown)(), { instanceOf: TypeError, message: /LBFGS.step: a closure is required \(a function that zeroes the gradients.*none was given/ });
    t.throws(() => lb.step(() => gx.mul(w, 1)), { message: /LBFGS.step: the closure must return the loss as one number or a one-element tensor, got a tensor of 2 elements/ });
    t.throws(() => lb.addParamGroup({ params: [other] }), { message: /LBFGS.addParamGroup: LBFGS doesn't support per-parameter options/ });
    // A closure that fails inside the line search: the error comes through, and nothing is left behind (checked below).
    const v = gx.tensor([-1.5, 2], { dtype: 'float64', device }).requiresGrad_();
    const lbv = new gx.optim.LBFGS([v], { lineSearchFn: 'strong_wolfe' });
    let calls = 0;
    t.throws(() => lbv.step(() => {
      if (++calls === 4) throw new Error('the data loader failed');
      lbv.zeroGrad();
      const l = gx.sum(gx.pow(gx.sub(v, 1), 4));
      l.backward();
      return l;
    }), { message: 'the data loader failed' });
    lbv.zeroGrad();
    lbv.dispose();
    const sgd = new gx.optim.SGD([w], { lr: 0.1 });
    t.throws(() => sgd.step(5 as unknown as () => number), { instanceOf: TypeError, message: /SGD.step: the closure must be a function/ });
    sgd.dispose();
    t.throws(() => sgd.step(), { message: 'SGD.step: the optimizer was disposed' });
    t.notThrows(() => sgd.dispose(), 'dispose twice is fine');
    lb.dispose();
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('optim: zeroGrad clears and frees the gradients; step skips tensors without one; step(closure) returns the loss', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const w = gx.tensor(W0, { dtype: 'float64', device }).requiresGrad_();
  const frozen = gx.tensor([5], { dtype: 'float64', device }).requiresGrad_();
  const opt = new gx.optim.Adam([w, frozen], { lr: 0.1 });
  gx.tidy(() => lsqLoss(w).backward());
  t.not(w.grad, null);
  const withGrad = gx.memory.stats(device).liveTensors;
  opt.zeroGrad();
  t.is(w.grad, null);
  t.is(gx.memory.stats(device).liveTensors, withGrad - 1, 'the gradient was freed');
  t.notThrows(() => opt.zeroGrad(), 'nothing to clear');
  const loss = opt.step(() => {
    opt.zeroGrad();
    const l = lsqLoss(w);
    l.backward();
    return l;
  });
  t.true(loss instanceof gx.Tensor && Number(loss.item()) > 0);
  loss.dispose();
  t.deepEqual(values(frozen), [5], 'no .grad, no update');
  t.is(opt.state.get(frozen), undefined, 'and no state');
  near(t, values(w), adamRef({ lr: 0.1 }, 1), 1e-6, 'the closure\'s gradient was used');
  t.is(gx.isGradEnabled(), true);
  opt.zeroGrad();
  opt.dispose();
  w.dispose();
  frozen.dispose();
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('optim: 1000 steps of SGD and of Adam leave no tensor behind, inside and outside gx.tidy', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const w = gx.tensor(W0, { device }).requiresGrad_();
  const b = gx.zeros([1], { device }).requiresGrad_();
  const x = gx.tensor(X, { device });
  const y = gx.tensor(Y, { device });
  const loss = (): gx.Tensor => gx.mean(gx.pow(gx.sub(gx.add(gx.sum(gx.mul(x, w), 1), b), y), 2));
  const sgd = new gx.optim.SGD([w, b], { lr: 0.01, momentum: 0.9, nesterov: true, weightDecay: 1e-4 });
  const adam = new gx.optim.Adam([w, b], { lr: 1e-3, amsgrad: true, weightDecay: 1e-4 });
  let first = 0, last = 0;
  for (const opt of [sgd, adam]) {
    for (let s = 0; s < 1000; s++) {
      opt.zeroGrad();
      if (s % 2 === 0) {
        // The step inside the caller's tidy must not free the optimizer's state.
        gx.tidy(() => {
          loss().backward();
          opt.step();
        });
      } else {
        const l = gx.tidy(() => {
          const v = loss();
          v.backward();
          return v;
        });
        if (s === 1 && opt === sgd) first = Number(l.item());
        if (s === 999) last = Number(l.item());
        l.dispose();
        opt.step();
      }
    }
    t.is(gx.memory.stats(device).liveTensors, live + 6 + (opt === sgd ? 2 : 2 + 6), `the parameters, their grads, data and the state (${opt.constructor.name})`);
  }
  t.true(last < first, `the loss went down: ${first} -> ${last}`);
  sgd.dispose();
  adam.dispose();
  for (const v of [w, b, x, y]) v.dispose();
  t.is(gx.memory.stats(device).liveTensors, live, 'back to the baseline');
});

/** An optimizer of one's own: sign descent with a running count of steps in its state. */
class SignSGD extends gx.optim.Optimizer<{ lr?: number }> {
  constructor(params: gx.optim.Params<{ lr?: number }>, opts: { lr?: number } = {}) {
    super('SignSGD', params, { lr: opts.lr ?? 0.1 }, ['lr']);
  }

  protected checkGroup(fn: string, g: Required<{ lr: number }>): void {
    if (!(g.lr >= 0)) throw new RangeError(`${fn}: Invalid learning rate: ${g.lr}`);
  }

  protected updateGroup(g: gx.optim.ParamGroup<{ lr?: number }>): void {
    for (const p of g.params) {
      if (p.grad === null) continue;
      const s = this.stateOf(p);
      s.steps = ((s.steps as number | undefined) ?? 0) + 1;
      s.last ??= this.keep(gx.zeros(p.shape, { dtype: p.dtype, device: p.device }));
      (s.last as gx.Tensor).copy_(gx.sign(p.grad));
      p.sub_(gx.mul(s.last as gx.Tensor, g.lr));
    }
  }
}

deviceTestSerial('optim: an optimizer of one\'s own extends gx.optim.Optimizer', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const w = gx.tensor([1, -2], { dtype: 'float64', device }).requiresGrad_();
  const opt = new SignSGD([w], { lr: 0.5 });
  for (let s = 0; s < 2; s++) {
    opt.zeroGrad();
    gx.tidy(() => {
      gx.sum(gx.mul(w, w)).backward();
      opt.step();
    });
  }
  t.deepEqual(values(w), [0, -1]);
  t.is(opt.state.get(w)?.steps, 2);
  t.deepEqual(values(opt.state.get(w)?.last as gx.Tensor), [1, -1], 'its state outlived the step\'s tidy and the caller\'s');
  t.throws(() => new SignSGD([w], { lr: -1 }), { message: 'gx.optim.SignSGD: Invalid learning rate: -1' });
  opt.zeroGrad();
  opt.dispose();
  w.dispose();
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

// NOTE [ L-BFGS scalars ]: torch holds g.d as a tensor of the parameters' dtype, so its line search decides in that dtype.
test('optim: LBFGS\'s line search decides in the parameters\' dtype as torch\'s does (a float32 step of no visible loss change is taken)', (t) => {
  const f32 = new TorchScalars('float32'), f64 = new TorchScalars('float64');
  // f + c1 t gtd with gtd = -1e-12: in float32 that is f, so f_new = f passes the Armijo test; in float64 it does not.
  const f = Math.fround(0.4736042);
  t.false(f32.gt(f, f32.add(f, f32.mul(f32.mul(1e-4, 1), f32.tensor(-1e-12)))));
  t.true(f64.gt(f, f64.add(f, f64.mul(f64.mul(1e-4, 1), f64.tensor(-1e-12)))));
  // A Python float meets a tensor in its dtype: 1 / sum |g| rounds, and min(1, that) keeps the tensor.
  const inv = f32.div(1, f32.tensor(3));
  t.deepEqual(inv, { v: Math.fround(1 / 3), tensor: true });
  t.is(f32.min(1, inv), inv);
  t.deepEqual(f32.min(1, f32.tensor(7)), { v: 1, tensor: false });
  // The line search itself: a trial whose loss equals f and whose gradient is flat ends it at once in float32
  // (as torch's does), where float64 arithmetic refused the step and zoomed towards 0.
  for (const [S, evals, step] of [[f32, 1, 1], [f64, 1 + 25, 0]] as const) {  // float64: the first trial and all maxLs = 25 more
    using d = gx.tensor([1e-6]);
    using g = gx.tensor([-1e-6]);
    let calls = 0;
    const r = strongWolfe(S, () => { calls++; return [f, gx.tensor([0])]; }, { v: 1, tensor: false }, d, f, g, S.tensor(-1e-12), { toleranceChange: 1e-30 });
    r.flatGrad.dispose();
    t.is(r.evals, evals, `${S === f32 ? 'float32' : 'float64'}: evaluations`);
    t.is(calls, evals);
    if (step === 1) t.is(r.t, 1);
    else t.true(r.t < 1e-3, `float64 zoomed to ${r.t}`);
  }
});

deviceTest('L-BFGS two-loop recursion: the one-launch kernel matches the ops (CUDA, or the simulator on the CPU)', (t, device) => {
  for (const dtype of ['float64', 'float32'] as const) {
    for (const [m, n] of [[1, 5], [4, 101], [10, 300], [3, 1000]]) {
      gx.tidy(() => {
        gx.manualSeed(m * 1000 + n);
        const S = Array.from({ length: m }, () => gx.randn([n], { dtype, device }));
        const Y = S.map((s) => s.mul(1.5).add(gx.randn([n], { dtype, device }).mul(0.1)));
        const ro = S.map((s, i) => 1 / (gx.dot(Y[i], s).item() as number));
        const g = gx.randn([n], { dtype, device });
        const want = twoLoopOps(S, Y, ro, g, 0.7);
        const got = twoLoopOneLaunch(S, Y, ro, g, 0.7);
        t.deepEqual([got.shape, got.dtype, String(got.device)], [[n], dtype, String(want.device)]);
        const rel = (gx.max(gx.abs(gx.sub(got, want))).item() as number) / (gx.max(gx.abs(want)).item() as number);
        t.true(rel <= (dtype === 'float64' ? 1e-13 : 1e-5), `${dtype} m=${m} n=${n}: relative difference ${rel}`);
        // The dispatcher: the kernel on CUDA, the ops on the CPU; the first iteration (no history) by ops everywhere.
        t.true((gx.max(gx.abs(gx.sub(twoLoop(S, Y, ro, g, 0.7), want))).item() as number) <= rel * (gx.max(gx.abs(want)).item() as number) + 1e-30);
        t.is(gx.max(gx.abs(gx.add(twoLoop([], [], [], g, 0.7), g.mul(0.7)))).item(), 0);
      });
    }
  }
});
