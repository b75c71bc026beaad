// gx.linalg.solve, inv, det and eigh on every path they run on (the CPU's
// LAPACK, its built-in code, cuSOLVER: pathTest in linalg-decomp-helpers.ts),
// checked by what their results must satisfy (A X = B; A A^-1 = I; det
// against a plain-JS LU; A V = V diag(w)) on random inputs, and by their
// errors. qr and cholesky are linalg-decomp.test.ts's.
import * as gx from '../lib';
import { poisonCache } from './helpers';
import {
  checkEigh, detReference, DTYPES, EPS, identity, input, junkTriangle, matrices, maxAbs, maxDiff, mm, orthogonal,
  pathTest, read, residual, symmetric, throwsLike, transposed, uniform, wellConditioned,
} from './linalg-decomp-helpers';

// --- solve, inv, det ---------------------------------------------------------------------------------------------


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
