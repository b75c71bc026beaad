// gx.nn.Module and the layers on every device: parameter and module walks,
// train/eval, zeroGrad, to(dtype), apply, buffers, stateDict round trips
// through gx.save / gx.loadTensors, Linear / Embedding / Dropout / Sequential /
// ModuleList against references computed here, the Tensor conveniences
// (dim, float, double, half, zero_), errors that name the function and the
// argument, and no tensor left behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import test from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, rejects } from './helpers';
import { close, T, values } from './nn-helpers';

/** A module with a submodule, a shared parameter, a buffer and a non-persistent buffer. */
class Net extends gx.nn.Module {
  constructor(d: gx.DeviceLike) {
    super();
    const enc = this.registerModule('encoder', new gx.nn.Linear(3, 4, { device: d }));
    this.registerModule('act', new gx.nn.Tanh());
    this.registerModule('head', new gx.nn.Sequential(new gx.nn.Linear(4, 2, { device: d }), new gx.nn.Dropout(0.5)));
    this.registerParameter('scale', gx.ones([2], { device: d }));
    this.registerBuffer('steps', gx.zeros([1], { device: d }));
    this.registerBuffer('cache', gx.zeros([2], { device: d }), { persistent: false });
    this.registerModule('tied', enc);  // the same module twice: its parameters are counted once
  }

  override forward(x: gx.Tensor): gx.Tensor {
    return gx.tidy(() => gx.mul(this.sub('head').call(this.sub('act').call(this.sub('encoder').call(x))) as gx.Tensor, this.param('scale') as gx.Tensor));
  }
}

deviceTestSerial('Module walks parameters, buffers and modules by dotted name, each once; train/eval, zeroGrad, apply, dispose', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  const net = new Net(d);
  t.deepEqual(net.namedParameters().map(([n]) => n), ['scale', 'encoder.weight', 'encoder.bias', 'head.0.weight', 'head.0.bias']);
  t.deepEqual(net.namedParameters({ recurse: false }).map(([n]) => n), ['scale']);
  t.is(net.parameters().length, 5);
  t.deepEqual(net.namedBuffers().map(([n]) => n), ['steps', 'cache']);
  t.deepEqual(net.namedModules().map(([n, m]) => `${n}:${m.name}`), [':Net', 'encoder:Linear', 'act:Tanh', 'head:Sequential', 'head.0:Linear', 'head.1:Dropout']);
  t.deepEqual(net.namedChildren().map(([n]) => n), ['encoder', 'act', 'head']);  // 'tied' is encoder again
  // torch's state_dict: per module its parameters, its buffers, then its submodules', the shared one under both names.
  t.deepEqual(Object.keys(net.stateDict()), ['scale', 'steps', 'encoder.weight', 'encoder.bias', 'head.0.weight', 'head.0.bias', 'tied.weight', 'tied.bias']);
  t.true(net.parameters().every((p) => p.requiresGrad && p.isLeaf));
  t.true(net.modules().every((m) => m.training));
  t.is(net.eval(), net);
  t.true(net.modules().every((m) => !m.training));
  net.train();
  t.true(net.sub('head').sub('1').training);
  // A forward and backward in training mode fill every .grad; zeroGrad clears them.
  gx.tidy(() => gx.sum(net.call(T([5, 3], 0.3, 0.1, 1, d, 'float32'))).backward());
  t.true(net.parameters().every((p) => p.grad !== null));
  net.zeroGrad();
  t.true(net.parameters().every((p) => p.grad === null));
  const seen: string[] = [];
  net.apply((m) => seen.push(m.name));
  t.deepEqual(seen, ['Linear', 'Tanh', 'Linear', 'Dropout', 'Sequential', 'Net']);  // children first, each once
  t.regex(String(net), /^Net\(\n {2}\(encoder\): Linear\(inFeatures=3, outFeatures=4, bias=true\)\n[\s\S]*\(head\): Sequential\(\n {4}\(0\): Linear/);
  net.dispose();
  net.dispose();  // a second dispose does nothing
  gx.tidy(() => t.throws(() => net.call(gx.zeros([1, 3])), { message: /^Net\.call: the module was disposed/ }));
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});

deviceTestSerial('stateDict round-trips through gx.save / gx.loadTensors into a fresh model: same outputs; to(dtype) converts, keeping requiresGrad', async (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  const dir = mkdtempSync(join(tmpdir(), 'gx-nn-'));
  try {
    const a = new Net(d).eval(), b = new Net(d).eval();
    gx.noGrad(() => (a.buffer('steps') as gx.Tensor).fill_(7));
    const x = T([5, 3], 0.3, 0.1, 1, d, 'float32');
    for (const format of ['safetensors', 'npz'] as const) {
      const file = join(dir, `net.${format}`);
      await gx.save(file, a.stateDict());
      const loaded = await gx.loadTensors(file);
      const before = b.parameters();
      t.deepEqual(b.loadStateDict(loaded), { missingKeys: [], unexpectedKeys: [] });
      for (const v of Object.values(loaded)) v.dispose();
      t.true(b.parameters().every((p, i) => p === before[i]), 'loadStateDict copies in place: the same tensors');
      gx.tidy(() => t.deepEqual(values(b.call(x)), values(a.call(x))));
      t.deepEqual(values(b.buffer('steps') as gx.Tensor), [7]);
    }
    // to(dtype): floating tensors converted, new tensors, still leaves that require grad; outputs agree.
    const y32 = gx.tidy(() => values(a.call(x)));
    a.to('float64');
    t.true(a.parameters().every((p) => p.dtype === 'float64' && p.requiresGrad && p.isLeaf));
    t.is((a.buffer('steps') as gx.Tensor).dtype, 'float64');
    gx.tidy(() => close(t, values(a.call(x.double())), y32, 'float64 output', 1e-6, 1e-5));
    // The shorthands: half(), float(), cpu(); requiresGrad_(false) freezes, true thaws.
    t.true(a.half().parameters().every((p) => p.dtype === 'float16'));
    t.true(a.float().cpu().parameters().every((p) => p.dtype === 'float32' && p.device.type === 'cpu'));
    a.to(d);
    t.true(a.requiresGrad_(false).parameters().every((p) => !p.requiresGrad));
    t.true(a.requiresGrad_().parameters().every((p) => p.requiresGrad));
    // A tensor shared by two modules (tied weights) stays one tensor through to().
    const tied = new gx.nn.Module(), shared = gx.ones([3], { device: d });
    tied.registerModule('a', new gx.nn.Module()).registerParameter('w', shared);
    tied.registerModule('b', new gx.nn.Module()).registerParameter('w', shared);
    t.deepEqual(tied.namedParameters().map(([n]) => n), ['a.w']);
    tied.to('float64');
    t.is(tied.sub('a').param('w'), tied.sub('b').param('w'));
    t.is((tied.sub('b').param('w') as gx.Tensor).dtype, 'float64');
    t.true(shared.isDisposed);
    // stateDict lists it under both names, as torch's; loading takes both keys (the later last) and refuses one missing.
    t.deepEqual(Object.keys(tied.stateDict()), ['a.w', 'b.w']);
    const one = gx.ones([3], { device: d }), two = gx.full([3], 2, { device: d });
    t.deepEqual(tied.loadStateDict({ 'a.w': one, 'b.w': two }), { missingKeys: [], unexpectedKeys: [] });
    t.deepEqual(values(tied.sub('a').param('w') as gx.Tensor), [2, 2, 2]);
    t.throws(() => tied.loadStateDict({ 'a.w': one }), { message: /^Module\.loadStateDict: the state dict does not match Module: missing keys \[b\.w\], unexpected keys \[\]$/ });
    t.deepEqual(tied.loadStateDict({ 'b.w': one }, { strict: false }), { missingKeys: ['a.w'], unexpectedKeys: [] });
    t.deepEqual(values(tied.sub('a').param('w') as gx.Tensor), [1, 1, 1]);
    one.dispose();
    two.dispose();
    tied.dispose();
    // strict refuses missing and unexpected keys; strict: false reports them.
    const partial = { ...b.stateDict(), extra: x } as gx.nn.StateDict;
    delete partial['head.0.bias'];
    t.throws(() => b.loadStateDict(partial), { message: /^Net\.loadStateDict: the state dict does not match Net: missing keys \[head\.0\.bias\], unexpected keys \[extra\]/ });
    t.deepEqual(b.loadStateDict(partial, { strict: false }), { missingKeys: ['head.0.bias'], unexpectedKeys: ['extra'] });
    const bad = { ...b.stateDict(), scale: x };
    t.throws(() => b.loadStateDict(bad), { message: /^Net\.loadStateDict: stateDict\['scale'\] has shape \[5, 3\] but the module's has \[2\]/ });
    a.dispose();
    b.dispose();
    x.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});

deviceTest('Linear, Embedding, Sequential and ModuleList against references computed here', (t, d) => {
  gx.tidy(() => {
    const fc = new gx.nn.Linear(3, 2, { dtype: 'float64', device: d });
    const x = T([4, 3], 0.7, 0.2, 2, d);
    const W = values(fc.weight), B = values(fc.bias as gx.Tensor), X = values(x);
    const ref = Array.from({ length: 8 }, (_, k) => {
      const i = Math.floor(k / 2), o = k % 2;
      return B[o] + [0, 1, 2].reduce((s, j) => s + X[i * 3 + j] * W[o * 3 + j], 0);
    });
    close(t, values(fc.call(x)), ref, 'Linear');
    close(t, values(fc.call(gx.sliceDims(x, 1))), ref.slice(2, 4), 'Linear on a 1-d input');
    const nb = new gx.nn.Linear(3, 2, { bias: false, dtype: 'float64', device: d });
    t.is(nb.bias, null);
    t.deepEqual(nb.namedParameters().map(([n]) => n), ['weight']);
    // Embedding: rows by index; the padding row starts at zero and gets no gradient; repeated rows add up.
    const emb = new gx.nn.Embedding(5, 3, { paddingIdx: 1, dtype: 'float64', device: d });
    const E = values(emb.weight);
    t.deepEqual(E.slice(3, 6), [0, 0, 0]);
    const ids = gx.tensor([[4, 1], [4, 0]], { dtype: 'int64', device: d });
    const out = emb.call(ids);
    t.deepEqual(out.shape, [2, 2, 3]);
    t.deepEqual(values(out), [4, 1, 4, 0].flatMap((i) => E.slice(i * 3, i * 3 + 3)));
    gx.sum(gx.mul(out, T([2, 2, 3], 0.5, 0.1, 1, d))).backward();
    const g = values(emb.weight.grad as gx.Tensor), G = values(T([2, 2, 3], 0.5, 0.1, 1, d));
    close(t, g.slice(12, 15), [0, 1, 2].map((j) => G[j] + G[6 + j]), 'row 4 gets both gradients');
    t.deepEqual(g.slice(3, 6), [0, 0, 0], 'the padding row gets none');
    // Sequential: the composition, at(), length; leaves only its output.
    const seq = new gx.nn.Sequential(fc, new gx.nn.ReLU(), new gx.nn.Sigmoid());
    t.is(seq.length, 3);
    t.is(seq.at(-3), fc);
    const live = gx.memory.stats(d).liveTensors;
    const y = gx.noGrad(() => seq.call(x));  // (with grad on, the tape's saved tensors are live too)
    t.is(gx.memory.stats(d).liveTensors, live + 1, 'Sequential frees its intermediates');
    close(t, values(y), ref.map((v) => 1 / (1 + Math.exp(-Math.max(v, 0)))), 'Sequential');
    // ModuleList: registers, iterates, collects parameters; it has no forward.
    const list = new gx.nn.ModuleList([nb]).append(new gx.nn.GELU()).append(new gx.nn.Linear(2, 2, { device: d }));
    t.deepEqual(list.namedParameters().map(([n]) => n), ['0.weight', '2.weight', '2.bias']);
    t.deepEqual([...list].map((m) => m.name), ['Linear', 'GELU', 'Linear']);
    t.throws(() => (list as gx.nn.AnyModule).call(x), { message: /^ModuleList\.forward: not implemented/ });
    for (const m of [seq, nb, emb, list]) m.dispose();
  });
});

deviceTestSerial('Dropout: p of the elements zeroed, the rest scaled by 1 / (1 - p), the gradient through the same mask; eval and p = 0 pass through; seeded', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  gx.tidy(() => {
    const drop = new gx.nn.Dropout(0.3);
    const x = gx.add(gx.rand([20000], { dtype: 'float64', device: d }), 0.5).requiresGrad_();
    gx.manualSeed(3);
    const y = drop.call(x);
    const X = values(x), Y = values(y);
    const zeros = Y.filter((v) => v === 0).length / Y.length;
    t.true(Math.abs(zeros - 0.3) < 0.015, `zeroed fraction ${zeros}`);
    t.true(Y.every((v, i) => v === 0 || Math.abs(v - X[i] / 0.7) < 1e-12), 'kept elements scaled by 1 / 0.7');
    gx.sum(y).backward();
    t.true(values(x.grad as gx.Tensor).every((g, i) => (Y[i] === 0 ? g === 0 : Math.abs(g - 1 / 0.7) < 1e-12)), 'gradient through the mask');
    gx.manualSeed(3);
    t.deepEqual(values(drop.call(x)), Y, 'gx.manualSeed reproduces the mask');
    drop.eval();
    t.is(drop.call(x), x, 'eval: the input itself, as torch');
    t.is(gx.nn.functional.dropout(x, 0), x);
    t.deepEqual(new Set(values(gx.nn.functional.dropout(x, 1))), new Set([0]));
    t.throws(() => new gx.nn.Dropout(-0.1), { message: /^gx\.nn\.Dropout: argument 'p' must be a probability in \[0, 1\]/ });
  });
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});

deviceTest('layers and Module refuse bad arguments, naming the function and the argument', (t, d) => {
  gx.tidy(() => {
    rejects(t, d, () => new gx.nn.Linear(2.5, 3), TypeError, /^gx\.nn\.Linear: argument 'inFeatures' must be an integer >= 0, got number 2\.5/);
    rejects(t, d, () => new gx.nn.Linear(2, 3, { bais: false } as never), TypeError, /^gx\.nn\.Linear: .*bais/);
    rejects(t, d, () => new gx.nn.Embedding(4, 2, { paddingIdx: 4 }), RangeError, /^gx\.nn\.Embedding: argument 'paddingIdx' must be an integer in \[-4, 4\)/);
    rejects(t, d, () => new gx.nn.LayerNorm([]), TypeError, /^gx\.nn\.LayerNorm: argument 'normalizedShape'/);
    rejects(t, d, () => new gx.nn.Sequential(5 as never), TypeError, /^gx\.nn\.Sequential: argument 0 must be a gx\.nn\.Module, got number 5/);
    const fc = new gx.nn.Linear(3, 2, { device: d });
    rejects(t, d, () => fc.call(gx.zeros([2, 4], { device: d })), RangeError, /^gx\.nn\.functional\.linear: argument 'input' must end in 3 features/);
    rejects(t, d, () => fc.registerParameter('weight', gx.zeros([1], { device: d })), Error, /^Linear\.registerParameter: 'weight' is already registered on Linear/);
    rejects(t, d, () => fc.registerParameter('a.b', gx.zeros([1], { device: d })), TypeError, /^Linear\.registerParameter: argument 'name' must be an identifier/);
    rejects(t, d, () => fc.registerParameter('ints', gx.zeros([1], { dtype: 'int64', device: d })), TypeError, /^Linear\.registerParameter: parameter 'ints' must be floating, got int64/);
    rejects(t, d, () => fc.param('nope'), Error, /^Linear\.param: Linear has no parameter 'nope'/);
    rejects(t, d, () => fc.namedParameters({ recursive: false } as never), TypeError, /^Linear\.namedParameters: unknown option 'recursive'; did you mean 'recurse'\?/);
    rejects(t, d, () => fc.to('int32'), TypeError, /^Linear\.to: argument 'dtype' must be a floating dtype/);
    rejects(t, d, () => fc.loadStateDict(5 as never), TypeError, /^Linear\.loadStateDict: argument 'stateDict' must be an object of tensors by name/);
    fc.dispose();
  });
});

deviceTest('Tensor.dim, float, double, half and zero_ as torch\'s', (t, d) => {
  gx.tidy(() => {
    const x = T([2, 3], 0.5, 0.1, 3, d);
    t.is(x.dim(), 2);
    t.is(gx.zeros([], { device: d }).dim(), 0);
    const f = x.float(), h = x.half(), back = f.double();
    t.is(f.dtype, 'float32');
    t.is(h.dtype, 'float16');
    t.is(back.dtype, 'float64');
    close(t, values(f), values(x), 'float', 1e-6, 1e-6);
    close(t, values(h), values(x), 'half', 1e-2, 1e-3);
    // Recorded: the gradient flows back through the conversions.
    const w = x.detach().requiresGrad_();
    gx.sum(gx.mul(w.float(), 2)).backward();
    t.deepEqual(values(w.grad as gx.Tensor), [2, 2, 2, 2, 2, 2]);
    (w.grad as gx.Tensor).zero_();
    t.deepEqual(values(w.grad as gx.Tensor), [0, 0, 0, 0, 0, 0]);
    t.is(x.zero_(), x);
    t.deepEqual(values(x), [0, 0, 0, 0, 0, 0]);
    rejects(t, d, () => w.zero_(), Error, /^Tensor\.zero_: self is a leaf tensor that requires grad, and an in-place op on a leaf cannot be recorded/);
    gx.noGrad(() => w.zero_());
    t.deepEqual(values(w), [0, 0, 0, 0, 0, 0]);
  });
});

// GELU's options were ignored (GELU({ approximate: 'tanh' }) gave the exact form): it takes torch's approximate.
test("nn.GELU({ approximate: 'tanh' }) is torch's tanh approximation; bad options refuse", (t) => {
  gx.tidy(() => {
    const x = gx.tensor([-2, -0.5, 0, 1, 3], { dtype: 'float64' });
    const tanhForm = (v: number): number => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
    const got = new gx.nn.GELU({ approximate: 'tanh' }).call(x).toArraySync() as Float64Array;
    [-2, -0.5, 0, 1, 3].forEach((v, i) => t.true(Math.abs(got[i] - tanhForm(v)) < 1e-15, `x = ${v}`));
    t.true(Math.abs((new gx.nn.GELU().call(gx.tensor([1], { dtype: 'float64' })).item() as number) - 0.8413447460685429) < 1e-12, 'the exact form');
    t.throws(() => new gx.nn.GELU('tanh' as never), { instanceOf: TypeError, message: /^nn\.GELU: options must be an object/ });
    t.throws(() => new gx.nn.GELU({ approximate: 'erf' } as never), { instanceOf: TypeError, message: /^nn\.GELU: approximate must be 'none' or 'tanh'/ });
  });
});

// Flags were read as written (=== false, === true, truthiness), so a JS caller's 0 or 'false' was a silent answer
// that differed from one option to the next: Linear made a bias for { bias: 0 } (elementwiseAffine: 0 made none),
// maxPool2d took { ceilMode: 1 } as false, avgPool2d { countIncludePad: 0 } as true.
deviceTest('boolean options of gx.nn refuse anything but true and false, naming the option; the booleans work as torch\'s', (t, d) => {
  gx.tidy(() => {
    const F = gx.nn.functional;
    const x = gx.arange(25, { dtype: 'float32', device: d }).reshape([1, 1, 5, 5]);
    const no = (v: unknown): never => v as never;
    // torch 2.x CPU: F.avg_pool2d(arange(25.).reshape(1, 1, 5, 5), 3, stride=3, padding=1, count_include_pad=False),
    // then with count_include_pad=True, and F.max_pool2d(x, 2, ceil_mode=True).
    close(t, values(F.avgPool2d(x, 3, { stride: 3, padding: 1, countIncludePad: false })), [3, 5.5, 15.5, 18], 'countIncludePad false', 1e-6);
    close(t, values(F.avgPool2d(x, 3, { stride: 3, padding: 1 })), [1.3333333730697632, 3.6666667461395264, 10.333333015441895, 18], 'countIncludePad default', 1e-6);
    close(t, values(F.maxPool2d(x, 2, { ceilMode: true })), [6, 8, 9, 16, 18, 19, 21, 23, 24], 'ceilMode true');
    const cases: [string, () => unknown, RegExp][] = [
      ['Linear bias', () => new gx.nn.Linear(3, 2, { bias: no(0) }), /^gx\.nn\.Linear: bias must be a boolean, got number 0/],
      ['Conv2d bias', () => new gx.nn.Conv2d(1, 1, 2, { bias: no('false') }), /^gx\.nn\.Conv2d: bias must be a boolean/],
      ['Bilinear bias', () => new gx.nn.Bilinear(2, 2, 2, { bias: no(0) }), /^gx\.nn\.Bilinear: bias must be a boolean/],
      ['MultiheadAttention bias', () => new gx.nn.MultiheadAttention(4, 2, { bias: no(0) }), /^gx\.nn\.MultiheadAttention: bias must be a boolean/],
      ['LayerNorm bias', () => new gx.nn.LayerNorm(3, { bias: no(0) }), /^gx\.nn\.LayerNorm: bias must be a boolean/],
      ['LayerNorm elementwiseAffine', () => new gx.nn.LayerNorm(3, { elementwiseAffine: no(0) }), /^gx\.nn\.LayerNorm: elementwiseAffine must be a boolean/],
      ['RMSNorm elementwiseAffine', () => new gx.nn.RMSNorm(3, { elementwiseAffine: no(1) }), /^gx\.nn\.RMSNorm: elementwiseAffine must be a boolean/],
      ['maxPool2d ceilMode', () => F.maxPool2d(x, 2, { ceilMode: no(1) }), /^gx\.nn\.functional\.maxPool2d: ceilMode must be a boolean, got number 1/],
      ['maxPool1d returnIndices', () => F.maxPool1d(x.reshape([1, 5, 5]), 2, { returnIndices: no(1) }), /^gx\.nn\.functional\.maxPool1d: returnIndices must be a boolean/],
      ['avgPool2d countIncludePad', () => F.avgPool2d(x, 3, { padding: 1, countIncludePad: no(0) }), /^gx\.nn\.functional\.avgPool2d: countIncludePad must be a boolean/],
      ['MaxPool2d ceilMode', () => new gx.nn.MaxPool2d(2, { ceilMode: no('yes') }).call(x), /^gx\.nn\.functional\.maxPool2d: ceilMode must be a boolean/],
      ['clipGradNorm_ errorIfNonfinite', () => gx.nn.utils.clipGradNorm_([x], 1, { errorIfNonfinite: no(1) }), /^gx\.nn\.utils\.clipGradNorm_: errorIfNonfinite must be a boolean/],
    ];
    for (const [name, f, re] of cases) {
      const err = t.throws(f, undefined, name);
      t.true(err instanceof TypeError && re.test(err.message), `${name}: ${err?.message}`);
    }
    const lin = new gx.nn.Linear(3, 2, { device: d });
    t.throws(() => lin.loadStateDict(lin.stateDict(), { strict: no(0) }), { instanceOf: TypeError, message: /^Linear\.loadStateDict: strict must be a boolean/ });
    t.throws(() => lin.parameters({ recurse: no(0) }), { instanceOf: TypeError, message: /^Linear\.namedParameters: recurse must be a boolean/ });
    lin.dispose();
    const w = gx.zeros([2], { device: d }).requiresGrad_();
    const opt = new gx.optim.SGD([w], { momentum: 0.9 });
    t.throws(() => new gx.optim.lrScheduler.OneCycleLR(opt, { maxLr: 1, totalSteps: 10, threePhase: no(1) }),
      { instanceOf: TypeError, message: /^gx\.optim\.lrScheduler\.OneCycleLR: threePhase must be a boolean, got number 1/ });
    opt.dispose();
  });
});
