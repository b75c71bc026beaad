// gx.floorDivide and gx.div's roundingMode ('floor', 'trunc') on every device, against torch 2.13's
// results (test/floor-divide-torch-figures.ts, from test/reference/torch_floor_divide.py; float16 and
// bfloat16 computed in float32 as torch's CUDA kernels do): signed zeros, infinities, NaN, x / 0, the
// ends of every integer range, numbers on either side, promotion and broadcasting, bit for bit. Then what gx does where torch raises or traps (an integer x // 0 is
// 0, INT_MIN // -1 wraps, as NumPy), exactness over all of int64, out, in place, and autograd:
// floorDivide refuses inputs that require grad as torch's backward does, div with a roundingMode
// has a zero gradient as torch's.
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { FLOOR_DIVIDE_CASES, type Figure } from './floor-divide-torch-figures';
import { deviceTest, poisonCache, rng, type TestDevice } from './helpers';
import { floorDivideRef, truncDivideRef, values, type V } from './ops-reference';

type Operand = gx.Tensor | number;

function operand(f: Figure, device: TestDevice): Operand {
  if ('number' in f) return f.number;
  const data = f.dtype === 'int64' ? f.values.map((v) => BigInt(v)) : f.values.map((v) => Number(v));
  return gx.tensor(data as number[], { dtype: f.dtype as gx.DType, shape: f.shape, device });
}

/** Equal element by element: the same number (-0 is not 0, NaN is NaN) or bigint. */
function sameBits(t: ExecutionContext, got: readonly V[], want: readonly V[], what: string): void {
  t.is(got.length, want.length, `${what}: length`);
  const bad = got.map((g, i) => [i, g, want[i]] as const).filter(([, g, w]) => (typeof w === 'bigint' ? BigInt(g) !== w : !Object.is(Number(g), w)));
  t.deepEqual(bad.slice(0, 4).map((b) => b.map(String)), [], `${what}: ${bad.length} elements differ (index, got, torch)`);
}

function checkFigure(t: ExecutionContext, r: gx.Tensor, want: Figure, what: string): void {
  if ('number' in want) throw new Error('a result is a tensor');
  t.is(r.dtype, want.dtype as gx.DType, `${what}: dtype`);
  t.deepEqual(r.shape, want.shape, `${what}: shape`);
  sameBits(t, values(r), want.values, what);
}

for (const c of FLOOR_DIVIDE_CASES) {
  deviceTest(`floorDivide and div's roundingMode equal torch's: ${c.name}`, (t, device) => {
    gx.tidy(() => {
      const a = operand(c.a, device), b = operand(c.b, device);
      poisonCache(device, 64, 'float64');
      checkFigure(t, gx.floorDivide(a, b), c.floor, 'gx.floorDivide');
      checkFigure(t, gx.div(a, b, { roundingMode: 'floor' }), c.floor, 'gx.div floor');
      checkFigure(t, gx.div(a, b, { roundingMode: 'trunc' }), c.trunc, 'gx.div trunc');
      if (a instanceof gx.Tensor) {
        checkFigure(t, a.floorDivide(b), c.floor, 'Tensor.floorDivide');
        checkFigure(t, a.div(b, { roundingMode: 'trunc' }), c.trunc, 'Tensor.div trunc');
      }
    });
  });
}

const INT_DTYPES = ['int8', 'int16', 'int32', 'int64'] as const;
const MIN: Record<(typeof INT_DTYPES)[number], bigint> = { int8: -128n, int16: -32768n, int32: -(2n ** 31n), int64: -(2n ** 63n) };

deviceTest('integers: x // 0 is 0 in both modes (torch raises), INT_MIN // -1 wraps to INT_MIN (NumPy\'s; torch\'s int32 traps)', (t, device) => {
  gx.tidy(() => {
    for (const dtype of [...INT_DTYPES, 'uint8'] as const) {
      const big = dtype === 'int64';
      const min = dtype === 'uint8' ? 0n : MIN[dtype];
      const a = gx.tensor(big ? [7n, -7n, min, min, 0n] : [7, dtype === 'uint8' ? 9 : -7, Number(min), Number(min), 0], { dtype, device });
      const b = gx.tensor(big ? [0n, 0n, 0n, -1n, 0n] : [0, 0, 0, dtype === 'uint8' ? 0 : -1, 0], { dtype, device });
      const want = [0n, 0n, 0n, min, 0n];
      for (const mode of ['floor', 'trunc'] as const) {
        t.deepEqual(values(gx.div(a, b, { roundingMode: mode })).map(BigInt), want, `${dtype} ${mode}`);
      }
      t.deepEqual(values(gx.floorDivide(a, 0)).map(BigInt), [0n, 0n, 0n, 0n, 0n], `${dtype} // number 0`);
      if (dtype !== 'uint8') t.deepEqual(values(gx.floorDivide(a, -1)).map(BigInt), [-7n, 7n, min, min, 0n], `${dtype} // -1`);
    }
  });
});

deviceTest('int64: exact over the whole range, divisors of every size, both modes', (t, device) => {
  gx.tidy(() => {
    const r = rng(21);
    const bits = (): bigint => BigInt.asIntN(64, (BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32)));
    const num: bigint[] = [2n ** 63n - 1n, -(2n ** 63n), -(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, -(2n ** 63n)];
    const den: bigint[] = [1n, 1n, 7n, -3n, 2n, 2n, 2n ** 63n - 1n];
    while (num.length < 4000) {
      num.push(r() < 0.5 ? bits() : BigInt.asIntN(64, bits() >> BigInt(Math.floor(r() * 63))));
      den.push(BigInt.asIntN(64, bits() >> BigInt(Math.floor(r() * 64))) || 3n);
    }
    const a = gx.tensor(num, { dtype: 'int64', device }), b = gx.tensor(den, { dtype: 'int64', device });
    for (const [mode, ref] of [['floor', floorDivideRef], ['trunc', truncDivideRef]] as const) {
      const got = values(gx.div(a, b, { roundingMode: mode }));
      const wrong = num.map((x, i) => [x, den[i], got[i], ref(x, den[i], 'int')]).filter(([, , g, w]) => g !== w);
      t.deepEqual(wrong.slice(0, 5).map((w) => w.map(String)), [], `${mode}: ${wrong.length} of ${num.length} wrong`);
    }
  });
});

deviceTest('out, in place (floorDivide_, div_ with roundingMode) and the errors', (t, device) => {
  gx.tidy(() => {
    const x = gx.tensor([7, -7, 9, -9], { dtype: 'int32', device });
    const out = gx.full([4], -31111, { dtype: 'int32', device });
    t.is(gx.floorDivide(x, 2, { out }), out);
    t.deepEqual(values(out), [3, -4, 4, -5]);
    t.is(gx.div(x, -2, { roundingMode: 'trunc', out }), out);
    t.deepEqual(values(out), [-3, 3, -4, 4]);
    const y = x.clone();
    t.is(y.floorDivide_(gx.tensor([2, 2, -2, -2], { dtype: 'int32', device })), y);
    t.deepEqual(values(y), [3, -4, -5, 4]);
    const z = x.clone();
    t.is(z.div_(4, { roundingMode: 'trunc' }), z);
    t.deepEqual(values(z), [1, -1, 2, -2]);
    const f = gx.tensor([7.5, -7.5], { device });
    f.div_(2, { roundingMode: 'floor' });
    t.deepEqual(values(f), [3, -4]);
    // null is true division (torch's rounding_mode=None); integers then give float32.
    t.is(gx.div(x, 2, { roundingMode: null }).dtype, 'float32');
    t.throws(() => gx.div(x, 2, { roundingMode: 'round' as 'floor' }), { message: /^gx\.div: roundingMode must be 'floor', 'trunc' or null/ });
    t.throws(() => gx.div(x, 2, { rounding_mode: 'floor' } as gx.DivOptions), { message: /^gx\.div: .*roundingMode/ });
    t.throws(() => x.div_(2), { message: /^Tensor\.div_:/ });  // a float quotient does not cast to int32
    t.throws(() => x.floorDivide_(2.5), { message: /^Tensor\.floorDivide_:/ });
    t.throws(() => z.div_(2, { roundingMode: 'floor', out } as gx.DivOptions), { message: /^Tensor\.div_: .*out/ });
    const bools = gx.tensor([true, false], { device });
    t.throws(() => gx.floorDivide(bools, bools), { message: /^gx\.floorDivide: bool operands are not supported/ });
    t.throws(() => gx.div(bools, bools, { roundingMode: 'trunc' }), { message: /^gx\.div: bool operands are not supported/ });
  });
});

deviceTest('autograd: floorDivide refuses inputs that require grad, naming itself; div with roundingMode has a zero gradient (torch\'s)', (t, device) => {
  gx.tidy(() => {
    const x = gx.tensor([5, -3, 7.5], { dtype: 'float64', device });
    x.requiresGrad = true;
    const y = gx.tensor([2, 2, -2], { dtype: 'float64', device });
    y.requiresGrad = true;
    t.throws(() => gx.floorDivide(x, y), { message: /^gx\.floorDivide: the derivative is not implemented/ });
    t.throws(() => gx.floorDivide(3, y), { message: /^gx\.floorDivide: the derivative is not implemented/ });
    t.throws(() => x.floorDivide(2), { message: /^Tensor\.floorDivide: the derivative is not implemented/ });
    t.deepEqual(values(gx.noGrad(() => gx.floorDivide(x, y))), [2, -2, -4]);
    t.deepEqual(values(gx.floorDivide(x.detach(), 2)), [2, -2, 3]);
    for (const mode of ['floor', 'trunc'] as const) {
      const r = gx.div(x, y, { roundingMode: mode });
      t.true(r.requiresGrad, mode);
      gx.sum(gx.add(r, gx.mul(x, y))).backward();
      // d/dx (x * y) = y and d/dy = x; the rounded quotient adds nothing.
      t.deepEqual(values(x.grad as gx.Tensor), [2, 2, -2], `${mode}: x.grad`);
      t.deepEqual(values(y.grad as gx.Tensor), [5, -3, 7.5], `${mode}: y.grad`);
      x.grad = null;
      y.grad = null;
    }
  });
});

test('gx.fuse fuses floorDivide and div with a roundingMode (their functors; the literal picks the op)', (t) => {
  gx.tidy(() => {
    const a = gx.tensor([7, -7, 7.5], { dtype: 'float32' }), b = gx.tensor([2, 2, -0.5], { dtype: 'float32' });
    const f = gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.floorDivide(x, y));
    t.regex(f.source(a, b), /gx::ops::FloorDivideOp\{\}/);
    t.deepEqual(values(f(a, b)), [3, -4, -15]);
    const g = gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.add(gx.div(x, y, { roundingMode: 'trunc' }), x.div(y, { roundingMode: 'floor' })));
    t.regex(g.source(a, b), /gx::ops::TruncDivideOp\{\}.*gx::ops::FloorDivideOp\{\}/s);
    t.deepEqual(values(g(a, b)), [3 + 3, -3 - 4, -15 - 15]);
    t.regex(gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.div(x, y, { roundingMode: null })).source(a, b), /gx::ops::DivOp\{\}/);
    const mode = 'floor';
    t.throws(() => gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.div(x, y, { roundingMode: mode })).source(a, b), { message: /written as literals/ });
    t.throws(() => gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.div(x, y, { roundingMode: 'round' as 'floor' })).source(a, b), { message: /roundingMode must be/ });
    t.throws(() => gx.fuse((x: gx.Tensor, y: gx.Tensor) => gx.floorDivide(x, y, { out: x })).source(a, b));
  });
});
