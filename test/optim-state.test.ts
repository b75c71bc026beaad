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
