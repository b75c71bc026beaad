// Convolutions and pools of gx.nn against torch on every device: unfold,
// fold, conv1d, conv2d (stride, padding incl. 'same' / 'valid', dilation,
// groups, bias, unbatched), maxPool1d/2d (ceil mode, dilation, indices) and
// avgPool1d/2d (countIncludePad, divisorOverride): outputs and the gradients
// of sum(y * gy) equal to torch's in float64 (figures from
// test/reference/torch_conv.py). Then gradcheck of the native unfold / fold,
// their adjointness, fold's summation order (bit for bit against a float32
// reference that adds in the same order), 16-bit floats, and the errors.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, rejects, rng, type TestDevice } from './helpers';
import { close, T, values } from './nn-helpers';
import { TORCH_CONV as REF, TORCH_CONV_INIT } from './nn-conv-torch-figures';

const F = gx.nn.functional;
type Spec = [number[], number, number, number];

const X: Spec = [[2, 3, 7, 8], 0.37, 0.1, 1.0];
const W: Spec = [[4, 3, 3, 2], 0.71, -0.3, 0.5];
const B: Spec = [[4], 0.9, 0.4, 0.3];
const X1: Spec = [[2, 3, 10], 0.43, 0.3, 1.0];

/** [inputs, the gx call] of each torch_conv.py case, by name. */
const CASES: Record<string, [Spec[], (...xs: gx.Tensor[]) => gx.Tensor | gx.nn.MaxPoolResult]> = {
  unfold_k3_p1: [[X], (x) => F.unfold(x, 3, { padding: 1 })],
  unfold_k23_d2_s2: [[X], (x) => F.unfold(x, [2, 3], { dilation: [2, 1], padding: [1, 2], stride: [2, 3] })],
  unfold_unbatched: [[[[3, 7, 8], 0.41, 0.2, 1.0]], (x) => F.unfold(x, [3, 2], { stride: 2 })],
  fold_k23_s1: [[[[2, 12, 16], 0.61, 0.3, 1.0]], (c) => F.fold(c, [5, 6], [2, 3])],
  fold_k3_p1_s2_d2: [[[[2, 27, 9], 0.23, 0.7, 1.0]], (c) => F.fold(c, [7, 8], 3, { dilation: 2, padding: 1, stride: 2 })],
  conv2d_basic: [[X, W, B], (x, w, b) => F.conv2d(x, w, b)],
  conv2d_stride_pad_dil: [[X, W, B], (x, w, b) => F.conv2d(x, w, b, { stride: [2, 1], padding: [1, 2], dilation: [1, 2] })],
  conv2d_same: [[X, [[4, 3, 4, 3], 0.33, 0.5, 0.5]], (x, w) => F.conv2d(x, w, null, { padding: 'same', dilation: [2, 1] })],
  conv2d_groups: [[[[2, 4, 6, 7], 0.19, 0.8, 1.0], [[6, 2, 3, 3], 0.47, 0.1, 0.5], [[6], 0.3, 0.2, 0.3]],
    (x, w, b) => F.conv2d(x, w, b, { groups: 2, padding: 1, stride: 2 })],
  conv2d_unbatched: [[[[3, 7, 8], 0.41, 0.2, 1.0], W], (x, w) => F.conv2d(x, w, null, { padding: 'valid' })],
  conv1d_basic: [[[[2, 3, 11], 0.29, 0.6, 1.0], [[5, 3, 3], 0.57, 0.2, 0.5], [[5], 0.8, 0.1, 0.3]],
    (x, w, b) => F.conv1d(x, w, b, { stride: 2, padding: 2, dilation: 2 })],
  conv1d_same_groups: [[[[2, 3, 9], 0.13, 0.4, 1.0], [[6, 1, 4], 0.67, 0.9, 0.5]], (x, w) => F.conv1d(x, w, null, { padding: 'same', groups: 3 })],
  maxpool2d_k2: [[X], (x) => F.maxPool2d(x, 2)],
  maxpool2d_k3_s2_p1_ceil_idx: [[X], (x) => F.maxPool2d(x, 3, { stride: 2, padding: 1, ceilMode: true, returnIndices: true })],
  maxpool2d_dil: [[X], (x) => F.maxPool2d(x, [2, 3], { stride: [1, 2], dilation: [2, 1], padding: [1, 1], returnIndices: true })],
  maxpool1d: [[X1], (x) => F.maxPool1d(x, 3, { stride: 2, padding: 1, ceilMode: true })],
  avgpool2d_k2: [[X], (x) => F.avgPool2d(x, 2)],
  avgpool2d_k3_s2_p1_ceil: [[X], (x) => F.avgPool2d(x, 3, { stride: 2, padding: 1, ceilMode: true })],
  avgpool2d_nopad_count: [[X], (x) => F.avgPool2d(x, [3, 2], { stride: [2, 3], padding: 1, ceilMode: true, countIncludePad: false })],
  avgpool2d_divisor: [[X], (x) => F.avgPool2d(x, 3, { stride: 2, padding: 1, divisorOverride: 5 })],
  avgpool1d: [[X1], (x) => F.avgPool1d(x, 4, { stride: 3, padding: 2, ceilMode: true, countIncludePad: false })],
};

deviceTestSerial('unfold, fold, conv1d/2d and the pools match torch: outputs and gradients (float64)', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  t.deepEqual(Object.keys(CASES).sort(), Object.keys(REF).sort(), 'every torch case is checked');
  for (const [name, [specs, call]] of Object.entries(CASES)) {
    gx.tidy(() => {
      const ref = REF[name];
      const xs = specs.map(([shape, a, b, s]) => T(shape, a, b, s, d).requiresGrad_());
      const r = call(...xs);
      const y = r instanceof gx.Tensor ? r : r.values;
      t.deepEqual([...y.shape], ref.shape, `${name}: shape`);
      close(t, values(y), ref.y, `${name}: output`, 1e-12, 1e-12);
      if (ref.indices !== undefined && !(r instanceof gx.Tensor)) {
        t.is(r.indices.dtype, 'int64');
        t.deepEqual(values(r.indices), ref.indices, `${name}: indices`);
      }
      const gy = T([...y.shape], 0.53, 0.29, 1.0, d);
      gx.sum(gx.mul(y, gy)).backward();
      xs.forEach((x, i) => close(t, values(x.grad as gx.Tensor), ref.grads[i], `${name}: gradient of input ${i}`, 1e-12, 1e-12));
    });
  }
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});

/** A float64 tensor of uniform values in [-1, 1) that requires grad. */
function R(d: TestDevice, shape: number[], seed: number, dtype: gx.DType = 'float64'): gx.Tensor {
  const r = rng(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  return gx.tensor(Array.from({ length: n }, () => 2 * r() - 1), { dtype, device: d }).reshape(shape);
}

deviceTest('gradcheck: unfold, fold, conv2d with groups and bias, conv1d, the pools', (t, d) => {
  gx.tidy(() => {
    const x = R(d, [2, 4, 5, 6], 1).requiresGrad_();
    const w = R(d, [6, 2, 3, 2], 2).requiresGrad_();
    const b = R(d, [6], 3).requiresGrad_();
    const c = R(d, [2, 16, 12], 4).requiresGrad_();
    const x1 = R(d, [2, 4, 9], 5).requiresGrad_();
    const w1 = R(d, [3, 4, 3], 6).requiresGrad_();
    const check = (what: string, f: (...xs: gx.Tensor[]) => gx.Tensor, inputs: gx.Tensor[]): void => {
      const rep = gx.autograd.gradcheck(f, inputs, { raiseException: false });
      t.true(rep.ok, `${what}: ${JSON.stringify(rep.worst)}`);
    };
    check('unfold', (v) => F.unfold(v, [2, 3], { padding: 1, stride: [2, 1], dilation: [1, 2] }), [x]);
    check('fold', (v) => F.fold(v, [5, 6], 2, { padding: 1, stride: 2 }), [c]);
    check('conv2d', (v, u, e) => F.conv2d(v, u, e, { groups: 2, stride: 2, padding: [1, 0] }), [x, w, b]);
    check('conv1d', (v, u) => F.conv1d(v, u, null, { padding: 'same', dilation: 2 }), [x1, w1]);
    check('maxPool2d', (v) => F.maxPool2d(v, 2, { stride: 1, padding: 1 }), [x]);
    check('avgPool2d', (v) => F.avgPool2d(v, 3, { stride: 2, padding: 1, ceilMode: true, countIncludePad: false }), [x]);
  });
});

deviceTest('fold is unfold\'s adjoint: <unfold(x), c> = <x, fold(c)>', (t, d) => {
  gx.tidy(() => {
    const x = R(d, [3, 2, 9, 7], 11);
    const opts = { padding: [2, 1], stride: [2, 3], dilation: [2, 1] };
    const u = F.unfold(x, [3, 2], opts);
    const c = R(d, [...u.shape], 12);
    const f = F.fold(c, [9, 7], [3, 2], opts);
    const lhs = gx.sum(gx.mul(u, c)).item(), rhs = gx.sum(gx.mul(x, f)).item();
    t.true(Math.abs(lhs - rhs) <= 1e-12 * Math.max(1, Math.abs(lhs)), `${lhs} vs ${rhs}`);
  });
});

/** fold in float32, adding each element's windows in the kernels' order ((i, j) ascending) with float32 rounding. */
function foldReference(c: Float32Array, n: number, ch: number, h: number, w: number, k: number, s: number, p: number): Float32Array {
  const oh = Math.floor((h + 2 * p - k) / s) + 1, ow = Math.floor((w + 2 * p - k) / s) + 1;
  const out = new Float32Array(n * ch * h * w);
  for (let b = 0; b < n; b++) for (let cc = 0; cc < ch; cc++) for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    let acc = 0;
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) {
      const hh = y + p - i, ww = x + p - j;
      if (hh < 0 || ww < 0 || hh % s !== 0 || ww % s !== 0 || hh / s >= oh || ww / s >= ow) continue;
      acc = Math.fround(acc + c[((b * ch + cc) * k * k + i * k + j) * oh * ow + (hh / s) * ow + ww / s]);
    }
    out[((b * ch + cc) * h + y) * w + x] = acc;
  }
  return out;
}

deviceTest('fold in float32 sums in one order: equal bit for bit to a reference adding in that order (and CUDA to the CPU)', (t, d) => {
  gx.tidy(() => {
    const c = R(d, [2, 3 * 9, 16], 21, 'float32');
    const f = F.fold(c, [7, 7], 3, { padding: 1, stride: 2 });
    const ref = foldReference(c.toArraySync() as Float32Array, 2, 3, 7, 7, 3, 2, 1);
    t.deepEqual(Array.from(f.toArraySync() as Float32Array), Array.from(ref));
    if (d !== 'cpu') t.deepEqual(Array.from(F.fold(c.cpu(), [7, 7], 3, { padding: 1, stride: 2 }).toArraySync() as Float32Array), Array.from(ref));
  });
});

deviceTest('16-bit floats: unfold copies exactly, fold and conv2d compute in float (within a rounding of float64\'s)', (t, d) => {
  gx.tidy(() => {
    for (const dtype of ['float16', 'bfloat16'] as const) {
      const x64 = R(d, [2, 3, 6, 5], 31);
      const x = x64.astype(dtype);
      const u = F.unfold(x, 3, { padding: 1 });
      t.is(u.dtype, dtype);
      t.deepEqual(values(u.astype('float64')), values(F.unfold(x.astype('float64'), 3, { padding: 1 })), `${dtype} unfold`);
      const w = R(d, [4, 3, 3, 3], 32).astype(dtype);
      const y = values(F.conv2d(x, w, null, { padding: 1 }).astype('float64'));
      const y64 = values(F.conv2d(x.astype('float64'), w.astype('float64'), null, { padding: 1 }));
      const tol = dtype === 'float16' ? 2e-2 : 1.5e-1;
      close(t, y, y64, `${dtype} conv2d`, tol, 1e-2);
      const f = values(F.fold(u, [6, 5], 3, { padding: 1 }).astype('float64'));
      close(t, f, values(F.fold(u.astype('float64'), [6, 5], 3, { padding: 1 })), `${dtype} fold`, tol, 1e-2);
    }
  });
});

test('Conv2d and Conv1d initialize as torch (kaiming uniform a = sqrt(5), bias within 1/sqrt(fanIn)) and compute conv2d', (t) => {
  const ref = TORCH_CONV_INIT;
  const c = new gx.nn.Conv2d(16, 32, 5);
  const w = values(c.weight), b = values(c.bias as gx.Tensor);
  t.deepEqual([...c.weight.shape], [32, 16, 5, 5]);
  const wmax = Math.max(...w.map(Math.abs)), bmax = Math.max(...b.map(Math.abs));
  t.true(wmax <= ref.w_bound && wmax > 0.95 * ref.w_bound, `weight within torch's bound ${ref.w_bound} and filling it: ${wmax}`);
  t.true(bmax <= ref.b_bound && bmax > 0.8 * ref.b_bound, `bias within ${ref.b_bound}: ${bmax}`);
  // Uniform on [-bound, bound]: variance bound^2 / 3.
  const variance = w.reduce((a, v) => a + v * v, 0) / w.length;
  t.true(Math.abs(variance / (ref.w_bound ** 2 / 3) - 1) < 0.05, `variance ${variance}`);
  gx.tidy(() => {
    const x = R('cpu', [2, 16, 9, 9], 41, 'float32');
    close(t, values(c.call(x)), values(F.conv2d(x, c.weight, c.bias)), 'Conv2d.call', 0, 0);
  });
  const c1 = new gx.nn.Conv1d(4, 6, 3, { groups: 2, bias: false, padding: 'same' });
  t.deepEqual([...c1.weight.shape], [6, 2, 3]);
  t.is(c1.bias, null);
  t.is(c.parameters().length, 2);
  c.dispose();
  c1.dispose();
});

test('pooling modules and Flatten compute as their functions', (t) => {
  gx.tidy(() => {
    const x = R('cpu', [2, 3, 8, 8], 51, 'float32');
    const same = (m: gx.nn.Module, want: gx.Tensor, what: string): void => {
      t.deepEqual(values(m.call(x)), values(want), what);
    };
    same(new gx.nn.MaxPool2d(3, { stride: 2, padding: 1 }), F.maxPool2d(x, 3, { stride: 2, padding: 1 }), 'MaxPool2d');
    same(new gx.nn.AvgPool2d(2, { countIncludePad: false }), F.avgPool2d(x, 2), 'AvgPool2d');
    const f = new gx.nn.Flatten();
    t.deepEqual([...f.call(x).shape], [2, 192]);
    const x1 = x.reshape([2, 3, 64]);
    t.deepEqual(values(new gx.nn.MaxPool1d(4).call(x1)), values(F.maxPool1d(x1, 4)));
    t.deepEqual(values(new gx.nn.AvgPool1d(4, { stride: 2 }).call(x1)), values(F.avgPool1d(x1, 4, { stride: 2 })));
  });
});

deviceTest('bad arguments throw naming the function and the argument', (t, d) => {
  using x = R(d, [2, 3, 5, 5], 61, 'float32');
  using w = R(d, [4, 3, 3, 3], 62, 'float32');
  using xi = gx.zeros([2, 3, 5, 5], { dtype: 'int32', device: d });
  rejects(t, d, () => F.unfold(x, 0), RangeError, /gx\.nn\.functional\.unfold: argument 'kernelSize' must be positive/);
  rejects(t, d, () => F.unfold(x, 3, { stride: [1, 0] }), RangeError, /unfold: argument 'stride' must be positive/);
  rejects(t, d, () => F.unfold(x, 7), RangeError, /unfold: the input's spatial size \[5, 5\].*at least 1/);
  rejects(t, d, () => F.unfold(x, 3, { paddin: 1 } as gx.nn.UnfoldOptions), TypeError, /unfold.*paddin/);
  rejects(t, d, () => F.unfold(xi, 3), TypeError, /unfold: argument 'input' must be a floating tensor/);
  rejects(t, d, () => F.unfold(x.reshape([150]), 3), RangeError, /unfold: argument 'input' must be 3-d \(unbatched\) or 4-d/);
  rejects(t, d, () => F.fold(gx.zeros([2, 10, 4], { device: d }), [3, 3], 2), RangeError, /fold: the size of dim 1 of 'input' \(10\)/);
  rejects(t, d, () => F.fold(gx.zeros([2, 8, 5], { device: d }), [3, 3], 2), RangeError, /fold: outputSize \[3, 3\].*must be 4, got 5/);
  rejects(t, d, () => F.conv2d(x, w.reshape([4, 1, 9, 3])), RangeError, /conv2d: argument 'input' of shape \[2, 3, 5, 5\] has 3 channels/);
  rejects(t, d, () => F.conv2d(x, w, null, { padding: 'same', stride: 2 }), RangeError, /conv2d: padding 'same' is not supported for strided/);
  rejects(t, d, () => F.conv2d(x, w, null, { groups: 0 }), RangeError, /conv2d: argument 'groups'/);
  rejects(t, d, () => F.conv2d(x, w, gx.zeros([3], { device: d })), RangeError, /conv2d: argument 'bias' must be \[4\]/);
  rejects(t, d, () => F.conv2d(x, w.astype('float64')), TypeError, /conv2d: input \(float32\) and weight \(float64\)/);
  rejects(t, d, () => F.conv1d(x, w), RangeError, /conv1d: argument 'weight' must be 3-d/);
  rejects(t, d, () => F.maxPool2d(x, 2, { padding: 2 }), RangeError, /maxPool2d: argument 'padding' must be at most half the kernel size/);
  rejects(t, d, () => F.avgPool2d(x, 2, { divisorOverride: 0 }), RangeError, /avgPool2d: argument 'divisorOverride'/);
  rejects(t, d, () => new gx.nn.Conv2d(3, 4, 3, { groups: 2 }), RangeError, /gx\.nn\.Conv2d: inChannels \(3\) must be divisible by groups \(2\)/);
  rejects(t, d, () => new gx.nn.Conv2d(3, 4, 3, JSON.parse('{"paddingMode":"reflect"}') as gx.nn.ConvLayerOptions), RangeError, /Conv2d: argument 'paddingMode'/);
});

deviceTest('1-d unfold and fold are the 2-d ones over a unit height; unbatched fold drops the batch dim', (t, d) => {
  gx.tidy(() => {
    const x = R(d, [2, 3, 11], 71);
    const opts = { padding: 2, stride: 3, dilation: 2 };
    const u1 = F.unfold(x, [3], opts);
    const u2 = F.unfold(x.reshape([2, 3, 1, 11]), [1, 3], { padding: [0, 2], stride: [1, 3], dilation: [1, 2] });
    t.deepEqual([...u1.shape], [2, 9, 4]);
    t.deepEqual(values(u1), values(u2));
    const f1 = F.fold(u1, [11], [3], opts);
    t.deepEqual([...f1.shape], [2, 3, 11]);
    t.deepEqual(values(f1), values(F.fold(u2, [1, 11], [1, 3], { padding: [0, 2], stride: [1, 3], dilation: [1, 2] })));
    const c = R(d, [12, 16], 72);
    const fu = F.fold(c, [5, 6], [2, 3]);
    t.deepEqual([...fu.shape], [2, 5, 6]);
    t.deepEqual(values(fu), values(F.fold(c.reshape([1, 12, 16]), [5, 6], [2, 3])));
  });
});
