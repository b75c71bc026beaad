// The elementwise math beyond the table-driven tests (ops-unary, ops-binary,
// which check every op against its JS reference on every dtype): torch's own
// figures for the activation modules and a few ops with their gradients
// (test/math-torch-figures.ts, from test/reference/torch_math.py), the number
// parameters (leakyRelu, elu, hardtanh, nanToNum: NOTE [ Parameters of
// elementwise ops ] in ops/op-list.js), nanToNum on special values, lerp, and
// bad input, on every device.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial } from './helpers';
import { MATH_FIGURES } from './math-torch-figures';
import { cast, close, live, make, randomIn, tolerance, values, type V } from './ops-reference';

const vals = (n: number, a: number, b: number, scale: number): number[] => Array.from({ length: n }, (_, i) => scale * Math.sin(a * i + b));

type Call = (...xs: gx.Tensor[]) => gx.Tensor;
/** Each figure's gx call (the module's, or the op's). */
const CALLS: Record<string, Call> = {
  'nn.SiLU': (x) => new gx.nn.SiLU().call(x),
  'nn.Mish': (x) => new gx.nn.Mish().call(x),
  'nn.SELU': (x) => new gx.nn.SELU().call(x),
  'nn.Hardsigmoid': (x) => new gx.nn.Hardsigmoid().call(x),
  'nn.LogSigmoid': (x) => new gx.nn.LogSigmoid().call(x),
  'nn.LeakyReLU()': (x) => new gx.nn.LeakyReLU().call(x),
  'nn.LeakyReLU(0.2)': (x) => new gx.nn.LeakyReLU(0.2).call(x),
  'nn.ELU()': (x) => new gx.nn.ELU().call(x),
  'nn.ELU(0.5)': (x) => new gx.nn.ELU(0.5).call(x),
  'nn.Hardtanh()': (x) => new gx.nn.Hardtanh().call(x),
  'nn.Hardtanh(-2, 2.5)': (x) => new gx.nn.Hardtanh(-2, 2.5).call(x),
  erfinv: (x) => gx.erfinv(x),
  atanh: (x) => x.atanh(),
  tan: (x) => gx.tan(x),
  logaddexp: (a, b) => gx.logaddexp(a, b),
  atan2: (a, b) => a.atan2(b),
  hypot: (a, b) => gx.hypot(a, b),
  fmod: (a, b) => gx.fmod(a, b),
  lerp: (a, b, w) => gx.lerp(a, b, w),
};

test('every torch figure has a gx call', (t) => {
  t.deepEqual(Object.keys(MATH_FIGURES).sort(), Object.keys(CALLS).sort());
});

deviceTest('results and gradients equal torch\'s (float64) for the activation modules and the new ops', (t, device) => {
  for (const [name, fig] of Object.entries(MATH_FIGURES)) {
    gx.tidy(() => {
      const xs = fig.inputs.map(([a, b, s]) => gx.tensor(vals(12, a, b, s), { dtype: 'float64', device }).requiresGrad_());
      const y = CALLS[name](...xs);
      t.is(y.dtype, 'float64', name);
      close(t, values(y), fig.out, `${name}: result on ${device}`, 1e-13, 1e-15);
      gx.sum(gx.mul(y, gx.tensor(vals(12, 0.7, 0.3, 1), { dtype: 'float64', device }))).backward();
      // torch's hardsigmoid backward multiplies by 1.0f / 6.0f, a float even in float64 (relative error 3e-8); ours by 1/6.
      const rtol = name === 'nn.Hardsigmoid' ? 1e-7 : 1e-12;
      xs.forEach((x, k) => close(t, values(x.grad as gx.Tensor), fig.grads[k], `${name}: gradient ${k} on ${device}`, rtol, 1e-14));
    });
  }
});

deviceTest('leakyRelu, elu, hardtanh take their parameters as numbers after x, as functions and methods, before the options', (t, device) => {
  let seed = 300;
  const cases: [string, (x: gx.Tensor, o?: gx.OutOptions) => gx.Tensor, (v: number) => number][] = [
    ['leakyRelu(x, 0.2)', (x, o) => gx.leakyRelu(x, 0.2, o), (v) => (v > 0 ? v : v * 0.2)],
    ['x.leakyRelu(-1.5)', (x, o) => x.leakyRelu(-1.5, o), (v) => (v > 0 ? v : v * -1.5)],
    ['elu(x, 0.5)', (x, o) => gx.elu(x, 0.5, o), (v) => (v > 0 ? v : 0.5 * Math.expm1(v))],
    ['x.elu()', (x, o) => x.elu(undefined, o), (v) => (v > 0 ? v : Math.expm1(v))],
    ['hardtanh(x, -2, 2.5)', (x, o) => gx.hardtanh(x, -2, 2.5, o), (v) => Math.min(Math.max(v, -2), 2.5)],
    ['x.hardtanh(0.5)', (x, o) => x.hardtanh(0.5, undefined, o), (v) => Math.min(Math.max(v, 0.5), 1)],
  ];
  for (const d of ['float32', 'float64', 'float16', 'int32'] as const) {
    for (const [what, f, ref] of cases) {
      using x = make(randomIn(d, 40, seed++, d === 'int32' ? { lo: -4, hi: 4 } : { lo: -4, hi: 4 }), d, [5, 8], device);
      const common = d === 'int32' ? 'float32' : d;
      const c = common === 'float64' ? Number : Math.fround;
      const want = values(x).map((v) => cast(c(ref(c(Number(v)))), common));
      using r = f(x);
      t.is(r.dtype, common);
      close(t, values(r), want, `${what} ${d} on ${device}`, tolerance(common), common === 'float16' ? 1e-3 : 1e-7);
      using out = gx.full([5, 8], Number.NaN, { dtype: 'float64', device });
      t.is(f(x, { out }), out);
      close(t, values(out), want.map(Number), `${what} ${d} into a float64 out on ${device}`, tolerance(common), common === 'float16' ? 1e-3 : 1e-7);
    }
  }
  using n = gx.tensor([Number.NaN, -5, 5], { device });
  close(t, values(gx.hardtanh(n, -1, 1)), [Number.NaN, -1, 1], `hardtanh keeps NaN on ${device}`);
});

deviceTest('nanToNum: NaN, +inf and -inf to the given numbers or the dtype\'s extremes; integers unchanged; in place', (t, device) => {
  const specials = [Number.NaN, Infinity, -Infinity, 1.5, -0.25, 3];
  const max: Record<string, number> = { float32: 3.4028234663852886e38, float64: Number.MAX_VALUE, float16: 65504, bfloat16: 3.3895313892515355e38 };
  for (const d of ['float32', 'float64', 'float16', 'bfloat16'] as const) {
    using x = gx.tensor(specials, { dtype: d, device });
    const fin = (v: V): boolean => Number.isFinite(Number(v));
    using r = gx.nanToNum(x);
    t.is(r.dtype, d);
    close(t, values(r), [0, max[d], -max[d], ...values(x).slice(3)], `nanToNum(${d}) on ${device}`);
    using s = x.nanToNum({ nan: 7, posinf: 100, neginf: -100 });
    close(t, values(s), [7, 100, -100, ...values(x).slice(3)], `nanToNum(${d}, { nan: 7, posinf: 100, neginf: -100 }) on ${device}`);
    using p = gx.nanToNum(x, { posinf: 2 });
    close(t, values(p), [0, 2, -max[d], ...values(x).slice(3)], `nanToNum(${d}, { posinf: 2 }) on ${device}`);
    using y = x.clone();
    t.is(y.nanToNum_({ neginf: -1 }), y);
    close(t, values(y), values(x).map((v, i) => (fin(v) ? v : i === 0 ? 0 : i === 1 ? max[d] : -1)), `nanToNum_(${d}) on ${device}`);
  }
  using i = make(randomIn('int16', 20, 5), 'int16', [20], device);
  using ri = gx.nanToNum(i, { nan: 1 });
  t.is(ri.dtype, 'int16');
  close(t, values(ri), values(i), `nanToNum(int16) on ${device}`);
});

/** lerp in float32 as the kernel computes it (no FMA on the CPU: each step rounded). */
function lerpRef(a: number, b: number, w: number): number {
  const f = Math.fround;
  return Math.abs(w) < 0.5 ? f(a + f(w * f(b - a))) : f(b - f(f(b - a) * f(1 - w)));
}

deviceTest('lerp: tensor or number weights, broadcasting, the ends exact, as torch.lerp', (t, device) => {
  using a = make(randomIn('float32', 12, 71, { lo: -10, hi: 10 }), 'float32', [3, 4], device);
  using b = make(randomIn('float32', 4, 72, { lo: -10, hi: 10 }), 'float32', [4], device);
  using w = make(randomIn('float32', 3, 73, { lo: -0.5, hi: 1.5 }), 'float32', [3, 1], device);
  const av = values(a).map(Number), bv = values(b).map(Number), wv = values(w).map(Number);
  using r = gx.lerp(a, b, w);
  t.deepEqual(r.shape, [3, 4]);
  close(t, values(r), av.map((x, i) => lerpRef(x, bv[i % 4], wv[Math.floor(i / 4)])), `lerp(tensor weight) on ${device}`, 2e-6, 1e-6);
  for (const s of [0.3, 0.75, 0, 1]) {
    using q = a.lerp(b, s);
    close(t, values(q), av.map((x, i) => lerpRef(x, bv[i % 4], s)), `lerp(${s}) on ${device}`, 2e-6, 1e-6);
  }
  using one = gx.lerp(a, b, 1);
  using zero = gx.lerp(a, b, 0);
  close(t, values(one), av.map((_, i) => bv[i % 4]), `lerp(a, b, 1) is b exactly on ${device}`);
  close(t, values(zero), av, `lerp(a, b, 0) is a exactly on ${device}`);
  using h = make(randomIn('float16', 4, 74), 'float16', [4], device);
  using d = gx.tensor([0.5], { dtype: 'float64', device });
  t.is(gx.lerp(a, h, 0.5).dtype, 'float32');
  t.is(gx.lerp(h, h, d).dtype, 'float64');
  using i = gx.ones([3], { dtype: 'int32', device });
  t.throws(() => gx.lerp(i, i, 0.5), { instanceOf: TypeError, message: /^gx\.lerp: needs floating operands \(got int32 \[3\], int32 \[3\] and 0\.5\)/ });
  t.throws(() => Reflect.apply(gx.lerp, undefined, [a, b, 'x']), { instanceOf: TypeError, message: /^gx\.lerp: weight must be a Tensor or a number/ });
  t.throws(() => gx.lerp(a, gx.ones([5], { device }), 0.5), { message: /^gx\.lerp: shapes \[3, 4\] and \[5\] do not broadcast/ });
});

deviceTest('lerp\'s gradients: a number weight gives 1 - w and w, a tensor weight end - self (summed where it broadcast), as torch\'s', (t, device) => {
  gx.tidy(() => {
    // torch 2.13, float32: y = torch.lerp(a, b, 0.3); (y * [1, 2, 3]).sum().backward()
    const a = gx.tensor([1, 2, -3], { device }).requiresGrad_(), b = gx.tensor([3, 5, 4], { device }).requiresGrad_();
    const y = gx.lerp(a, b, 0.3);
    gx.sum(gx.mul(y, gx.tensor([1, 2, 3], { device }))).backward();
    close(t, values(y), [1.600000023841858, 2.9000000953674316, -0.8999999165534973], 'forward (torch\'s CPU rounds once, by FMA)', 2e-7);
    t.deepEqual(values(a.grad as gx.Tensor), [0.699999988079071, 1.399999976158142, 2.0999999046325684]);
    t.deepEqual(values(b.grad as gx.Tensor), [0.30000001192092896, 0.6000000238418579, 0.9000000357627869]);
    // A number weight with only end requiring grad, and with only self.
    const c = gx.tensor([1, 2], { dtype: 'float64', device }), e = gx.tensor([4, 8], { dtype: 'float64', device }).requiresGrad_();
    gx.sum(gx.lerp(c, e, 0.75)).backward();
    t.deepEqual(values(e.grad as gx.Tensor), [0.75, 0.75]);
    const s = gx.tensor([1, 2], { dtype: 'float64', device }).requiresGrad_();
    gx.sum(s.lerp(c, 1.5)).backward();
    t.deepEqual(values(s.grad as gx.Tensor), [-0.5, -0.5]);
    // float64, a tensor weight: torch gives a.grad [0.7, 0.8, -1.5], b.grad [0.3, 1.2, 4.5], w.grad [2, 6, 21].
    const a2 = gx.tensor([1, 2, -3], { dtype: 'float64', device }).requiresGrad_(), b2 = gx.tensor([3, 5, 4], { dtype: 'float64', device }).requiresGrad_();
    const w2 = gx.tensor([0.3, 0.6, 1.5], { dtype: 'float64', device }).requiresGrad_();
    gx.sum(gx.mul(gx.lerp(a2, b2, w2), gx.tensor([1, 2, 3], { dtype: 'float64', device }))).backward();
    close(t, values(a2.grad as gx.Tensor), [0.7, 0.8, -1.5], 'self', 1e-15, 1e-15);
    close(t, values(b2.grad as gx.Tensor), [0.3, 1.2, 4.5], 'end', 1e-15, 1e-15);
    t.deepEqual(values(w2.grad as gx.Tensor), [2, 6, 21]);
    // A weight of shape [1] broadcast over [2, 2]: torch gives w.grad [12] for y.sum() with a [[1, 2], [-3, 4]], b [3, 5].
    const a3 = gx.tensor([[1, 2], [-3, 4]], { dtype: 'float64', device }).requiresGrad_(), w3 = gx.tensor([0.25], { dtype: 'float64', device }).requiresGrad_();
    gx.sum(gx.lerp(a3, gx.tensor([3, 5], { dtype: 'float64', device }), w3)).backward();
    t.deepEqual(values(a3.grad as gx.Tensor), [0.75, 0.75, 0.75, 0.75]);
    t.deepEqual(values(w3.grad as gx.Tensor), [12]);
  });
});

test('bad parameters name the function and the parameter', (t) => {
  using x = gx.ones([3]);
  t.throws(() => Reflect.apply(gx.leakyRelu, undefined, [x, 'a']), { instanceOf: TypeError, message: /^gx\.leakyRelu: negativeSlope must be a number, got / });
  t.throws(() => Reflect.apply(x.hardtanh, x, [0, true]), { instanceOf: TypeError, message: /^Tensor\.hardtanh: maxVal must be a number, got / });
  t.throws(() => Reflect.apply(gx.elu, undefined, [x, 1, {}, 2]), { instanceOf: TypeError, message: /^gx\.elu: takes \(x, alpha, options\), got 4 arguments/ });
  t.throws(() => Reflect.apply(gx.nanToNum, undefined, [x, { posinf: '1' }]), { instanceOf: TypeError, message: /^gx\.nanToNum: posinf must be a number or null, got / });
  t.throws(() => Reflect.apply(gx.nanToNum, undefined, [x, 0]), { instanceOf: TypeError, message: /^gx\.nanToNum: options must be an object/ });
  t.throws(() => Reflect.apply(x.nanToNum_, x, [{ out: x }]), { instanceOf: TypeError, message: /^Tensor\.nanToNum_: takes no out/ });
  t.throws(() => new gx.nn.Hardtanh(1, -1), { instanceOf: RangeError, message: 'gx.nn.Hardtanh: maxVal must be greater than minVal, got minVal 1 and maxVal -1' });
  // torch.nn.functional.hardtanh: "min_val cannot be greater than max_val"; equal bounds give them everywhere.
  t.throws(() => gx.hardtanh(x, 1, -1), { instanceOf: RangeError, message: 'gx.hardtanh: minVal cannot be greater than maxVal, got minVal 1 and maxVal -1' });
  t.throws(() => x.hardtanh(2), { instanceOf: RangeError, message: 'Tensor.hardtanh: minVal cannot be greater than maxVal, got minVal 2 and maxVal 1' });
  t.throws(() => gx.hardtanh(x, undefined, -3), { instanceOf: RangeError, message: 'gx.hardtanh: minVal cannot be greater than maxVal, got minVal -1 and maxVal -3' });
  using flat = gx.hardtanh(gx.tensor([-2, 0, 0.5, 2]), 0.5, 0.5);
  t.deepEqual(values(flat), [0.5, 0.5, 0.5, 0.5]);
  t.throws(() => new gx.nn.LeakyReLU(Number.NaN), { instanceOf: TypeError, message: /^gx\.nn\.LeakyReLU: negativeSlope must be a finite number/ });
  t.is(String(new gx.nn.Hardtanh(-2, 2)), 'Hardtanh(minVal=-2, maxVal=2)');
  t.is(String(new gx.nn.LeakyReLU()), 'LeakyReLU(negativeSlope=0.01)');
  t.is(String(new gx.nn.Sequential(new gx.nn.ELU(0.5), new gx.nn.SiLU())), 'Sequential(\n  (0): ELU(alpha=0.5)\n  (1): SiLU()\n)');
});

deviceTestSerial('the new ops and modules leave no tensors behind', (t, device) => {
  using x = gx.ones([2, 3], { device });
  const before = live(device);
  for (const f of [gx.silu, gx.erfinv, gx.logSigmoid, gx.square, gx.trunc]) f(x).dispose();
  gx.leakyRelu(x, 0.3).dispose();
  gx.nanToNum(x, { nan: 1 }).dispose();
  gx.lerp(x, x, 0.5).dispose();
  gx.atan2(x, x).dispose();
  new gx.nn.Hardtanh().call(x).dispose();
  t.throws(() => gx.lerp(x, gx.ones([4], { device }), 0.5));
  t.is(live(device), before);
});
