// In-place ops under autograd, as torch records them (NOTE [ Autograd and in-place ops ] in
// lib/tape/graph.ts): each records as its out-of-place form and a copy into self, through a view as
// its base's new history (torch's CopySlices); a tensor outside the graph joins it; a leaf that
// requires grad, a view of one and a view made under noGrad are refused; a saved tensor written in
// place refuses backward; out= stays refused (set and indexPut_: test/indexput-grad.test.ts). The expected figures are torch 2.13's (CPU, float64),
// from the same inputs: X = [0.3, -1.2, 2.5, 0.7], Y = [1.5, 0.4, -0.8, 2.0], losses weighted by W = [1, 2, 3, 4].
import test from 'ava';

import * as gx from '../lib';
import { deviceTestSerial, type TestDevice } from './helpers';

const X = [0.3, -1.2, 2.5, 0.7], Y = [1.5, 0.4, -0.8, 2.0];
const leaf = (v: number[], device: TestDevice): gx.Tensor => gx.tensor(v, { dtype: 'float64', device }).requiresGrad_();
/** sum(h * [1, 2, 3, 4]) backward: a distinct gradient per element. */
const backwardWeighted = (h: gx.Tensor): void => gx.mul(h, gx.tensor([1, 2, 3, 4], { dtype: 'float64', device: h.device })).sum().backward();
const grad = (t: gx.Tensor): number[] => {
  if (t.grad === null) throw new Error('no gradient');
  return Array.from(t.grad.toArraySync() as Float64Array);
};
const close = (t: { true(c: boolean, m?: string): void }, got: number[], want: number[]): void => {
  t.true(got.length === want.length && got.every((g, i) => Math.abs(g - want[i]) <= 1e-9 * (1 + Math.abs(want[i]))), `${got} vs ${want}`);
};

deviceTestSerial('binary in-place ops record: add_, mul_, sub_, div_ give x and y torch\'s gradients', (t, device) => {
  gx.tidy(() => {
    const x = leaf(X, device), y = leaf(Y, device);
    const h = gx.mul(x, 2);
    t.is(h.add_(y), h);
    t.is(h.gradFn, 'add_');
    h.mul_(y).sub_(x).div_(y);
    t.true(h.requiresGrad);
    t.false(h.isLeaf);
    backwardWeighted(h);
    close(t, grad(x), [1.3333333333333335, -1.0, 9.75, 6.0]);
    close(t, grad(y), [1.133333333333333, -12.999999999999998, 14.71875, 4.7]);
  });
});

deviceTestSerial('unary in-place ops record: exp_, relu_, sigmoid_, and pow_ with a tensor exponent', (t, device) => {
  gx.tidy(() => {
    const x = leaf(X, device);
    const h = gx.mul(x, 1);
    h.exp_();
    const s = gx.sin(h);
    s.relu_();
    t.is(s.gradFn, 'relu_');
    backwardWeighted(gx.tanh(s));
    close(t, grad(x), [0.12888792466536783, 0.5274712283674874, 0.0, -1.672680998301243]);
  });
  gx.tidy(() => {
    const x = leaf(X, device);
    const h = gx.mul(x, 1);
    h.sigmoid_();
    backwardWeighted(gx.sqrt(h));
    close(t, grad(x), [0.16126923440909677, 0.36975165514675545, 0.10938631444167647, 0.5424649018190343]);
  });
  gx.tidy(() => {
    const x = leaf([0.5, 1.5, 2.0, 0.8], device), y = leaf(Y, device);
    const h = gx.mul(x, 1);
    h.pow_(y);  // pow saves its base: the copy of h taken before the write, which the write leaves alone
    backwardWeighted(h);
    close(t, grad(x), [1.0606601717798214, 0.6272421453464926, -0.689219012998221, 6.4]);
    close(t, grad(y), [-0.2450645358671368, 0.9537180160234221, 1.194325539120063, -0.5712474913643769]);
  });
});

deviceTestSerial('clamp_ records: the gradient passes inside the bounds', (t, device) => {
  gx.tidy(() => {
    const x = leaf(X, device);
    const h = gx.mul(x, 1);
    h.clamp_(-1, 1);
    t.is(h.gradFn, 'clamp_');
    t.deepEqual(Array.from(h.toArraySync() as Float64Array), [0.3, -1, 1, 0.7]);
    backwardWeighted(h);
    close(t, grad(x), [1, 0, 0, 4]);
  });
  gx.tidy(() => {
    const x = leaf(X, device);
    const h = gx.mul(x, 3);
    h.clamp_({ min: 0.5 });
    backwardWeighted(h);
    close(t, grad(x), [3, 0, 9, 12]);
  });
});

deviceTestSerial('an in-place op through a view rewrites its base\'s history (torch\'s CopySlices)', (t, device) => {
  gx.tidy(() => {
    const x = leaf(X, device);
    const h = gx.mul(x, 2);
    const v = h.narrow(0, 1, 2);
    v.mul_(3);
    t.is(h.gradFn, 'mul_');
    t.deepEqual(Array.from(h.toArraySync() as Float64Array), [0.6, -7.199999999999999, 15, 1.4]);
    backwardWeighted(h);
    close(t, grad(x), [2, 12, 18, 8]);
  });
  gx.tidy(() => {
    const x = leaf(X, device), y = leaf([0.5, -2], device);
    const h = gx.mul(x, x);
    h.narrow(0, 1, 2).add_(y).exp_();  // the view's own history follows its base's between the two writes
    backwardWeighted(h);
    close(t, grad(x), [0.6, -33.4020046590589, 1051.581185200318, 5.6]);
    close(t, grad(y), [13.917501941274542, 210.31623704006358]);
  });
});

deviceTestSerial('a tensor that does not require grad joins the graph when an input that does is written into it', (t, device) => {
  gx.tidy(() => {
    const w = leaf(X, device);
    const z = gx.zeros([4], { dtype: 'float64', device });
    z.add_(w);
    t.true(z.requiresGrad);
    t.false(z.isLeaf);
    t.is(z.gradFn, 'add_');
    z.mul_(w);
    backwardWeighted(z);
    close(t, grad(w), [0.6, -4.8, 15, 5.6]);
  });
  gx.tidy(() => {
    const w = leaf([1.5, -0.5], device);
    const z = gx.zeros([4], { dtype: 'float64', device });
    const v = z.narrow(0, 1, 2);
    v.add_(w);
    v.mul_(w);
    t.deepEqual(Array.from(z.toArraySync() as Float64Array), [0, 2.25, 0.25, 0]);
    backwardWeighted(z);
    close(t, grad(w), [6, -3]);
  });
});

deviceTestSerial('scatterAdd_ and indexAdd_ record as their out-of-place forms', (t, device) => {
  gx.tidy(() => {
    const x = leaf(X, device), s = leaf([1, 2, 3], device);
    const h = gx.mul(x, 1);
    h.scatterAdd_(0, gx.tensor([3, 0, 3], { dtype: 'int64', device }), s);
    backwardWeighted(h);
    close(t, grad(x), [1, 2, 3, 4]);
    close(t, grad(s), [4, 1, 4]);
  });
  gx.tidy(() => {
    const x = leaf(X, device), s = leaf([1, 2], device);
    const h = gx.mul(x, 1);
    h.indexAdd_(0, gx.tensor([2, 0], { dtype: 'int64', device }), s);
    backwardWeighted(gx.mul(h, h));
    close(t, grad(x), [4.6, -4.8, 21, 5.6]);
    close(t, grad(s), [21, 4.6]);
  });
});

deviceTestSerial('a leaf that requires grad, a view of one, and a view made under noGrad are refused; under noGrad a leaf is written', (t, device) => {
  gx.tidy(() => {
    const w = leaf(X, device);
    t.throws(() => w.add_(1), { message: /^Tensor\.add_: self is a leaf tensor that requires grad/ });
    t.throws(() => w.narrow(0, 0, 2).relu_(), { message: /^Tensor\.relu_: self is a view of a leaf tensor that requires grad/ });
    t.throws(() => w.clamp_(0, 1), { message: /^Tensor\.clamp_: self is a leaf tensor/ });
    t.deepEqual(Array.from(w.toArraySync() as Float64Array), X);  // refused before anything was written
    gx.noGrad(() => w.add_(1));
    close(t, Array.from(w.toArraySync() as Float64Array), X.map((v) => v + 1));
    t.true(w.isLeaf);
    const h = gx.mul(w, 2);
    const v = gx.noGrad(() => h.narrow(0, 1, 2));
    t.throws(() => v.mul_(3), { message: /^Tensor\.mul_: self is a view made under gx\.noGrad\(\) of a tensor autograd records/ });
  });
});

deviceTestSerial('a saved tensor written in place refuses backward (the version counter), as torch\'s', (t, device) => {
  gx.tidy(() => {
    const x = leaf([1, 2], device);
    const out = x.exp();  // exp saves its result
    out.add_(1);
    t.throws(() => out.sum().backward(), { message: /a tensor exp saved \(its first\) was modified in place after it was saved/ });
  });
  gx.tidy(() => {
    const x = leaf([1, 2], device);
    const h = gx.mul(x, 1);
    h.mul_(h);  // mul saves other, self itself, which its own write then changes (torch refuses it too)
    t.throws(() => h.sum().backward(), { message: /a tensor mul saved \(its second\) was modified in place/ });
  });
});

deviceTestSerial('out= with inputs that require grad stays refused; an in-place op whose twin has no derivative refuses naming itself', (t, device) => {
  gx.tidy(() => {
    const x = leaf(X, device);
    t.throws(() => gx.add(x, 1, { out: gx.zeros([4], { dtype: 'float64', device }) }), { message: /^gx\.add: an in-place op or out= on tensors that require grad cannot be recorded/ });
    const h = gx.mul(x, 1);
    t.throws(() => h.floorDivide_(2), { message: /^Tensor\.floorDivide_: the derivative is not implemented/ });
    t.deepEqual(Array.from(h.toArraySync() as Float64Array), X);
  });
});

test('an in-place op on tensors outside the graph records nothing and frees what it made', (t) => {
  const live = gx.memory.stats('cpu').liveTensors;
  const a = gx.tensor([1, 2, 3]);
  a.mul_(2).exp_().clamp_(0, 10);
  t.is(a.ag, undefined);
  t.is(a.gradFn, null);
  a.dispose();
  gx.tidy(() => {
    const x = leaf(X, 'cpu');
    const h = gx.mul(x, 2);
    h.add_(1);
    backwardWeighted(h);
  });
  t.is(gx.memory.stats('cpu').liveTensors, live);
});
