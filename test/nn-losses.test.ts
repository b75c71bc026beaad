// gx.nn.functional's losses and layerNorm on every device: values and input
// gradients against torch's (figures from test/reference/torch_nn.py, float64),
// the loss modules against the functions, gradcheck in float64, the errors,
// and no tensor left behind.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, rejects } from './helpers';
import { close, T, values } from './nn-helpers';
import { TORCH } from './nn-torch-figures';

const F = gx.nn.functional;
type Case = { value: number[]; grad: number[] };
const idx = (v: number[], device: gx.DeviceLike, shape = [v.length]): gx.Tensor => gx.tensor(v, { dtype: 'int64', device }).reshape(shape);

/** Runs fn(x) with x requiring grad, checks the value and d sum(loss) / dx against torch's. */
function check(t: Parameters<Parameters<typeof deviceTest>[1]>[0], name: string, ref: Case, x0: gx.Tensor, fn: (x: gx.Tensor) => gx.Tensor): void {
  gx.tidy(() => {
    const x = x0.detach().requiresGrad_();
    const y = fn(x);
    gx.sum(y).backward();
    close(t, values(y), ref.value, `${name} value`);
    close(t, values(x.grad as gx.Tensor), ref.grad, `${name} grad`);
  });
}

deviceTestSerial('losses match torch in value and input gradient, every reduction, and leave nothing behind', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  gx.tidy(() => {
    const x = T([4, 5], 0.7, 0.3, 2, d), y = T([4, 5], 1.3, -0.2, 2, d);
    for (const r of ['mean', 'sum', 'none'] as const) {
      check(t, `mse ${r}`, TORCH[`mse_${r}`], x, (v) => F.mseLoss(v, y, { reduction: r }));
      check(t, `l1 ${r}`, TORCH[`l1_${r}`], x, (v) => F.l1Loss(v, y, { reduction: r }));
      check(t, `mse module ${r}`, TORCH[`mse_${r}`], x, (v) => new gx.nn.MSELoss({ reduction: r }).call(v, y));
    }
    check(t, 'smoothL1', TORCH['smoothl1_beta0.5'], x, (v) => F.smoothL1Loss(v, y, { beta: 0.5 }));
    check(t, 'huber', TORCH['huber_delta0.7'], x, (v) => new gx.nn.HuberLoss({ delta: 0.7 }).call(v, y));

    const logits = T([4, 5], 0.9, 0.1, 3, d);
    const target = idx([1, 4, 0, 2], d), targetIgn = idx([1, -100, 0, 2], d);
    const w = gx.tensor([0.5, 1, 1.5, 2, 0.25], { dtype: 'float64', device: d });
    for (const r of ['mean', 'sum', 'none'] as const) check(t, `ce ${r}`, TORCH[`ce_${r}`], logits, (v) => F.crossEntropy(v, target, { reduction: r }));
    check(t, 'ce weight ignore', TORCH.ce_weight_ignore, logits, (v) => F.crossEntropy(v, targetIgn, { weight: w }));
    check(t, 'ce weight ignore smooth', TORCH.ce_weight_ignore_smooth, logits, (v) => {
      using m = new gx.nn.CrossEntropyLoss({ weight: w, labelSmoothing: 0.2 });  // its weight is a buffer, freed with it
      return m.call(v, targetIgn);
    });
    check(t, 'ce smooth none', TORCH.ce_smooth_none, logits, (v) => F.crossEntropy(v, target, { labelSmoothing: 0.1, reduction: 'none' }));
    check(t, 'ce ignoreIndex 7', TORCH.ce_ignore7, logits, (v) => F.crossEntropy(v, idx([1, 7, 7, 2], d), { ignoreIndex: 7 }));
    const probs = gx.softmax(T([4, 5], 0.4, 0.8, 2, d), 1);
    check(t, 'ce probabilities', TORCH.ce_prob, logits, (v) => F.crossEntropy(v, probs));
    check(t, 'ce probabilities weight smooth', TORCH.ce_prob_weight_smooth, logits, (v) => F.crossEntropy(v, probs, { weight: w, labelSmoothing: 0.3 }));
    check(t, 'ce probabilities none', TORCH.ce_prob_none, logits, (v) => F.crossEntropy(v, probs, { reduction: 'none' }));
    const logits3 = T([2, 5, 3], 0.5, 0.2, 2, d), target3 = idx([0, 4, 2, 1, 1, 3], d, [2, 3]);
    check(t, 'ce [N, C, d]', TORCH.ce_3d, logits3, (v) => F.crossEntropy(v, target3));
    check(t, 'ce [N, C, d] none smooth', TORCH.ce_3d_none_smooth, logits3, (v) => F.crossEntropy(v, target3, { reduction: 'none', labelSmoothing: 0.15 }));
    check(t, 'ce [C]', TORCH.ce_1d, gx.sliceDims(logits, 0), (v) => F.crossEntropy(v, idx([3], d, [])));
    const lp = gx.logSoftmax(logits, 1);
    check(t, 'nll weight ignore', TORCH.nll_weight_ignore, lp, (v) => F.nllLoss(v, targetIgn, { weight: w }));
    check(t, 'nll sum', TORCH.nll_sum, lp, (v) => new gx.nn.NLLLoss({ reduction: 'sum' }).call(v, target));

    const p = gx.sigmoid(x), t01 = gx.sigmoid(y);
    const bw = gx.add(gx.abs(T([4, 5], 0.2, 0.5, 1, d)), 0.5);
    check(t, 'bce', TORCH.bce, p, (v) => F.binaryCrossEntropy(v, t01));
    check(t, 'bce weight sum', TORCH.bce_weight_sum, p, (v) => {
      using m = new gx.nn.BCELoss({ weight: bw, reduction: 'sum' });
      return m.call(v, t01);
    });
    const pw = gx.tensor([0.5, 1, 2, 3, 0.75], { dtype: 'float64', device: d });
    check(t, 'bce with logits', TORCH.bcel, x, (v) => F.binaryCrossEntropyWithLogits(v, t01));
    check(t, 'bce with logits posWeight', TORCH.bcel_pos_weight, gx.mul(x, 10), (v) => {
      using m = new gx.nn.BCEWithLogitsLoss({ posWeight: pw, weight: bw });
      return m.call(v, t01);
    });
  });
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});

// The weights were options: to() left them behind and stateDict() without them. torch registers them as
// buffers (_WeightedLoss: 'weight'; BCEWithLogitsLoss: 'weight' and 'pos_weight'), None ones not listed.
deviceTestSerial('loss modules keep their weights as buffers under torch\'s names: to() converts them, stateDict lists them', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  const w = gx.tensor([0.5, 1, 2], { device: d }), pw = gx.tensor([2, 3, 4], { device: d });
  type LossModule = gx.nn.Module<[gx.Tensor, gx.Tensor]> & { options: object };
  const keys = (m: LossModule): string[] => Object.keys(m.stateDict());
  // torch 2.13: list(m.state_dict()) for each.
  const cases: [LossModule, string[]][] = [
    [new gx.nn.CrossEntropyLoss({ weight: w }), ['weight']], [new gx.nn.NLLLoss({ weight: w }), ['weight']],
    [new gx.nn.BCELoss({ weight: w }), ['weight']], [new gx.nn.BCEWithLogitsLoss({ weight: w, posWeight: pw }), ['weight', 'pos_weight']],
    [new gx.nn.BCEWithLogitsLoss({ posWeight: pw }), ['pos_weight']], [new gx.nn.CrossEntropyLoss(), []], [new gx.nn.MSELoss(), []],
  ];
  for (const [m, want] of cases) {
    t.deepEqual(keys(m), want, m.name);
    t.deepEqual(m.namedBuffers().map(([n]) => n), want, `${m.name} buffers`);
    t.false('weight' in m.options || 'posWeight' in m.options, `${m.name} options`);
    m.to('float64');  // torch's m.double(): the buffers converted
    t.true(m.buffers().every((b) => b.dtype === 'float64'), `${m.name} to(float64)`);
  }
  const ce = cases[0][0] as gx.nn.CrossEntropyLoss, bcel = cases[3][0] as gx.nn.BCEWithLogitsLoss;
  t.not(ce.weight, w);  // a copy of its own: to() freed the module's, not the caller's
  t.false(w.isDisposed);
  t.is(bcel.posWeight?.dtype, 'float64');
  gx.tidy(() => {
    const x = gx.tensor([[0.5, -1, 2], [1.5, 0.25, -0.75]], { dtype: 'float64', device: d }), y = idx([2, 0], d);
    // The loss reads the buffer: after loadStateDict, the loaded weight's.
    const w2 = gx.tensor([3, 1, 0.25], { dtype: 'float64', device: d });
    t.deepEqual(ce.loadStateDict({ weight: w2 }), { missingKeys: [], unexpectedKeys: [] });
    close(t, values(ce.call(x, y)), values(F.crossEntropy(x, y, { weight: w2 })), 'loaded weight');
    t.throws(() => ce.loadStateDict({}), { message: /^CrossEntropyLoss\.loadStateDict: the state dict does not match CrossEntropyLoss: missing keys \[weight\]/ });
    t.throws(() => new gx.nn.NLLLoss().loadStateDict({ weight: w2 }), { message: /unexpected keys \[weight\]$/ });
    t.throws(() => new gx.nn.BCELoss({ weight: [1, 2] as unknown as gx.Tensor }), { instanceOf: TypeError, message: /^gx\.nn\.BCELoss: option 'weight' must be a Tensor or null, got/ });
  });
  for (const [m] of cases) m.dispose();
  w.dispose();
  pw.dispose();
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});

deviceTest('layerNorm and LayerNorm match torch: output and the gradients of input, weight and bias', (t, d) => {
  gx.tidy(() => {
    const ref = TORCH.layernorm;
    const ln = new gx.nn.LayerNorm([4, 6], { dtype: 'float64', device: d });
    gx.noGrad(() => {
      ln.weight?.copy_(gx.add(T([4, 6], 0.8, 0, 1, d), 1));
      ln.bias?.copy_(T([4, 6], 0.6, 1, 0.5, d));
    });
    const x = T([3, 4, 6], 0.35, 0.1, 2, d).requiresGrad_();
    const y = ln.call(x);
    gx.sum(gx.mul(y, T([3, 4, 6], 0.45, 0.7, 1, d))).backward();
    close(t, values(y), ref.y, 'y', 1e-9);
    close(t, values(x.grad as gx.Tensor), ref.gx, 'grad x', 1e-9);
    close(t, values(ln.weight?.grad as gx.Tensor), ref.gw, 'grad weight', 1e-9);
    close(t, values(ln.bias?.grad as gx.Tensor), ref.gb, 'grad bias', 1e-9);
    ln.dispose();
  });
});

deviceTest('gradcheck in float64: every loss (input and target where torch differentiates it) and layerNorm', (t, d) => {
  gx.tidy(() => {
    const P = (shape: number[], a: number, b: number, s = 1): gx.Tensor => T(shape, a, b, s, d).requiresGrad_();
    const w = gx.tensor([0.5, 1, 1.5, 2, 0.25], { dtype: 'float64', device: d });
    const target = idx([1, -100, 0, 2], d);
    const u = (x: gx.Tensor): gx.Tensor => gx.add(gx.mul(gx.sigmoid(x), 0.9), 0.05);  // into (0.05, 0.95)
    const cases: [string, (...xs: gx.Tensor[]) => gx.Tensor, gx.Tensor[]][] = [
      ['mseLoss', (a, b) => F.mseLoss(a, b), [P([3, 4], 0.7, 0.3), P([3, 4], 1.3, 0.2)]],
      ['l1Loss', (a, b) => F.l1Loss(a, b), [P([3, 4], 0.7, 0.3), P([3, 4], 1.3, 0.2)]],
      ['smoothL1Loss', (a, b) => F.smoothL1Loss(a, b, { beta: 0.4 }), [P([3, 4], 0.7, 0.3), P([3, 4], 1.3, 0.2)]],
      ['huberLoss', (a, b) => F.huberLoss(a, b, { delta: 0.6, reduction: 'sum' }), [P([3, 4], 0.7, 0.3), P([3, 4], 1.3, 0.2)]],
      ['crossEntropy indices', (a) => F.crossEntropy(a, target, { weight: w, labelSmoothing: 0.1 }), [P([4, 5], 0.9, 0.1, 3)]],
      ['crossEntropy probabilities', (a, b) => F.crossEntropy(a, gx.softmax(b, 1), { labelSmoothing: 0.2 }), [P([4, 5], 0.9, 0.1, 3), P([4, 5], 0.4, 0.8)]],
      ['crossEntropy [N, C, d]', (a) => F.crossEntropy(a, idx([0, 4, 2, 1, 1, 3], d, [2, 3]), { reduction: 'none' }), [P([2, 5, 3], 0.5, 0.2, 2)]],
      ['nllLoss', (a) => F.nllLoss(a, target, { weight: w }), [P([4, 5], 0.9, 0.1, 3)]],
      ['binaryCrossEntropy', (a, b) => F.binaryCrossEntropy(u(a), u(b)), [P([3, 4], 0.7, 0.3), P([3, 4], 1.3, 0.2)]],
      ['binaryCrossEntropyWithLogits', (a, b, pw) => F.binaryCrossEntropyWithLogits(a, u(b), { posWeight: pw }), [P([3, 4], 0.7, 0.3, 3), P([3, 4], 1.3, 0.2), P([4], 0.5, 1)]],
      ['layerNorm', (a, lw, lb) => F.layerNorm(a, [4], lw, lb), [P([3, 4], 0.7, 0.3, 2), P([4], 0.3, 1), P([4], 0.9, 0.4)]],
      ['linear', (a, lw, lb) => F.linear(a, lw, lb), [P([3, 4], 0.7, 0.3, 2), P([2, 4], 0.3, 1), P([2], 0.9, 0.4)]],
      ['embedding', (lw) => F.embedding(idx([2, 0, 2, 1], d, [2, 2]), lw), [P([3, 4], 0.3, 1)]],  // no paddingIdx: its row's gradient is 0 on purpose (tested in nn-module)
    ];
    for (const [name, fn, inputs] of cases) {
      const r = gx.autograd.gradcheck(fn, inputs, { raiseException: false });
      t.true(r.ok, `${name}: ${JSON.stringify(r.worst)}`);
    }
  });
});

deviceTest('the losses refuse bad arguments, naming the function and the argument', (t, d) => {
  gx.tidy(() => {
    const x = T([4, 5], 0.7, 0.3, 2, d), y = T([4, 5], 1.3, -0.2, 2, d);
    rejects(t, d, () => F.mseLoss(x, gx.sliceDims(y, 0)), RangeError, /^gx\.nn\.functional\.mseLoss: argument 'target' has shape \[5\] but 'input' has \[4, 5\]/);
    rejects(t, d, () => F.l1Loss(x, y, { reduction: 'avg' as 'mean' }), TypeError, /^gx\.nn\.functional\.l1Loss: option 'reduction' must be 'mean', 'sum' or 'none'/);
    rejects(t, d, () => F.mseLoss(x, y, { reductoin: 'sum' } as never), TypeError, /gx\.nn\.functional\.mseLoss.*reductoin/);
    rejects(t, d, () => F.crossEntropy(x, idx([1, 5, 0, 2], d)), RangeError, /^gx\.nn\.functional\.crossEntropy: argument 'target' holds class 5, out of range \[0, 5\)/);
    rejects(t, d, () => F.crossEntropy(x, idx([1, 2], d)), RangeError, /^gx\.nn\.functional\.crossEntropy: argument 'target' must have shape \[4\]/);
    rejects(t, d, () => F.crossEntropy(x, gx.sliceDims(y, 0)), RangeError, /^gx\.nn\.functional\.crossEntropy: a floating 'target' holds probabilities/);
    rejects(t, d, () => F.crossEntropy(x, idx([1, 2, 0, 2], d), { labelSmoothing: 1.5 }), RangeError, /labelSmoothing' must be in \[0, 1\]/);
    rejects(t, d, () => F.nllLoss(x, idx([1, 2, 0, 2], d), { weight: gx.ones([3], { dtype: 'float64', device: d }) }), RangeError, /^gx\.nn\.functional\.nllLoss: option 'weight' must have shape \[5\]/);
    rejects(t, d, () => F.nllLoss(x, gx.zeros([4], { dtype: 'bool', device: d })), TypeError, /^gx\.nn\.functional\.nllLoss: argument 'target' must hold class indices/);
    rejects(t, d, () => F.binaryCrossEntropy(x, y), RangeError, /^gx\.nn\.functional\.binaryCrossEntropy: argument 'input' must hold probabilities in \[0, 1\]/);
    rejects(t, d, () => F.mseLoss(idx([1, 2], d), idx([1, 2], d)), TypeError, /^gx\.nn\.functional\.mseLoss: argument 'input' must be a floating tensor, got int64/);
    rejects(t, d, () => F.layerNorm(x, [4]), RangeError, /^gx\.nn\.functional\.layerNorm: input \[4, 5\] does not end in normalizedShape \[4\]/);
    rejects(t, d, () => F.linear(x, gx.ones([3, 4], { dtype: 'float64', device: d })), RangeError, /^gx\.nn\.functional\.linear: argument 'input' must end in 4 features/);
    rejects(t, d, () => F.dropout(x, 1.5), RangeError, /^gx\.nn\.functional\.dropout: argument 'p' must be a probability/);
    rejects(t, d, () => F.embedding(x, y), TypeError, /^gx\.nn\.functional\.embedding: argument 'input' must be an int64 or int32 tensor/);
  });
});

test('gx.nn.functional re-exports the activations and softmax as torch.nn.functional has them', (t) => {
  t.is(F.relu, gx.relu);
  t.is(F.gelu, gx.gelu);
  t.is(F.softmax, gx.softmax);
  t.is(F.logSoftmax, gx.logSoftmax);
  t.is(F.sigmoid, gx.sigmoid);
  t.is(F.tanh, gx.tanh);
});

deviceTest('crossEntropy checks its targets inside its one native call (no kernels of its own); bad ones still name the class', (t, d) => {
  gx.tidy(() => {
    const x = T([4, 5], 0.7, 0.3, 2, d);
    const p = gx.profiler.profile(() => F.crossEntropy(x, idx([1, 4, -100, 2], d)));
    const names = p.events.map((e) => e.name);
    t.true(names.includes('cross_entropy_loss'), names.join(', '));
    t.false(names.some((n) => n === 'any' || n === 'logical_or' || n.startsWith('lt') || n.startsWith('ge')), names.join(', '));
    rejects(t, d, () => F.crossEntropy(x, idx([1, -3, -100, 2], d)), RangeError, /^gx\.nn\.functional\.crossEntropy: argument 'target' holds class -3, out of range \[0, 5\) \(ignoreIndex is -100\)/);
    rejects(t, d, () => F.nllLoss(x, idx([1, 2, 7, 0], d), { ignoreIndex: 1 }), RangeError, /^gx\.nn\.functional\.nllLoss: argument 'target' holds class 7/);
  });
});

// A weight that broadcast the loss up ([3, 1] against a [3] input gave a [3, 3] loss, and 'mean' averaged 9 terms)
// is refused: weights broadcast to the input's shape, as torch's.
deviceTest('binary cross entropy refuses a weight or posWeight that does not broadcast to the input\'s shape', (t, d) => {
  gx.tidy(() => {
    const F = gx.nn.functional;
    const p = gx.tensor([0.2, 0.5, 0.7], { device: d }), y = gx.tensor([0, 1, 1], { device: d });
    t.throws(() => F.binaryCrossEntropy(p, y, { weight: gx.tensor([[1], [2], [3]], { device: d }) }),
      { message: /^gx\.nn\.functional\.binaryCrossEntropy: weight of shape \[3, 1\] does not broadcast to the input's shape \[3\]/ });
    t.deepEqual(F.binaryCrossEntropy(p, y, { weight: gx.tensor([1, 2, 3], { device: d }), reduction: 'none' }).shape, [3]);
    const s = gx.zeros([2, 3], { device: d }), l = gx.ones([2, 3], { device: d });
    t.deepEqual(F.binaryCrossEntropyWithLogits(s, l, { posWeight: gx.tensor([1, 2, 3], { device: d }), reduction: 'none' }).shape, [2, 3]);
    t.throws(() => F.binaryCrossEntropyWithLogits(s, l, { posWeight: gx.ones([2, 1, 3], { device: d }) }), { message: /posWeight of shape \[2, 1, 3\] does not broadcast/ });
    t.throws(() => F.binaryCrossEntropyWithLogits(s, l, { weight: gx.ones([2], { device: d }) }),
      { message: 'gx.nn.functional.binaryCrossEntropyWithLogits: weight of shape [2] does not broadcast to the input\'s shape [2, 3]' });
    t.deepEqual(F.binaryCrossEntropyWithLogits(s, l, { weight: gx.ones([2, 1], { device: d }), posWeight: gx.ones([1, 3], { device: d }), reduction: 'none' }).shape, [2, 3]);
  });
});

// -logSigmoid(x) was log1p(exp(-|x|)) + relu(-x): at x = 0 the derivatives of |x| and relu (0 each by
// convention) summed to 0 where the function's is -1/2, so a logit of exactly 0 (a zero-initialized head)
// got 1 - t instead of sigmoid(0) - t (and lw / 2 less with posWeight).
deviceTest('binaryCrossEntropyWithLogits: a logit of exactly 0 gets torch\'s gradient, with and without posWeight', (t, d) => {
  gx.tidy(() => {
    const y = gx.tensor([[1, 0, 0.25], [1, 0, 0.5]], { dtype: 'float64', device: d });
    const pw = gx.tensor([2, 0.5, 3], { dtype: 'float64', device: d });
    // torch 2.x CPU: F.binary_cross_entropy_with_logits(x, y[, pos_weight=pw]) and x.grad, float64.
    const cases: [gx.Tensor | null, number, number[]][] = [
      [null, 0.516821668544251, [-0.08333333333333333, 0.08333333333333333, 0.041666666666666664, -0.01986715367035295, 0.030404253967726058, 0]],
      [pw, 0.8267876622847238, [-0.16666666666666666, 0.08333333333333333, 0, -0.0397343073407059, 0.030404253967726058, -0.08333333333333333]],
    ];
    for (const [posWeight, value, grad] of cases) {
      const x = gx.tensor([[0, 0, 0], [2, -1.5, 0]], { dtype: 'float64', device: d }).requiresGrad_();
      using m = new gx.nn.BCEWithLogitsLoss({ posWeight });
      const loss = m.call(x, y);
      loss.backward();
      close(t, values(loss), [value], `value, posWeight ${posWeight !== null}`);
      close(t, values(x.grad as gx.Tensor), grad, `grad, posWeight ${posWeight !== null}`);
    }
  });
});

// The loss as ops of its own had d/dp = NaN at p = 0 and 1 (clamp's zero derivative times log's infinite one):
// one sigmoid rounding to 1 in float32 made every gradient of the model NaN. torch's derivatives are finite there.
deviceTest('binaryCrossEntropy: probabilities of exactly 0 and 1 get torch\'s finite gradients, not NaN', (t, d) => {
  gx.tidy(() => {
    const p = gx.tensor([0, 1, 0.3, 0, 1, 0.9], { dtype: 'float64', device: d }).requiresGrad_();
    const y = gx.tensor([0.3, 0.4, 0.5, 0, 1, 0.2], { dtype: 'float64', device: d }).requiresGrad_();
    const w = gx.tensor([1, 2, 0.5, 1, 1, 3], { dtype: 'float64', device: d });
    const loss = F.binaryCrossEntropy(p, y, { weight: w });
    loss.backward();
    // torch 2.x CPU: F.binary_cross_entropy(p, y, weight=w) and the gradients of p and y, float64.
    close(t, values(loss), [25.996597078274423], 'value');
    close(t, values(p.grad as gx.Tensor), [-50000000199.79014, 200000000799.16055, -0.07936507936507937, 0, 0, 3.8888888888888893], 'grad p');
    // torch's d/dy is -logit(p), not clamped: infinite at p = 0 and 1.
    const gy = values(y.grad as gx.Tensor);
    t.deepEqual([gy[0], gy[1], gy[3], gy[4]], [Infinity, -Infinity, Infinity, -Infinity]);
    close(t, [gy[2], gy[5]], [0.07060815503226696, -1.0986122886681098], 'grad target');
    // A float32 sigmoid that rounds to 1: torch gives the model a gradient of 0 there, and finite ones elsewhere.
    const z = gx.tensor([20, -3, 0.5], { device: d }).requiresGrad_();
    const l32 = new gx.nn.BCELoss().call(gx.sigmoid(z), gx.tensor([1, 0, 1], { device: d }));
    l32.backward();
    close(t, values(l32), [0.1742214411497116], 'float32 value', 1e-7, 1e-6);
    close(t, values(z.grad as gx.Tensor), [0, 0.015808623284101486, -0.12584687769412994], 'float32 grad', 1e-7, 1e-6);
  });
});

// Through the clamp, d/dp of the gradient was g / eps = 1e12 g wherever p (1 - p) < eps, whatever the target;
// torch's second derivatives are formulas of their own (FunctionsManual.cpp's binary_cross_entropy_double_backward*).
deviceTest('binaryCrossEntropy: second derivatives at p = 0, 1, 1e-13 and 0.5 are torch\'s', (t, d) => {
  gx.tidy(() => {
    const ps = [0, 1, 0.5, 1e-13], ts = [0, 1, 0.3];
    const P = ps.flatMap((p) => ts.map(() => p)), Y = ps.flatMap(() => ts);
    const W = P.map((_, i) => 0.5 + 0.25 * (i % 4)), U = P.map((_, i) => 1 + 0.5 * (i % 3)), V = P.map((_, i) => 0.75 + 0.5 * (i % 2));
    const f64 = (v: number[] | number): gx.Tensor => gx.tensor(v, { dtype: 'float64', device: d });
    // torch 2.13 CPU, float64: gp, gt = torch.autograd.grad(F.binary_cross_entropy(p, y, w, reduction=r), (p, y), v,
    // create_graph=True), then the gradients of sum(gp * u) with respect to p, y and v.
    const want: Record<string, number[][]> = {
      mean: [
        [0, 1.4062499999971872e+23, 7.499999999984999e+22, 1.562499999996875e+23, 0, 1.3124999999973748e+23, 0.4999999999960001, 0.9374999999925001,
          0.4999999999960001, 0.0007747933884283577, 1.5495867768564054e+23, 7.747933884282027e+22],
        [-62500000000, -140625000000, -250000000000, -156250000000, -93750000000, -187500000000, -0.5, -0.9375, -0.5, -93750000000, -187500000000, -312500000000],
        [-122537878787.8165],
      ],
      none: [
        [0, 1.8749999999962497e+24, 4.499999999990999e+23, 1.2499999999975e+24, 0, 1.7499999999964997e+24, 2.9999999999760005, 7.499999999940002,
          5.999999999952001, 0.010330578512378102, 9.297520661138433e+23, 6.198347107425621e+23],
        [-750000000000, -1875000000000, -1500000000000, -1250000000000, -1125000000000, -2500000000000, -3, -7.5, -6, -1250000000000, -1125000000000, -2500000000000],
        [0, -1499999999998.5, -599999999999.3999, 999999999999, 0, 1399999999998.5999, 1.9999999999920002, -2.9999999999880003, 1.5999999999936003,
          0.0909090909090091, -1363636363635, -545454545453.8728],
      ],
    };
    for (const r of ['mean', 'none'] as const) {
      const p = f64(P).requiresGrad_(), y = f64(Y).requiresGrad_(), v = f64(r === 'none' ? V : 1.5).requiresGrad_();
      const weight = r === 'mean' ? f64(W) : null;
      const [, [gp]] = gx.autograd.functional.vjp((a: gx.Tensor, b: gx.Tensor) => F.binaryCrossEntropy(a, b, { weight, reduction: r }), [p, y], v, { createGraph: true });
      gx.sum(gx.mul(gp, f64(U))).backward();
      [p, y, v].forEach((x, i) => close(t, values(x.grad as gx.Tensor), want[r][i], `${r} d/d${'pyv'[i]}`, 0, 1e-14));
    }
  });
});

// NOTE [ Norms of half inputs ]: computed in the input's dtype, x - mean kept only the input's precision (a
// float16 layerNorm of values near 100 was off by 1e-2, bfloat16 by 9e-2); torch computes in float32 and
// rounds once, and so does gx now: the same bits.
deviceTest('layerNorm and rmsNorm of float16 and bfloat16 inputs compute in float32 and round once, as torch\'s', (t, d) => {
  gx.tidy(() => {
    const v = [100.5, 103, 97.5, 99, 101.5, 96.5, 104, 98];
    const w = [1.5, -0.5, 2, 1, 0.25, 1, -1, 0.75], b = [0.1, 0, -0.2, 0.3, 0, 0.05, 0, 1];
    // torch 2.x CPU: F.layer_norm(x, [4]), F.layer_norm(x.reshape(1, 8), [8], w, b), F.rms_norm(x, [4]), x of that dtype.
    const want: Record<string, number[][]> = {
      float16: [
        [0.2462158203125, 1.4775390625, -1.23046875, -0.492431640625, 0.5107421875, -1.19140625, 1.3623046875, -0.68115234375],
        [0.39697265625, -0.59423828125, -2.1796875, -0.09600830078125, 0.1485595703125, -1.3359375, -1.583984375, 0.406005859375],
        [1.0048828125, 1.0302734375, 0.974609375, 0.98974609375, 1.0146484375, 0.96435546875, 1.0400390625, 0.9794921875],
      ],
      bfloat16: [
        [0.24609375, 1.4765625, -1.234375, -0.4921875, 0.51171875, -1.1953125, 1.359375, -0.6796875],
        [0.396484375, -0.59375, -2.1875, -0.09521484375, 0.1484375, -1.3359375, -1.5859375, 0.40625],
        [1.0078125, 1.03125, 0.9765625, 0.98828125, 1.015625, 0.96484375, 1.0390625, 0.98046875],
      ],
    };
    for (const dt of ['float16', 'bfloat16'] as const) {
      const x = gx.tensor(v, { device: d }).astype(dt).reshape([2, 4]);
      const half = (a: number[]): gx.Tensor => gx.tensor(a, { device: d }).astype(dt);
      const got = [
        F.layerNorm(x, [4]), F.layerNorm(x.reshape([1, 8]), [8], half(w), half(b)), F.rmsNorm(x, [4]),
        new gx.nn.LayerNorm(4, { dtype: dt, device: d }).call(x),
      ];
      got.forEach((y) => t.is(y.dtype, dt));
      [0, 1, 2].forEach((i) => t.deepEqual(values(got[i].astype('float32')), want[dt][i], `${dt} ${['layerNorm', 'layerNorm affine', 'rmsNorm'][i]}`));
      t.deepEqual(values(got[3].astype('float32')), want[dt][0], `${dt} LayerNorm`);
      // A weight of another dtype: the result takes the promoted dtype, as before.
      t.is(F.layerNorm(x, [4], gx.ones([4], { device: d }), null).dtype, 'float32');
    }
  });
});
