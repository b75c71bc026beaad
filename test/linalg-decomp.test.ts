// gx.linalg's decompositions (qr, cholesky, solve, inv, det, eigh) on every
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
import { cudaTest, poisonCache, REQUIRE_CUDA, rng } from './helpers';

type Device = 'cpu' | 'cuda';
type FloatDType = 'float32' | 'float64';
const DTYPES: readonly FloatDType[] = ['float64', 'float32'];
const EPS: Record<FloatDType, number> = { float64: 2 ** -52, float32: 2 ** -23 };

const HAVE_LAPACK = !gx.backends().cpu.lapack.startsWith('built-in');
const PATHS = [...(HAVE_LAPACK ? ['cpu lapack'] : []), 'cpu builtin', 'cuda'] as const;
type Path = (typeof PATHS)[number];

/**
 * A test run on every path: the CPU with its LAPACK on (when loaded) and off,
 * and CUDA; it fails when it leaves more live tensors than it found.
 */
function pathTest(title: string, body: (t: ExecutionContext, device: Device, path: Path) => void): void {
  for (const path of PATHS) {
    const name = `${title} [${path}]`;
    if (path === 'cuda' && !gx.cuda.isAvailable()) {
      const reason = gx.cuda.unavailableReason();
      if (REQUIRE_CUDA) test(name, (t) => t.fail(`GPUEXT_REQUIRE_CUDA=1 but CUDA is unavailable: ${reason}`));
      else test.skip(`${name} (skipped: ${reason})`, () => undefined);
      continue;
    }
    test(name, (t) => {
      const device: Device = path === 'cuda' ? 'cuda' : 'cpu';
      const live = (): number => gx.memory.stats('cpu').liveTensors + (device === 'cuda' ? gx.memory.stats('cuda').liveTensors : 0);
      const before = live();
      const was = setCpuBlasEnabled(path !== 'cpu builtin');
      try {
        body(t, device, path);
      } finally {
        setCpuBlasEnabled(was);
      }
      t.is(live(), before, 'no tensor leaked');
    });
  }
}

// --- inputs and plain-JS references (row-major flat arrays) ------------------------------------------------------

/** n values uniform in [-1, 1), reproducible from `seed`. */
function uniform(n: number, seed: number): Float64Array {
  const r = rng(seed);
  return Float64Array.from({ length: n }, () => 2 * r() - 1);
}

/** A tensor of `values`, and the values as it holds them (rounded to float32 for float32). */
function input(values: ArrayLike<number>, shape: number[], dtype: FloatDType, device: Device): [gx.Tensor, number[]] {
  const t = gx.tensor(dtype === 'float32' ? Float32Array.from(values) : Float64Array.from(values), { shape, device });
  return [t, read(t)];
}

/** A tensor's values in row-major order (through its strides). */
function read(t: gx.Tensor): number[] {
  using c = t.contiguous();
  return Array.from(c.toArraySync() as ArrayLike<number>);
}

/** The m x k matrix a times the k x n matrix b. */
function mm(a: ArrayLike<number>, b: ArrayLike<number>, m: number, k: number, n: number): number[] {
  const c = new Array<number>(m * n).fill(0);
  for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

function transposed(a: ArrayLike<number>, rows: number, cols: number): number[] {
  return Array.from({ length: rows * cols }, (_, x) => a[(x % rows) * cols + Math.floor(x / rows)]);
}

const maxAbs = (a: ArrayLike<number>): number => Array.from(a).reduce((m, x) => Math.max(m, Math.abs(x)), 0);
const frobenius = (a: ArrayLike<number>): number => Math.sqrt(Array.from(a).reduce((s, x) => s + x * x, 0));
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return a.length === b.length ? d : Infinity;
};

/** max |Q^T Q - I| for the m x c matrix q. */
function orthoError(q: ArrayLike<number>, m: number, c: number): number {
  let e = 0;
  for (let x = 0; x < c; x++) {
    for (let y = 0; y < c; y++) {
      let d = 0;
      for (let i = 0; i < m; i++) d += q[i * c + x] * q[i * c + y];
      e = Math.max(e, Math.abs(d - (x === y ? 1 : 0)));
    }
  }
  return e;
}

/** The matrices of a batch [count * rows * cols], one by one. */
function matrices(v: readonly number[], rows: number, cols: number): number[][] {
  const out: number[][] = [];
  for (let o = 0; o < v.length; o += rows * cols) out.push(v.slice(o, o + rows * cols));
  return out;
}

/** Asserts `fn` throws `cls` with a message matching `re`. */
function throwsLike(t: ExecutionContext, fn: () => unknown, cls: typeof Error, re: RegExp, what: string): void {
  const err = t.throws(fn, undefined, what);
  t.true(err instanceof cls, `${what}: expected ${cls.name}, got ${err?.constructor.name}: ${err?.message}`);
  t.regex(err?.message ?? '', re, what);
}

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

// --- shared by the square-matrix ops -----------------------------------------------------------------------------

/** A well-conditioned n x n matrix: uniform entries plus n on the diagonal. */
function wellConditioned(n: number, seed: number): Float64Array {
  const a = uniform(n * n, seed);
  for (let i = 0; i < n; i++) a[i * n + i] += n;
  return a;
}

/** A symmetric positive-definite n x n matrix: M M^T + n I. */
function spd(n: number, seed: number): Float64Array {
  const m = uniform(n * n, seed);
  const a = Float64Array.from(mm(m, transposed(m, n, n), n, n, n));
  for (let i = 0; i < n; i++) a[i * n + i] += n;
  return a;
}

/** A symmetric n x n matrix. */
function symmetric(n: number, seed: number): Float64Array {
  const m = uniform(n * n, seed);
  return Float64Array.from({ length: n * n }, (_, x) => (m[x] + m[(x % n) * n + Math.floor(x / n)]) / 2);
}

/** `a` with the triangle strictly above (or below) the diagonal replaced by large junk: what must not be read. */
function junkTriangle(a: ArrayLike<number>, n: number, above: boolean, seed: number): Float64Array {
  const junk = uniform(n * n, seed);
  return Float64Array.from({ length: n * n }, (_, x) => {
    const i = Math.floor(x / n), j = x % n;
    return (above ? j > i : j < i) ? 1000 * junk[x] : a[x];
  });
}

/** det by LU with partial pivoting in double precision. */
function detReference(a: ArrayLike<number>, n: number): number {
  const w = Array.from(a);
  let det = 1;
  for (let j = 0; j < n; j++) {
    let p = j;
    for (let i = j + 1; i < n; i++) if (Math.abs(w[i * n + j]) > Math.abs(w[p * n + j])) p = i;
    if (w[p * n + j] === 0) return 0;
    if (p !== j) {
      for (let c = 0; c < n; c++) [w[j * n + c], w[p * n + c]] = [w[p * n + c], w[j * n + c]];
      det = -det;
    }
    det *= w[j * n + j];
    for (let i = j + 1; i < n; i++) {
      const f = w[i * n + j] / w[j * n + j];
      for (let c = j; c < n; c++) w[i * n + c] -= f * w[j * n + c];
    }
  }
  return det;
}

/** An n x n orthogonal matrix (Gram-Schmidt of random columns), row-major. */
function orthogonal(n: number, seed: number): number[] {
  const cols: number[][] = [];
  const r = uniform(n * n * 2, seed);
  for (let j = 0; cols.length < n; j++) {
    const v = Array.from({ length: n }, (_, i) => r[(j * n + i) % r.length]);
    for (const q of cols) {
      const d = q.reduce((s, x, i) => s + x * v[i], 0);
      for (let i = 0; i < n; i++) v[i] -= d * q[i];
    }
    const norm = Math.hypot(...v);
    if (norm > 1e-8) cols.push(v.map((x) => x / norm));
  }
  return Array.from({ length: n * n }, (_, x) => cols[x % n][Math.floor(x / n)]);
}

function identity(n: number): number[] {
  return Array.from({ length: n * n }, (_, x) => (x % (n + 1) === 0 ? 1 : 0));
}

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

// --- solve, inv, det ---------------------------------------------------------------------------------------------

/** max |A X - B| for the n x n a and the n x k x and b, against a bound for its rounding. */
function residual(a: readonly number[], x: readonly number[], b: readonly number[], n: number, k: number, dtype: FloatDType): [number, number] {
  const err = maxDiff(mm(a, x, n, n, k), b);
  return [err, 1000 * EPS[dtype] * n * (maxAbs(a) * maxAbs(x) + maxAbs(b))];
}

pathTest('linalg.solve: A X = B for matrices and vectors, batched with broadcasting, views', (t, device) => {
  for (const dtype of DTYPES) {
    for (const [n, k] of [[1, 1], [4, 1], [4, 3], [9, 5], [20, 2]]) {
      const [a, av] = input(wellConditioned(n, 400 + n), [n, n], dtype, device);
      const [b, bv] = input(uniform(n * k, 500 + n), [n, k], dtype, device);
      using _a = a;
      using _b = b;
      poisonCache(device, n * k, dtype);
      using x = gx.linalg.solve(a, b);
      t.deepEqual(x.shape, [n, k]);
      const [err, bound] = residual(av, read(x), bv, n, k, dtype);
      t.true(err <= bound, `${dtype} ${n}x${n} @ X = ${n}x${k}: residual ${err} (bound ${bound})`);
      t.deepEqual(read(a), av, `${dtype}: a unchanged`);
      // A vector b: a vector x.
      using bcol = gx.narrow(b, 1, 0, 1);
      using bvec = bcol.reshape([n]);
      using xv = gx.linalg.solve(a, bvec);
      t.deepEqual(xv.shape, [n]);
      const [errv, boundv] = residual(av, read(xv), read(bvec), n, 1, dtype);
      t.true(errv <= boundv, `${dtype} ${n}: vector residual ${errv}`);
      // Transposed views of both.
      using at = gx.transpose(a, 0, 1);
      using b1 = gx.transpose(b, 0, 1);
      using b2 = b1.contiguous();
      using bt = gx.transpose(b2, 0, 1);  // b's values, column-major memory
      using xt = gx.linalg.solve(at, bt);
      const [errt, boundt] = residual(transposed(av, n, n), read(xt), bv, n, k, dtype);
      t.true(errt <= boundt, `${dtype} ${n}: transposed views, residual ${errt}`);
    }
    // Batches: a [2, 1, n, n] with b [3, n, k] -> [2, 3, n, k]; a batch of vectors b [2, n] with a [2, n, n].
    const [n, k] = [5, 2];
    const mats = [wellConditioned(n, 600), wellConditioned(n, 601)];
    const [a, av] = input(mats.flatMap((x) => Array.from(x)), [2, 1, n, n], dtype, device);
    const [b, bv] = input(uniform(3 * n * k, 602), [3, n, k], dtype, device);
    using _a = a;
    using _b = b;
    using x = gx.linalg.solve(a, b);
    t.deepEqual(x.shape, [2, 3, n, k]);
    const xs = matrices(read(x), n, k), as = matrices(av, n, n), bs = matrices(bv, n, k);
    xs.forEach((xm, i) => {
      const [err, bound] = residual(as[Math.floor(i / 3)], xm, bs[i % 3], n, k, dtype);
      t.true(err <= bound, `${dtype} broadcast batch element ${i}: ${err}`);
    });
    using a2 = a.reshape([2, n, n]);
    const [bb, bbv] = input(uniform(2 * n, 603), [2, n], dtype, device);
    using _bb = bb;
    using xb = gx.linalg.solve(a2, bb);
    t.deepEqual(xb.shape, [2, n], 'b of a\'s shape without its last dim is a batch of vectors');
    matrices(read(xb), n, 1).forEach((xm, i) => {
      const [err, bound] = residual(as[i], xm, bbv.slice(i * n, i * n + n), n, 1, dtype);
      t.true(err <= bound, `${dtype} batch of vectors ${i}: ${err}`);
    });
  }
});

pathTest('linalg.solve: singular A, mismatched shapes, dtypes and devices are errors naming gx.linalg.solve; empty systems', (t, device) => {
  for (const dtype of DTYPES) {
    using sing = gx.tensor([[1, 2], [2, 4]], { dtype, device });
    using b = gx.ones([2], { dtype, device });
    throwsLike(t, () => gx.linalg.solve(sing, b), Error,
      /^gx\.linalg\.solve: the system could not be solved because argument 'a' is singular \(U\[1, 1\] of its LU factorization is exactly zero\)$/, `${dtype} singular`);
    using batch = gx.tensor([[[2, 0], [0, 2]], [[0, 0], [0, 0]]], { dtype, device });
    throwsLike(t, () => gx.linalg.solve(batch, b), Error, /argument 'a' \(batch element 1\) is singular \(U\[0, 0\]/, `${dtype} singular batch element`);
  }
  using a = gx.tensor([[2, 1], [1, 3]], { device });
  using b3 = gx.ones([3], { device });
  throwsLike(t, () => gx.linalg.solve(a, b3), RangeError, /^gx\.linalg\.solve: argument 'b' must have 2 rows to match 'a' \[2, 2\], got \[3\]$/, 'rows');
  using b64 = gx.ones([2], { dtype: 'float64', device });
  throwsLike(t, () => gx.linalg.solve(a, b64), TypeError, /^gx\.linalg\.solve: arguments 'a' and 'b' must have one dtype, got float32 and float64$/, 'dtypes');
  using bi = gx.ones([2], { dtype: 'int32', device });
  using ai = gx.ones([2, 2], { dtype: 'int32', device });
  throwsLike(t, () => gx.linalg.solve(ai, bi), TypeError, /^gx\.linalg\.solve: argument 'a' has dtype int32; expected float32 or float64$/, 'int32');
  using rect = gx.ones([2, 3], { device });
  throwsLike(t, () => gx.linalg.solve(rect, b3), RangeError, /^gx\.linalg\.solve: argument 'a' must be a square matrix/, 'not square');
  using s0 = gx.ones([], { device });
  throwsLike(t, () => gx.linalg.solve(a, s0), RangeError, /^gx\.linalg\.solve: argument 'b' must be a vector or a matrix, got \[\]$/, '0-d b');
  using ab = gx.ones([2, 2, 2], { device });
  using bb = gx.ones([3, 2, 1], { device });
  throwsLike(t, () => gx.linalg.solve(ab, bb), RangeError, /^gx\.linalg\.solve: the batch dimensions of 'a' \[2, 2, 2\] and 'b' \[3, 2, 1\] do not broadcast$/, 'batch');
  throwsLike(t, () => gx.linalg.solve(a, 3 as unknown as gx.Tensor), TypeError, /^gx\.linalg\.solve: argument 'b' must be a Tensor/, 'b not a tensor');
  if (device === 'cuda') {
    using bc = gx.ones([2]);
    throwsLike(t, () => gx.linalg.solve(a, bc), Error, /^gx\.linalg\.solve: 'a' is on cuda:0 and 'b' on cpu/, 'devices');
  }
  // Empty: n = 0, k = 0, an empty batch.
  for (const [as, bs, xs] of [[[0, 0], [0, 3], [0, 3]], [[2, 2], [2, 0], [2, 0]], [[0, 2, 2], [2], [0, 2]]] as const) {
    using ea = gx.ones(as.slice(), { device });
    using eb = gx.ones(bs.slice(), { device });
    using x = gx.linalg.solve(ea, eb);
    t.deepEqual(x.shape, xs.slice(), `${as} and ${bs}`);
  }
});

pathTest('linalg.inv: A A^-1 = I, batched and views; singular is an Error; empty', (t, device) => {
  for (const dtype of DTYPES) {
    for (const n of [1, 2, 7, 16]) {
      const [a, av] = input(wellConditioned(n, 700 + n), [n, n], dtype, device);
      using _a = a;
      poisonCache(device, n * n, dtype);
      using x = gx.linalg.inv(a);
      const [err, bound] = residual(av, read(x), identity(n), n, n, dtype);
      t.true(err <= bound, `${dtype} ${n}: |A A^-1 - I| = ${err}`);
      using at = gx.transpose(a, 0, 1);
      using xt = gx.linalg.inv(at);
      t.true(maxDiff(read(xt), transposed(read(x), n, n)) <= 100 * EPS[dtype] * n * maxAbs(read(x)), `${dtype} ${n}: inv(A^T) = inv(A)^T`);
    }
    const n = 4;
    const [a, av] = input([0, 1, 2].flatMap((i) => Array.from(wellConditioned(n, 800 + i))), [3, n, n], dtype, device);
    using _a = a;
    using x = gx.linalg.inv(a);
    t.deepEqual(x.shape, [3, n, n]);
    matrices(read(x), n, n).forEach((xm, i) => {
      const [err, bound] = residual(matrices(av, n, n)[i], xm, identity(n), n, n, dtype);
      t.true(err <= bound, `${dtype} batch element ${i}: ${err}`);
    });
    using sing = gx.tensor([[[1, 0], [0, 1]], [[1, 2], [2, 4]]], { dtype, device });
    throwsLike(t, () => gx.linalg.inv(sing), Error,
      /^gx\.linalg\.inv: the inverse could not be computed because argument 'a' \(batch element 1\) is singular \(U\[1, 1\] of its LU factorization is exactly zero\)$/, `${dtype} singular`);
  }
  for (const shape of [[0, 0], [2, 0, 0], [0, 3, 3]]) {
    using e = gx.zeros(shape, { device });
    using x = gx.linalg.inv(e);
    t.deepEqual(x.shape, shape);
  }
  using i32 = gx.ones([2, 2], { dtype: 'int32', device });
  throwsLike(t, () => gx.linalg.inv(i32), TypeError, /^gx\.linalg\.inv: argument 'a' has dtype int32; expected float32 or float64$/, 'int32');
  using rect = gx.ones([3, 2], { device });
  throwsLike(t, () => gx.linalg.inv(rect), RangeError, /^gx\.linalg\.inv: argument 'a' must be a square matrix/, 'not square');
});

pathTest('linalg.det: against a plain-JS LU; row swaps negate; singular is 0; batched; 0 x 0 is 1', (t, device) => {
  for (const dtype of DTYPES) {
    const tol = dtype === 'float64' ? 1e-12 : 1e-4;
    for (const n of [1, 2, 3, 6, 12]) {
      for (const [what, values] of [['random', uniform(n * n, 900 + n)], ['well-conditioned', wellConditioned(n, 950 + n)]] as const) {
        const [a, av] = input(values, [n, n], dtype, device);
        using _a = a;
        using d = gx.linalg.det(a);
        t.deepEqual(d.shape, []);
        const want = detReference(av, n), got = Number(d.item());
        t.true(Math.abs(got - want) <= tol * Math.abs(want) + 1e-300, `${dtype} ${what} ${n}: det ${got}, expected ${want}`);
        t.deepEqual(read(a), av, `${dtype}: a unchanged`);
        using at = gx.transpose(a, 0, 1);
        using dt = gx.linalg.det(at);
        t.true(Math.abs(Number(dt.item()) - want) <= tol * Math.abs(want) + 1e-300, `${dtype} ${what} ${n}: det(A^T)`);
      }
    }
    for (const [values, want, what] of [
      [[[0, 1], [1, 0]], -1, 'a swap'], [[[0, 1, 0], [0, 0, 1], [1, 0, 0]], 1, 'a 3-cycle'], [[[1, 2], [2, 4]], 0, 'rank 1'],
      [[[0, 0], [0, 0]], 0, 'zero'], [[[1, 2, 3], [4, 5, 6], [0, 0, 0]], 0, 'a zero row'], [[[2, 0], [0, 3]], 6, 'diagonal'],
    ] as const) {
      using a = gx.tensor(values.map((r) => r.slice()), { dtype, device });
      using d = gx.linalg.det(a);
      t.is(Number(d.item()), want, `${dtype} ${what}`);
    }
    const n = 3;
    const mats = [0, 1, 2, 3, 4, 5].map((i) => uniform(n * n, 990 + i));
    const [a, av] = input(mats.flatMap((x) => Array.from(x)), [2, 3, n, n], dtype, device);
    using _a = a;
    poisonCache(device, 6, dtype);
    using d = gx.linalg.det(a);
    t.deepEqual(d.shape, [2, 3]);
    read(d).forEach((x, i) => {
      const want = detReference(matrices(av, n, n)[i], n);
      t.true(Math.abs(x - want) <= tol * Math.abs(want) + 1e-300, `${dtype} batch element ${i}: ${x} vs ${want}`);
    });
  }
  using e = gx.zeros([0, 0], { device });
  using d0 = gx.linalg.det(e);
  t.is(Number(d0.item()), 1, 'det of 0 x 0');
  using eb = gx.zeros([3, 0, 0], { device });
  using d1 = gx.linalg.det(eb);
  t.deepEqual(read(d1), [1, 1, 1]);
  using nb = gx.zeros([0, 2, 2], { device });
  using d2 = gx.linalg.det(nb);
  t.deepEqual(d2.shape, [0]);
  using i32 = gx.ones([2, 2], { dtype: 'int32', device });
  throwsLike(t, () => gx.linalg.det(i32), TypeError, /^gx\.linalg\.det: argument 'a' has dtype int32; expected float32 or float64$/, 'int32');
  using v = gx.ones([4], { device });
  throwsLike(t, () => gx.linalg.det(v), RangeError, /^gx\.linalg\.det: argument 'a' must be a matrix or a batch of matrices/, '1-d');
});

// --- eigh --------------------------------------------------------------------------------------------------------

/** Checks eigenvalues w (ascending) and eigenvectors v (columns) of the symmetric n x n a. */
function checkEigh(t: ExecutionContext, what: string, a: readonly number[], w: readonly number[], v: readonly number[], n: number, dtype: FloatDType): void {
  const tol = 200 * EPS[dtype] * n;
  t.true(w.every((x, i) => i === 0 || x >= w[i - 1]), `${what}: ascending ${w}`);
  t.true(orthoError(v, n, n) <= tol, `${what}: V^T V = I (${orthoError(v, n, n)})`);
  const av = mm(a, v, n, n, n);
  const vw = v.map((x, k) => x * w[k % n]);
  t.true(maxDiff(av, vw) <= tol * Math.max(maxAbs(a), 1e-300), `${what}: |A V - V diag(w)| = ${maxDiff(av, vw)}`);
}

pathTest('linalg.eigh: A V = V diag(w), V orthonormal, w ascending; known eigenvalues; one triangle read; batches and views', (t, device) => {
  for (const dtype of DTYPES) {
    for (const n of [1, 2, 5, 16]) {
      const av = symmetric(n, 1000 + n);
      for (const uplo of ['L', 'U'] as const) {
        const [a, given] = input(junkTriangle(av, n, uplo === 'L', 1100 + n), [n, n], dtype, device);
        using _a = a;
        const sym = Array.from({ length: n * n }, (_, x) => {
          const i = Math.floor(x / n), j = x % n;
          return uplo === 'U' ? given[Math.min(i, j) * n + Math.max(i, j)] : given[Math.max(i, j) * n + Math.min(i, j)];
        });
        poisonCache(device, n * n, dtype);
        const { eigenvalues, eigenvectors } = gx.linalg.eigh(a, { UPLO: uplo });
        using _w = eigenvalues;
        using _v = eigenvectors;
        t.deepEqual(eigenvalues.shape, [n]);
        t.deepEqual(eigenvectors.shape, [n, n]);
        checkEigh(t, `${dtype} ${n} UPLO=${uplo}`, sym, read(eigenvalues), read(eigenvectors), n, dtype);
        t.deepEqual(read(a), given, `${dtype} ${n}: a unchanged`);
      }
    }
    // Known eigenvalues, repeated ones too: A = Q diag(d) Q^T.
    const n = 6;
    const q = orthogonal(n, 1200);
    for (const d of [[-3, -1, 0.5, 2, 2, 7], [1, 1, 1, 1, 1, 1], [0, 0, 0, 4, 5, 6]]) {
      const a = mm(q.map((x, k) => x * d[k % n]), transposed(q, n, n), n, n, n);
      const [t1, av] = input(a, [n, n], dtype, device);
      using _t1 = t1;
      const r = gx.linalg.eigh(t1);
      using _w = r.eigenvalues;
      using _v = r.eigenvectors;
      const w = read(r.eigenvalues);
      t.true(maxDiff(w, d) <= 100 * EPS[dtype] * n * 7, `${dtype} eigenvalues ${w}, expected ${d}`);
      checkEigh(t, `${dtype} known ${d}`, av, w, read(r.eigenvectors), n, dtype);
    }
    // A batch [2, 2, n, n] and a transposed view (the same symmetric values).
    const mats = [0, 1, 2, 3].map((i) => symmetric(n, 1300 + i));
    const [b, bv] = input(mats.flatMap((x) => Array.from(x)), [2, 2, n, n], dtype, device);
    using _b = b;
    using view = gx.transpose(b, 2, 3);
    for (const [x, what] of [[b, 'batch'], [view, 'transposed batch']] as const) {
      const r = gx.linalg.eigh(x);
      using _w = r.eigenvalues;
      using _v = r.eigenvectors;
      t.deepEqual(r.eigenvalues.shape, [2, 2, n]);
      t.deepEqual(r.eigenvectors.shape, [2, 2, n, n]);
      const ws = matrices(read(r.eigenvalues), 1, n), vs = matrices(read(r.eigenvectors), n, n);
      matrices(bv, n, n).forEach((am, i) => checkEigh(t, `${dtype} ${what} ${i}`, am, ws[i], vs[i], n, dtype));
    }
  }
});

pathTest('linalg.eigh: empty inputs; wrong arguments are errors naming gx.linalg.eigh', (t, device) => {
  for (const shape of [[0, 0], [2, 0, 0], [0, 3, 3]]) {
    using e = gx.zeros(shape, { device });
    const r = gx.linalg.eigh(e);
    using _w = r.eigenvalues;
    using _v = r.eigenvectors;
    t.deepEqual(r.eigenvalues.shape, shape.slice(0, -1));
    t.deepEqual(r.eigenvectors.shape, shape);
  }
  using i32 = gx.ones([2, 2], { dtype: 'int32', device });
  throwsLike(t, () => gx.linalg.eigh(i32), TypeError, /^gx\.linalg\.eigh: argument 'a' has dtype int32; expected float32 or float64$/, 'int32');
  using rect = gx.ones([2, 3], { device });
  throwsLike(t, () => gx.linalg.eigh(rect), RangeError, /^gx\.linalg\.eigh: argument 'a' must be a square matrix/, 'not square');
  using a = gx.ones([2, 2], { device });
  throwsLike(t, () => gx.linalg.eigh(a, { UPLO: 'X' as 'L' }), TypeError, /^gx\.linalg\.eigh: UPLO must be 'L' or 'U', got a string \("X"\)$/, 'UPLO');
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
