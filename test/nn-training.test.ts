// Training with gx.nn on every device: a small MLP (Linear, GELU, LayerNorm,
// crossEntropy with label smoothing, clipGradNorm_, a cosine schedule) trained
// six steps with SGD and Adam from the same weights as torch, its losses equal
// to torch's step for step; the schedulers against torch's lr (and momentum)
// sequences; clipGradNorm_ / clipGradValue_; the initializers' bounds,
// statistics and gains; no tensor left behind. torch's figures come from
// test/reference/torch_nn.py.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, rejects } from './helpers';
import { close, T, values } from './nn-helpers';
import { TORCH } from './nn-torch-figures';

const S = gx.optim.lrScheduler;

function mlpRun(d: gx.DeviceLike, kind: 'sgd' | 'adam'): { losses: number[]; final: number[] } {
  const model = new gx.nn.Sequential(new gx.nn.Linear(6, 16), new gx.nn.GELU(), new gx.nn.LayerNorm(16), new gx.nn.Linear(16, 4)).to(d, 'float64');
  // torch_nn.py copies T(shape, 0.3 + 0.1 i, 0.2 i, 0.4) into its i-th parameter: the same through loadStateDict.
  const init = gx.tidy(() => Object.fromEntries(model.namedParameters().map(([n, p], i) => [n, T([...p.shape], 0.3 + 0.1 * i, 0.2 * i, 0.4, d)])));
  model.loadStateDict(init);
  for (const v of Object.values(init)) v.dispose();
  const x = T([8, 6], 0.77, 0.5, 1.5, d);
  const y = gx.tensor([0, 1, 2, 3, 3, 2, 1, 0], { dtype: 'int64', device: d });
  const opt = kind === 'sgd' ? new gx.optim.SGD(model.parameters(), { lr: 0.1, momentum: 0.9 }) : new gx.optim.Adam(model.parameters(), { lr: 0.01 });
  const sched = new S.CosineAnnealingLR(opt, { tMax: 6 });
  const losses: number[] = [];
  for (let i = 0; i < 6; i++) {
    opt.zeroGrad();
    losses.push(gx.tidy(() => {
      const loss = gx.nn.functional.crossEntropy(model.call(x), y, { labelSmoothing: 0.05 });
      loss.backward();
      return Number(loss.item());
    }));
    gx.nn.utils.clipGradNorm_(model.parameters(), 1.0).dispose();
    opt.step();
    sched.step();
  }
  const final = values((model.at(3) as gx.nn.Linear).weight);
  opt.dispose();
  model.dispose();
  x.dispose();
  y.dispose();
  return { losses, final };
}

deviceTestSerial('an MLP trained with SGD and with Adam (clipped, cosine schedule) follows torch step for step, leaving nothing behind', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  for (const kind of ['sgd', 'adam'] as const) {
    const run = mlpRun(d, kind);
    const ref = TORCH[`mlp_${kind}`];
    close(t, run.losses, ref.losses, `${kind} losses`, 1e-12);
    close(t, run.final, ref.final, `${kind} final weights`, 1e-12);
    t.true(run.losses[5] < run.losses[0], `${kind}: the loss falls`);
  }
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});

type SchedRef = { lr: number[][]; momentum: number[] };

/** The lr sequence (and group 0's momentum or beta1) of a scheduler, as torch_nn.py's lrs() takes it. */
function lrs(make: (o: gx.optim.Optimizer<{ lr?: number }>) => gx.optim.lrScheduler.LRScheduler, steps: number, kind: 'sgd' | 'adam' = 'sgd'): SchedRef {
  const a = gx.zeros([1]).requiresGrad_(), b = gx.zeros([1]).requiresGrad_();
  const opt = kind === 'sgd'
    ? new gx.optim.SGD([{ params: [a] }, { params: [b], lr: 0.05 }], { lr: 0.1, momentum: 0.9 })
    : new gx.optim.Adam([{ params: [a] }, { params: [b], lr: 0.05 }], { lr: 0.1 });
  const s = make(opt);
  const lr = [s.getLastLr()];
  const momentum: number[] = [];
  for (let i = 0; i < steps; i++) {
    opt.step();
    s.step();
    lr.push(s.getLastLr());
    const g = opt.paramGroups[0] as Record<string, unknown>;
    momentum.push('momentum' in g ? g.momentum as number : (g.betas as number[])[0]);
  }
  opt.dispose();
  a.dispose();
  b.dispose();
  return { lr, momentum };
}

test('the schedulers give torch\'s learning rates step for step (and OneCycleLR its momentum and beta1)', (t) => {
  const cases: [string, SchedRef, SchedRef][] = [
    ['StepLR', lrs((o) => new S.StepLR(o, { stepSize: 3, gamma: 0.5 }), 10), TORCH.sched_step],
    ['MultiStepLR', lrs((o) => new S.MultiStepLR(o, { milestones: [2, 5, 5, 8], gamma: 0.3 }), 10), TORCH.sched_multistep],
    ['ExponentialLR', lrs((o) => new S.ExponentialLR(o, { gamma: 0.9 }), 10), TORCH.sched_exp],
    ['CosineAnnealingLR', lrs((o) => new S.CosineAnnealingLR(o, { tMax: 7, etaMin: 0.001 }), 25), TORCH.sched_cos],
    ['LambdaLR', lrs((o) => new S.LambdaLR(o, (e) => 1 / (1 + e)), 8), TORCH.sched_lambda],
    ['LinearLR', lrs((o) => new S.LinearLR(o, { startFactor: 0.25, endFactor: 0.9, totalIters: 6 }), 10), TORCH.sched_linear],
    ['OneCycleLR', lrs((o) => new S.OneCycleLR(o, { maxLr: [0.5, 0.2], totalSteps: 20 }), 20), TORCH.sched_onecycle],
    ['OneCycleLR three-phase linear on Adam', lrs((o) => new S.OneCycleLR(o, { maxLr: 0.3, totalSteps: 15, annealStrategy: 'linear', threePhase: true, pctStart: 0.25 }), 15, 'adam'),
      TORCH.sched_onecycle_adam_linear3],
    ['SequentialLR warm-up then cosine', lrs((o) => new S.SequentialLR(o, {
      schedulers: [new S.LinearLR(o, { startFactor: 0.1, totalIters: 5 }), new S.CosineAnnealingLR(o, { tMax: 10 })], milestones: [5],
    }), 20), TORCH.sched_seq_warmup_cos],
    ['SequentialLR of three', lrs((o) => new S.SequentialLR(o, {
      schedulers: [new S.LinearLR(o, { startFactor: 0.5, totalIters: 2 }), new S.ExponentialLR(o, { gamma: 0.8 }), new S.CosineAnnealingLR(o, { tMax: 4, etaMin: 0.001 })],
      milestones: [3, 7],
    }), 16), TORCH.sched_seq_three],
    ['SequentialLR LambdaLR then MultiStepLR', lrs((o) => new S.SequentialLR(o, {
      schedulers: [new S.LambdaLR(o, (e) => 1 / (e + 1)), new S.MultiStepLR(o, { milestones: [2, 4], gamma: 0.3 })], milestones: [3],
    }), 10), TORCH.sched_seq_lambda_multistep],
    ['SequentialLR ExponentialLR then StepLR on Adam', lrs((o) => new S.SequentialLR(o, {
      schedulers: [new S.ExponentialLR(o, { gamma: 0.9 }), new S.StepLR(o, { stepSize: 3, gamma: 0.5 })], milestones: [4],
    }), 14, 'adam'), TORCH.sched_seq_exp_step_adam],
  ];
  for (const [name, got, ref] of cases) {
    // Within an ulp or two: the same recursions, but V8's Math.cos and glibc's cos may differ in the last bit.
    close(t, got.lr.flat(), ref.lr.flat(), `${name} lr`, 0, 1e-15);
    if (name.startsWith('OneCycle')) close(t, got.momentum, ref.momentum, `${name} momentum`, 0, 1e-15);
  }
});

test('schedulers refuse bad arguments, naming the class and the argument, and OneCycleLR past its total', (t) => {
  const p = gx.zeros([1]).requiresGrad_();
  const opt = new gx.optim.SGD([p], { lr: 0.1 });
  t.throws(() => new S.StepLR(opt, { stepSize: 0 }), { message: /^gx\.optim\.lrScheduler\.StepLR: argument 'stepSize' must be an integer > 0, got number 0/ });
  t.throws(() => new S.StepLR(opt, { step_size: 3 } as never), { message: /^gx\.optim\.lrScheduler\.StepLR: unknown option 'step_size'; did you mean 'stepSize'\?/ });
  t.throws(() => new S.OneCycleLR(opt, { maxLr: 1, totalSteps: 5, pct_start: 0.2 } as never), { message: /^gx\.optim\.lrScheduler\.OneCycleLR: unknown option 'pct_start'; did you mean 'pctStart'\?/ });
  t.throws(() => new S.CosineAnnealingLR(opt, { T_max: 3 } as never), { message: /^gx\.optim\.lrScheduler\.CosineAnnealingLR: unknown option 'T_max'/ });
  t.throws(() => new S.LinearLR(opt, { startFactor: 2 }), { message: /^gx\.optim\.lrScheduler\.LinearLR: startFactor must be > 0 and <= 1/ });
  t.throws(() => new S.LambdaLR(opt, [(e) => e, (e) => e]), { message: /^gx\.optim\.lrScheduler\.LambdaLR: argument 'lrLambda' must be a function or a list of 1 functions/ });
  t.throws(() => new S.OneCycleLR(opt, { maxLr: 1 }), { message: /^gx\.optim\.lrScheduler\.OneCycleLR: give totalSteps, or epochs and stepsPerEpoch/ });
  t.throws(() => new S.OneCycleLR(new gx.optim.LBFGS([p]), { maxLr: 1, totalSteps: 3 }), { message: /no momentum nor betas; pass cycleMomentum: false/ });
  const one = new S.OneCycleLR(opt, { maxLr: 1, totalSteps: 2, cycleMomentum: false });
  one.step();
  one.step();
  t.throws(() => one.step(), { message: /^OneCycleLR\.step: tried to step 3 times; totalSteps is 2/ });
  t.throws(() => new S.ExponentialLR({} as gx.optim.SGD, { gamma: 0.5 }), { message: /^gx\.optim\.lrScheduler\.ExponentialLR: argument 'optimizer' must be a gx\.optim optimizer/ });
  const warm = new S.LinearLR(opt, { totalIters: 2 });
  t.throws(() => new S.SequentialLR(opt, { schedulers: [warm], milestones: [2] }), { message: /^gx\.optim\.lrScheduler\.SequentialLR: argument 'milestones' must list 0 step counts/ });
  t.throws(() => new S.SequentialLR(opt, { schedulers: [warm, warm], milestones: [0] }), { message: /^gx\.optim\.lrScheduler\.SequentialLR: argument 'milestones' must be increasing integers > 0/ });
  t.throws(() => new S.SequentialLR(opt, { schedulers: [warm, warm, warm], milestones: [4, 2] }), { message: /must be increasing integers > 0, got/ });
  t.throws(() => new S.SequentialLR(opt, { schedulers: [warm, {} as gx.optim.lrScheduler.StepLR], milestones: [2] }), { message: /^gx\.optim\.lrScheduler\.SequentialLR: argument 'schedulers' must be a non-empty list/ });
  const r = gx.zeros([1]).requiresGrad_();
  const other = new gx.optim.SGD([r], { lr: 0.1 });
  t.throws(() => new S.SequentialLR(opt, { schedulers: [warm, new S.StepLR(other, { stepSize: 2 })], milestones: [2] }), { message: /scheduler 1 \(StepLR\) belongs to another optimizer/ });
  // stateDict / loadStateDict resume the schedule where it was.
  const q = gx.zeros([1]).requiresGrad_();
  const o2 = new gx.optim.SGD([q], { lr: 0.1 });
  const a = new S.StepLR(o2, { stepSize: 2, gamma: 0.5 });
  a.step(); a.step(); a.step();
  const saved = a.stateDict();
  const o3 = new gx.optim.SGD([q], { lr: 0.1 });
  o3.paramGroups[0].lr = o2.paramGroups[0].lr;
  const b = new S.StepLR(o3, { stepSize: 2, gamma: 0.5 });
  b.loadStateDict(saved);
  a.step(); b.step();
  t.deepEqual(b.getLastLr(), a.getLastLr());
  t.is(b.lastEpoch, 4);
  // A SequentialLR resumes with its schedulers' states: the lrs after the load follow the uninterrupted run's.
  const seqOf = (o: gx.optim.SGD): gx.optim.lrScheduler.SequentialLR => new S.SequentialLR(o, {
    schedulers: [new S.LinearLR(o, { startFactor: 0.2, totalIters: 3 }), new S.CosineAnnealingLR(o, { tMax: 5 })], milestones: [3],
  });
  const o4 = new gx.optim.SGD([q], { lr: 0.1 }), o5 = new gx.optim.SGD([q], { lr: 0.1 });
  const run = seqOf(o4);
  for (let i = 0; i < 4; i++) run.step();
  const resumed = seqOf(o5);
  resumed.loadStateDict(run.stateDict());
  o5.paramGroups[0].lr = o4.paramGroups[0].lr;
  for (let i = 0; i < 3; i++) {
    run.step();
    resumed.step();
    t.deepEqual(resumed.getLastLr(), run.getLastLr());
  }
  t.throws(() => resumed.loadStateDict(a.stateDict() as never), { message: /^SequentialLR\.loadStateDict: state lacks 'schedulers', which SequentialLR's state needs/ });
  for (const o of [opt, o2, o3, o4, o5, other]) o.dispose();
  p.dispose();
  q.dispose();
  r.dispose();
});

deviceTest('clipGradNorm_ matches torch (norm 2, inf, and no clip when under) and returns the total norm; clipGradValue_ clamps', (t, d) => {
  gx.tidy(() => {
    for (const [name, normType, maxNorm] of [['clip_2', 2, 1.5], ['clip_inf', Infinity, 0.5], ['clip_1_noop', 1, 1000]] as const) {
      const a = T([3, 4], 0.5, 0.1, 2, d).requiresGrad_(), b = T([5], 0.9, 0.4, 3, d).requiresGrad_();
      a.grad = T([3, 4], 0.3, 0.2, 2, d);
      b.grad = T([5], 0.7, 0.9, 4, d);
      const none = gx.zeros([2], { dtype: 'float64', device: d }).requiresGrad_();  // no grad: skipped
      const total = gx.nn.utils.clipGradNorm_([a, none, b], maxNorm, { normType });
      const ref = TORCH[name];
      close(t, [Number(total.item())], [ref.total], `${name} total`);
      close(t, values(a.grad), ref.a, `${name} a`);
      close(t, values(b.grad), ref.b, `${name} b`);
    }
    const c = T([6], 0.5, 0.1, 2, d).requiresGrad_();
    c.grad = T([6], 0.3, 0.2, 2, d);
    gx.nn.utils.clipGradValue_(c, 0.7);
    close(t, values(c.grad), T([6], 0.3, 0.2, 2, d).clamp(-0.7, 0.7).toArraySync() as unknown as number[], 'clipGradValue_');
    const e = gx.zeros([2], { dtype: 'float64', device: d }).requiresGrad_();
    e.grad = gx.tensor([1, Number.NaN], { dtype: 'float64', device: d });
    rejects(t, d, () => gx.nn.utils.clipGradNorm_([e], 1, { errorIfNonfinite: true }), Error, /^gx\.nn\.utils\.clipGradNorm_: the total norm of order 2 of the gradients is non-finite/);
    rejects(t, d, () => gx.nn.utils.clipGradNorm_([e], 1, { normType: -1 }), RangeError, /^gx\.nn\.utils\.clipGradNorm_: option 'normType' must be a number > 0/);
    rejects(t, d, () => gx.nn.utils.clipGradNorm_(5 as never, 1), TypeError, /^gx\.nn\.utils\.clipGradNorm_: argument 'parameters' must be a Tensor or an iterable/);
  });
});

/** mean and std of a tensor's values. */
function moments(x: gx.Tensor): { mean: number; std: number; min: number; max: number } {
  const v = values(x);
  const mean = v.reduce((s, a) => s + a, 0) / v.length;
  const std = Math.sqrt(v.reduce((s, a) => s + (a - mean) ** 2, 0) / v.length);
  return { mean, std, min: v.reduce((a, b) => Math.min(a, b)), max: v.reduce((a, b) => Math.max(a, b)) };
}

deviceTest('gx.nn.init: torch\'s bounds, standard deviations and gains; Linear initializes as torch\'s; a generator reproduces', (t, d) => {
  gx.tidy(() => {
    const I = gx.nn.init;
    t.is(I.calculateGain('tanh'), 5 / 3);
    t.is(I.calculateGain('relu'), Math.SQRT2);
    t.is(I.calculateGain('leakyRelu', 0.2), Math.sqrt(2 / 1.04));
    t.is(I.calculateGain('leakyRelu'), Math.sqrt(2 / (1 + 0.01 ** 2)));
    t.is(I.calculateGain('selu'), 0.75);
    const w = gx.empty([400, 300], { device: d }).requiresGrad_();  // fanIn 300, fanOut 400
    const checks: [string, () => void, number, number | null][] = [
      // [name, fill, expected std, bound or null]
      ['kaimingUniform_', () => I.kaimingUniform_(w), Math.SQRT2 / Math.sqrt(300), Math.sqrt(3) * Math.SQRT2 / Math.sqrt(300)],
      ['kaimingUniform_ a=sqrt(5)', () => I.kaimingUniform_(w, { a: Math.sqrt(5) }), 1 / Math.sqrt(3 * 300), 1 / Math.sqrt(300)],
      ['kaimingNormal_ fanOut relu', () => I.kaimingNormal_(w, { mode: 'fanOut', nonlinearity: 'relu' }), Math.SQRT2 / Math.sqrt(400), null],
      ['xavierUniform_ gain 2', () => I.xavierUniform_(w, 2), 2 * Math.sqrt(2 / 700), 2 * Math.sqrt(6 / 700)],
      ['xavierNormal_', () => I.xavierNormal_(w), Math.sqrt(2 / 700), null],
      ['normal_', () => I.normal_(w, 0.5, 0.2), 0.2, null],
      ['uniform_', () => I.uniform_(w, -0.3, 0.5), 0.8 / Math.sqrt(12), null],
    ];
    for (const [name, fill, std, bound] of checks) {
      fill();  // grad mode is on and w requires grad: init runs under noGrad
      t.true(w.isLeaf && w.requiresGrad, `${name}: still a leaf that requires grad`);
      const m = moments(w);
      t.true(Math.abs(m.std / std - 1) < 0.03, `${name}: std ${m.std}, expected ${std}`);
      if (bound !== null) t.true(m.min >= -bound && m.max <= bound && m.max > 0.95 * bound, `${name}: [${m.min}, ${m.max}] within ±${bound}`);
    }
    I.constant_(w, 0.25);
    t.deepEqual(new Set(values(w)), new Set([0.25]));
    I.ones_(w); t.deepEqual(new Set(values(w)), new Set([1]));
    I.zeros_(w); t.deepEqual(new Set(values(w)), new Set([0]));
    // Linear: U(-1/sqrt(in), 1/sqrt(in)) for the weight (kaiming a = sqrt(5)) and the bias, as torch's.
    const fc = new gx.nn.Linear(256, 512, { device: d });
    const mw = moments(fc.weight), mb = moments(fc.bias as gx.Tensor);
    t.true(mw.max <= 1 / 16 && mw.min >= -1 / 16 && Math.abs(mw.std / (1 / 16 / Math.sqrt(3)) - 1) < 0.03, `weight ${JSON.stringify(mw)}`);
    t.true(mb.max <= 1 / 16 && mb.min >= -1 / 16 && mb.max - mb.min > 0.1, `bias ${JSON.stringify(mb)}`);
    fc.dispose();
    const g1 = new gx.Generator(), g2 = new gx.Generator();
    g1.manualSeed(5); g2.manualSeed(5);
    const a = I.normal_(gx.empty([10], { device: d }), 0, 1, { generator: g1 });
    const b = I.normal_(gx.empty([10], { device: d }), 0, 1, { generator: g2 });
    t.deepEqual(values(a), values(b));
    rejects(t, d, () => I.xavierUniform_(gx.empty([5], { device: d })), RangeError, /^gx\.nn\.init\.xavierUniform_: fan in and fan out cannot be computed for a tensor of fewer than 2 dims/);
    rejects(t, d, () => I.kaimingNormal_(w, { mode: 'fan_in' as 'fanIn' }), TypeError, /^gx\.nn\.init\.kaimingNormal_: option 'mode' must be 'fanIn' or 'fanOut'/);
    rejects(t, d, () => I.uniform_(w, 1, 0), RangeError, /^gx\.nn\.init\.uniform_: needs a <= b/);
    rejects(t, d, () => I.normal_(gx.zeros([2], { dtype: 'int64', device: d })), TypeError, /^gx\.nn\.init\.normal_: argument 'tensor' must be floating, got int64/);
    rejects(t, d, () => I.calculateGain('swish' as 'relu'), TypeError, /^gx\.nn\.init\.calculateGain: unknown nonlinearity/);
  });
});

deviceTestSerial('an MNIST-shaped classifier (784 -> 128 -> 10, LayerNorm, Dropout) trains 100 steps with AdamW and a cosine schedule: the loss falls, nothing is left behind', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  gx.manualSeed(11);
  const model = new gx.nn.Sequential(
    new gx.nn.Linear(784, 128, { device: d }), new gx.nn.LayerNorm(128, { device: d }), new gx.nn.GELU(), new gx.nn.Dropout(0.1),
    new gx.nn.Linear(128, 10, { device: d }),
  );
  const x = gx.rand([64, 28, 28], { device: d });
  const y = gx.randint(0, 10, [64], { device: d });
  const opt = new gx.optim.AdamW(model.parameters(), { lr: 3e-3, weightDecay: 0.01 });
  const sched = new S.CosineAnnealingLR(opt, { tMax: 100 });
  const losses: number[] = [];
  for (let i = 0; i < 100; i++) {
    opt.zeroGrad();
    losses.push(gx.tidy(() => {
      const loss = new gx.nn.CrossEntropyLoss({ labelSmoothing: 0.05 }).call(model.call(x.reshape([64, 784])), y);
      loss.backward();
      return Number(loss.item());
    }));
    gx.nn.utils.clipGradNorm_(model.parameters(), 5).dispose();
    opt.step();
    sched.step();
  }
  t.true(losses[0] > 2 && losses[99] < 0.5 * losses[0], `loss ${losses[0]} -> ${losses[99]}`);
  t.true(Math.abs(sched.getLastLr()[0]) < 1e-12, 'the cosine schedule ends at etaMin 0');
  model.eval();
  const acc = gx.tidy(() => Number(gx.mean(gx.eq(gx.argmax(model.call(x.reshape([64, 784])), 1), y).astype('float32')).item()));
  t.true(acc > 0.9, `training accuracy ${acc}`);
  opt.dispose();
  model.dispose();
  x.dispose();
  y.dispose();
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});
