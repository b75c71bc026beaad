// gx.autograd.functional (jacobian, hessian, vjp, jvp) on every device in
// float64, against Jacobians and Hessians worked out by hand on random
// inputs; lists of inputs and outputs, createGraph (the results
// differentiate again), strict, the errors, and no tensor left behind.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTestSerial, rng } from './helpers';

const F = gx.autograd.functional;
const values = (t: gx.Tensor | null): number[] => (t === null ? [] : Array.from(t.toArraySync() as Float64Array, Number));

function near(t: ExecutionContext, got: gx.Tensor | readonly number[], want: readonly number[], what: string, shape?: readonly number[]): void {
  const g = Array.isArray(got) ? got : values(got as gx.Tensor);
  if (shape !== undefined && !Array.isArray(got)) t.deepEqual((got as gx.Tensor).shape, shape, `${what}: shape`);
  const worst = Math.max(0, ...want.map((w, i) => Math.abs(g[i] - w) / Math.max(1, Math.abs(w))));
  t.true(g.length === want.length && worst <= 1e-12, `${what}: got ${g.join(', ')}, want ${want.join(', ')}`);
}

function random(n: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => (r() - 0.5) * 3);
}

/** x's gradient (read through a function: after `x.grad = null` TypeScript takes it for null). */
const gradOf = (x: gx.Tensor): gx.Tensor => x.grad as gx.Tensor;
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
/** An n x m matrix, row-major, from f(i, j). */
const mat = (n: number, m: number, f: (i: number, j: number) => number): number[] => range(n).flatMap((i) => range(m).map((j) => f(i, j)));

deviceTestSerial('functional.jacobian: one and several inputs and outputs against the Jacobian by hand', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const o = { dtype: 'float64' as const, device };
  gx.tidy(() => {
    const xs = random(4, 1), as = random(12, 2);
    const x = gx.tensor(xs, o), A = gx.tensor(as, o).reshape(3, 4);
    // Elementwise: diag(f'(x)).
    const f1 = (v: gx.Tensor): gx.Tensor => gx.mul(gx.sin(v), gx.mul(v, v));
    const d1 = xs.map((v) => Math.cos(v) * v * v + 2 * v * Math.sin(v));
    near(t, F.jacobian(f1, x), mat(4, 4, (i, j) => (i === j ? d1[i] : 0)), 'sin(x) x^2', [4, 4]);
    // Dense: y = (A x) sum(x), dy_i/dx_k = A_ik s + (A x)_i.
    const s = xs.reduce((a, b) => a + b, 0);
    const ax = range(3).map((i) => range(4).reduce((acc, k) => acc + as[i * 4 + k] * xs[k], 0));
    near(t, F.jacobian((v) => gx.mul(gx.matmul(A, v), gx.sum(v)), x), mat(3, 4, (i, k) => as[i * 4 + k] * s + ax[i]), '(A x) sum(x)', [3, 4]);
    // Two inputs, two outputs: [W x, sum(x^2)] of x [4] and W [3, 4].
    const f2 = (v: gx.Tensor, w: gx.Tensor): gx.Tensor[] => [gx.matmul(w, v), gx.sum(gx.mul(v, v))];
    const J = F.jacobian(f2, [x, A]);
    t.is(J.length, 2);
    near(t, J[0][0], as, 'd(W x)/dx = W', [3, 4]);
    near(t, J[0][1], range(3).flatMap((i) => range(3).flatMap((j) => range(4).map((k) => (i === j ? xs[k] : 0)))), 'd(W x)_i/dW_jk = [i = j] x_k', [3, 3, 4]);
    near(t, J[1][0], xs.map((v) => 2 * v), 'd sum(x^2)/dx', [4]);
    near(t, J[1][1], new Array(12).fill(0), 'sum(x^2) does not depend on W: zeros', [3, 4]);
    t.throws(() => F.jacobian(f2, [x, A], { strict: true }), { message: /^gx\.autograd\.functional\.jacobian: output 1 of f does not depend on input 1; strict mode/ });
    // A single output of a list of one input: a list of one.
    const J1 = F.jacobian((v: gx.Tensor) => gx.mul(v, 2), [x]);
    t.true(Array.isArray(J1) && J1.length === 1);
    near(t, J1[0], mat(4, 4, (i, j) => (i === j ? 2 : 0)), '2 x');
    // The inputs are not touched: no .grad, requiresGrad as it was.
    t.false(x.requiresGrad);
    t.is(x.grad, null);
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('functional.hessian: one and several inputs against the Hessian by hand', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const o = { dtype: 'float64' as const, device };
  gx.tidy(() => {
    const xs = random(4, 3), cs = random(4, 4), bs = random(16, 5), ys = random(4, 6);
    const x = gx.tensor(xs, o), c = gx.tensor(cs, o), B = gx.tensor(bs, o).reshape(4, 4), y = gx.tensor(ys, o);
    // f = sum(c x^3) + x' B x: H = diag(6 c x) + B + B'.
    const f = (v: gx.Tensor): gx.Tensor => gx.add(gx.sum(gx.mul(c, gx.pow(v, 3))), gx.sum(gx.mul(v, gx.matmul(B, v))));
    near(t, F.hessian(f, x), mat(4, 4, (i, j) => (i === j ? 6 * cs[i] * xs[i] : 0) + bs[i * 4 + j] + bs[j * 4 + i]), 'sum(c x^3) + x\'Bx', [4, 4]);
    // f(x, y) = sum(x^2 y + exp(x) y): H_xx = diag((2 + exp x) y), H_xy = H_yx = diag(2 x + exp x), H_yy = 0.
    const g = (u: gx.Tensor, w: gx.Tensor): gx.Tensor => gx.sum(gx.add(gx.mul(gx.mul(u, u), w), gx.mul(gx.exp(u), w)));
    const H = F.hessian(g, [x, y]);
    const diag = (d: number[]): number[] => mat(4, 4, (i, j) => (i === j ? d[i] : 0));
    near(t, H[0][0], diag(xs.map((v, i) => (2 + Math.exp(v)) * ys[i])), 'H_xx', [4, 4]);
    near(t, H[0][1], diag(xs.map((v) => 2 * v + Math.exp(v))), 'H_xy', [4, 4]);
    near(t, H[1][0], diag(xs.map((v) => 2 * v + Math.exp(v))), 'H_yx', [4, 4]);
    near(t, H[1][1], new Array(16).fill(0), 'H_yy', [4, 4]);
    // f's intermediates freed inside f (its own gx.tidy): the saved tensors' aliases still carry the graph.
    const tidied = (v: gx.Tensor): gx.Tensor => gx.tidy(() => gx.sum(gx.exp(gx.mul(v, 2))));
    near(t, F.hessian(tidied, x), diag(xs.map((v) => 4 * Math.exp(2 * v))), 'f under gx.tidy');
    // A linear f: zeros (strict: an error); a non-scalar f: an error.
    near(t, F.hessian((v) => gx.sum(gx.mul(v, c)), x), new Array(16).fill(0), 'linear: zeros');
    t.throws(() => F.hessian((v) => gx.sum(gx.mul(v, c)), x, { strict: true }), { message: /hessian: output 0 of f does not depend on input 0; strict mode/ });
    t.throws(() => F.hessian((v) => gx.mul(v, v), x), { instanceOf: TypeError, message: 'gx.autograd.functional.hessian: f must return a one-element Tensor, got shape [4]' });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('functional.vjp and jvp: v\'J and Jv against the Jacobian by hand, lists too', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const o = { dtype: 'float64' as const, device };
  gx.tidy(() => {
    const xs = random(4, 7), as = random(12, 8), us = random(3, 9), vs = random(4, 10), ws = random(12, 11);
    const x = gx.tensor(xs, o), A = gx.tensor(as, o).reshape(3, 4);
    // y = (A x) sum(x): J_ik = A_ik s + (A x)_i.
    const s = xs.reduce((a, b) => a + b, 0);
    const ax = range(3).map((i) => range(4).reduce((acc, k) => acc + as[i * 4 + k] * xs[k], 0));
    const J = (i: number, k: number): number => as[i * 4 + k] * s + ax[i];
    const f = (v: gx.Tensor): gx.Tensor => gx.mul(gx.matmul(A, v), gx.sum(v));
    const [y, g] = F.vjp(f, x, gx.tensor(us, o));
    near(t, y, ax.map((v) => v * s), 'vjp: f(x)', [3]);
    t.false(y.requiresGrad, 'the output is detached');
    near(t, g, range(4).map((k) => range(3).reduce((acc, i) => acc + us[i] * J(i, k), 0)), 'vjp: u\'J', [4]);
    const [y2, jv] = F.jvp(f, x, gx.tensor(vs, o));
    near(t, y2, ax.map((v) => v * s), 'jvp: f(x)');
    near(t, jv, range(3).map((i) => range(4).reduce((acc, k) => acc + J(i, k) * vs[k], 0)), 'jvp: Jv', [3]);
    // Lists: f(x, W) = [W x, sum(x^2)], v for each output / input.
    const f2 = (v: gx.Tensor, w: gx.Tensor): gx.Tensor[] => [gx.matmul(w, v), gx.sum(gx.mul(v, v))];
    const [, [gx_, gW]] = F.vjp(f2, [x, A], [gx.tensor(us, o), gx.tensor([1.5], o).reshape([])]);
    near(t, gx_, range(4).map((k) => range(3).reduce((acc, i) => acc + us[i] * as[i * 4 + k], 0) + 1.5 * 2 * xs[k]), 'vjp: d/dx', [4]);
    near(t, gW, mat(3, 4, (i, k) => us[i] * xs[k]), 'vjp: d/dW', [3, 4]);
    const [outs, [t0, t1]] = F.jvp(f2, [x, A], [gx.tensor(vs, o), gx.tensor(ws, o).reshape(3, 4)]);
    t.is(outs.length, 2);
    near(t, t0, range(3).map((i) => range(4).reduce((acc, k) => acc + as[i * 4 + k] * vs[k] + ws[i * 4 + k] * xs[k], 0)), 'jvp: W v_x + v_W x', [3]);
    near(t, t1, [xs.reduce((acc, v, k) => acc + 2 * v * vs[k], 0)], 'jvp: 2 x . v_x', []);
    // A one-element output needs no v in vjp; a one-element input none in jvp.
    near(t, F.vjp((v) => gx.sum(gx.mul(v, v)), x)[1], xs.map((v) => 2 * v), 'vjp without v');
    const x1 = gx.tensor([xs[0]], o);
    near(t, F.jvp((v) => gx.mul(gx.exp(v), A), x1)[1], as.map((a) => a * Math.exp(xs[0])), 'jvp without v', [3, 4]);
    // An output independent of the inputs: zeros; strict: an error.
    near(t, F.jvp((v) => [gx.mul(v, 2), gx.mul(A, 1)], x, gx.tensor(vs, o))[1][1], new Array(12).fill(0), 'jvp of a constant');
    t.throws(() => F.jvp((v) => [gx.mul(v, 2), gx.mul(A, 1)], x, gx.tensor(vs, o), { strict: true }), { message: /jvp: output 1 of f does not depend on the inputs; strict mode/ });
    t.throws(() => F.vjp((v) => [gx.mul(v, 2), gx.mul(A, 1)], [x, A], [gx.tensor(vs, o), gx.tensor(ws, o).reshape(3, 4)], { strict: true }), { message: /vjp: output 0 of f does not depend on input 1; strict mode/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('functional: createGraph makes the results differentiate again with respect to inputs that require grad', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const o = { dtype: 'float64' as const, device };
  gx.tidy(() => {
    const xs = random(5, 12), vs = random(5, 13);
    const x = gx.tensor(xs, o).requiresGrad_(), v = gx.tensor(vs, o);
    const f = (u: gx.Tensor): gx.Tensor => gx.mul(gx.sin(u), gx.mul(u, u));
    const d2 = xs.map((u) => -Math.sin(u) * u * u + 4 * u * Math.cos(u) + 2 * Math.sin(u));
    for (const [name, run] of [
      ['vjp', () => F.vjp(f, x, v, { createGraph: true })[1]],
      ['jvp', () => F.jvp(f, x, v, { createGraph: true })[1]],
    ] as const) {
      const r = run();
      t.true(r.requiresGrad, `${name}: the result is in the graph`);
      x.grad = null;
      gx.sum(r).backward();
      near(t, gradOf(x), vs.map((w, i) => w * d2[i]), `${name}: d/dx sum(v f'(x)) = v f''(x)`);
    }
    // Without createGraph the results are plain tensors.
    t.false(F.vjp(f, x, v)[1].requiresGrad);
    t.false(F.jacobian(f, x).requiresGrad);
    // The Hessian's trace differentiated: d/dx sum_i f''(x_i) = f'''(x).
    const H = F.hessian((u) => gx.sum(f(u)), x, { createGraph: true });
    x.grad = null;
    gx.sum(H).backward();
    near(t, gradOf(x), xs.map((u) => -Math.cos(u) * u * u - 6 * u * Math.sin(u) + 6 * Math.cos(u)), 'd/dx trace(H) = f\'\'\'(x)');
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('functional.jvp agrees with jacobian times v through views, reductions and softmax; an op whose derivative does not record refuses', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  const o = { dtype: 'float64' as const, device };
  gx.tidy(() => {
    const x = gx.tensor(random(6, 14), o).reshape(2, 3), v = gx.tensor(random(6, 15), o).reshape(2, 3), W = gx.tensor(random(6, 16), o).reshape(3, 2);
    const fns: Record<string, (u: gx.Tensor) => gx.Tensor> = {
      'slice, narrow, cat': (u) => gx.cat([gx.mul(u.slice(1, 0, 2), u.narrow(1, 1, 2)), gx.exp(u)], 1),
      'softmax of matmul': (u) => gx.softmax(gx.matmul(u, W), 1),
      'mean, var, broadcast': (u) => gx.mul(gx.mean(u, { axis: 1, keepdims: true }), gx.add(gx.var(u, { axis: 0 }), u)),
      'floor (a zero derivative)': (u) => gx.mul(gx.floor(gx.mul(u, 3)), u),
    };
    for (const [name, f] of Object.entries(fns)) {
      const J = F.jacobian(f, x);
      const [y, jv] = F.jvp(f, x, v);
      const vr = v.reshape([...y.shape.map(() => 1), 2, 3]);
      const want = values(gx.sum(gx.mul(J, vr), { axis: [y.ndim, y.ndim + 1] }));
      near(t, jv, want, `${name}: jvp = J v`, y.shape);
    }
    // sort's derivative writes in place: with createGraph that is an error naming it, not a silently wrong result.
    t.throws(() => F.jvp((u) => gx.sort(gx.mul(u, u), 1).values, x, v), { message: /^gx\.autograd\.functional\.jvp: sort's derivative is not differentiable here/ });
    t.throws(() => F.hessian((u) => gx.sum(gx.pow(gx.sort(u, 1).values, 3)), x), { message: /hessian: sort's derivative is not differentiable here/ });
    // (Where the gradient reaching sort is a constant, its backward needs no recording: sum(sort(x^2))'s Hessian is 2 I.)
    near(t, F.hessian((u) => gx.sum(gx.sort(gx.mul(u, u), 1).values), x), mat(6, 6, (i, j) => (i === j ? 2 : 0)), 'sum(sort(x^2))', [2, 3, 2, 3]);
    // Without createGraph (first derivatives) it is fine.
    t.is(F.jacobian((u) => gx.sort(u, 1).values, x).shape.join(), '2,3,2,3');
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('functional: errors name the function and the argument', (t, device) => {
  const live = gx.memory.stats(device).liveTensors;
  gx.tidy(() => {
    const x = gx.tensor([1, 2, 3], { dtype: 'float64', device });
    const sq = (v: gx.Tensor): gx.Tensor => gx.mul(v, v);
    t.throws(() => F.jacobian(42 as unknown as typeof sq, x), { instanceOf: TypeError, message: 'gx.autograd.functional.jacobian: f must be a function' });
    t.throws(() => F.jacobian(sq, 'x' as unknown as gx.Tensor), { instanceOf: TypeError, message: /jacobian: inputs must be a Tensor or an array of Tensors, got string/ });
    t.throws(() => F.jacobian(sq, [x, 3 as unknown as gx.Tensor]), { instanceOf: TypeError, message: /jacobian: inputs\[1\] must be a Tensor, got number/ });
    t.throws(() => F.jacobian(sq, gx.tensor([1, 2], { dtype: 'int32', device })), { instanceOf: TypeError, message: /jacobian: inputs must be a floating tensor to differentiate, got int32/ });
    t.throws(() => F.jacobian(() => 3 as unknown as gx.Tensor, x), { instanceOf: TypeError, message: /jacobian: the output of f must be a Tensor or an array of Tensors, got number/ });
    t.throws(() => F.vjp(sq, x), { instanceOf: TypeError, message: /vjp: v is needed unless the output of f is a single one-element tensor/ });
    t.throws(() => F.vjp(sq, x, gx.tensor([1, 2], { dtype: 'float64', device })), { instanceOf: TypeError, message: 'gx.autograd.functional.vjp: v has shape [2], its tensor [3]' });
    t.throws(() => F.vjp(sq, x, gx.tensor([1, 2, 3], { dtype: 'float32', device })), { instanceOf: TypeError, message: /vjp: v is float32 on (cpu|cuda:\d+), its tensor float64 on/ });
    t.throws(() => F.jvp(sq, x), { instanceOf: TypeError, message: /jvp: v is needed unless inputs is a single one-element tensor/ });
    t.throws(() => F.jvp(sq, x, [x] as unknown as gx.Tensor), { instanceOf: TypeError, message: /jvp: v must be shaped as inputs: a Tensor/ });
    t.throws(() => F.hessian((v) => gx.sum(sq(v)), x, { createGraph: 'yes' as unknown as boolean }), { instanceOf: TypeError, message: 'gx.autograd.functional.hessian: createGraph must be a boolean, got a string ("yes")' });
    t.throws(() => F.jacobian(sq, x, { strcit: true } as gx.autograd.functional.FunctionalOptions), { message: /jacobian.*strcit/ });
  });
  t.is(gx.memory.stats(device).liveTensors, live, 'no tensor left behind (also when f or the arguments fail)');
});
