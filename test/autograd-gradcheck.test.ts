// gx.autograd.gradcheck and precision: inputs that require grad but are not
// float64 draw one process warning (the first call only) and the same hint
// in a mismatch's error, as torch's gradcheck warns; float64 draws neither.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, rng } from './helpers';

const cube = (x: gx.Tensor): gx.Tensor => gx.mul(gx.mul(x, x), x);

/** Values in [-2, 2) that are not all zero. */
function input(dtype: 'float32' | 'float64', n: number, seed: number, device = 'cpu'): gx.Tensor {
  const r = rng(seed);
  const v = Array.from({ length: n }, () => (r() - 0.5) * 4);
  return gx.tensor(v, { dtype, device }).requiresGrad_();
}

test.serial('gradcheck warns once per process when an input that requires grad is not float64', async (t) => {
  const warnings: Error[] = [];
  const listen = (w: Error): void => { warnings.push(w); };
  process.on('warning', listen);
  try {
    t.true(gx.autograd.gradcheck(cube, [input('float64', 5, 1)]).ok, 'float64: passes');
    await new Promise((r) => setImmediate(r));  // warnings are emitted on the next tick
    t.is(warnings.length, 0, 'no warning for float64');
    // A correct derivative in float32 fails the finite differences; the warning and the error say why.
    const r = gx.autograd.gradcheck(cube, [input('float32', 5, 2)], { raiseException: false });
    t.false(r.ok, `float32 finite differences of x^3 are far off (worst excess ${r.worstExcess})`);
    gx.autograd.gradcheck(cube, [input('float32', 5, 3)], { raiseException: false });
    await new Promise((r) => setImmediate(r));
    t.is(warnings.length, 1, 'one warning for two calls');
    t.is((warnings[0] as Error & { code?: string }).code, 'GPUEXT_GRADCHECK_PRECISION');
    t.regex(warnings[0].message, /^gx\.autograd\.gradcheck: input 0 is float32: finite differences need float64 inputs/);
  } finally {
    process.off('warning', listen);
  }
});

deviceTest('gradcheck: a mismatch with inputs not in float64 says finite differences need float64', (t, device) => {
  gx.tidy(() => {
    const a = input('float64', 4, 4, device), b = input('float32', 4, 5, device);
    const f = (x: gx.Tensor, y: gx.Tensor): gx.Tensor => cube(gx.mul(x, y.astype('float64')));
    t.throws(() => gx.autograd.gradcheck(f, [a, b]), {
      message: /analytically but .* by finite differences .*; input 1 is float32: finite differences need float64 inputs .*pass x\.astype\('float64'\)$/,
    });
    // The same function with both in float64 passes, and a float64 mismatch has no such hint.
    t.true(gx.autograd.gradcheck(f, [a, input('float64', 4, 5, device)]).ok);
    const wrong = (x: gx.Tensor): gx.Tensor => gx.add(cube(x), gx.mul(x.detach(), x.detach()));
    const e = t.throws(() => gx.autograd.gradcheck((x) => gx.mul(wrong(x), 1), [a]));
    t.notRegex(e?.message ?? '', /float64 inputs/);
  });
});
