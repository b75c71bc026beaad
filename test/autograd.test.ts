// Autograd on every device: gradients of the elementwise ops (formulas from
// ops/op-list.js), reductions with and without keepdims, broadcasting,
// where, clamp, views and reshapes, against central finite differences in
// float64; accumulation into .grad, noGrad, detach; the errors (backward
// twice through a freed graph, a non-float tensor, in-place on a saved
// tensor); no tensor left behind.
import test from 'ava';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

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
  check(t, 'remainder', (x) => gx.remainder(x, 0.65), xs, [6], device);  // (no x on a jump of the sawtooth)
  check(t, 'remainder (divisor)', (x) => gx.remainder(2.3, x), xs.map((v) => Math.abs(v) + 0.3), [6], device);
  for (const name of ['exp', 'tanh', 'sigmoid', 'sin', 'cos', 'neg', 'abs', 'relu', 'gelu', 'softplus'] as const) check(t, name, (x) => gx[name](x), xs, [6], device);
  for (const name of ['log', 'log1p', 'sqrt', 'rsqrt'] as const) check(t, name, (x) => gx[name](x), pos, [6], device);
  check(t, 'sum', (x) => gx.sum(x), xs, [2, 3], device);
  check(t, 'sum axis 0', (x) => gx.sum(x, 0), xs, [2, 3], device);
  check(t, 'sum keepdims', (x) => gx.sum(x, 1, { keepdims: true }), xs, [2, 3], device);
  check(t, 'mean', (x) => gx.mean(x, 1), xs, [2, 3], device);
  check(t, 'amax', (x) => gx.amax(x, 0), xs, [2, 3], device);
  check(t, 'amin keepdims', (x) => gx.amin(x, 1, { keepdims: true }), xs, [2, 3], device);
  check(t, 'max along an axis: its values', (x) => gx.max(x, 0).values, xs, [2, 3], device);
  check(t, 'min of all', (x) => gx.min(x), xs, [2, 3], device);
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
    t.throws(() => w.mul_(2), { message: /^Tensor\.mul_: self is a leaf tensor that requires grad, and an in-place op on a leaf cannot be recorded/ });
    const a = gx.tensor([1, 2], { device }).requiresGrad_();
    const b = gx.tensor([3, 4], { device });
    const c = gx.mul(a, b);
    b.mul_(2);
    t.throws(() => c.sum().backward(), { message: /a tensor mul saved \(its first\) was modified in place after it was saved/ });
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

deviceTestSerial('autograd: intermediates disposed before backward (a forward in gx.tidy) keep every gradient', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const w = gx.tensor([[0.3, -1.2, 0.7], [1.9, -0.4, 2.2]], { dtype: 'float64', device }).requiresGrad_();
  const x = gx.tensor([[0.5, -0.25], [1.5, 2], [-1, 0.75]], { dtype: 'float64', device });
  // Every formula family on an intermediate: binary, where, matmul, reductions, astype, reshape, the layout ops, a Function.
  class Twice extends gx.autograd.Function {
    static override forward(_ctx: gx.autograd.FunctionContext, v: gx.Tensor): gx.Tensor { return gx.mul(v, 2); }
    static override backward(_ctx: gx.autograd.FunctionContext, g: gx.Tensor): gx.Tensor[] { return [gx.mul(g, 2)]; }
  }
  const f = (v: gx.Tensor): gx.Tensor => {
    const a = gx.mul(v, 3);
    const m = gx.matmul(a, x);
    const s = gx.add(gx.sum(gx.where(gx.noGrad(() => gx.gt(a, 0)), a, gx.mul(a, a)), 0), gx.amax(a, 0));
    const layout = gx.cat([gx.narrow(a, 1, 0, 2), gx.transpose(m, 0, 1)], 1).reshape(-1).unsqueeze(0).squeeze(0);
    return gx.add(gx.sum(layout.astype('float32').astype('float64')), gx.add(gx.sum(gx.var(a, 1)), gx.sum(gx.mul(s, Twice.apply(a)))));
  };
  const gradOf = (v: gx.Tensor): number[] => Array.from((v.grad as gx.Tensor).toArraySync() as Float64Array);
  const want = gx.tidy(() => {  // the intermediates live until after backward
    f(w).backward();
    return gradOf(w);
  });
  w.grad = null;
  const tidied = gx.tidy(() => f(w));  // every intermediate disposed before backward
  tidied.backward();
  t.deepEqual(gradOf(w), want);
  tidied.dispose();
  // A saved operand that needs no gradient (a constant) and a node's own saved result (exp's), disposed before backward.
  w.grad = null;
  const cv = [2, -1, 0.5, 1, 3, -2];
  const c = gx.tensor(cv, { dtype: 'float64', device, shape: [2, 3] });
  const wc = gx.mul(w, c);
  const e = gx.exp(wc);
  const l = gx.sum(e);
  c.dispose();
  wc.dispose();
  e.dispose();
  l.backward();
  l.dispose();
  const wv = [0.3, -1.2, 0.7, 1.9, -0.4, 2.2];
  gradOf(w).forEach((g, i) => t.true(Math.abs(g - cv[i] * Math.exp(wv[i] * cv[i])) <= 1e-12 * Math.max(1, Math.abs(g)), `d/dw sum(exp(w c)) [${i}]`));
  w.dispose();
  x.dispose();
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('autograd: a tensor many nodes saved lives on as one alias once disposed, and each of them sees its in-place writes', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const count = (): number => gx.memory.stats(device).liveTensors;
  const random = (n: number): number[] => Array.from({ length: n }, () => (Math.random() < 0.5 ? -1 : 1) * (0.5 + Math.random()));
  const xv = random(4), cv = random(4), n = 20;
  const x = gx.tensor(xv, { dtype: 'float64', device }).requiresGrad_();
  const c = gx.tensor(cv, { dtype: 'float64', device });
  // The intermediates are disposed (mul saves only c, the operand whose gradient is not needed); each of the n nodes saved c.
  const y = gx.tidy(() => {
    let v = x;
    for (let i = 0; i < n; i++) v = gx.mul(v, c);
    return gx.sum(v);
  });
  const held = count();
  c.dispose();
  t.is(count(), held, 'c disposed: one alias of it stands in for all the nodes that saved it');
  y.backward();
  const got = Array.from(x.grad?.toArraySync() as Float64Array);
  got.forEach((g, i) => t.true(Math.abs(g - cv[i] ** n) <= 1e-12 * Math.abs(cv[i] ** n), `d/dx sum(x c^${n}) [${i}]: ${g} vs ${cv[i] ** n}`));
  t.is(count(), held, 'the backward freed the alias with the last node that held it (x.grad came)');
  // Saved by nodes that a backward already freed: disposing it makes no alias.
  const d = gx.tensor(random(4), { dtype: 'float64', device });
  const z = gx.tidy(() => gx.sum(gx.mul(gx.mul(x, d), d)));
  z.backward();
  const before = count();
  d.dispose();
  t.is(count(), before - 1, 'no alias made for a tensor no node holds any more');
  // Written in place after two nodes saved it: the first node the backward reaches says so.
  const b = gx.tensor(random(4), { dtype: 'float64', device });
  const r = gx.tidy(() => gx.add(gx.sum(gx.mul(x, b)), gx.sum(gx.mul(gx.exp(x), b))));
  gx.noGrad(() => b.mul_(2));
  t.throws(() => r.backward(), { message: /a tensor mul saved \(its first\) was modified in place after it was saved \(version 1, saved at 0\)/ });
  for (const v of [r, b, z, y, x]) v.dispose();
  t.is(count(), live, 'no tensor left behind');
});

deviceTestSerial('gx.grad, gx.valueAndGrad and gradcheck (which catches a wrong backward)', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const x = gx.tensor([1, 2, 3], { dtype: 'float64', device });
    const w = gx.tensor([0.5, -1, 2], { dtype: 'float64', device });
    const loss = (a: gx.Tensor, b: gx.Tensor): gx.Tensor => gx.sum(gx.mul(gx.mul(a, a), b));
    t.deepEqual(Array.from(gx.grad(loss)(x, w).toArraySync() as Float64Array), [1, -4, 12], 'd/da sum(a^2 b) = 2 a b');
    const both = gx.grad(loss, [0, 1])(x, w);
    t.deepEqual(Array.from(both[1].toArraySync() as Float64Array), [1, 4, 9], 'd/db = a^2');
    const { value, grad } = gx.valueAndGrad(loss, 1)(x, w);
    t.is(value.item(), 0.5 - 4 + 18);
    t.false(value.requiresGrad);
    t.deepEqual(Array.from(grad.toArraySync() as Float64Array), [1, 4, 9]);
    t.false(x.requiresGrad, 'the arguments are left as they were');
    t.throws(() => gx.grad((a: gx.Tensor) => gx.mul(a, 2))(x), { message: /gx.grad: f must return a one-element Tensor \(a loss\), got shape \[3\]/ });
    const a = gx.tensor([[0.3, -0.2], [0.9, 1.4]], { dtype: 'float64', device }).requiresGrad_();
    const b = gx.tensor([[1.1, 0.4, -0.7], [0.2, -1.3, 0.5]], { dtype: 'float64', device }).requiresGrad_();
    const r = gx.autograd.gradcheck((p, q) => gx.softmax(gx.matmul(p, q), 1), [a, b]);
    t.true(r.ok && r.worstExcess <= 1e-5, JSON.stringify(r));
    class Wrong extends gx.autograd.Function {
      static override forward(ctx: gx.autograd.FunctionContext, v: gx.Tensor): gx.Tensor {
        ctx.saveForBackward(v);
        return gx.mul(v, v);
      }
      static override backward(ctx: gx.autograd.FunctionContext, g: gx.Tensor): gx.Tensor[] {
        const [v] = ctx.savedTensors;
        return [gx.mul(g, v)];  // missing the factor 2
      }
    }
    t.throws(() => gx.autograd.gradcheck((v) => Wrong.apply(v), [a]), { message: /gx.autograd.gradcheck: the gradient of output 0 \(element \d\) with respect to input 0 \(element \d\) is .* analytically but .* by finite differences/ });
    t.false(gx.autograd.gradcheck((v) => Wrong.apply(v), [a], { raiseException: false }).ok);
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('gx.autograd.Function: a hand-written backward of several outputs; saved tensors checked and freed', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  class SinCos extends gx.autograd.Function {
    static override forward(ctx: gx.autograd.FunctionContext, v: gx.Tensor, k: number): gx.Tensor[] {
      ctx.saveForBackward(v);
      ctx.k = k;
      t.false(gx.isGradEnabled(), 'forward runs without recording');
      return [gx.mul(gx.sin(v), k), gx.cos(v)];
    }
    static override backward(ctx: gx.autograd.FunctionContext, gs: gx.Tensor, gc: gx.Tensor): (gx.Tensor | null)[] {
      const [v] = ctx.savedTensors;
      t.deepEqual(ctx.needsInputGrad, [true, false]);
      return [gx.sub(gx.mul(gs, gx.mul(gx.cos(v), ctx.k as number)), gx.mul(gc, gx.sin(v))), null];
    }
  }
  gx.tidy(() => {
    const v = gx.tensor([0.2, -1.1, 2.5], { dtype: 'float64', device }).requiresGrad_();
    const r = gx.autograd.gradcheck((x) => SinCos.apply(x, 3), [v]);
    t.true(r.ok, JSON.stringify(r));
    const [s] = SinCos.apply(v, 3);  // the second output unused: its gradient is zeros
    t.is(s.gradFn, 'SinCos');
    gx.sum(s).backward();
    t.true(Math.abs((v.grad?.toArraySync() as Float64Array)[0] - 3 * Math.cos(0.2)) < 1e-12);
    const [p] = SinCos.apply(v, 1);
    gx.noGrad(() => v.mul_(2));
    t.throws(() => gx.sum(p).backward(), { message: /a tensor SinCos saved \(its first\) was modified in place/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

test('registerAutograd: an extension op (gx.loadInline) records on the tape once it has a gradient; gradcheck passes', async (t) => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-autograd-ext-'));
  // cube(x) = x^3 and its backward 3 x^2 g, as two ops of a C++ extension.
  const src = `
gx::Tensor cube(const gx::Tensor& x) {
  GX_CHECK(x.dtype() == gx::kFloat64 && x.is_contiguous(), "cube: expected a contiguous float64 tensor");
  gx::Tensor y = gx::empty_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) { double v = x.data_ptr<double>()[i]; y.data_ptr<double>()[i] = v * v * v; }
  return y;
}
gx::Tensor cube_backward(const gx::Tensor& g, const gx::Tensor& x) {
  gx::Tensor d = gx::empty_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) { double v = x.data_ptr<double>()[i]; d.data_ptr<double>()[i] = 3 * v * v * g.data_ptr<double>()[i]; }
  return d;
}
GX_LIBRARY(autograd_ext, m) {
  m.def("cube(Tensor x) -> Tensor").impl(gx::kCPU, cube);
  m.def("cube_backward(Tensor g, Tensor x) -> Tensor").impl(gx::kCPU, cube_backward);
}`;
  const ops = await gx.loadInline({ name: 'autograd_ext', cpp: src, buildDirectory: cache }) as Record<string, (...a: gx.Tensor[]) => gx.Tensor>;
  const live = gx.memory.stats('cpu').liveTensors;
  gx.tidy(() => {
    const x = gx.tensor([0.5, -1.5, 2], { dtype: 'float64' }).requiresGrad_();
    // No gradient registered yet: the op does not cut the graph silently; backward names it.
    const cut = ops.cube(x);
    t.true(cut.requiresGrad);
    t.throws(() => gx.sum(gx.mul(cut, 2)).backward(),
      { message: /^Tensor.backward: cube has no derivative, so backward\(\) cannot go through it: give it one with gx\.autograd\.registerAutograd\(cube, / });
    t.false(gx.noGrad(() => ops.cube(x)).requiresGrad, 'under noGrad nothing is recorded');
    t.false(ops.cube(x.detach()).requiresGrad, 'nor on detached inputs');
    gx.autograd.registerAutograd(ops.cube, {
      setupContext(ctx, inputs) { ctx.saveForBackward(inputs[0] as gx.Tensor); },
      backward(ctx, g) { return [ops.cubeBackward(g.contiguous(), ctx.savedTensors[0])]; },
    });
    const y = ops.cube(x);
    t.is(y.gradFn, 'cube');
    gx.sum(y).backward();
    t.deepEqual(Array.from(x.grad?.toArraySync() as Float64Array), [0.75, 6.75, 12]);
    t.true(gx.autograd.gradcheck((v) => ops.cube(v), [x]).ok);
    t.throws(() => gx.autograd.registerAutograd(ops.cube, { backward: () => null, setup: () => undefined } as unknown as gx.autograd.AutogradSpec),
      { message: /gx.autograd.registerAutograd: unknown key 'setup'/ });
  });
  t.is(gx.memory.stats('cpu').liveTensors, live, 'no tensor left behind');
});
