// Derivatives declared beside a user's schema in C++ (NOTE [ Derivatives
// beside a user's schema ]): m.def(...).derivative("x: cube_backward(grad, x)")
// makes the op record on the tape when its library loads, with no JS
// registration; gradcheck passes for one and two inputs, a backward op of a
// tuple, arguments read from results and numbers; a bad formula is an error
// naming the op at load; generated bindings share the declared derivative.
import test from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { parseDerivative } from '../lib/tape/schema-derivative';
import { renderJs } from '../lib/toolkit/codegen';
import type { ExtensionDescriptor, OpDescriptor } from '../lib/extension/runtime';
import { rng } from './helpers';

// Elementwise float64 helpers over contiguous tensors, so the ops stay a few lines each.
const SRC = `
#include <cmath>
#include <tuple>
static gx::Tensor map1(const gx::Tensor& x, double (*f)(double)) {
  GX_CHECK(x.dtype() == gx::kFloat64, "expected float64");
  gx::Tensor xc = x.contiguous(), y = gx::empty_like(xc);
  for (int64_t i = 0; i < xc.numel(); ++i) y.data_ptr<double>()[i] = f(xc.data_ptr<double>()[i]);
  return y;
}
gx::Tensor cube(const gx::Tensor& x) { return map1(x, [](double v) { return v * v * v; }); }
gx::Tensor cube_backward(const gx::Tensor& g, const gx::Tensor& x) {
  gx::Tensor d = gx::empty_like(x), xc = x.contiguous(), gc = g.contiguous();
  for (int64_t i = 0; i < x.numel(); ++i) { double v = xc.data_ptr<double>()[i]; d.data_ptr<double>()[i] = 3 * v * v * gc.data_ptr<double>()[i]; }
  return d;
}
// a * b + c * exp(a): two outputs' worth of backward in one op returning a tuple.
gx::Tensor fma_exp(const gx::Tensor& a, const gx::Tensor& b, double c) {
  gx::Tensor y = gx::empty_like(a), ac = a.contiguous(), bc = b.contiguous();
  for (int64_t i = 0; i < a.numel(); ++i) { double u = ac.data_ptr<double>()[i]; y.data_ptr<double>()[i] = u * bc.data_ptr<double>()[i] + c * std::exp(u); }
  return y;
}
std::tuple<gx::Tensor, gx::Tensor> fma_exp_backward(const gx::Tensor& g, const gx::Tensor& a, const gx::Tensor& b, double c) {
  gx::Tensor ga = gx::empty_like(a), gb = gx::empty_like(b), ac = a.contiguous(), bc = b.contiguous(), gc = g.contiguous();
  for (int64_t i = 0; i < a.numel(); ++i) {
    double u = ac.data_ptr<double>()[i], w = gc.data_ptr<double>()[i];
    ga.data_ptr<double>()[i] = w * (bc.data_ptr<double>()[i] + c * std::exp(u));
    gb.data_ptr<double>()[i] = w * u;
  }
  return {ga, gb};
}
// exp(x), whose backward reads the result: grad * result, scaled by a number in the formula.
gx::Tensor exp_op(const gx::Tensor& x) { return map1(x, [](double v) { return std::exp(v); }); }
gx::Tensor scaled_mul(const gx::Tensor& g, const gx::Tensor& r, double s) {
  gx::Tensor d = gx::empty_like(r), rc = r.contiguous(), gc = g.contiguous();
  for (int64_t i = 0; i < r.numel(); ++i) d.data_ptr<double>()[i] = s * gc.data_ptr<double>()[i] * rc.data_ptr<double>()[i];
  return d;
}
GX_LIBRARY(declared_grads, m) {
  m.def("cube(Tensor x) -> Tensor").impl(gx::kCPU, cube).derivative("x: cube_backward(grad, x)");
  m.def("cube_backward(Tensor g, Tensor x) -> Tensor").impl(gx::kCPU, cube_backward);
  m.def("fma_exp(Tensor a, Tensor b, float c) -> Tensor").impl(gx::kCPU, fma_exp).derivative("a, b: fma_exp_backward(grad, a, b, c)");
  m.def("fma_exp_backward(Tensor g, Tensor a, Tensor b, float c) -> (Tensor, Tensor)").impl(gx::kCPU, fma_exp_backward);
  m.def("exp_op(Tensor x) -> Tensor").impl(gx::kCPU, exp_op).derivative("x: scaled_mul(grad, result, 1)");
  m.def("scaled_mul(Tensor g, Tensor r, float s) -> Tensor").impl(gx::kCPU, scaled_mul);
}`;

type Op = (...a: unknown[]) => gx.Tensor;
const rand = (shape: number[], seed: number): gx.Tensor => {
  const r = rng(seed);
  return gx.tensor(Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => r() * 2 - 1), { dtype: 'float64' }).reshape(shape);
};

test('a derivative declared beside the schema records with no JS registration, and gradcheck passes', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-declared-grad-'));
  const ops = await gx.loadInline({ name: 'declared_grads', cpp: SRC, buildDirectory: dir }) as Record<string, Op>;
  const live = gx.memory.stats('cpu').liveTensors;
  gx.tidy(() => {
    const x = rand([2, 3], 1).requiresGrad_();
    const y = ops.cube(x);
    t.is(y.gradFn, 'cube');
    gx.sum(y).backward();
    const xs = Array.from(x.toArraySync() as Float64Array);
    (x.grad?.toArraySync() as Float64Array).forEach((g, i) => t.true(Math.abs(g - 3 * xs[i] * xs[i]) < 1e-12));
    t.true(gx.autograd.gradcheck((v) => ops.cube(v), [rand([4], 2).requiresGrad_()]).ok);
    // Two inputs from one backward op returning a tuple; a number argument passed through.
    t.true(gx.autograd.gradcheck((a, b) => ops.fmaExp(a, b, 0.75), [rand([3], 3).requiresGrad_(), rand([3], 4).requiresGrad_()]).ok);
    // Only b requires grad: a's clause still runs (one op gives both), a gets none.
    const a = rand([3], 5), b = rand([3], 6).requiresGrad_();
    gx.sum(ops.fmaExp(a, b, 2)).backward();
    t.deepEqual(Array.from(b.grad?.toArraySync() as Float64Array), Array.from(a.toArraySync() as Float64Array));
    t.is(a.grad, null);
    // The result read back, and a number.
    t.true(gx.autograd.gradcheck((v) => ops.expOp(v), [rand([5], 7).requiresGrad_()]).ok);
    t.false(gx.noGrad(() => ops.cube(x)).requiresGrad, 'nothing recorded under noGrad');
  });
  t.is(gx.memory.stats('cpu').liveTensors, live, 'no tensor left behind');
});

function desc(name: string, schema: string, derivative?: string): OpDescriptor {
  const m = /^(\w+)\((.*)\) -> (.*)$/.exec(schema) as RegExpExecArray;
  const args = m[2].split(', ').filter((s) => s !== '').map((s) => {
    const [type, n] = s.split(' ');
    return { name: n, type, kwOnly: false };
  });
  const tuple = m[3].startsWith('(');
  const returns = (tuple ? m[3].slice(1, -1).split(', ') : [m[3]]).map((s) => ({ type: s.split(' ')[0], name: s.split(' ')[1] ?? '' }));
  return { id: -1, name, qualifiedName: `lib::${name}`, schema, doc: '', devices: ['cpu'], args, returns, returnsTuple: tuple, derivative };
}

test('a bad formula is an error naming the op, the formula and what is wrong', (t) => {
  const lib = [desc('f', 'f(Tensor x, float s) -> Tensor y'), desc('f_back', 'f_back(Tensor g, Tensor x) -> Tensor'),
    desc('two', 'two(Tensor g, Tensor x) -> (Tensor, Tensor)')];
  const check = (formula: string, message: RegExp): void => {
    const op = { ...lib[0], derivative: formula };
    t.throws(() => parseDerivative(op, lib), { message }, formula);
  };
  t.is(parseDerivative({ ...lib[0], derivative: 'x: f_back(grad, y)' }, lib).length, 1);
  check('x f_back(grad, x)', /^lib::f: derivative 'x f_back\(grad, x\)': 'x f_back\(grad, x\)' must read 'inputs: backward_op\(arguments\)'/);
  check('z: f_back(grad, x)', /'z' is not an argument of f\(Tensor x, float s\) -> Tensor y/);
  check('s: f_back(grad, x)', /'s' is a float: only positional Tensor arguments take gradients/);
  check('x: nope(grad, x)', /'nope' is not an op of this library \(it has f, f_back, two\)/);
  check('x: two(grad, x)', /two must return 1 Tensor \(one per input before the colon\)/);
  check('x: f_back(grad)', /f_back takes 2 positional arguments/);
  check('x: f_back(grad1, x)', /'grad1' is neither an argument nor a result/);
  check('x: f_back(grad, x); x: f_back(grad, x)', /'x' gets its gradient twice/);
});

test('generated bindings share the declared derivative (rt.declared after the function)', (t) => {
  const d: ExtensionDescriptor = { path: '/x/ext.node', abiVersion: [1, 1], ops: [desc('f', 'f(Tensor x) -> Tensor', 'x: g(grad)'), desc('g', 'g(Tensor x) -> Tensor')] };
  const js = renderJs(d, { outDir: '/x', name: 'ext', configPath: 'setup.config.json' });
  t.regex(js, /^rt\.declared\(f, library, "f"\);$/m);
  t.notRegex(js, /rt\.declared\(g,/, 'only ops that declare one');
});
