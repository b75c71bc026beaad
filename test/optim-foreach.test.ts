// The multi-tensor path of gx.optim.SGD, Adam and AdamW (lib/optim/foreach.ts,
// ops/optim/) against the per-parameter path, bit for bit, on every device:
// random parameters of several shapes (one past a CUDA chunk, more tensors
// than one launch holds) and each floating dtype, random gradients each step;
// a non-contiguous parameter and one without a gradient ride along. The
// capturable Adam (step counts on the device) to 1e-5; the option errors.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, type TestDevice } from './helpers';

const FLOATS = ['float32', 'float64', 'float16', 'bfloat16'] as const;
// 40 small tensors (more than the 36 of one CUDA launch), one of 40000 elements (past the 16384 of a chunk).
const SHAPES: number[][] = [[3, 5], [7], [2, 3, 4], [], [40000], ...Array.from({ length: 40 }, (_, i) => [i + 1])];

/** Parameters of `dtype` on `device`, from `seed`, plus a float64 one, a non-contiguous one and one left without a gradient. */
function makeParams(device: TestDevice, dtype: gx.DType, seed: number): gx.Tensor[] {
  const g = new gx.Generator(seed);
  const ps = SHAPES.map((s) => gx.randn(s, { generator: g, device }).astype(dtype));
  ps.push(gx.randn([4], { generator: g, device, dtype: 'float64' }));
  ps.push(gx.randn([3, 4], { generator: g, device }).astype(dtype).T);  // a transposed view: per parameter
  ps.push(gx.randn([2], { generator: g, device }).astype(dtype));        // no gradient: untouched
  return ps.map((p) => p.requiresGrad_());
}

/** Random gradients for every parameter but the last, of its dtype and layout. */
function setGrads(ps: readonly gx.Tensor[], seed: number): void {
  const g = new gx.Generator(seed);
  ps.slice(0, -1).forEach((p) => {
    p.grad = gx.randn(p.shape, { generator: g, device: p.device }).astype(p.dtype);
  });
}

function bits(t: gx.Tensor): number[] {
  return Array.from(t.astype('float64').toArraySync() as Float64Array);
}

type Make = (ps: gx.Tensor[], foreach: boolean) => gx.optim.Optimizer<object>;

const CASES: Record<string, Make> = {
  'SGD momentum, dampening, decay': (ps, foreach) => new gx.optim.SGD(ps, { lr: 0.1, momentum: 0.9, dampening: 0.1, weightDecay: 0.01, foreach }),
  'SGD nesterov': (ps, foreach) => new gx.optim.SGD(ps, { lr: 0.05, momentum: 0.8, nesterov: true, foreach }),
  'SGD plain, maximize': (ps, foreach) => new gx.optim.SGD(ps, { lr: 0.3, maximize: true, foreach }),
  'Adam decay': (ps, foreach) => new gx.optim.Adam(ps, { lr: 1e-2, weightDecay: 0.1, foreach }),
  'Adam amsgrad, maximize, beta1 0.3': (ps, foreach) => new gx.optim.Adam(ps, { lr: 3e-2, betas: [0.3, 0.9], amsgrad: true, maximize: true, foreach }),
  'AdamW amsgrad': (ps, foreach) => new gx.optim.AdamW(ps, { lr: 1e-2, weightDecay: 0.1, amsgrad: true, foreach }),
};

for (const [name, make] of Object.entries(CASES)) {
  deviceTest(`${name}: the multi-tensor step equals the per-parameter step bit for bit`, (t, device) => {
    for (const dtype of FLOATS) {
      const a = makeParams(device, dtype, 7), b = makeParams(device, dtype, 7);
      const ref = make(a, false), multi = make(b, true);
      for (let step = 0; step < 3; step++) {
        setGrads(a, 100 + step);
        setGrads(b, 100 + step);
        ref.step();
        multi.step();
      }
      a.forEach((p, i) => t.deepEqual(bits(b[i]), bits(p), `${dtype} parameter ${i} (shape [${p.shape}])`));
      // The state too: momentum buffers, moments, step counts.
      a.forEach((p, i) => {
        const sa = ref.state.get(p) ?? {}, sb = multi.state.get(b[i]) ?? {};
        t.deepEqual(Object.keys(sb).sort(), Object.keys(sa).sort(), `${dtype} state keys of parameter ${i}`);
        for (const [k, v] of Object.entries(sa)) {
          if (v instanceof gx.Tensor) t.deepEqual(bits(sb[k] as gx.Tensor), bits(v), `${dtype} ${k} of parameter ${i}`);
          else t.deepEqual(sb[k], v, `${dtype} ${k} of parameter ${i}`);
        }
      });
      t.notDeepEqual(bits(b[0]), bits(makeParams(device, dtype, 7)[0]), 'the parameters moved');
      for (const x of [...a, ...b]) { x.grad = null; x.dispose(); }
      ref.dispose();
      multi.dispose();
    }
  });
}

deviceTest('Adam capturable keeps step counts on the device and agrees with the host step to 1e-5', (t, device) => {
  for (const decoupled of [false, true]) {
    const a = makeParams(device, 'float32', 3).slice(0, 6), b = makeParams(device, 'float32', 3).slice(0, 6);
    const Opt = decoupled ? gx.optim.AdamW : gx.optim.Adam;
    const ref = new Opt(a, { lr: 1e-2, weightDecay: 0.05, foreach: false });
    const cap = new Opt(b, { lr: 1e-2, weightDecay: 0.05, capturable: true });
    for (let step = 0; step < 4; step++) {
      setGrads(a, 200 + step);
      setGrads(b, 200 + step);
      ref.step();
      cap.step();
    }
    a.forEach((p, i) => {
      const x = bits(b[i]), y = bits(p);
      x.forEach((v, j) => t.true(Math.abs(v - y[j]) <= 1e-5 * Math.max(1, Math.abs(y[j])), `parameter ${i}[${j}]: ${v} vs ${y[j]}`));
    });
    const step = cap.state.get(b[0])?.step;
    t.true(step instanceof gx.Tensor && step.dtype === 'float64' && step.device.type === device);
    t.is((step as gx.Tensor).item(), 4);
    for (const x of [...a, ...b]) { x.grad = null; x.dispose(); }
    ref.dispose();
    cap.dispose();
  }
});

test('foreach and fused: booleans, not both true; capturable refuses a non-contiguous parameter', (t) => {
  const w = gx.randn([3]).requiresGrad_();
  t.throws(() => new gx.optim.Adam([w], { foreach: true, fused: true }), { instanceOf: RangeError, message: 'gx.optim.Adam: `fused` and `foreach` cannot be `true` together.' });
  t.throws(() => new gx.optim.SGD([w], { foreach: 1 as unknown as boolean }), { instanceOf: TypeError, message: /gx\.optim\.SGD: foreach must be a boolean, got number 1/ });
  const v = gx.randn([3, 2]).T.requiresGrad_();
  v.grad = gx.randn([3, 2]).T;
  const opt = new gx.optim.Adam([v], { capturable: true });
  t.throws(() => opt.step(), { message: /Adam\.step: capturable needs each parameter and its gradient contiguous.*shape \[2, 3\].*not contiguous/ });
  opt.dispose();
});
