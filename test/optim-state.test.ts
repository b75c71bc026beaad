// Optimizer.loadStateDict against each optimizer's state keys (NOTE [ Loading
// optimizer state ] in lib/optim/state-check.ts): a loaded state steps as
// torch's does from the same state, and a key the optimizer does not hold, a
// missing moment, a tensor of another shape or dtype, a bad step count are
// refused before anything is copied, naming the entry and the key. Before,
// such a key was kept and never read (the momentum silently restarted), and
// on the multi-tensor path a momentum buffer of another shape was used.
import * as gx from '../lib';
import { deviceTest } from './helpers';

const f64 = (v: number[], device: gx.DeviceLike, shape = [v.length]): gx.Tensor => gx.tensor(v, { dtype: 'float64', device }).reshape(shape);

/** One step of `opt` over p from a loaded state, with the gradient g. */
function stepFrom(opt: gx.optim.Optimizer, p: gx.Tensor, state: gx.optim.ParamState, g: gx.Tensor): number[] {
  opt.loadStateDict({ state: { 0: state }, paramGroups: opt.stateDict().paramGroups });
  p.grad = g;
  opt.step();
  return Array.from(p.toArraySync() as Float64Array);
}

deviceTest('optim: a loaded state steps as torch\'s from the same state (SGD\'s momentum, Adam\'s moments and step)', (t, d) => {
  gx.tidy(() => {
    for (const foreach of [false, true]) {
      const p = f64([1, -2, 0.5], d).requiresGrad_();
      const sgd = new gx.optim.SGD([p], { lr: 0.1, momentum: 0.9, foreach });
      // torch 2.x CPU: SGD(lr=0.1, momentum=0.9) loaded with momentum_buffer [5, -1, 0.25], grad [1, 0.5, -2], one step.
      const got = stepFrom(sgd, p, { momentumBuffer: f64([5, -1, 0.25], d) }, f64([1, 0.5, -2], d));
      got.forEach((v, i) => t.true(Math.abs(v - [0.44999999999999996, -1.96, 0.6775][i]) < 1e-15, `SGD foreach ${foreach}: ${got}`));
      const q = f64([1, -2, 0.5], d).requiresGrad_();
      const adam = new gx.optim.Adam([q], { lr: 0.1, foreach });
      // torch 2.x CPU: Adam(lr=0.1) loaded with step 3, exp_avg [0.5, -0.2, 0.1], exp_avg_sq [0.3, 0.01, 0.2], one step.
      const state = { step: 3, expAvg: f64([0.5, -0.2, 0.1], d), expAvgSq: f64([0.3, 0.01, 0.2], d) };
      const want = [0.9815681873744158, -1.9763916604333933, 0.504477779116876];
      const a = stepFrom(adam, q, state, f64([1, 0.5, -2], d));
      a.forEach((v, i) => t.true(Math.abs(v - want[i]) < 1e-14, `Adam foreach ${foreach}: ${a}`));
      sgd.dispose();
      adam.dispose();
    }
  });
});

deviceTest('optim: loadStateDict refuses an unknown state key, a missing moment, a misshaped tensor, naming entry and key', (t, d) => {
  gx.tidy(() => {
    for (const foreach of [false, true]) {
      const p = f64([1, 2, 3, 4], d).requiresGrad_();
      const sgd = new gx.optim.SGD([p], { lr: 0.1, momentum: 0.9, foreach });
      const groups = sgd.stateDict().paramGroups;
      const load = (state: Record<string, unknown>): void => sgd.loadStateDict({ state: { 0: state as gx.optim.ParamState }, paramGroups: groups });
      t.throws(() => load({ momentumBufer: f64([1, 1, 1, 1], d) }),
        { message: 'SGD.loadStateDict: state[0] has the key \'momentumBufer\', which SGD\'s state does not hold (it holds momentumBuffer)' });
      // Same element count, other shape: the multi-tensor kernel took it.
      t.throws(() => load({ momentumBuffer: f64([1, 1, 1, 1], d, [2, 2]) }),
        { message: 'SGD.loadStateDict: state[0].momentumBuffer has shape [2, 2], not its parameter\'s shape [4]' });
      t.is(sgd.state.get(p), undefined, 'nothing was loaded');
      // torch's momentum_buffer of None: no buffer yet.
      load({ momentumBuffer: null });
      t.deepEqual(Object.keys(sgd.state.get(p) ?? {}), []);
      sgd.dispose();
    }
    const q = f64([1, 2], d).requiresGrad_();
    const adam = new gx.optim.Adam([q]);
    const groups = adam.stateDict().paramGroups;
    const load = (state: Record<string, unknown>): void => adam.loadStateDict({ state: { 0: state as gx.optim.ParamState }, paramGroups: groups });
    t.throws(() => load({ step: 2, expAvg: f64([1, 1], d) }),
      { message: 'Adam.loadStateDict: state[0] lacks \'expAvgSq\', which Adam\'s state needs (it holds step, expAvg, expAvgSq, maxExpAvgSq)' });
    t.throws(() => load({ step: -5, expAvg: f64([1, 1], d), expAvgSq: f64([1, 1], d) }),
      { message: 'Adam.loadStateDict: state[0].step must be a whole number >= 0, got -5' });
    t.throws(() => load({ step: 1, expAvg: gx.ones([2], { dtype: 'int64', device: d }), expAvgSq: f64([1, 1], d) }),
      { message: 'Adam.loadStateDict: state[0].expAvg must be a floating tensor of its parameter\'s shape [2], got a tensor of int64' });
    t.throws(() => load({ step: 1, expAvg: f64([1, 1], d), expAvgSq: f64([1, 1], d), momentumBuffer: f64([1, 1], d) }),
      { message: /^Adam\.loadStateDict: state\[0\] has the key 'momentumBuffer', which Adam's state does not hold/ });
    adam.dispose();
    // L-BFGS keeps its state on the first parameter, its vectors over all the parameters' elements.
    const xs = [f64([1, 2, 3], d).requiresGrad_(), f64([1, -1], d, [1, 2]).requiresGrad_()];
    const lb = new gx.optim.LBFGS(xs);
    const lg = lb.stateDict().paramGroups;
    t.throws(() => lb.loadStateDict({ state: { 0: { nIter: 1, d: f64([1, 2, 3], d) } }, paramGroups: lg }),
      { message: 'LBFGS.loadStateDict: state[0].d has shape [3], not the parameters\' flat shape [5]' });
    t.throws(() => lb.loadStateDict({ state: { 1: { nIter: 1 } }, paramGroups: lg }),
      { message: 'LBFGS.loadStateDict: state[1] has the key \'nIter\', which LBFGS\'s state does not hold (it holds nothing for this parameter)' });
    lb.dispose();
  });
});

// NOTE [ Loading scheduler state ]: loadStateDict read its keys and ignored the others, so torch's spelling or
// a misspelled key loaded nothing, silently; a missing stepCount or lastLr broke later. Every scheduler class.
deviceTest('lrScheduler: loadStateDict refuses an unknown, a missing or a misshaped key, naming the scheduler and the key', (t, d) => {
  gx.tidy(() => {
    const S = gx.optim.lrScheduler;
    const p = f64([1, 2], d).requiresGrad_(), q = f64([3], d).requiresGrad_();
    const opt = (): gx.optim.SGD => new gx.optim.SGD([{ params: [p] }, { params: [q], lr: 0.5 }], { lr: 0.1, momentum: 0.9 });
    const makers: [string, (o: gx.optim.SGD) => gx.optim.lrScheduler.LRScheduler][] = [
      ['StepLR', (o) => new S.StepLR(o, { stepSize: 2 })],
      ['MultiStepLR', (o) => new S.MultiStepLR(o, { milestones: [2, 4] })],
      ['ExponentialLR', (o) => new S.ExponentialLR(o, { gamma: 0.9 })],
      ['CosineAnnealingLR', (o) => new S.CosineAnnealingLR(o, { tMax: 5 })],
      ['LambdaLR', (o) => new S.LambdaLR(o, (e) => 1 / (e + 1))],
      ['LinearLR', (o) => new S.LinearLR(o, { totalIters: 3 })],
      ['OneCycleLR', (o) => new S.OneCycleLR(o, { maxLr: 1, totalSteps: 10 })],
      ['SequentialLR', (o) => new S.SequentialLR(o, { schedulers: [new S.LinearLR(o, { totalIters: 2 }), new S.ExponentialLR(o, { gamma: 0.5 })], milestones: [2] })],
    ];
    for (const [name, make] of makers) {
      const o = opt(), s = make(o);
      s.step();
      const good = s.stateDict();
      const load = (v: unknown): void => s.loadStateDict(v as gx.optim.lrScheduler.SchedulerState);
      const extra = { SequentialLR: ', schedulers', OneCycleLR: ', totalSteps' }[name] ?? '';
      const holds = `(it holds lastEpoch, stepCount, baseLrs, lastLr${extra})`;
      t.throws(() => load({ ...good, last_epoch: 3 }), { message: `${name}.loadStateDict: state has the key 'last_epoch', which ${name}'s state does not hold ${holds}` });
      const { stepCount, ...noCount } = good;
      void stepCount;
      t.throws(() => load(noCount), { message: `${name}.loadStateDict: state lacks 'stepCount', which ${name}'s state needs ${holds}` });
      t.throws(() => load({ ...good, lastEpoch: 1.5 }), { message: `${name}.loadStateDict: state.lastEpoch must be a whole number >= -1, got number 1.5` });
      t.throws(() => load({ ...good, baseLrs: [0.1] }), { message: new RegExp(`^${name}\\.loadStateDict: state\\.baseLrs must be a list of 2 finite numbers \\(one per param group\\), got`) });
      t.throws(() => load({ ...good, lastLr: ['0.1', 0.5] }), { message: new RegExp(`^${name}\\.loadStateDict: state\\.lastLr must be a list of 2 finite numbers`) });
      t.throws(() => load(null), { instanceOf: TypeError, message: new RegExp(`^${name}\\.loadStateDict: state must be what ${name}\\.stateDict\\(\\) returns`) });
      t.deepEqual(s.stateDict(), good, `${name}: nothing was set`);
      s.step();
      load(good);  // what stateDict() gave loads
      t.deepEqual(s.stateDict(), good);
      o.dispose();
    }
    // SequentialLR checks its schedulers' states too, naming them, before setting anything.
    const o = opt(), seq = makers[7][1](o) as gx.optim.lrScheduler.SequentialLR;
    const good = seq.stateDict() as gx.optim.lrScheduler.SequentialLRState;
    const bad = { ...good, schedulers: [good.schedulers[0], { ...good.schedulers[1], gamma: 0.5 }] };
    t.throws(() => seq.loadStateDict(bad), { message: 'SequentialLR.loadStateDict: state.schedulers[1] has the key \'gamma\', which ExponentialLR\'s state does not hold (it holds lastEpoch, stepCount, baseLrs, lastLr)' });
    t.throws(() => seq.loadStateDict({ ...good, schedulers: [good.schedulers[0]] }), { message: /^SequentialLR\.loadStateDict: state\.schedulers must be a list of the states of 2 schedulers, got/ });
    t.deepEqual(seq.stateDict(), good);
    o.dispose();
  });
});

// torch's OneCycleLR state_dict() holds total_steps; ours held only the position, so a state of a 10-step cycle
// loaded into a 4-step one silently went on along the 4-step curve (and stopped at step 5). torch's load takes the
// saved total_steps with its phases; this state has no phases, so a loaded totalSteps must be the scheduler's own.
deviceTest('lrScheduler: OneCycleLR\'s state holds totalSteps (torch\'s total_steps), and a state of another length is refused', (t, d) => {
  gx.tidy(() => {
    const S = gx.optim.lrScheduler;
    const p = f64([1, 2], d).requiresGrad_();
    const sgd = (): gx.optim.SGD => new gx.optim.SGD([p], { lr: 0.1, momentum: 0.9 });
    // torch 2.13: OneCycleLR(SGD, max_lr=1, total_steps=10).state_dict()['total_steps'] == 10;
    // with epochs=2, steps_per_epoch=3 it is 6.
    const ten = new S.OneCycleLR(sgd(), { maxLr: 1, totalSteps: 10 });
    t.is(ten.stateDict().totalSteps, 10);
    t.is(new S.OneCycleLR(sgd(), { maxLr: 1, epochs: 2, stepsPerEpoch: 3 }).stateDict().totalSteps, 6);
    ten.step();
    ten.step();
    const good = ten.stateDict();
    t.deepEqual(Object.keys(good), ['lastEpoch', 'stepCount', 'baseLrs', 'lastLr', 'totalSteps']);
    const four = new S.OneCycleLR(sgd(), { maxLr: 1, totalSteps: 4 });
    const before = four.stateDict();
    t.throws(() => four.loadStateDict(good), {
      message: 'OneCycleLR.loadStateDict: state.totalSteps is 10, where this OneCycleLR has 4: the state is of another schedule (make the OneCycleLR with totalSteps 10 to load it)',
    });
    t.throws(() => four.loadStateDict({ ...before, totalSteps: 2.5 }), { message: 'OneCycleLR.loadStateDict: state.totalSteps must be a whole number >= 1, got number 2.5' });
    const { totalSteps, ...old } = good;
    void totalSteps;
    t.throws(() => four.loadStateDict(old as never), { message: /^OneCycleLR\.loadStateDict: state lacks 'totalSteps', which OneCycleLR's state needs/ });
    t.deepEqual(four.stateDict(), before, 'nothing was set');
    // A scheduler of the same cycle takes it and goes on as the saved one does.
    const again = new S.OneCycleLR(sgd(), { maxLr: 1, totalSteps: 10 });
    again.loadStateDict(good);
    ten.step();
    again.step();
    t.deepEqual(again.getLastLr(), ten.getLastLr());
    // SequentialLR checks a OneCycleLR's totalSteps among its schedulers' states.
    const o = sgd();
    const seq = (n: number): gx.optim.lrScheduler.SequentialLR => new S.SequentialLR(o, {
      schedulers: [new S.OneCycleLR(o, { maxLr: 1, totalSteps: n }), new S.ExponentialLR(o, { gamma: 0.5 })], milestones: [3],
    });
    t.throws(() => seq(4).loadStateDict(seq(5).stateDict()), { message: /^SequentialLR\.loadStateDict: state\.schedulers\[0\]\.totalSteps is 5, where this OneCycleLR has 4/ });
  });
});
