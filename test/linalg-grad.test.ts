// Gradients of gx.linalg's decompositions and solvers: solve, inv, det,
// slogdet, cholesky, qr, eigh, svd (and the norms and einsum through them),
// on every device, in float64:
// - gradcheck (finite differences) of each case of one table, batched and
//   broadcast cases included, on well-conditioned random inputs;
// - torch's gradients of the same inputs: hard-coded in
//   test/fixtures/linalg-grad/torch-grads.json (torch 2.13.0 on the CPU, made
//   by torch_linalg_grads.py --make-fixture beside it), and on the GPU
//   computed live by the same script in the same test when python3 imports
//   torch;
// - cholesky's worked example (A 3 x 3, loss sum(L * W)) against symmetrized
//   finite differences;
// - scatterReduce's amax / amin at ties and prod with zeros, against torch
//   (the gradcheck of their smooth cases is in test/scatter-family.test.ts);
// - what torch says is not differentiable: qr's modes 'r' and tall
//   'complete' are refused at the call; repeated eigenvalues give a finite
//   eigenvalue gradient and an infinite eigenvector one; S alone is finite.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as gx from '../lib';
import { cudaTest, deviceTestSerial, type TestDevice } from './helpers';
import { noLeaks, valuesOf } from './linalg-reference';

type Arr = { shape: number[]; values: number[] };
interface Case {
  name: string;
  op: string;
  opts: Record<string, unknown>;
  inputs: Arr[];
  weights: Arr[];
  grads: (Arr | null)[];
}
interface Fixture {
  torch: string;
  cases: Case[];
}

const fixtureDir = path.join(__dirname, '..', '..', 'test', 'fixtures', 'linalg-grad');
const fixture = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'torch-grads.json'), 'utf8')) as Fixture;

const F64 = 'float64';
const toTensor = (a: Arr, device: TestDevice): gx.Tensor => gx.tensor(a.values, { dtype: F64, device }).reshape(a.shape);

/** sign(t) as a constant, 1 where t is 0: the gauge factor that makes sign-ambiguous outputs unique. */
function signOf(t: gx.Tensor): gx.Tensor {
  const s = gx.sign(t.detach());
  return gx.where(gx.eq(s, 0), 1, s);
}

/** The op's outputs as torch_linalg_grads.py lists them (the same gauge normalization). */
function outputs(op: string, opts: Record<string, unknown>, xs: gx.Tensor[]): gx.Tensor[] {
  const [a, b] = xs;
  switch (op) {
    case 'solve': return [gx.linalg.solve(a, b)];
    case 'inv': return [gx.linalg.inv(a)];
    case 'det': return [gx.linalg.det(a)];
    case 'slogdet': return [gx.linalg.slogdet(a).logabsdet];
    case 'cholesky': return [gx.linalg.cholesky(a, { upper: opts.upper === true })];
    case 'qr': {
      const { Q, R } = gx.linalg.qr(a, { mode: (opts.mode as gx.QrMode | undefined) ?? 'reduced' });
      const d = signOf(gx.diagonal(R, { axis1: -2, axis2: -1 }));
      const k = d.shape[d.ndim - 1];
      return [gx.mul(gx.narrow(Q, -1, 0, k), d.unsqueeze(-2)), gx.mul(R, d.unsqueeze(-1))];
    }
    case 'eigh': {
      const { eigenvalues, eigenvectors: v } = gx.linalg.eigh(a, { UPLO: (opts.UPLO as 'L' | 'U' | undefined) ?? 'L' });
      return [eigenvalues, gx.mul(v, signOf(gx.narrow(v, -2, 0, 1)))];
    }
    case 'svd': {
      const { U, S, Vh } = gx.linalg.svd(a, { fullMatrices: opts.fullMatrices !== false });
      const k = S.shape[S.ndim - 1];
      const d = signOf(gx.narrow(gx.narrow(U, -2, 0, 1), -1, 0, k));
      return [gx.mul(gx.narrow(U, -1, 0, k), d), S, gx.mul(gx.narrow(Vh, -2, 0, k), d.mT)];
    }
    case 'matrixNorm': return [gx.linalg.matrixNorm(a, opts.ord as gx.MatrixNormOrd)];
    case 'vectorNorm': return [gx.linalg.vectorNorm(a, opts.ord as number)];
    case 'scatterReduce': {
      const index = gx.tensor(opts.index as number[][], { dtype: 'int64', device: a.device });
      return [gx.scatterReduce(a, opts.axis as number, index, b, opts.reduce as gx.ScatterReduction, { includeSelf: opts.includeSelf as boolean })];
    }
    default: throw new Error(`unknown op ${op}`);
  }
}

/** The symmetric matrix x stands for: cholesky and eigh read one triangle, so finite differences move both. */
const symmetric = (x: gx.Tensor): gx.Tensor => gx.mul(gx.add(x, x.mT), 0.5);
const readsOneTriangle = (op: string): boolean => op === 'cholesky' || op === 'eigh';

/** Our gradients of the case's loss, sum_i sum(output_i * weight_i), with respect to each input. */
function ourGrads(c: Case, device: TestDevice): gx.Tensor[] {
  const xs = c.inputs.map((a) => toTensor(a, device).requiresGrad_());
  const outs = outputs(c.op, c.opts, xs);
  const terms = outs.map((o, i) => gx.sum(gx.mul(o, toTensor(c.weights[i], device))));
  terms.reduce((s, x) => gx.add(s, x)).backward();
  return xs.map((x) => x.grad as gx.Tensor);
}

/** got against torch's `want`: |got - want| <= tol (1 + |want|) element by element. */
function closeTo(got: gx.Tensor, want: Arr, tol: number): string | undefined {
  if (got.shape.join() !== want.shape.join()) return `shape [${got.shape.join(', ')}], torch's [${want.shape.join(', ')}]`;
  const g = valuesOf(got);
  for (let i = 0; i < g.length; i++) {
    if (!(Math.abs(g[i] - want.values[i]) <= tol * (1 + Math.abs(want.values[i])))) return `element ${i}: ${g[i]}, torch's ${want.values[i]}`;
  }
  return undefined;
}

// --- finite differences ---------------------------------------------------------------

deviceTestSerial('gradcheck (float64) of solve, inv, det (singular too), slogdet, cholesky, qr, eigh, svd and norms: batched, broadcast, vector cases', (t, device) => {
  for (const c of fixture.cases.filter((k) => k.opts.gradcheck !== false)) {  // not at ties (no derivative there): torch's figures check those
    noLeaks(t, device, () => {
      const xs = c.inputs.map((a) => toTensor(a, device).requiresGrad_());
      const fn = (...ys: gx.Tensor[]): gx.Tensor[] => outputs(c.op, c.opts, readsOneTriangle(c.op) ? ys.map(symmetric) : ys);
      for (const o of outputs(c.op, c.opts, xs)) t.true(o.requiresGrad, `${c.name}: the output requires grad`);
      const r = gx.autograd.gradcheck(fn, xs, { raiseException: false });
      t.true(r.ok, `${c.name}: ${JSON.stringify(r.worst)}`);
    });
  }
});

deviceTestSerial('cholesky\'s worked example: sum(L * W) against symmetrized finite differences (it gave the clone\'s identity before)', (t, device) => {
  noLeaks(t, device, () => {
    const av = [4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2];
    const w = gx.tensor([[1, 0, 0], [2, 3, 0], [4, 5, 6]], { dtype: F64, device });
    const a = gx.tensor(av, { dtype: F64, device }).reshape([3, 3]).requiresGrad_();
    gx.sum(gx.mul(gx.linalg.cholesky(a), w)).backward();
    const g = valuesOf(a.grad as gx.Tensor);
    const loss = (v: number[]): number => gx.noGrad(() => gx.sum(gx.mul(gx.linalg.cholesky(gx.tensor(v, { dtype: F64, device }).reshape([3, 3])), w)).item() as number);
    const eps = 1e-6;
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        // cholesky reads the lower triangle: moving A[max, min] moves the symmetric matrix's two entries (i, j) and (j, i).
        const at = Math.max(i, j) * 3 + Math.min(i, j);
        const plus = av.slice(), minus = av.slice();
        plus[at] += eps;
        minus[at] -= eps;
        const fd = (loss(plus) - loss(minus)) / (2 * eps) / (i === j ? 1 : 2);
        t.true(Math.abs(g[i * 3 + j] - fd) <= 1e-7, `gA[${i}, ${j}] = ${g[i * 3 + j]}, finite differences ${fd}`);
      }
    }
    // The figures the report of the wrong gradient gave from finite differences (two decimals).
    const reported = [0.18, 0.10, 0.37, 0.10, 0.87, 1.45, 0.37, 1.45, 2.16];
    t.true(g.every((v, i) => Math.abs(v - reported[i]) <= 0.006), `gA = ${g.map((v) => v.toFixed(4)).join(', ')}`);
  });
});

// --- torch's gradients ----------------------------------------------------------------

deviceTestSerial(`torch's gradients of the same inputs (torch ${fixture.torch} on the CPU, test/fixtures/linalg-grad)`, (t, device) => {
  for (const c of fixture.cases) {
    noLeaks(t, device, () => {
      const ours = ourGrads(c, device);
      c.grads.forEach((want, i) => {
        if (want === null) return;
        const bad = closeTo(ours[i], want, 1e-9);
        t.is(bad, undefined, `${c.name}, input ${i}: ${bad}`);
      });
    });
  }
});

/** python3 with torch, or undefined. */
function torchPython(): string | undefined {
  const r = spawnSync('python3', ['-c', 'import torch'], { encoding: 'utf8', timeout: 120_000 });
  return r.status === 0 ? 'python3' : undefined;
}

cudaTest('torch\'s gradients computed in the same test on the GPU (live when python3 imports torch, else the fixture\'s)', (t) => {
  const py = torchPython();
  let live: Fixture | undefined;
  if (py !== undefined) {
    const request = JSON.stringify({ device: 'cuda', cases: fixture.cases.map((c) => ({ name: c.name, op: c.op, opts: c.opts, inputs: c.inputs, weights: c.weights })) });
    const r = spawnSync(py, [path.join(fixtureDir, 'torch_linalg_grads.py')], { input: request, encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20 });
    t.is(r.status, 0, `torch_linalg_grads.py: ${r.stderr}`);
    live = JSON.parse(r.stdout) as Fixture & { device: string };
    t.log(`torch ${live.torch} on ${(live as Fixture & { device: string }).device}`);
  } else {
    t.log('python3 cannot import torch here: compared with the fixture\'s CPU figures instead');
  }
  fixture.cases.forEach((c, k) => {
    noLeaks(t, 'cuda', () => {
      const ours = ourGrads(c, 'cuda');
      const wants = live?.cases[k].grads ?? c.grads;
      wants.forEach((want, i) => {
        if (want === null) return;
        const bad = closeTo(ours[i], want, 1e-9);
        t.is(bad, undefined, `${c.name}, input ${i}: ${bad}`);
      });
    });
  });
});

// --- what is not differentiable ---------------------------------------------------------

deviceTestSerial('qr refuses an input that requires grad in mode \'r\' and in \'complete\' of a tall A, naming gx.linalg.qr and the mode', (t, device) => {
  noLeaks(t, device, () => {
    const tall = gx.tensor([[1, 2], [3, 4], [5, 7]], { dtype: F64, device }).requiresGrad_();
    t.throws(() => gx.linalg.qr(tall, { mode: 'r' }), { message: /^gx\.linalg\.qr: the derivative is not implemented for mode 'r'.*detach\(\)/ });
    t.throws(() => gx.linalg.qr(tall, { mode: 'complete' }), { message: /^gx\.linalg\.qr: the derivative is not defined for mode 'complete' when A has more rows than columns \(3 > 2/ });
    // Without grad they compute, as before; 'complete' of a wide A has a derivative.
    t.deepEqual(gx.noGrad(() => gx.linalg.qr(tall, { mode: 'r' })).R.shape, [2, 2]);
    t.deepEqual(gx.linalg.qr(tall.detach(), { mode: 'complete' }).Q.shape, [3, 3]);
    const wide = gx.tensor([[1, 2, 3], [3, 4, 1]], { dtype: F64, device }).requiresGrad_();
    t.true(gx.linalg.qr(wide, { mode: 'complete' }).R.requiresGrad);
  });
});

deviceTestSerial('repeated eigenvalues and singular values: eigenvalues and S alone have a finite gradient, eigenvectors an infinite one (as torch)', (t, device) => {
  noLeaks(t, device, () => {
    // A = diag(2, 2, 5) rotated: the eigenvalue 2 repeats.
    const q = gx.linalg.qr(gx.tensor([[1, 2, 0.5], [-1, 1, 2], [0.3, -2, 1]], { dtype: F64, device })).Q;
    const a0 = gx.matmul(gx.matmul(q, gx.diag(gx.tensor([2, 2, 5], { dtype: F64, device }))), q.mT);
    const c = gx.tensor([1, -2, 3], { dtype: F64, device });
    const a = a0.detach().requiresGrad_();
    gx.sum(gx.mul(gx.linalg.eigh(a).eigenvalues, c)).backward();
    // d(sum c_i w_i)/dA = V diag(c) V^T: finite, and only the split of c over the repeated pair depends on V.
    const ga = valuesOf(a.grad as gx.Tensor);
    t.true(ga.every(Number.isFinite), `eigenvalue gradient ${ga}`);
    const tr = ga[0] + ga[4] + ga[8];
    t.true(Math.abs(tr - 2) < 1e-12, `trace of the gradient is sum(c) = 2, got ${tr}`);
    // diag(2, 2, 5): the two 2s come out exactly equal, a zero gap, and a loss that turns their eigenvectors has no gradient.
    const b = gx.diag(gx.tensor([2, 2, 5], { dtype: F64, device })).requiresGrad_();
    const w = gx.tensor([[1, 2, 3], [-1, 0.5, 2], [0.2, -3, 1]], { dtype: F64, device });
    gx.sum(gx.mul(gx.linalg.eigh(b).eigenvectors, w)).backward();
    // torch 2.13 gives NaN in every element here (the gap's infinity spread by the products with V).
    t.true(valuesOf(b.grad as gx.Tensor).every((v) => !Number.isFinite(v)), `the eigenvector gradient at a repeated eigenvalue is not finite: ${valuesOf(b.grad as gx.Tensor)}`);
    // S alone of an orthogonal matrix (all singular values 1): gA = U Vh = q.
    const s = q.detach().requiresGrad_();
    gx.sum(gx.linalg.svd(s).S).backward();
    const gs = valuesOf(s.grad as gx.Tensor), qv = valuesOf(q);
    t.true(gs.every((v, i) => Math.abs(v - qv[i]) < 1e-12), `d sum(S) / dA = U Vh: ${gs}`);
  });
});

// --- slogdet's values ------------------------------------------------------------------

deviceTestSerial('slogdet: sign and log |det| as det gives them, past det\'s float range, singular and empty', (t, device) => {
  noLeaks(t, device, () => {
    const a = gx.tensor([[[2, 1, 0], [1, 3, 1], [0, 1, 4]], [[0, 1, 2], [1, 0, 3], [4, 5, 0]]], { dtype: F64, device });
    const d = valuesOf(gx.linalg.det(a));
    const { sign, logabsdet } = gx.linalg.slogdet(a);
    t.deepEqual(valuesOf(sign), d.map(Math.sign));
    valuesOf(logabsdet).forEach((l, i) => t.true(Math.abs(l - Math.log(Math.abs(d[i]))) < 1e-12, `log |det| ${l} vs ${d[i]}`));
    // det of 1000 I (130 x 130), one row negated, is -1e390: det overflows, slogdet does not.
    const n = 130;
    const big = gx.mul(gx.eye(n, { dtype: F64, device }), 1000);
    const rows = gx.tensor(Array.from({ length: n }, (_, i) => (i === 7 ? -1 : 1)), { dtype: F64, device }).reshape([n, 1]);
    const m = gx.mul(big, rows);
    t.is(gx.linalg.det(m).item(), -Infinity);
    const r = gx.linalg.slogdet(m);
    t.is(r.sign.item(), -1);
    t.true(Math.abs((r.logabsdet.item() as number) - n * Math.log(1000)) < 1e-9);
    const tiny = gx.linalg.slogdet(gx.mul(gx.eye(n, { dtype: F64, device }), 1e-3));  // det underflows to 0
    t.is(tiny.sign.item(), 1);
    const singular = gx.linalg.slogdet(gx.tensor([[1, 2], [2, 4]], { dtype: F64, device }));
    t.is(singular.sign.item(), 0);
    t.is(singular.logabsdet.item(), -Infinity);
    const empty = gx.linalg.slogdet(gx.zeros([2, 0, 0], { dtype: F64, device }));
    t.deepEqual(valuesOf(empty.sign), [1, 1]);
    t.deepEqual(valuesOf(empty.logabsdet), [0, 0]);
    t.throws(() => gx.linalg.slogdet(gx.zeros([2, 3], { dtype: F64, device })), { message: /^gx\.linalg\.slogdet: argument 'a' must be a square matrix/ });
  });
});

// --- memory ------------------------------------------------------------------------------

deviceTestSerial('no tensor outlives the outputs: recording saves only what the formulas read, and backward leaves just the gradients', (t, device) => {
  const live = (): number => gx.memory.stats('cpu').liveTensors + (device === 'cuda' ? gx.memory.stats('cuda').liveTensors : 0);
  const a = gx.tensor([[4, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]], { dtype: F64, device }).requiresGrad_();
  const b = gx.tensor([[1], [2], [-3]], { dtype: F64, device }).requiresGrad_();
  const calls: Record<string, () => gx.Tensor[]> = {
    solve: () => [gx.linalg.solve(a, b)],
    inv: () => [gx.linalg.inv(a)],
    det: () => [gx.linalg.det(a)],
    slogdet: () => Object.values(gx.linalg.slogdet(a)),
    cholesky: () => [gx.linalg.cholesky(a)],
    qr: () => Object.values(gx.linalg.qr(a)),
    eigh: () => Object.values(gx.linalg.eigh(a)),
    svd: () => Object.values(gx.linalg.svd(a)),
  };
  for (const [what, call] of Object.entries(calls)) {
    const before = live();
    for (const o of call()) o.dispose();
    t.is(live(), before, `${what}: the outputs disposed, nothing left`);
    const outs = call();
    let loss = gx.sum(outs[0]);
    for (const o of outs.slice(1)) {
      using s = gx.sum(o);
      const next = gx.add(loss, s);
      loss.dispose();
      loss = next;
    }
    loss.backward();
    loss.dispose();
    for (const o of outs) o.dispose();
    t.true(a.grad !== null, `${what}: a got a gradient`);
    for (const x of [a, b]) {
      x.grad?.dispose();
      x.grad = null;
    }
    t.is(live(), before, `${what}: after backward, nothing left`);
  }
  a.dispose();
  b.dispose();
});

// --- ops made of recorded ops --------------------------------------------------------------

deviceTestSerial('einsum (batched, through matmul and diagonals), cross and diagonal record: gradcheck', (t, device) => {
  noLeaks(t, device, () => {
    const leaf = (shape: number[], seed: number): gx.Tensor =>
      gx.tensor(Array.from({ length: shape.reduce((p, q) => p * q, 1) }, (_, i) => Math.sin(seed * 7.1 + i * 1.3)), { dtype: F64, device }).reshape(shape).requiresGrad_();
    const check = (what: string, fn: (...xs: gx.Tensor[]) => gx.Tensor, xs: gx.Tensor[]): void => {
      t.true(fn(...xs).requiresGrad, `${what} records`);
      t.true(gx.autograd.gradcheck(fn, xs).ok, what);
    };
    check('einsum bij,bjk->bik', (x, y) => gx.einsum('bij,bjk->bik', x, y), [leaf([2, 3, 4], 1), leaf([2, 4, 2], 2)]);
    check('einsum bii->bi', (x) => gx.einsum('bii->bi', x), [leaf([2, 3, 3], 3)]);
    check('einsum ...ij,...j->...i', (x, y) => gx.einsum('...ij,...j->...i', x, y), [leaf([2, 3, 4], 4), leaf([4], 5)]);
    check('cross, batched', (x, y) => gx.cross(x, y), [leaf([2, 3], 6), leaf([2, 3], 7)]);
    check('diagonal of a batch', (x) => gx.diagonal(x, { offset: 1, axis1: -2, axis2: -1 }), [leaf([2, 3, 4], 8)]);
    check('inv of a product (a chain)', (x, y) => gx.linalg.inv(gx.add(gx.matmul(x, y), gx.mul(gx.eye(3, { dtype: F64, device }), 3))), [leaf([3, 2], 9), leaf([2, 3], 10)]);
  });
});

test('the fixture holds every op of the table and torch\'s figures for each input', (t) => {
  const ops = new Set(fixture.cases.map((c) => c.op));
  for (const op of ['solve', 'inv', 'det', 'slogdet', 'cholesky', 'qr', 'eigh', 'svd', 'matrixNorm', 'vectorNorm', 'scatterReduce']) t.true(ops.has(op), op);
  for (const c of fixture.cases) t.is(c.grads.length, c.inputs.length, c.name);
});
