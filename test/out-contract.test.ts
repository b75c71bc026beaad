// The `out` contract, over every function of gx, gx.linalg and gx.nn.functional: a call that accepts
// { out } writes into out exactly what the same call returns without it, and returns out itself.
// gx.any / gx.all broke it (out got the count of nonzero elements, a new tensor came back); this
// walk finds such a function without knowing its signature: each is tried in a few call forms,
// and every form that works without out is checked with an out of its result's shape and dtype,
// which it must take (an error about out, other than out being unknown, is a fault).
import * as gx from '../lib';
import { deviceTest } from './helpers';

type Loose = (...args: unknown[]) => unknown;
type Form = [string, (f: Loose, o?: object) => unknown];

// Functions that take no tensor first, run code, or write files: not ops with an out.
const SKIP = new Set(['tensor', 'tidy', 'save', 'load', 'loadTensor', 'loadTensors', 'inspectTensors', 'benchmark', 'manualSeed',
  'vectorize', 'fuse', 'jit', 'elementwiseKernel', 'reductionKernel', 'loadLibrary', 'loadInline', 'grad', 'valueAndGrad',
  'noGrad', 'enableGrad', 'withStream', 'setFloat32MatmulPrecision', 'mapBlocks', 'chunked']);

deviceTest('every function that takes { out } writes its result there and returns it', (t, device) => {
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
  ];
  const spaces: [string, Record<string, unknown>][] = [['gx', gx], ['gx.linalg', gx.linalg], ['gx.nn.functional', gx.nn.functional]];
  const faults: string[] = [];
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
        using out = gx.full(expected.shape, 77, { dtype: expected.dtype, device });
        let got: unknown;
        try {
          got = gx.tidy(() => call(f as Loose, { out }));
        } catch (e) {
          // Takes no out (or not in this form); but an out of the result's own shape and dtype is never refused.
          const message = e instanceof Error ? e.message : String(e);
          if (/\bout\b/.test(message) && !/unknown option 'out'|"out"/.test(message)) faults.push(`${prefix}.${name}(${form}) refuses its own result's out: ${message}`);
          continue;
        }
        checked++;
        const want = expected.toArraySync(), have = out.toArraySync();
        const same = want.length === have.length && Array.from(want as ArrayLike<unknown>).every((v, i) => Object.is(v, (have as ArrayLike<unknown>)[i]));
        if (got !== out || !same) faults.push(`${prefix}.${name}(${form}): ${got === out ? '' : 'did not return out; '}out ${String(Array.from(have as ArrayLike<unknown>))}, expected ${String(Array.from(want as ArrayLike<unknown>))}`);
        if (got !== out && got instanceof gx.Tensor) got.dispose();
      }
    }
  }
  t.deepEqual(faults, []);
  t.true(checked >= 300, `only ${checked} calls took out: the walk lost its functions`);
});
