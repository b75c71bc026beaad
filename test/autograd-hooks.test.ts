// retainGrad() and registerHook() as torch's, and backward({ createGraph })
// (a gradient differentiated again), on every device in float64 against
// gradients worked out by hand on random inputs.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTestSerial, rng } from './helpers';

const values = (t: gx.Tensor | null): number[] => (t === null ? [] : Array.from(t.toArraySync() as Float64Array, Number));

function near(t: ExecutionContext, got: readonly number[], want: readonly number[], what: string): void {
  const worst = Math.max(...want.map((w, i) => Math.abs(got[i] - w) / Math.max(1, Math.abs(w))));
  t.true(got.length === want.length && worst <= 1e-12, `${what}: got ${got.join(', ')}, want ${want.join(', ')}`);
}

function random(n: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => (r() - 0.5) * 4);
}

deviceTestSerial('retainGrad keeps a non-leaf tensor\'s gradient, added up over backward calls, as torch\'s', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const xs = random(6, 1), cs = random(6, 2);
    const x = gx.tensor(xs, { dtype: 'float64', device }).requiresGrad_();
    const c = gx.tensor(cs, { dtype: 'float64', device });
    const h = gx.mul(x, x), k = gx.mul(x, 2);
    h.retainGrad();
    h.retainGrad();  // twice: the same
    t.true(h.retainsGrad);
    t.false(k.retainsGrad);
    gx.sum(gx.mul(h, c)).backward(null, { retainGraph: true });
    near(t, values(h.grad), cs, 'h.grad = c');
    near(t, values(x.grad), xs.map((v, i) => 2 * v * cs[i]), 'x.grad = 2 x c');
    t.is(k.grad, null, 'a non-leaf that did not ask keeps no gradient');
    // A second graph through h: h.grad adds up.
    gx.sum(gx.mul(gx.mul(h, c), 3)).backward();
    near(t, values(h.grad), cs.map((v) => 4 * v), 'h.grad = c + 3 c');
    // A leaf: no-op (its .grad is kept anyway); a tensor that does not require grad: an error.
    x.retainGrad();
    t.false(x.retainsGrad);
    t.throws(() => c.retainGrad(), { message: /^Tensor\.retainGrad: the tensor does not require grad/ });
    // The retained gradient goes with the tensor.
    const g = h.grad as gx.Tensor;
    h.dispose();
    t.true(g.isDisposed);
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('registerHook: called with the summed gradient, may replace it, in order, removable; a leaf\'s before .grad', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const xs = random(5, 3), cs = random(5, 4), ds = random(5, 5);
    const x = gx.tensor(xs, { dtype: 'float64', device }).requiresGrad_();
    const c = gx.tensor(cs, { dtype: 'float64', device }), d = gx.tensor(ds, { dtype: 'float64', device });
    const h = gx.sin(x);
    const seen: number[][] = [];
    // h is used twice: its hook runs once, on the sum of both gradients.
    const first = h.registerHook((g) => { seen.push(values(g)); return gx.mul(g, 3); });
    h.registerHook((g) => { seen.push(values(g)); });  // returns nothing: the gradient stays
    h.retainGrad();  // registered before the next hook, taken after all (NOTE [ Hook order ])
    h.registerHook((g) => gx.add(g, 1));
    const leafSeen: number[][] = [];
    const onLeaf = x.registerHook((g) => { leafSeen.push(values(g)); return gx.mul(g, 0.5); });
    const loss = (): gx.Tensor => gx.add(gx.sum(gx.mul(h, c)), gx.sum(gx.mul(h, d)));
    loss().backward(null, { retainGraph: true });
    const sum = cs.map((v, i) => v + ds[i]);
    t.is(seen.length, 2, 'each hook of h once');
    near(t, seen[0], sum, 'the first hook gets c + d');
    near(t, seen[1], sum.map((v) => 3 * v), 'the second gets the first\'s result');
    const hGrad = sum.map((v) => 3 * v + 1);
    near(t, values(h.grad), hGrad, 'the retained gradient is the last hook\'s');
    near(t, leafSeen[0], hGrad.map((v, i) => v * Math.cos(xs[i])), 'the leaf\'s hook gets its gradient');
    near(t, values(x.grad), hGrad.map((v, i) => 0.5 * v * Math.cos(xs[i])), 'x.grad is the leaf hook\'s result');
    // Removed hooks are not called again (remove() twice: nothing).
    first.remove();
    first.remove();
    onLeaf.remove();
    x.grad = null;
    h.grad = null;
    loss().backward(null, { retainGraph: true });
    t.is(seen.length, 3, 'the removed hook was not called');
    near(t, values(x.grad), sum.map((v, i) => (v + 1) * Math.cos(xs[i])), 'x.grad without the removed hooks');
    // Errors name the method.
    t.throws(() => c.registerHook((g) => g), { message: /^Tensor\.registerHook: the tensor does not require grad/ });
    t.throws(() => x.registerHook(42 as unknown as gx.autograd.GradHook), { instanceOf: TypeError, message: /^Tensor\.registerHook: hook must be a function/ });
    const bad = x.registerHook(() => gx.zeros([2], { dtype: 'float64', device }));
    t.throws(() => loss().backward(), { message: /Tensor\.registerHook: a hook returned a gradient of shape \[2\], float64 .* for one of shape \[5\]/ });
    bad.remove();
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('backward({ createGraph }) records the backward pass: the gradient differentiates again', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const xs = random(4, 6), ws = random(4, 7);
    const x = gx.tensor(xs, { dtype: 'float64', device }).requiresGrad_();
    const w = gx.tensor(ws, { dtype: 'float64', device }).requiresGrad_();
    // f = sum(w x^3 + sin(x) w): df/dx = 3 w x^2 + cos(x) w; d/dx sum(df/dx) = 6 w x - sin(x) w, d/dw sum(df/dx) = 3 x^2 + cos(x).
    gx.sum(gx.add(gx.mul(w, gx.pow(x, 3)), gx.mul(gx.sin(x), w))).backward(null, { createGraph: true });
    const gxv = (x.grad as gx.Tensor).clone();  // (setting x.grad below frees the original)
    t.true(gxv.requiresGrad, 'the gradient is part of a graph');
    near(t, values(gxv), xs.map((v, i) => 3 * ws[i] * v * v + Math.cos(v) * ws[i]), 'df/dx');
    x.grad = null;
    w.grad = null;
    gx.sum(gxv).backward();
    near(t, values(x.grad), xs.map((v, i) => 6 * ws[i] * v - Math.sin(v) * ws[i]), 'd2f/dx2 (summed)');
    near(t, values(w.grad), xs.map((v) => 3 * v * v + Math.cos(v)), 'd2f/dxdw (summed)');
    t.throws(() => gx.sum(x).backward(null, { createGraph: 1 as unknown as boolean }), { instanceOf: TypeError, message: 'Tensor.backward: createGraph must be a boolean, got number 1' });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});
