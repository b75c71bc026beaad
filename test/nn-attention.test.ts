// RMSNorm, Bilinear, scaledDotProductAttention and MultiheadAttention on every
// device against torch's figures (test/reference/torch_nn.py, torch 2.13 CPU
// float64: outputs and the gradients of every input and parameter), torch's
// initial statistics and state-dict names, gradcheck, and refusals.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest } from './helpers';
import { close, T, values } from './nn-helpers';
import { TORCH } from './nn-torch-figures';

const F = gx.nn.functional;
type Grads = { y: number[] } & Record<string, number[]>;

/** y = f(inputs) with inputs requiring grad; sum(y * gy).backward(); y and each gradient against torch's (g0, g1, ...). */
function checkGrads(t: Parameters<Parameters<typeof deviceTest>[1]>[0], ref: Grads, inputs: gx.Tensor[], f: (...x: gx.Tensor[]) => gx.Tensor, gySeed: number, d: gx.DeviceLike, what: string): void {
  const xs = inputs.map((x) => x.requiresGrad_());
  const y = f(...xs);
  gx.sum(gx.mul(y, T([...y.shape], 0.37, gySeed, 1, d))).backward();
  close(t, values(y), ref.y, `${what} y`, 1e-9);
  xs.forEach((x, i) => close(t, values(x.grad as gx.Tensor), ref[`g${i}`], `${what} grad ${i}`, 1e-9));
}

deviceTest('rmsNorm and RMSNorm match torch: output and gradients; eps defaults to the dtype\'s machine epsilon', (t, d) => {
  gx.tidy(() => {
    const m = new gx.nn.RMSNorm([4, 6], { dtype: 'float64', device: d });
    t.is(m.eps, TORCH.rmsnorm_default_eps.module_eps);
    gx.noGrad(() => m.weight?.copy_(gx.add(T([4, 6], 0.23, 0.9, 0.5, d), 1)));
    const x = T([3, 4, 6], 0.41, 0.2, 2, d).requiresGrad_();
    const y = m.call(x);
    gx.sum(gx.mul(y, T([3, 4, 6], 0.37, 0.3, 1, d))).backward();
    close(t, values(y), TORCH.rmsnorm.y, 'y', 1e-9);
    close(t, values(x.grad as gx.Tensor), TORCH.rmsnorm.g0, 'grad x', 1e-9);
    close(t, values(m.weight?.grad as gx.Tensor), TORCH.rmsnorm.g1, 'grad weight', 1e-9);
    checkGrads(t, TORCH.rmsnorm_eps, [T([3, 4, 6], 0.41, 0.2, 2, d)], (a) => F.rmsNorm(a, [6], null, 0.1), 0.5, d, 'eps 0.1');
    t.is(F.finfoEps('float32'), TORCH.rmsnorm_default_eps.float32);
    t.is(F.finfoEps('float64'), TORCH.rmsnorm_default_eps.float64);
    // A small input shows eps: the default of float32 is 2^-23, not LayerNorm's 1e-5.
    const small = gx.mul(gx.randn([2, 8], { device: d }), 1e-3);
    const want = F.rmsNorm(small, [8], null, 2 ** -23), got = new gx.nn.RMSNorm(8, { elementwiseAffine: false, device: d }).call(small);
    close(t, values(got), values(want), 'default eps', 0, 1e-6);
    t.false(close4(values(F.rmsNorm(small, [8], null, 1e-5)), values(want)), 'eps 1e-5 differs at this scale');
    m.dispose();
  });
});

function close4(a: number[], b: number[]): boolean {
  return a.every((v, i) => Math.abs(v - b[i]) <= 1e-4 * Math.abs(b[i]));
}

deviceTest('bilinear and Bilinear match torch: output and gradients of both inputs, weight and bias; torch\'s init bounds', (t, d) => {
  gx.tidy(() => {
    const ref = TORCH.bilinear;
    checkGrads(t, ref, [T([2, 3, 4], 0.53, 0.1, 1.5, d), T([2, 3, 5], 0.61, 0.7, 1.5, d), T([3, 4, 5], 0.29, 0.4, 0.8, d), T([3], 0.9, 0.3, 0.5, d)],
      (a, b, w, bias) => F.bilinear(a, b, w, bias), 0.8, d, 'bilinear');
    const m = new gx.nn.Bilinear(40, 3, 50, { device: d });
    t.deepEqual(m.weight.shape, [50, 40, 3]);
    const w = values(m.weight), b = values(m.bias as gx.Tensor), bound = 1 / Math.sqrt(40);
    t.true([...w, ...b].every((v) => Math.abs(v) <= bound), 'U(-1/sqrt(in1), 1/sqrt(in1))');
    const sd = Math.sqrt(w.reduce((s, v) => s + v * v, 0) / w.length);
    t.true(Math.abs(sd - bound / Math.sqrt(3)) < 0.05 * bound, `std ${sd}`);
    // The module computes what the function does, and without a bias too.
    const x1 = gx.randn([7, 40], { device: d }), x2 = gx.randn([7, 3], { device: d });
    close(t, values(m.call(x1, x2)), values(F.bilinear(x1, x2, m.weight, m.bias)), 'module', 1e-6);
    const nb = new gx.nn.Bilinear(2, 3, 4, { bias: false, device: d });
    t.is(nb.bias, null);
    t.deepEqual(nb.namedParameters().map(([n]) => n), ['weight']);
    m.dispose();
    nb.dispose();
  });
});

deviceTest('scaledDotProductAttention matches torch: plain, float mask with scale, bool mask, causal (output and gradients)', (t, d) => {
  gx.tidy(() => {
    const qkv = (): gx.Tensor[] => [T([2, 3, 5, 4], 0.31, 0.2, 1.2, d), T([2, 3, 6, 4], 0.47, 0.5, 1.2, d), T([2, 3, 6, 7], 0.59, 0.9, 1.2, d)];
    const sdpa = F.scaledDotProductAttention;
    checkGrads(t, TORCH.sdpa, qkv(), (q, k, v) => sdpa(q, k, v), 0.1, d, 'plain');
    const fmask = T([5, 6], 0.71, 0.3, 1, d);
    checkGrads(t, TORCH.sdpa_float_mask_scale, qkv(), (q, k, v) => sdpa(q, k, v, { attnMask: fmask, scale: 0.3 }), 0.2, d, 'float mask');
    const bmask = gx.tensor(TORCH.sdpa_bool_mask_list, { dtype: 'bool', device: d }).reshape([5, 6]);
    checkGrads(t, TORCH.sdpa_bool_mask, qkv(), (q, k, v) => sdpa(q, k, v, { attnMask: bmask }), 0.3, d, 'bool mask');
    checkGrads(t, TORCH.sdpa_causal, qkv(), (q, k, v) => sdpa(q, k, v, { isCausal: true }), 0.4, d, 'causal');
  });
});

interface MhaRef {
  params: Record<string, number[]>; names: string[]; y: number[]; w: number[] | null; wshape: number[] | null; grads: Record<string, number[]>;
}

/** A MultiheadAttention with torch's parameters loaded from its state dict, run by `call`, checked against `ref`. */
function checkMha(t: Parameters<Parameters<typeof deviceTest>[1]>[0], ref: MhaRef, m: gx.nn.MultiheadAttention, d: gx.DeviceLike,
  call: (m: gx.nn.MultiheadAttention) => gx.nn.AttentionResult, what: string): void {
  t.deepEqual(m.namedParameters().map(([n]) => n), ref.names, `${what}: torch's parameter names and order`);
  const dict = Object.fromEntries(Object.entries(ref.params).map(([n, v]) => [n, gx.tensor(v, { dtype: 'float64', device: d }).reshape(m.stateDict()[n].shape)]));
  m.loadStateDict(dict);
  const [y, w] = call(m);
  let loss = gx.sum(gx.mul(y, T([...y.shape], 0.37, 0.25, 1, d)));
  if (w !== null) loss = gx.add(loss, gx.sum(gx.mul(w, T([...w.shape], 0.43, 0.6, 1, d))));
  loss.backward();
  close(t, values(y), ref.y, `${what}: output`, 1e-9);
  t.is(w === null, ref.w === null, `${what}: weights returned`);
  if (w !== null && ref.w !== null) {
    t.deepEqual(w.shape, ref.wshape, `${what}: weights shape`);
    close(t, values(w), ref.w, `${what}: weights`, 1e-9);
  }
  for (const [n, p] of m.namedParameters()) close(t, values(p.grad as gx.Tensor), ref.grads[n], `${what}: grad ${n}`, 1e-9);
}

deviceTest('MultiheadAttention loads torch\'s state dict and matches torch: masks, per-head weights, no weights, batchFirst, causal, kdim/vdim, unbatched', (t, d) => {
  gx.tidy(() => {
    const o = { dtype: 'float64' as const, device: d };
    const q = T([5, 2, 8], 0.33, 0.1, 1, d), k = T([6, 2, 8], 0.45, 0.6, 1, d), v = T([6, 2, 8], 0.57, 0.2, 1, d);
    checkMha(t, TORCH.mha_basic, new gx.nn.MultiheadAttention(8, 2, o), d, (m) => m.call(q, k, v), 'basic');
    const kpm = gx.tensor([false, false, true, false, false, true, false, true, false, false, false, false], { dtype: 'bool', device: d }).reshape([2, 6]);
    const am = gx.tensor(Array.from({ length: 30 }, (_, i) => (Math.floor(i / 6) + 2 * (i % 6)) % 5 === 0), { dtype: 'bool', device: d }).reshape([5, 6]);
    checkMha(t, TORCH.mha_masks_perhead, new gx.nn.MultiheadAttention(8, 2, o), d,
      (m) => m.call(q, k, v, { keyPaddingMask: kpm, attnMask: am, averageAttnWeights: false }), 'masks');
    checkMha(t, TORCH.mha_float_mask_noweights, new gx.nn.MultiheadAttention(8, 4, o), d,
      (m) => m.call(q, k, v, { attnMask: T([5, 6], 0.2, 0.1, 1, d), needWeights: false }), 'float mask');
    const xs = T([2, 5, 8], 0.39, 0.8, 1, d);
    const causal = gx.triu(gx.ones([5, 5], { device: d }), 1).astype('bool');
    checkMha(t, TORCH.mha_self_batch_first_causal, new gx.nn.MultiheadAttention(8, 2, { ...o, batchFirst: true }), d,
      (m) => m.call(xs, xs, xs, { attnMask: causal, isCausal: true }), 'batchFirst causal');
    // isCausal alone builds the same mask (torch asks for attnMask with it).
    const m2 = new gx.nn.MultiheadAttention(8, 2, { ...o, batchFirst: true });
    m2.loadStateDict(Object.fromEntries(Object.entries(TORCH.mha_self_batch_first_causal.params).map(([n, val]) => [n, gx.tensor(val, o).reshape(m2.stateDict()[n].shape)])));
    close(t, values(m2.call(xs, xs, xs, { isCausal: true }).output), TORCH.mha_self_batch_first_causal.y, 'isCausal alone', 1e-9);
    checkMha(t, TORCH.mha_kdim_vdim_nobias, new gx.nn.MultiheadAttention(8, 2, { ...o, kdim: 3, vdim: 5, bias: false }), d,
      (m) => m.call(q, T([6, 2, 3], 0.51, 0.4, 1, d), T([6, 2, 5], 0.63, 0.1, 1, d)), 'kdim vdim');
    const col = (x: gx.Tensor): gx.Tensor => x.get(':, 0').contiguous();
    checkMha(t, TORCH.mha_unbatched, new gx.nn.MultiheadAttention(8, 2, o), d, (m) => m.call(col(q), col(k), col(v)), 'unbatched');
  });
});

deviceTest('MultiheadAttention initializes as torch (xavier in_proj, zero biases, Linear out_proj), state-dict keys as torch\'s; dropout only while training', (t, d) => {
  gx.tidy(() => {
    const m = new gx.nn.MultiheadAttention(64, 4, { device: d });
    t.deepEqual(Object.keys(m.stateDict()), TORCH.mha_statedict_keys);
    t.deepEqual(Object.keys(new gx.nn.MultiheadAttention(8, 2, { kdim: 3, vdim: 5, device: d }).stateDict()), TORCH.mha_statedict_keys_kv);
    for (const [n, p] of m.namedParameters()) {
      const ref = (TORCH.mha_init as Record<string, { shape: number[]; min: number; max: number; std: number }>)[n];
      t.deepEqual(p.shape, ref.shape, n);
      const v = values(p), bound = Math.max(Math.abs(ref.min), Math.abs(ref.max));
      const std = Math.sqrt(v.reduce((s, x) => s + x * x, 0) / v.length);
      if (ref.std === 0) t.true(v.every((x) => x === 0), `${n} zeros`);
      else {
        t.true(v.every((x) => Math.abs(x) <= bound * 1.001), `${n} within torch's bound ${bound}`);
        t.true(Math.abs(std - ref.std) < 0.06 * ref.std, `${n}: std ${std}, torch ${ref.std}`);
      }
    }
    const drop = new gx.nn.MultiheadAttention(8, 2, { dropout: 0.5, device: d });
    const x = gx.randn([4, 3, 8], { device: d });
    const [a, wa] = drop.call(x, x, x);
    drop.eval();
    const [b, wb] = drop.call(x, x, x);
    const [c] = drop.call(x, x, x);
    t.deepEqual(values(b), values(c), 'eval: no dropout');
    t.notDeepEqual(values(a), values(b), 'training: dropout');
    // Dropped weights are 0 or scaled by 2; in eval each row sums to 1.
    t.true(values(wb as gx.Tensor).length === 3 * 4 * 4 && close4(values(gx.sum(wb as gx.Tensor, -1)), Array(12).fill(1)));
    t.true(values(wa as gx.Tensor).some((v) => v === 0), 'training: some weights dropped (each with p = 0.5, 48 of them)');
    m.dispose();
    drop.dispose();
  });
});

deviceTest('gradcheck in float64: rmsNorm, bilinear, scaledDotProductAttention, MultiheadAttention', (t, d) => {
  gx.tidy(() => {
    const P = (shape: number[], a: number, b: number): gx.Tensor => T(shape, a, b, 1, d).requiresGrad_();
    const gc = (f: (...x: gx.Tensor[]) => gx.Tensor, inputs: gx.Tensor[], what: string): void => {
      const r = gx.autograd.gradcheck(f, inputs, { raiseException: false });
      t.true(r.ok, `${what}: ${JSON.stringify(r.worst)}`);
    };
    gc((x, w) => F.rmsNorm(x, [4], w), [P([3, 4], 0.7, 0.1), P([4], 0.3, 1.2)], 'rmsNorm');
    gc((a, b, w, bias) => F.bilinear(a, b, w, bias), [P([3, 2], 0.5, 0.2), P([3, 3], 0.6, 0.4), P([2, 2, 3], 0.8, 0.3), P([2], 0.9, 0.1)], 'bilinear');
    const mask = T([3, 4], 0.4, 0.2, 1, d);
    gc((q, k, v) => F.scaledDotProductAttention(q, k, v, { attnMask: mask }), [P([2, 3, 2], 0.3, 0.1), P([2, 4, 2], 0.5, 0.3), P([2, 4, 3], 0.7, 0.2)], 'sdpa');
    const m = new gx.nn.MultiheadAttention(4, 2, { dtype: 'float64', device: d });
    const [w0, b0] = [m.inProjWeight as gx.Tensor, m.inProjBias as gx.Tensor];
    gc((x) => m.call(x, x, x).output, [P([3, 2, 4], 0.45, 0.5)], 'MultiheadAttention input');
    t.true(w0.requiresGrad && b0.requiresGrad);
    m.dispose();
  });
});

deviceTest('refusals name the function and the argument', (t, d) => {
  gx.tidy(() => {
    const x = gx.randn([2, 4], { device: d });
    t.throws(() => F.rmsNorm(x, [3]), { instanceOf: RangeError, message: /^gx\.nn\.functional\.rmsNorm: input \[2, 4\] does not end in normalizedShape \[3\]/ });
    t.throws(() => F.rmsNorm(gx.ones([2], { dtype: 'int32', device: d }), [2]), { instanceOf: TypeError, message: /^gx\.nn\.functional\.rmsNorm: argument 'input' must be a floating tensor/ });
    t.throws(() => F.bilinear(x, x, gx.ones([2, 4, 3], { device: d })), { instanceOf: RangeError, message: /^gx\.nn\.functional\.bilinear: argument 'input2' must end in 3 features/ });
    t.throws(() => F.scaledDotProductAttention(x, gx.ones([3, 5], { device: d }), x), { instanceOf: RangeError, message: /^gx\.nn\.functional\.scaledDotProductAttention: query \[2, 4\] and key \[3, 5\]/ });
    t.throws(() => F.scaledDotProductAttention(x, x, x, { isCausal: true, attnMask: gx.ones([2, 2], { device: d }) }), { instanceOf: TypeError, message: /give attnMask or isCausal, not both/ });
    t.throws(() => new gx.nn.MultiheadAttention(6, 4), { instanceOf: RangeError, message: /^gx\.nn\.MultiheadAttention: embedDim \(6\) must be divisible by numHeads \(4\)/ });
    t.throws(() => new gx.nn.MultiheadAttention(4, 2, { dropout: 2 }), { instanceOf: RangeError, message: /^gx\.nn\.MultiheadAttention: argument 'dropout' must be a probability/ });
    t.throws(() => new gx.nn.RMSNorm(4, { eps: -1 }), { instanceOf: RangeError, message: /^gx\.nn\.RMSNorm: option 'eps'/ });
    const m = new gx.nn.MultiheadAttention(4, 2, { device: d });
    const q = gx.randn([3, 2, 4], { device: d });
    t.throws(() => m.call(q, q, gx.randn([3, 2, 5], { device: d })), { instanceOf: RangeError, message: /^MultiheadAttention\.forward: argument 'value' must be \[len, N, 4\], got \[3, 2, 5\]/ });
    t.throws(() => m.call(q, q, q, { attnMask: gx.ones([2, 2], { dtype: 'bool', device: d }) }), { instanceOf: RangeError, message: /option 'attnMask' must be \[3, 3\] or \[4, 3, 3\]/ });
    t.throws(() => m.call(q, q, q, { keyPaddingMask: gx.ones([3, 2], { dtype: 'bool', device: d }) }), { instanceOf: RangeError, message: /option 'keyPaddingMask' must be \[2, 3\]/ });
    t.throws(() => m.call(q, q, q, { need_weights: false } as gx.nn.MultiheadAttentionForwardOptions), { instanceOf: TypeError, message: /^MultiheadAttention\.forward: unknown option 'need_weights'; did you mean 'needWeights'/ });
    t.throws(() => F.scaledDotProductAttention(q, q, q, { is_causal: true } as gx.nn.ScaledDotProductAttentionOptions), { instanceOf: TypeError, message: /^gx\.nn\.functional\.scaledDotProductAttention: unknown option 'is_causal'; did you mean 'isCausal'/ });
    m.dispose();
  });
});

test('no tensor left behind by the attention modules', (t) => {
  const before = gx.memory.stats().liveTensors;
  const m = new gx.nn.MultiheadAttention(8, 2);
  const x = gx.randn([4, 2, 8]);
  const kpm = gx.zeros([2, 4], { dtype: 'bool' });
  const r = m.call(x, x, x, { keyPaddingMask: kpm });
  r.output.dispose();
  kpm.dispose();
  r.weights?.dispose();
  m.dispose();
  x.dispose();
  t.is(gx.memory.stats().liveTensors, before);
});

// In the inputs' dtype, a bfloat16 attention was off by 2e-2 of its largest value where torch's (its math path
// computes half inputs in float32 and rounds the output once) is off by 2e-3; gx does as torch's now.
deviceTest('scaledDotProductAttention of float16 and bfloat16 inputs computes in float32 and rounds once, as torch\'s', (t, d) => {
  gx.tidy(() => {
    const vals = (n: number, a: number, b: number, s: number): number[] => Array.from({ length: n }, (_, i) => s * Math.sin(a * i + b));
    // torch 2.x CPU: F.scaled_dot_product_attention(q, k, v) of these q [1, 1, 4, 8], k and v [1, 1, 6, 8] in that dtype.
    const want = {
      bfloat16: [2.984375, 1.6328125, -1.5078125, -3, -1.2109375, 1.8984375, 2.9375, 0.765625, 2.6875, 1.7890625, -1.078125, -2.765625,
        -1.4296875, 1.4609375, 2.765625, 1.0390625, 0.6484375, 2.90625, 1.984375, -1.1015625, -2.984375, -1.609375, 1.53125, 3, -2.609375,
        0.15234375, 2.734375, 2.328125, -0.62109375, -2.890625, -2, 1.078125],
      float16: [2.984375, 1.6298828125, -1.5048828125, -2.99609375, -1.2119140625, 1.8955078125, 2.931640625, 0.76416015625, 2.6875,
        1.787109375, -1.0654296875, -2.75390625, -1.431640625, 1.4541015625, 2.751953125, 1.0419921875, 0.64697265625, 2.904296875,
        1.9873046875, -1.1005859375, -2.986328125, -1.6083984375, 1.52734375, 2.994140625, -2.6015625, 0.1519775390625, 2.73828125,
        2.333984375, -0.62255859375, -2.8984375, -2.005859375, 1.0771484375],
    };
    for (const dt of ['bfloat16', 'float16'] as const) {
      const mk = (n: number, a: number, b: number, s: number, shape: number[]): gx.Tensor => gx.tensor(vals(n, a, b, s), { device: d }).astype(dt).reshape(shape);
      const y = gx.nn.functional.scaledDotProductAttention(mk(32, 0.7, 0.1, 6, [1, 1, 4, 8]), mk(48, 0.3, 0.5, 6, [1, 1, 6, 8]), mk(48, 1.1, 0.2, 3, [1, 1, 6, 8]));
      t.is(y.dtype, dt);
      // One unit in the last place of the dtype at most (float16's ulp at 2 is 2^-9, bfloat16's 2^-6).
      close(t, values(y.astype('float32')), want[dt], dt, dt === 'float16' ? 2 ** -9 : 2 ** -6, 0);
    }
  });
});
