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
import { poisonCache, REQUIRE_CUDA, rng } from './helpers';

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
