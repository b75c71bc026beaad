// mm, bmm, tensordot, kron against JS float64 references; gx.linalg.pinv,
// lstsq, matrixRank and eigvalsh against the Moore-Penrose conditions, the
// normal equations and known ranks, on random inputs on every device.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, rng } from './helpers';

/** A float64 tensor of shape with random values in [-1, 1), and its values in C order. */
function rand(shape: number[], seed: number, device: string): { t: gx.Tensor<'float64'>; v: number[] } {
  const r = rng(seed);
  const v = Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => r() * 2 - 1);
  return { t: gx.tensor(v, { dtype: 'float64', device }).reshape(shape), v };
}

const flat = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as Float64Array);

function close(t: ExecutionContext, got: number[], want: number[], what: string, tol = 1e-10): void {
  t.is(got.length, want.length, what);
  const worst = got.reduce((w, g, i) => Math.max(w, Math.abs(g - want[i]) / (1 + Math.abs(want[i]))), 0);
  t.true(worst <= tol, `${what}: worst relative error ${worst}`);
}

/** C = A B for row-major A [n, k] and B [k, m]. */
function matmulRef(a: number[], b: number[], n: number, k: number, m: number): number[] {
  const c = new Array<number>(n * m).fill(0);
  for (let i = 0; i < n; i++) for (let p = 0; p < k; p++) for (let j = 0; j < m; j++) c[i * m + j] += a[i * k + p] * b[p * m + j];
  return c;
}

deviceTest('mm, bmm, tensordot and kron against references', (t, device) => {
  gx.tidy(() => {
    const a = rand([3, 4], 1, device), b = rand([4, 5], 2, device);
    close(t, flat(gx.mm(a.t, b.t)), matmulRef(a.v, b.v, 3, 4, 5), 'mm');
    const p = rand([2, 3, 4], 3, device), q = rand([2, 4, 2], 4, device);
    const want = [0, 1].flatMap((i) => matmulRef(p.v.slice(i * 12, i * 12 + 12), q.v.slice(i * 8, i * 8 + 8), 3, 4, 2));
    close(t, flat(gx.bmm(p.t, q.t)), want, 'bmm');
    t.throws(() => gx.mm(p.t, q.t), { instanceOf: RangeError, message: /^gx\.mm: needs two 2-d tensors/ });
    t.throws(() => gx.bmm(p.t, rand([3, 4, 2], 5, device).t), { instanceOf: RangeError, message: /^gx\.bmm: needs two 3-d tensors with the same batch size/ });
    // tensordot: x [2, 3, 4] . y [3, 4, 5] over 2 axes, and named axes in another order.
    const x = rand([2, 3, 4], 6, device), y = rand([3, 4, 5], 7, device);
    close(t, flat(gx.tensordot(x.t, y.t, 2)), matmulRef(x.v, y.v, 2, 12, 5), 'tensordot 2');
    const z = rand([4, 3, 5], 8, device);
    const ref: number[] = [];
    for (let i = 0; i < 2; i++) {
      for (let m = 0; m < 5; m++) {
        let s = 0;
        for (let j = 0; j < 3; j++) for (let k = 0; k < 4; k++) s += x.v[i * 12 + j * 4 + k] * z.v[k * 15 + j * 5 + m];
        ref.push(s);
      }
    }
    const td = gx.tensordot(x.t, z.t, [[1, 2], [1, 0]]);
    t.deepEqual(td.shape, [2, 5]);
    close(t, flat(td), ref, 'tensordot named axes');
    t.deepEqual(gx.tensordot(a.t, b.t, 0).shape, [3, 4, 4, 5]);
    t.throws(() => gx.tensordot(x.t, y.t, [[0], [0]]), { instanceOf: RangeError, message: /^gx\.tensordot: axis 0 of a \(size 2\) and axis 0 of b \(size 3\) differ/ });
    // kron: [2, 3] (x) [4, 2] -> [8, 6]; a 1-d b pads to [1, 3].
    const u = rand([2, 3], 9, device), w = rand([4, 2], 10, device);
    const kr: number[] = [];
    for (let i = 0; i < 8; i++) for (let j = 0; j < 6; j++) kr.push(u.v[Math.floor(i / 4) * 3 + Math.floor(j / 2)] * w.v[(i % 4) * 2 + (j % 2)]);
    close(t, flat(gx.kron(u.t, w.t)), kr, 'kron');
    const v1 = rand([3], 11, device);
    t.deepEqual(gx.kron(u.t, v1.t).shape, [2, 9]);
    close(t, flat(gx.kron(u.t, v1.t)), [0, 1].flatMap((i) => [0, 1, 2].flatMap((j) => v1.v.map((e) => u.v[i * 3 + j] * e))), 'kron padded');
  });
});

deviceTest('pinv meets the Moore-Penrose conditions; matrixRank counts; lstsq solves the normal equations', (t, device) => {
  gx.tidy(() => {
    for (const [m, n, seed] of [[5, 3, 21], [3, 5, 22], [4, 4, 23]]) {
      const a = rand([m, n], seed, device).t;
      const p = gx.linalg.pinv(a);
      t.deepEqual(p.shape, [n, m]);
      close(t, flat(gx.matmul(gx.matmul(a, p), a)), flat(a), `A A+ A = A (${m}x${n})`);
      close(t, flat(gx.matmul(gx.matmul(p, a), p)), flat(p), `A+ A A+ = A+ (${m}x${n})`);
      const ap = gx.matmul(a, p), pa = gx.matmul(p, a);
      close(t, flat(ap), flat(ap.T.contiguous()), 'A A+ symmetric');
      close(t, flat(pa), flat(pa.T.contiguous()), 'A+ A symmetric');
      t.is(gx.linalg.matrixRank(a).item(), Math.min(m, n));
    }
    const sq = rand([4, 4], 24, device).t;
    close(t, flat(gx.linalg.pinv(sq)), flat(gx.linalg.inv(sq)), 'pinv of an invertible matrix is its inverse', 1e-8);
    // Rank 1 (an outer product) and rank 2 (a sum of two), batched.
    const u = rand([5], 25, device).t, v = rand([4], 26, device).t, u2 = rand([5], 27, device).t, v2 = rand([4], 28, device).t;
    const r1 = gx.outer(u, v), r2 = gx.add(r1, gx.outer(u2, v2));
    const batch = gx.stack([r1, r2, rand([5, 4], 29, device).t], 0);
    t.deepEqual(gx.linalg.matrixRank(batch).toNested(), [1, 2, 4]);
    t.is(gx.linalg.matrixRank(r2, { atol: 1e6 }).item(), 0);
    const pb = gx.linalg.pinv(batch);
    t.deepEqual(pb.shape, [3, 4, 5]);
    close(t, flat(gx.matmul(gx.matmul(r1, pb.index(0)), r1)), flat(r1), 'rank-deficient A A+ A = A');
    // lstsq: tall full rank: A^T (A x - b) = 0 and the residuals are ||A x - b||^2; wide: the minimum-norm solution pinv(A) b.
    const A = rand([6, 3], 30, device).t, B = rand([6, 2], 31, device).t;
    const [x, residuals, rank, sv] = gx.linalg.lstsq(A, B);
    const e = gx.sub(gx.matmul(A, x), B);
    close(t, flat(gx.matmul(A.T, e)), [0, 0, 0, 0, 0, 0], 'normal equations');
    close(t, flat(residuals), flat(gx.sum(gx.mul(e, e), 0)), 'residuals');
    t.is(rank.item(), 3);
    close(t, flat(sv), flat(gx.linalg.svd(A).S), 'singular values');
    const W = rand([2, 5], 32, device).t, bw = rand([2], 33, device).t;
    const xw = gx.linalg.lstsq(W, bw);
    t.deepEqual([xw.solution.shape, xw.residuals.shape], [[5], [0]]);
    close(t, flat(xw.solution), flat(gx.matmul(gx.linalg.pinv(W), bw)), 'minimum norm');
    close(t, flat(gx.matmul(W, xw.solution)), flat(bw), 'wide: exact');
    t.throws(() => gx.linalg.lstsq(A, rand([5, 2], 34, device).t), { instanceOf: RangeError, message: /^gx\.linalg\.lstsq: b must be/ });
    t.throws(() => gx.linalg.pinv(A, { rtol: -1 }), { instanceOf: TypeError, message: /^gx\.linalg\.pinv: rtol must be a number >= 0/ });
  });
});

deviceTest('eigvalsh gives eigh\'s eigenvalues; its gradient is V diag(g) V^T', (t, device) => {
  gx.tidy(() => {
    const a = rand([4, 4], 41, device).t;
    const s = gx.add(a, a.T);
    close(t, flat(gx.linalg.eigvalsh(s)), flat(gx.linalg.eigh(s).eigenvalues), 'eigenvalues');
    close(t, [flat(gx.linalg.eigvalsh(s)).reduce((p, q) => p + q, 0)], [flat(gx.trace(s))[0]], 'sum is the trace');
    const x = s.clone().requiresGrad_();
    gx.sum(gx.linalg.eigvalsh(x)).backward();
    // d(sum of eigenvalues)/dA = d trace(A)/dA = I.
    close(t, flat(x.grad as gx.Tensor), flat(gx.eye(4, { dtype: 'float64', device })), 'gradient of the trace');
    t.true(gx.autograd.gradcheck((m) => gx.linalg.eigvalsh(gx.add(m, m.T)), [a.clone().requiresGrad_()], { raiseException: false }).ok);
  });
});
