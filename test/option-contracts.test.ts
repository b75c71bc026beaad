// Two option contracts, over every function of gx, gx.linalg and gx.nn.functional:
//  - `out`: a call that accepts { out } writes into out exactly what the same call returns
//    without it, and returns out itself. gx.any / gx.all broke it (out got the count of nonzero
//    elements, a new tensor came back).
//  - `dtype`: a call that accepts { dtype } returns a tensor of that dtype. gx.any / gx.all took
//    a dtype and gave bool whatever it was.
// The walk finds such a function without knowing its signature: each is tried in a few call
// forms, and every form that works without the option is checked with it.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, type TestDevice } from './helpers';

type Loose = (...args: unknown[]) => unknown;
type Form = [string, (f: Loose, o?: object) => unknown];
/** What a form's call gave without the option, and the call again with more options. */
type Check = (name: string, plain: gx.Tensor, call: (o: object) => unknown) => boolean;

// Functions that take no tensor first, run code, draw random numbers or write files: not ops to walk.
const SKIP = new Set(['tensor', 'tidy', 'save', 'load', 'loadTensor', 'loadTensors', 'inspectTensors', 'benchmark', 'manualSeed',
  'vectorize', 'fuse', 'jit', 'elementwiseKernel', 'reductionKernel', 'loadLibrary', 'loadInline', 'grad', 'valueAndGrad',
  'noGrad', 'enableGrad', 'withStream', 'setFloat32MatmulPrecision', 'mapBlocks', 'chunked', 'dropout', 'rand', 'randn',
  'randint', 'randperm', 'uniform', 'normal', 'bernoulli', 'multinomial', 'randLike', 'randnLike', 'empty', 'emptyLike']);

/** Runs `check` on every (function, form) that works without the option; the number of calls it checked. */
function walk(t: ExecutionContext, device: TestDevice, check: Check): number {
  using x = gx.tensor([[1.5, -2, 0], [4, 0.25, -1]], { device });
  using y = gx.tensor([[2, 3, -1], [0.5, 1, 7]], { device });
  using pos = gx.tensor([[2, 0.5, 1], [4.5, 0.75, 3]], { device });
  using sq = gx.tensor([[2, 1], [1, 3]], { device });
  const forms: Form[] = [
    ['x', (f, o) => (o ? f(x, o) : f(x))],
    ['x, 1', (f, o) => (o ? f(x, 1, o) : f(x, 1))],
    ['x, { axis: 1 }', (f, o) => f(x, { axis: 1, ...o })],
    ['x, { axis: 0, keepdims }', (f, o) => f(x, { axis: 0, keepdims: true, ...o })],
    ['x, -1', (f, o) => (o ? f(x, -1, o) : f(x, -1))],
    ['x, y', (f, o) => (o ? f(x, y, o) : f(x, y))],
    ['x, y, { axis: 1 }', (f, o) => f(x, y, { axis: 1, ...o })],
    ['pos', (f, o) => (o ? f(pos, o) : f(pos))],
    ['pos, 1', (f, o) => (o ? f(pos, 1, o) : f(pos, 1))],
    ['sq', (f, o) => (o ? f(sq, o) : f(sq))],
    ['sq, sq', (f, o) => (o ? f(sq, sq, o) : f(sq, sq))],
    ['[2, 3]', (f, o) => (o ? f([2, 3], { device, ...o }) : f([2, 3], { device }))],
    ['0, 5', (f, o) => f(0, 5, { device, ...o })],
  ];
  const spaces: [string, Record<string, unknown>][] = [['gx', gx], ['gx.linalg', gx.linalg], ['gx.nn.functional', gx.nn.functional]];
  let checked = 0;
  for (const [prefix, space] of spaces) {
    for (const [name, f] of Object.entries(space)) {
      if (typeof f !== 'function' || SKIP.has(name) || /^[A-Z]/.test(name)) continue;
      for (const [form, call] of forms) {
        let plain: unknown;
        try {
          plain = gx.tidy(() => call(f as Loose));
        } catch {
          continue;  // not this function's form
        }
        if (!(plain instanceof gx.Tensor)) continue;
        using expected = plain;
        if (check(`${prefix}.${name}(${form})`, expected, (o) => gx.tidy(() => call(f as Loose, o)))) checked++;
      }
    }
  }
  t.log(`${checked} calls checked`);
  return checked;
}

const values = (x: gx.Tensor): unknown[] => Array.from(x.toArraySync() as ArrayLike<unknown>);

deviceTest('every function that takes { out } writes its result there and returns it', (t, device) => {
  const faults: string[] = [];
  const checked = walk(t, device, (call, expected, again) => {
    using out = gx.full(expected.shape, 77, { dtype: expected.dtype, device });
    let got: unknown;
    try {
      got = again({ out });
    } catch (e) {
      // Takes no out (or not in this form); but an out of the result's own shape and dtype is never refused.
      const message = e instanceof Error ? e.message : String(e);
      if (/\bout\b/.test(message) && !/unknown option 'out'|"out"/.test(message)) faults.push(`${call} refuses its own result's out: ${message}`);
      return false;
    }
    const want = values(expected), have = values(out);
    const same = want.length === have.length && want.every((v, i) => Object.is(v, have[i]));
    if (got !== out || !same) faults.push(`${call}: ${got === out ? '' : 'did not return out; '}out ${String(have)}, expected ${String(want)}`);
    if (got !== out && got instanceof gx.Tensor) got.dispose();
    return true;
  });
  t.deepEqual(faults, []);
  t.true(checked >= 300, `only ${checked} calls took out: the walk lost its functions`);
});

deviceTest('every function that takes { dtype } returns that dtype', (t, device) => {
  const faults: string[] = [];
  const checked = walk(t, device, (call, _expected, again) => {
    let any = false;
    for (const dtype of ['float64', 'int32', 'float16'] as const) {
      let got: unknown;
      try {
        got = again({ dtype });
      } catch {
        continue;  // takes no dtype, or not this one
      }
      any = true;
      if (!(got instanceof gx.Tensor) || got.dtype !== dtype) {
        faults.push(`${call} with { dtype: '${dtype}' } gave ${got instanceof gx.Tensor ? got.dtype : typeof got}`);
      }
      if (got instanceof gx.Tensor) got.dispose();
    }
    return any;
  });
  t.deepEqual(faults, []);
  t.true(checked >= 40, `only ${checked} calls took a dtype: the walk lost its functions`);
});
