// gx.linalg's decompositions (qr, cholesky here; solve, inv, det, eigh in
// linalg-solve.test.ts) on every
// path they run on: the CPU's LAPACK (when this machine has one: gx.backends()),
// the CPU's built-in code (setCpuBlasEnabled(false)), and cuSOLVER when a GPU
// is present (GPUEXT_REQUIRE_CUDA=1 makes a missing one a failure). Each is
// checked by what its result must satisfy (Q R = A with Q orthonormal and R
// upper triangular; L L^T = A; A X = B; A A^-1 = I; det against a plain-JS LU;
// A V = V diag(w)) on random float32 and float64 inputs: tall, wide and square,
// batched, non-contiguous views, empty, outputs written in full over poisoned
// memory; and by its errors (dtype, shape, singular, not positive-definite),
// which name the function and the argument. No test leaks a tensor.
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { setCpuBlasEnabled } from '../lib/ops/backends';
import { cudaTest, poisonCache } from './helpers';
import {
  DTYPES, EPS, type FloatDType, frobenius, HAVE_LAPACK, input, junkTriangle, matrices, maxAbs, maxDiff, mm,
  orthoError, pathTest, read, spd, throwsLike, transposed, uniform, wellConditioned,
} from './linalg-decomp-helpers';

// --- qr ----------------------------------------------------------------------------------------------------------

/** Checks one matrix's Q (m x kq, or none) and R (rk x n) against A. */
function checkQr(t: ExecutionContext, what: string, a: readonly number[], m: number, n: number, q: readonly number[] | undefined,
  kq: number, r: readonly number[], rk: number, dtype: FloatDType): void {
  let below = 0;
  for (let i = 0; i < rk; i++) for (let j = 0; j < Math.min(i, n); j++) below = Math.max(below, Math.abs(r[i * n + j]));
  t.is(below, 0, `${what}: R is upper triangular (exact zeros below the diagonal)`);
  t.true(r.every(Number.isFinite), `${what}: R finite`);
  if (q === undefined) return;
  const k = Math.min(m, n);
  const tol = 100 * EPS[dtype] * Math.sqrt(Math.max(m, n, 1));
  t.true(orthoError(q, m, kq) <= tol, `${what}: Q^T Q = I (error ${orthoError(q, m, kq)})`);
  // Q R = A: the first k columns of Q against the first k rows of R (the complete R's other rows are zero).
  const qk = Array.from({ length: m * k }, (_, x) => q[Math.floor(x / k) * kq + (x % k)]);
  const err = maxDiff(mm(qk, r.slice(0, k * n), m, k, n), a);
  t.true(err <= tol * Math.max(frobenius(a), 1e-300), `${what}: |Q R - A| = ${err}`);
}

const QR_SHAPES: [number, number][] = [[7, 4], [4, 7], [5, 5], [1, 3], [3, 1], [1, 1], [12, 9], [40, 13], [13, 40]];

pathTest('linalg.qr: Q R rebuilds A, Q orthonormal, R upper triangular; tall, wide, square; every mode', (t, device) => {
  for (const dtype of DTYPES) {
    QR_SHAPES.forEach(([m, n], c) => {
      const [a, av] = input(uniform(m * n, 10 + c), [m, n], dtype, device);
      using _a = a;
      const k = Math.min(m, n);
      for (const mode of ['reduced', 'complete', 'r'] as const) {
        const what = `${dtype} ${m}x${n} ${mode}`;
        const { Q, R } = gx.linalg.qr(a, { mode });
        using _q = Q;
        using _r = R;
        const rk = mode === 'complete' ? m : k, kq = mode === 'complete' ? m : k;
        t.deepEqual(R.shape, [rk, n], `${what}: R's shape`);
        t.deepEqual(Q.shape, mode === 'r' ? [0] : [m, kq], `${what}: Q's shape`);
        t.is(Q.dtype, dtype);
        t.is(R.dtype, dtype);
        t.true(Q.device.equals(a.device) && R.device.equals(a.device), `${what}: on ${device}`);
        checkQr(t, what, av, m, n, mode === 'r' ? undefined : read(Q), kq, read(R), rk, dtype);
      }
      // Mode 'r' computes the same R as the reduced mode (the same factorization), and the default is 'reduced'.
      const plain = gx.linalg.qr(a);
      using _pq = plain.Q;
      using _pr = plain.R;
      const onlyR = gx.linalg.qr(a, { mode: 'r' });
      using _oq = onlyR.Q;
      using _or = onlyR.R;
      t.deepEqual(plain.Q.shape, [m, k]);
      t.deepEqual(read(onlyR.R), read(plain.R), `${dtype} ${m}x${n}: mode 'r' gives the reduced R`);
    });
  }
});

pathTest('linalg.qr: a batch, and views, give each matrix its own QR; A is left alone; outputs are written in full', (t, device) => {
  for (const dtype of DTYPES) {
    const [B1, B2, m, n] = [2, 3, 6, 4];
    const [a, av] = input(uniform(B1 * B2 * m * n, 40), [B1, B2, m, n], dtype, device);
    using _a = a;
    for (const mode of ['reduced', 'complete'] as const) {
      const kq = mode === 'complete' ? m : n, rk = kq;
      // Poisoned memory for the outputs to land in: anything the op fails to write shows as NaN.
      poisonCache(device, B1 * B2 * m * kq, dtype);
      poisonCache(device, B1 * B2 * rk * n, dtype);
      const { Q, R } = gx.linalg.qr(a, { mode });
      using _q = Q;
      using _r = R;
      t.deepEqual(Q.shape, [B1, B2, m, kq]);
      t.deepEqual(R.shape, [B1, B2, rk, n]);
      const qs = matrices(read(Q), m, kq), rs = matrices(read(R), rk, n), as = matrices(av, m, n);
      as.forEach((x, i) => checkQr(t, `${dtype} batch element ${i} ${mode}`, x, m, n, qs[i], kq, rs[i], rk, dtype));
      // Each matrix alone gives the same factors.
      using n0 = gx.narrow(a, 0, 1, 1);
      using n1 = gx.narrow(n0, 1, 2, 1);
      using one = n1.reshape([m, n]);
      const alone = gx.linalg.qr(one, { mode });
      using _aq = alone.Q;
      using _ar = alone.R;
      t.true(maxDiff(read(alone.Q), qs[5]) <= 10 * EPS[dtype] && maxDiff(read(alone.R), rs[5]) <= 10 * EPS[dtype] * 10,
        `${dtype} ${mode}: batch element 5 alone`);
    }
    t.deepEqual(read(a), av, `${dtype}: A unchanged`);
    // A transposed view (column-major memory) and a sliced one: the same factors as their contiguous copies.
    const [base] = input(uniform(2 * 9 * 5, 41), [2, 5, 9], dtype, device);
    using _b = base;
    using view = gx.transpose(base, 1, 2);  // [2, 9, 5], not contiguous
    using sliced = gx.sliceDims(view, null, [1, 8, 2]);  // [2, 4, 5], rows 1, 3, 5, 7
    for (const [v, what] of [[view, 'transposed'], [sliced, 'sliced']] as const) {
      t.false(v.isContiguous(), `${what} view`);
      using copy = v.contiguous();
      const x = gx.linalg.qr(v);
      const y = gx.linalg.qr(copy);
      try {
        t.deepEqual(read(x.Q), read(y.Q), `${dtype} ${what}: Q`);
        t.deepEqual(read(x.R), read(y.R), `${dtype} ${what}: R`);
        const [rows, cols] = v.shape.slice(1);
        const k = Math.min(rows, cols);
        const qs = matrices(read(x.Q), rows, k), rs = matrices(read(x.R), k, cols);
        matrices(read(v), rows, cols).forEach((am, i) => checkQr(t, `${dtype} ${what} ${i}`, am, rows, cols, qs[i], k, rs[i], k, dtype));
      } finally {
        for (const r of [x, y]) { r.Q.dispose(); r.R.dispose(); }
      }
    }
  }
});

pathTest('linalg.qr: empty matrices and batches (the complete Q of an m x 0 matrix is the identity)', (t, device) => {
  const cases: [number[], string, number[], number[]][] = [
    [[0, 3], 'reduced', [0, 0], [0, 3]],
    [[0, 3], 'complete', [0, 0], [0, 3]],
    [[3, 0], 'reduced', [3, 0], [0, 0]],
    [[3, 0], 'complete', [3, 3], [3, 0]],
    [[2, 3, 0], 'complete', [2, 3, 3], [2, 3, 0]],
    [[0, 4, 3], 'reduced', [0, 4, 3], [0, 3, 3]],
    [[0, 0], 'complete', [0, 0], [0, 0]],
  ];
  for (const [shape, mode, qShape, rShape] of cases) {
    using a = gx.zeros(shape, { dtype: 'float64', device });
    const { Q, R } = gx.linalg.qr(a, { mode: mode as gx.QrMode });
    using _q = Q;
    using _r = R;
    t.deepEqual(Q.shape, qShape, `${shape} ${mode}: Q`);
    t.deepEqual(R.shape, rShape, `${shape} ${mode}: R`);
    if (mode === 'complete' && Q.numel > 0) {
      const m = qShape[qShape.length - 1];
      const eye = Array.from({ length: m * m }, (_, x) => (x % (m + 1) === 0 ? 1 : 0));
      matrices(read(Q), m, m).forEach((q, i) => t.deepEqual(q, eye, `${shape} ${mode}: Q ${i} is the identity`));
    }
  }
});

pathTest('linalg.qr: a tall-skinny float32 block (2000 x 64), as a TSQR of row blocks factors', (t, device) => {
  const [m, n] = [2000, 64];
  const [a, av] = input(uniform(m * n, 50), [m, n], 'float32', device);
  using _a = a;
  const { Q, R } = gx.linalg.qr(a);
  using _q = Q;
  using _r = R;
  checkQr(t, 'float32 2000x64', av, m, n, read(Q), n, read(R), n, 'float32');
});

pathTest('linalg.qr: wrong arguments are errors naming gx.linalg.qr and the argument', (t, device) => {
  using i32 = gx.ones([3, 2], { dtype: 'int32', device });
  throwsLike(t, () => gx.linalg.qr(i32), TypeError, /^gx\.linalg\.qr: argument 'a' has dtype int32; expected float32 or float64$/, 'int32');
  using f16 = gx.ones([3, 2], { dtype: 'float16', device });
  throwsLike(t, () => gx.linalg.qr(f16), TypeError, /^gx\.linalg\.qr: argument 'a' has dtype float16/, 'float16');
  using v = gx.ones([3], { device });
  throwsLike(t, () => gx.linalg.qr(v), RangeError, /^gx\.linalg\.qr: argument 'a' must be a matrix or a batch of matrices \(at least 2 dimensions\), got \[3\]$/, '1-d');
  using a = gx.ones([3, 2], { device });
  throwsLike(t, () => gx.linalg.qr(a, { mode: 'full' as gx.QrMode }), TypeError, /^gx\.linalg\.qr: mode must be 'reduced', 'complete' or 'r', got a string \("full"\)$/, 'mode');
  throwsLike(t, () => gx.linalg.qr([[1, 2]] as unknown as gx.Tensor), TypeError, /^gx\.linalg\.qr: argument 'a' must be a Tensor/, 'not a tensor');
});

test('linalg.qr: the CPU\'s LAPACK and built-in QR give the same factors (the same Householder convention)', (t) => {
  if (!HAVE_LAPACK) {
    t.pass('no LAPACK on this machine');
    return;
  }
  for (const dtype of DTYPES) {
    const [a] = input(uniform(30 * 11, 60), [30, 11], dtype, 'cpu');
    using _a = a;
    const results = [true, false].map((on) => {
      const was = setCpuBlasEnabled(on);
      try {
        const { Q, R } = gx.linalg.qr(a, { mode: 'complete' });
        const out = [read(Q), read(R)];
        Q.dispose();
        R.dispose();
        return out;
      } finally {
        setCpuBlasEnabled(was);
      }
    });
    const tol = 1000 * EPS[dtype];
    t.true(maxDiff(results[0][0], results[1][0]) <= tol, `${dtype}: Q`);
    t.true(maxDiff(results[0][1], results[1][1]) <= tol * 10, `${dtype}: R`);
  }
});

// --- cholesky ----------------------------------------------------------------------------------------------------

pathTest('linalg.cholesky: L L^T = A (L lower) and U^T U = A (U upper), reading only that triangle; batches and views', (t, device) => {
  for (const dtype of DTYPES) {
    for (const n of [1, 2, 5, 17]) {
      const av = spd(n, 100 + n);
      const tol = 100 * EPS[dtype] * n * maxAbs(av);
      for (const upper of [false, true]) {
        // The triangle not read holds junk: the result must not depend on it.
        const [a, given] = input(junkTriangle(av, n, !upper, 200 + n), [n, n], dtype, device);
        using _a = a;
        const sym = Array.from({ length: n * n }, (_, x) => {
          const i = Math.floor(x / n), j = x % n;
          return upper ? given[Math.min(i, j) * n + Math.max(i, j)] : given[Math.max(i, j) * n + Math.min(i, j)];
        });
        poisonCache(device, n * n, dtype);
        using f = gx.linalg.cholesky(a, { upper });
        const what = `${dtype} ${n}x${n} upper=${upper}`;
        t.deepEqual(f.shape, [n, n], what);
        const fv = read(f);
        let wrongSide = 0;
        for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (upper ? j < i : j > i) wrongSide = Math.max(wrongSide, Math.abs(fv[i * n + j]));
        t.is(wrongSide, 0, `${what}: triangular (exact zeros)`);
        const rebuilt = upper ? mm(transposed(fv, n, n), fv, n, n, n) : mm(fv, transposed(fv, n, n), n, n, n);
        t.true(maxDiff(rebuilt, sym) <= tol, `${what}: |F F^T - A| = ${maxDiff(rebuilt, sym)}`);
        t.true(fv.every((x, k) => k % (n + 1) !== 0 || x > 0), `${what}: positive diagonal`);
        t.deepEqual(read(a), given, `${what}: a unchanged`);
        // The transposed view holds the other triangle: its factor with the other `upper` is this one transposed.
        using view = gx.transpose(a, 0, 1);
        using g = gx.linalg.cholesky(view, { upper: !upper });
        t.true(maxDiff(read(g), transposed(fv, n, n)) <= tol, `${what}: transposed view`);
      }
    }
    // A batch [2, 3, n, n]: each matrix's own factor.
    const n = 6;
    const mats = Array.from({ length: 6 }, (_, i) => spd(n, 300 + i));
    const [a, av] = input(mats.flatMap((x) => Array.from(x)), [2, 3, n, n], dtype, device);
    using _a = a;
    using l = gx.linalg.cholesky(a);
    t.deepEqual(l.shape, [2, 3, n, n]);
    matrices(read(l), n, n).forEach((lv, i) => {
      const want = matrices(av, n, n)[i];
      const err = maxDiff(mm(lv, transposed(lv, n, n), n, n, n), want);
      t.true(err <= 100 * EPS[dtype] * n * maxAbs(want), `${dtype} batch element ${i}: ${err}`);
    });
  }
});

pathTest('linalg.cholesky: not positive-definite is an Error naming the leading minor (and the batch element); empty inputs', (t, device) => {
  for (const dtype of DTYPES) {
    using indefinite = gx.tensor([[1, 2], [2, 1]], { dtype, device });
    throwsLike(t, () => gx.linalg.cholesky(indefinite), Error,
      /^gx\.linalg\.cholesky: the factorization could not be completed because argument 'a' is not positive-definite \(its leading minor of order 2 is not positive-definite\)$/, `${dtype} indefinite`);
    using negative = gx.tensor([[-1, 0], [0, 1]], { dtype, device });
    throwsLike(t, () => gx.linalg.cholesky(negative, { upper: true }), Error, /its leading minor of order 1 is not positive-definite/, `${dtype} negative`);
    const good = spd(3, 7);
    const bad = Float64Array.from(good);
    bad[8] = -50;  // the last diagonal entry: the third leading minor fails
    using batch = gx.tensor(Float64Array.from([...good, ...bad]), { shape: [2, 3, 3], dtype, device });
    throwsLike(t, () => gx.linalg.cholesky(batch), Error, /argument 'a' \(batch element 1\) is not positive-definite \(its leading minor of order 3/, `${dtype} batch`);
  }
  for (const shape of [[0, 0], [3, 0, 0], [0, 4, 4]]) {
    using e = gx.zeros(shape, { dtype: 'float64', device });
    using l = gx.linalg.cholesky(e);
    t.deepEqual(l.shape, shape);
  }
  using i32 = gx.ones([2, 2], { dtype: 'int32', device });
  throwsLike(t, () => gx.linalg.cholesky(i32), TypeError, /^gx\.linalg\.cholesky: argument 'a' has dtype int32; expected float32 or float64$/, 'int32');
  using rect = gx.ones([2, 3], { device });
  throwsLike(t, () => gx.linalg.cholesky(rect), RangeError, /^gx\.linalg\.cholesky: argument 'a' must be a square matrix or a batch of them \[\.\.\., n, n\], got \[2, 3\]$/, 'not square');
  using sq = gx.tensor([[1, 0], [0, 1]], { device });
  throwsLike(t, () => gx.linalg.cholesky(sq, { upper: 1 as unknown as boolean }), TypeError, /^gx\.linalg\.cholesky: upper must be a boolean/, 'upper');
});

// --- CUDA against the CPU, and the QR of a tall-skinny block at scale --------------------------------------------

cudaTest('linalg decompositions: the same results on CUDA as on the CPU (up to eigenvector and Householder signs)', (t) => {
  for (const dtype of DTYPES) {
    const tol = dtype === 'float64' ? 1e-10 : 2e-3;
    const n = 24;
    const close = (cpu: gx.Tensor, cuda: gx.Tensor, what: string, abs = false): void => {
      const x = read(cpu), y = read(cuda);
      const d = maxDiff(abs ? x.map(Math.abs) : x, abs ? y.map(Math.abs) : y);
      t.true(d <= tol * Math.max(1, maxAbs(x)), `${dtype} ${what}: cpu and cuda differ by ${d}`);
    };
    const [a] = input(wellConditioned(n, 1400), [n, n], dtype, 'cpu');
    const [s] = input(spd(n, 1401), [n, n], dtype, 'cpu');
    const [b] = input(uniform(2 * n * 3, 1402), [2, n, 3], dtype, 'cpu');
    const [tall] = input(uniform(300 * n, 1403), [300, n], dtype, 'cpu');
    using _a = a;
    using _s = s;
    using _b = b;
    using _tall = tall;
    using ga = a.to('cuda');
    using gs = s.to('cuda');
    using gb = b.to('cuda');
    using gtall = tall.to('cuda');
    const q1 = gx.linalg.qr(tall), q2 = gx.linalg.qr(gtall);
    close(q1.R, q2.R, 'qr R', true);
    close(q1.Q, q2.Q, 'qr Q', true);
    for (const r of [q1, q2]) { r.Q.dispose(); r.R.dispose(); }
    using c1 = gx.linalg.cholesky(s);
    using c2 = gx.linalg.cholesky(gs);
    close(c1, c2, 'cholesky');
    using x1 = gx.linalg.solve(a, b);
    using x2 = gx.linalg.solve(ga, gb);
    close(x1, x2, 'solve');
    using i1 = gx.linalg.inv(a);
    using i2 = gx.linalg.inv(ga);
    close(i1, i2, 'inv');
    using d1 = gx.linalg.det(a);
    using d2 = gx.linalg.det(ga);
    const dd = maxDiff(read(d1), read(d2));
    t.true(dd <= tol * maxAbs(read(d1)), `${dtype} det: ${read(d1)} vs ${read(d2)}`);
    const e1 = gx.linalg.eigh(s), e2 = gx.linalg.eigh(gs);
    close(e1.eigenvalues, e2.eigenvalues, 'eigh eigenvalues');
    close(e1.eigenvectors, e2.eigenvectors, 'eigh eigenvectors', true);
    for (const r of [e1, e2]) { r.eigenvalues.dispose(); r.eigenvectors.dispose(); }
  }
});

cudaTest('linalg.qr: the reduced QR of a 100000 x 1000 float32 block on CUDA (checked on the GPU; timings logged)', (t) => {
  const [m, n] = [100000, 1000];
  gx.manualSeed(7);
  using a = gx.randn([m, n], { device: 'cuda' });
  gx.cuda.synchronize();
  const t0 = performance.now();
  const { Q, R } = gx.linalg.qr(a);
  const enqueued = performance.now() - t0;
  gx.cuda.synchronize();
  const total = performance.now() - t0;
  t.log(`qr of ${m} x ${n} float32: call returned after ${enqueued.toFixed(1)} ms, done after ${total.toFixed(1)} ms`);
  try {
    t.deepEqual(Q.shape, [m, n]);
    t.deepEqual(R.shape, [n, n]);
    const eye = new Float32Array(n * n);
    for (let i = 0; i < n; i++) eye[i * n + i] = 1;
    using id = gx.tensor(eye, { shape: [n, n], device: 'cuda' });
    const orth = gx.tidy(() => gx.max(gx.abs(gx.sub(gx.matmul(gx.transpose(Q, 0, 1), Q), id))).item() as number);
    const rebuilt = gx.tidy(() => gx.max(gx.abs(gx.sub(gx.matmul(Q, R), a))).item() as number);
    const lower = gx.tidy(() => {
      using rt = R.to('cpu');
      const r = rt.toArraySync() as Float32Array;
      let x = 0;
      for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) x = Math.max(x, Math.abs(r[i * n + j]));
      return x;
    });
    t.log(`max |Q^T Q - I| = ${orth}, max |Q R - A| = ${rebuilt}`);
    t.true(orth < 1e-4, `Q^T Q = I: ${orth}`);
    t.true(rebuilt < 1e-3, `Q R = A: ${rebuilt}`);
    t.is(lower, 0, 'R upper triangular');
  } finally {
    Q.dispose();
    R.dispose();
  }
}, { serial: true });
