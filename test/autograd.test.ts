// Autograd on every device: gradients of the elementwise ops (formulas from
// ops/op-list.js), reductions with and without keepdims, broadcasting,
// where, clamp, views and reshapes, against central finite differences in
// float64; accumulation into .grad, noGrad, detach; the errors (backward
// twice through a freed graph, a non-float tensor, in-place on a saved
// tensor); no tensor left behind.
import * as gx from '../lib';
import { deviceTestSerial } from './helpers';

/** d sum(f(x) * w) / dx by central differences, element by element (float64). */
function numericGrad(f: (x: gx.Tensor) => gx.Tensor, x0: number[], shape: number[], w: gx.Tensor, device: string): number[] {
  const h = 1e-6;
  return x0.map((_, i) => gx.tidy(() => {
    const at = (d: number): number => {
      const v = x0.slice();
      v[i] += d;
      return gx.noGrad(() => gx.sum(gx.mul(f(gx.tensor(v, { dtype: 'float64', device }).reshape(shape)), w)).item() as number);
    };
    return (at(h) - at(-h)) / (2 * h);
  }));
}

function check(t: import('ava').ExecutionContext, name: string, f: (x: gx.Tensor) => gx.Tensor, x0: number[], shape: number[], device: string): void {
  gx.tidy(() => {
    const x = gx.tensor(x0, { dtype: 'float64', device }).reshape(shape);
    x.requiresGrad = true;
    const y = f(x);
    const w = gx.noGrad(() => gx.rand(y.shape as number[], { dtype: 'float64', device }).add(0.5));
    gx.sum(gx.mul(y, w)).backward();
    const got = Array.from(x.grad?.toArraySync() as Float64Array);
    const want = numericGrad(f, x0, shape, w, device);
    const worst = Math.max(...got.map((g, i) => Math.abs(g - want[i]) / Math.max(1, Math.abs(want[i]))));
    t.true(worst <= 1e-6, `${name}: worst relative error ${worst} (got ${got.slice(0, 4)}, want ${want.slice(0, 4)})`);
    x.grad?.dispose();
  });
}

const xs = [0.3, -1.2, 0.7, 1.9, -0.4, 2.2];

deviceTestSerial('autograd: every differentiable elementwise op, reduction, where, clamp and view matches finite differences', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const pos = xs.map((v) => Math.abs(v) + 0.1);
  const other = (): gx.Tensor => gx.tensor([0.5, -0.25, 1.5], { dtype: 'float64', device });
  for (const name of ['add', 'sub', 'mul', 'div', 'maximum', 'minimum'] as const) {
    check(t, `${name} (broadcast)`, (x) => gx[name](x, other()), xs, [2, 3], device);
    check(t, `${name} (other side)`, (x) => gx[name](other(), x), xs, [2, 3], device);
    check(t, `${name} with a number`, (x) => gx[name](x, 0.7), xs, [2, 3], device);
  }
  check(t, 'pow', (x) => gx.pow(x, other().abs()), pos, [2, 3], device);
  check(t, 'pow (exponent)', (x) => gx.pow(1.7, x), xs, [2, 3], device);
  check(t, 'sub from a number', (x) => gx.sub(1, x), xs, [6], device);
  for (const name of ['exp', 'tanh', 'sigmoid', 'sin', 'cos', 'neg', 'abs', 'relu', 'gelu', 'softplus'] as const) check(t, name, (x) => gx[name](x), xs, [6], device);
  for (const name of ['log', 'log1p', 'sqrt', 'rsqrt'] as const) check(t, name, (x) => gx[name](x), pos, [6], device);
  check(t, 'sum', (x) => gx.sum(x), xs, [2, 3], device);
  check(t, 'sum axis 0', (x) => gx.sum(x, 0), xs, [2, 3], device);
  check(t, 'sum keepdims', (x) => gx.sum(x, 1, { keepdims: true }), xs, [2, 3], device);
  check(t, 'mean', (x) => gx.mean(x, 1), xs, [2, 3], device);
  check(t, 'max', (x) => gx.max(x, 0), xs, [2, 3], device);
  check(t, 'min keepdims', (x) => gx.min(x, 1, { keepdims: true }), xs, [2, 3], device);
  check(t, 'prod', (x) => gx.prod(x, 1), xs, [2, 3], device);
  check(t, 'where', (x) => gx.where(gx.noGrad(() => gx.gt(x, 0)), x, gx.mul(x, x)), xs, [6], device);
  check(t, 'clamp', (x) => gx.clamp(x, -0.5, 1), xs, [6], device);
  check(t, 'reshape, transpose copy, contiguous', (x) => x.reshape(3, 2).contiguous().mul(x.reshape(3, 2)), xs, [2, 3], device);
  const m = (rows: number, cols: number, seed: number): gx.Tensor =>
    gx.tensor(Array.from({ length: rows * cols }, (_, i) => Math.sin(i * 1.3 + seed)), { dtype: 'float64', device }).reshape(rows, cols);
  check(t, 'matmul', (x) => gx.matmul(x, m(3, 4, 1)), xs, [2, 3], device);
  check(t, 'matmul (right)', (x) => gx.matmul(m(4, 2, 2), x), xs, [2, 3], device);
  check(t, 'matmul vector @ matrix', (x) => gx.matmul(x, m(6, 2, 3)), xs, [6], device);
  check(t, 'matmul matrix @ vector', (x) => gx.matmul(m(2, 6, 4), x), xs, [6], device);
  check(t, 'matmul batched, broadcast', (x) => gx.matmul(x, m(3, 2, 5).reshape(1, 3, 2).expand([4, 3, 2])), xs, [2, 3], device);
  check(t, 'matmul of itself', (x) => gx.matmul(x, x.transpose(0, 1)), xs, [2, 3], device);
  check(t, 'softmax', (x) => gx.softmax(x, 1), xs, [2, 3], device);
  check(t, 'logSoftmax', (x) => gx.logSoftmax(x, 0), xs, [2, 3], device);
  check(t, 'logsumexp', (x) => gx.logsumexp(x, 1), xs, [2, 3], device);
  check(t, 'var', (x) => gx.var(x, 1), xs, [2, 3], device);
  check(t, 'std keepdims', (x) => gx.std(x, 0, { keepdims: true }), xs, [2, 3], device);
  check(t, 'cumsum', (x) => gx.cumsum(x, 1), xs, [2, 3], device);
  check(t, 'transpose', (x) => gx.transpose(x, 0, 1).mul(m(3, 2, 6)), xs, [2, 3], device);
  check(t, 'permute', (x) => gx.permute(x, [2, 0, 1]).mul(m(3, 2, 7).reshape(3, 2, 1)), xs, [2, 1, 3], device);
  check(t, 'squeeze and unsqueeze', (x) => gx.unsqueeze(gx.squeeze(x), 0).mul(2), xs, [2, 1, 3], device);
  check(t, 'expand', (x) => gx.expand(x, [4, 2, 3]).mul(m(8, 3, 8).reshape(4, 2, 3)), xs, [2, 3], device);
  check(t, 'narrow', (x) => gx.narrow(x, 1, 1, 2).mul(3), xs, [2, 3], device);
  check(t, 'slice with a step', (x) => gx.slice(x, 0, 1, null, 2), xs, [6], device);
  check(t, 'sliceDims', (x) => gx.sliceDims(x, 1, [0, 3, 2]), xs, [2, 3], device);
  check(t, 'flatten', (x) => gx.flatten(x).mul(m(1, 6, 9).reshape(6)), xs, [2, 3], device);
  check(t, 'cat', (x) => gx.cat([x, gx.mul(x, x), m(1, 3, 10)], 0), xs, [2, 3], device);
  check(t, 'stack', (x) => gx.stack([x, gx.exp(x)], 1), xs, [2, 3], device);
  check(t, 'a chain', (x) => gx.sum(gx.exp(gx.mul(gx.tanh(x), 0.5)), 0).mul(gx.mean(x)), xs, [2, 3], device);
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('autograd: .grad accumulates, noGrad and detach record nothing, errors say why', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const w = gx.tensor([1, 2, 3], { device }).requiresGrad_();
    t.true(w.requiresGrad && w.isLeaf);
    const y = gx.mul(w, w).sum();
    t.is(y.gradFn, 'sum');
    t.false(y.isLeaf);
    y.backward(null, { retainGraph: true });
    y.backward();
    t.deepEqual(Array.from(w.grad?.toArraySync() as Float32Array), [4, 8, 12], 'two backward passes accumulate 2 w twice');
    t.throws(() => y.backward(), { message: /Tensor.backward: trying to go through sum's part of the graph a second time.*retainGraph/ });
    t.false(gx.noGrad(() => gx.mul(w, 2)).requiresGrad);
    t.false(w.detach().requiresGrad);
    t.throws(() => { gx.arange(3).requiresGrad = true; }, { message: /only floating tensors can require grad, this one is int64/ });
    t.throws(() => gx.mul(w, 2).backward(), { message: /a gradient is needed for a tensor of 3 elements/ });
    t.throws(() => w.mul_(2), { message: /Tensor.mul_: an in-place op or out= on tensors that require grad cannot be recorded/ });
    const a = gx.tensor([1, 2], { device }).requiresGrad_();
    const b = gx.tensor([3, 4], { device });
    const c = gx.mul(a, b);
    b.mul_(2);
    t.throws(() => c.sum().backward(), { message: /a tensor mul saved \(its second\) was modified in place after it was saved/ });
    const h = gx.tensor([0.5, 1.5], { dtype: 'float64', device }).requiresGrad_();
    h.astype('float32').mul(3).astype('float64').sum().backward();
    t.deepEqual(Array.from(h.grad?.toArraySync() as Float64Array), [3, 3], 'astype passes the gradient through, cast back');
    t.is(h.grad?.dtype, 'float64');
    gx.noGrad(() => w.sub_(1));
    t.deepEqual(Array.from(w.toArraySync() as Float32Array), [0, 1, 2], 'noGrad allows the optimizer\'s in-place step');
    w.grad = null;
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'the tape freed what it saved');
});
