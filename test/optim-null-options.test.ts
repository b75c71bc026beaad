// The optimizers' constructors filled every null option in with its default
// (`o.lr ?? 1e-3`): new SGD(ps, { lr: null }) trained at 1e-3, where torch
// refuses lr=None (TypeError) and a param group { params, lr: null } was
// refused here. The constructors' options now pass the checks a group's do.
import test from 'ava';

import * as gx from '../lib';

type Maker = (ps: gx.Tensor[], opts: Record<string, unknown>) => gx.optim.Optimizer<object>;
const MAKERS: Record<string, Maker> = {
  SGD: (ps, o) => new gx.optim.SGD(ps, o),
  Adam: (ps, o) => new gx.optim.Adam(ps, o),
  AdamW: (ps, o) => new gx.optim.AdamW(ps, o),
  LBFGS: (ps, o) => new gx.optim.LBFGS(ps, o),
};

// torch 2.13 (CPU), each optimizer made with one option None and stepped once: TypeError for these
// (torch's spelling on the right of each), and None taken as the default for foreach, fused, max_eval and
// line_search_fn. A bool given None (nesterov, maximize, amsgrad, capturable) torch reads as False; here null is
// refused for every boolean (booleanOption, as the param groups already did).
const TORCH_REFUSES: Record<string, string[]> = {
  SGD: ['lr', 'momentum', 'weightDecay'],
  Adam: ['lr', 'betas', 'eps', 'weightDecay'],
  AdamW: ['lr', 'betas', 'eps', 'weightDecay'],
  LBFGS: ['lr', 'maxIter', 'toleranceGrad', 'toleranceChange', 'historySize'],
};
const BOOLEANS: Record<string, string[]> = {
  SGD: ['nesterov', 'maximize'], Adam: ['amsgrad', 'maximize', 'capturable'], AdamW: ['amsgrad', 'maximize', 'capturable'], LBFGS: [],
};
// torch's SGD takes dampening=None until a momentum step reads it (a TypeError there); refused at once here.
const REFUSED_SOONER: Record<string, string[]> = { SGD: ['dampening'], Adam: [], AdamW: [], LBFGS: [] };
const TORCH_DEFAULTS: Record<string, [string, unknown][]> = {
  SGD: [['foreach', null], ['fused', null]],
  Adam: [['foreach', null], ['fused', null]],
  AdamW: [],
  LBFGS: [['maxEval', 25], ['lineSearchFn', null]],
};

test('optimizers refuse a null option as their param groups do, naming the optimizer and the option', (t) => {
  gx.tidy(() => {
    const w = gx.zeros([2]).requiresGrad_();
    for (const [name, make] of Object.entries(MAKERS)) {
      for (const key of [...TORCH_REFUSES[name], ...BOOLEANS[name], ...REFUSED_SOONER[name]]) {
        const kind = BOOLEANS[name].includes(key) ? 'a boolean' : key === 'betas' ? 'two numbers \\[beta1, beta2\\]' : 'a number';
        const message = new RegExp(`^gx\\.optim\\.${name}: ${key} must be ${kind}, got null$`);
        t.throws(() => make([w], { [key]: null }), { instanceOf: TypeError, message }, `${name} ${key}`);
        if (name !== 'LBFGS') {  // LBFGS takes one group only
          t.throws(() => make([{ params: [w], [key]: null } as never], {}), { instanceOf: TypeError, message }, `${name} group ${key}`);
        }
      }
      for (const [key, value] of TORCH_DEFAULTS[name]) {
        const opt = make([w], { [key]: null });
        t.is((opt.paramGroups[0] as Record<string, unknown>)[key], value, `${name} ${key}: null is the default, as torch's None`);
        opt.dispose();
      }
    }
  });
});

test('options left out or undefined still take the defaults, and given ones are kept', (t) => {
  gx.tidy(() => {
    const w = gx.zeros([2]).requiresGrad_();
    const sgd = new gx.optim.SGD([w], { lr: undefined, momentum: 0.5 });
    t.like(sgd.paramGroups[0], { lr: 1e-3, momentum: 0.5, dampening: 0, weightDecay: 0, nesterov: false, maximize: false, foreach: null, fused: null });
    const adamw = new gx.optim.AdamW([w], { betas: [0.8, 0.9] });
    t.like(adamw.paramGroups[0], { lr: 1e-3, betas: [0.8, 0.9], eps: 1e-8, weightDecay: 1e-2, amsgrad: false, capturable: false });
    const lbfgs = new gx.optim.LBFGS([w], { maxIter: 8 });
    t.like(lbfgs.paramGroups[0], { lr: 1, maxIter: 8, maxEval: 10, historySize: 100, lineSearchFn: null });
    for (const o of [sgd, adamw, lbfgs]) o.dispose();
  });
});

// The schedulers' defaults too: null was read as the default (LinearLR's totalIters, OneCycleLR's
// annealStrategy and per-group momenta), and OneCycleLR without maxLr (torch's required max_lr) set every lr to NaN.
test('schedulers refuse a null option and a missing maxLr, naming the scheduler and the option', (t) => {
  gx.tidy(() => {
    const p = gx.randn([2]).requiresGrad_();
    const opt = new gx.optim.SGD([p], { lr: 0.1, momentum: 0.9 });
    const S = gx.optim.lrScheduler;
    const cases: [() => unknown, RegExp][] = [
      [() => new S.LinearLR(opt, { totalIters: null as unknown as number }), /^gx\.optim\.lrScheduler\.LinearLR: argument 'totalIters' must be an integer > 0, got null/],
      [() => new S.OneCycleLR(opt, { totalSteps: 10, maxLr: 1, annealStrategy: null as unknown as 'cos' }), /^gx\.optim\.lrScheduler\.OneCycleLR: annealStrategy must be 'cos' or 'linear', got null/],
      [() => new S.OneCycleLR(opt, { totalSteps: 10, maxLr: 1, maxMomentum: null as unknown as number }), /^gx\.optim\.lrScheduler\.OneCycleLR: argument 'maxMomentum' must be a finite number, got null/],
      [() => new S.OneCycleLR(opt, { totalSteps: 10 } as unknown as { totalSteps: number; maxLr: number }), /^gx\.optim\.lrScheduler\.OneCycleLR: give 'maxLr'/],
    ];
    for (const [make, message] of cases) t.throws(make, { message });
    t.is(opt.paramGroups[0].lr, 0.1, 'the refused schedulers left the lr alone');
    const s = new S.OneCycleLR(opt, { totalSteps: 10, maxLr: 1 });
    t.is(opt.paramGroups[0].lr, 0.040000000000000036, 'torch 2.13 gives 0.040000000000000036 (maxLr / divFactor through the cosine at step 0)');
    t.is(s.totalSteps, 10);
  });
});
