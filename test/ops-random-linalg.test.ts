// Random tensors (seeded, reproducible, in range, with the right moments;
// uniform and integer draws equal between devices) and matmul against a
// plain-JS reference on random inputs, on every device present.
import test from 'ava';

import * as gx from '../lib';
import { cudaTest, deviceTest, randomValues } from './helpers';

function values(t: gx.Tensor): number[] {
  return Array.from(t.toArraySync() as ArrayLike<number | bigint>, Number);
}

function meanStd(xs: number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const v = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
  return { mean, std: Math.sqrt(v) };
}

deviceTest('rand/uniform: in range, uniform moments, reproducible under a seed, new numbers after', (t, device) => {
  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16'] as const) {
    gx.manualSeed(1234);
    using a = gx.rand([20000], { device, dtype });
    t.is(a.dtype, dtype);
    const xs = values(a);
    t.true(xs.every((x) => x >= 0 && x < 1), `${dtype}: a value outside [0, 1)`);
    const { mean, std } = meanStd(xs);
    t.true(Math.abs(mean - 0.5) < 0.01 && Math.abs(std - Math.sqrt(1 / 12)) < 0.01, `${dtype}: mean ${mean}, std ${std}`);
    gx.manualSeed(1234);
    using b = gx.rand([20000], { device, dtype });
    t.deepEqual(values(b), xs, `${dtype}: the same seed gives the same numbers`);
    using c = gx.rand([20000], { device, dtype });
    t.notDeepEqual(values(c), xs, `${dtype}: the next draw differs`);
  }
  using u = gx.uniform(-3, 5, [5000], { device, dtype: 'float64' });
  t.true(values(u).every((x) => x >= -3 && x < 5));
});

deviceTest('randn: standard normal moments, mean and std options, reproducible', (t, device) => {
  for (const dtype of ['float32', 'float64', 'bfloat16'] as const) {
    gx.manualSeed(7);
    using z = gx.randn([40000], { device, dtype });
    const xs = values(z);
    t.true(xs.every(Number.isFinite));
    const { mean, std } = meanStd(xs);
    t.true(Math.abs(mean) < 0.02 && Math.abs(std - 1) < 0.02, `${dtype}: mean ${mean}, std ${std}`);
    gx.manualSeed(7);
    using z2 = gx.randn([40000], { device, dtype });
    t.deepEqual(values(z2), xs);
  }
  using s = gx.randn([40000], { device, mean: 10, std: 0.5 });
  const { mean, std } = meanStd(values(s));
  t.true(Math.abs(mean - 10) < 0.02 && Math.abs(std - 0.5) < 0.02, `mean ${mean}, std ${std}`);
});

deviceTest('randint: every value in [low, high), each about equally often; int64 beyond 2^32; dtype bounds', (t, device) => {
  gx.manualSeed(99);
  using r = gx.randint(-3, 7, [50000], { device });
  t.is(r.dtype, 'int64');
  const xs = values(r);
  const counts = new Map<number, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  t.deepEqual([...counts.keys()].sort((a, b) => a - b), [-3, -2, -1, 0, 1, 2, 3, 4, 5, 6]);
  for (const [v, c] of counts) t.true(Math.abs(c - 5000) < 400, `value ${v} drawn ${c} times of 50000`);
  using big = gx.randint(0n, 2n ** 40n, [1000], { device });
  const bs = Array.from(big.toArraySync() as BigInt64Array);
  t.true(bs.every((x) => x >= 0n && x < 2n ** 40n));
  t.true(bs.some((x) => x >= 2n ** 32n), 'draws beyond 32 bits');
  using small = gx.randint(0, 256, [1000], { device, dtype: 'uint8' });
  t.is(small.dtype, 'uint8');
  t.throws(() => gx.randint(0, 300, [4], { device, dtype: 'uint8' }), { instanceOf: RangeError, message: /gx\.randint: \[0, 300\) does not fit in uint8/ });
  t.throws(() => gx.randint(5, 5, [4], { device }), { instanceOf: RangeError, message: /the range \[5, 5\) is empty/ });
});

test('random: bad arguments name the function; generators are independent streams', (t) => {
  t.throws(() => gx.rand([2], { dtype: 'int32' }), { instanceOf: TypeError, message: /gx\.rand: dtype int32 is not supported; expected a floating dtype/ });
  t.throws(() => gx.randn([-1]), { message: /gx\.randn/ });
  t.throws(() => gx.manualSeed(-1), { instanceOf: RangeError, message: /seed must be an integer in \[0, 2\^64\)/ });
  t.throws(() => gx.randn([2], { std: -1 }), { instanceOf: RangeError, message: /std finite and >= 0/ });
  const g1 = new gx.Generator(5);
  const g2 = new gx.Generator(5);
  using a = gx.rand([100], { generator: g1 });
  gx.rand([100]).dispose();  // the default generator moves; g2 does not
  using b = gx.rand([100], { generator: g2 });
  t.deepEqual(values(a), values(b));
  t.is(g1.initialSeed, 5n);
});

cudaTest('random: uniform and integer draws are the same numbers on the CPU and on CUDA', (t) => {
  for (const [fn, dtype] of [['rand', 'float32'], ['rand', 'float64'], ['randint', 'int64']] as const) {
    const draw = (device: 'cpu' | 'cuda'): number[] => {
      gx.manualSeed(2024);
      using x = fn === 'rand' ? gx.rand([4099], { device, dtype }) : gx.randint(-1000, 1000, [4099], { device });
      return values(x);
    };
    t.deepEqual(draw('cuda'), draw('cpu'), `${fn} ${dtype}`);
  }
});

// ---------------------------------------------------------------------------
// matmul

function refMatmul(a: number[], b: number[], batch: number, m: number, k: number, n: number, aBatched: boolean, bBatched: boolean): Float64Array {
  const out = new Float64Array(batch * m * n);
  for (let p = 0; p < batch; p++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let q = 0; q < k; q++) s += a[(aBatched ? p * m * k : 0) + i * k + q] * b[(bBatched ? p * k * n : 0) + q * n + j];
        out[p * m * n + i * n + j] = s;
      }
    }
  }
  return out;
}

function maxRelError(got: number[], want: Float64Array): number {
  let worst = 0;
  const scale = Math.max(1, ...Array.from(want, Math.abs));
  got.forEach((g, i) => { worst = Math.max(worst, Math.abs(g - want[i]) / scale); });
  return worst;
}

const TOL: Record<string, number> = { float64: 1e-12, float32: 1e-5, float16: 5e-3, bfloat16: 3e-2 };

deviceTest('matmul: 2-d, batched, broadcast batch, vectors, against a reference, every float dtype', (t, device) => {
  const shapes: [number[], number[]][] = [
    [[5, 7], [7, 3]], [[4, 6, 8], [4, 8, 5]], [[3, 2, 5], [5, 4]], [[1, 5], [2, 5, 3]], [[7], [7, 2]], [[3, 7], [7]], [[9], [9]],
    [[2, 1, 4, 3], [5, 3, 2]], [[0, 3], [3, 4]], [[2, 0], [0, 3]],
  ];
  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16'] as const) {
    shapes.forEach(([sa, sb], c) => {
      const na = sa.reduce((x, y) => x * y, 1), nb = sb.reduce((x, y) => x * y, 1);
      const av = Array.from(randomValues('float32', na, 11 + c) as Float32Array, (x) => Math.round(x * 8) / 8);
      const bv = Array.from(randomValues('float32', nb, 50 + c) as Float32Array, (x) => Math.round(x * 8) / 8);
      using a = gx.tensor(Float32Array.from(av), { shape: sa }).to(device);
      using a2 = dtype === 'float32' ? a.clone() : gx.astype(a, dtype);
      using b = gx.tensor(Float32Array.from(bv), { shape: sb }).to(device);
      using b2 = dtype === 'float32' ? b.clone() : gx.astype(b, dtype);
      using r = gx.matmul(a2, b2);
      // Reference through torch.matmul's rules, written out.
      const a2d = sa.length === 1 ? [1, sa[0]] : sa, b2d = sb.length === 1 ? [sb[0], 1] : sb;
      const [m, k] = a2d.slice(-2), n = b2d[b2d.length - 1];
      const ab = a2d.slice(0, -2), bb = b2d.slice(0, -2);
      const nd = Math.max(ab.length, bb.length);
      const batchShape = Array.from({ length: nd }, (_, d) => Math.max(ab[d - (nd - ab.length)] ?? 1, bb[d - (nd - bb.length)] ?? 1));
      const expectShape = [...batchShape, ...(sa.length === 1 ? [] : [m]), ...(sb.length === 1 ? [] : [n])];
      t.deepEqual(r.shape, expectShape, `${dtype} ${JSON.stringify(sa)} @ ${JSON.stringify(sb)}`);
      // Expand both to the full batch in JS, then multiply.
      const batch = batchShape.reduce((x, y) => x * y, 1);
      const expand = (vals: number[], own: number[], rows: number, cols: number): number[] => {
        const out: number[] = [];
        for (let p = 0; p < batch; p++) {
          let rem = p, off = 0, stride = 1;
          for (let d = nd - 1; d >= 0; d--) {
            const idx = rem % batchShape[d];
            rem = Math.floor(rem / batchShape[d]);
            const od = d - (nd - own.length);
            if (od >= 0 && own[od] !== 1) off += idx * stride;
            if (od >= 0) stride *= own[od];
          }
          for (let q = 0; q < rows * cols; q++) out.push(vals[off * rows * cols + q]);
        }
        return out;
      };
      const want = refMatmul(expand(av, ab, m, k), expand(bv, bb, k, n), batch, m, k, n, true, true);
      const got = values(r);
      t.is(got.length, want.length);
      if (got.length > 0) t.true(maxRelError(got, want) <= TOL[dtype], `${dtype} ${JSON.stringify(sa)} @ ${JSON.stringify(sb)}: ${maxRelError(got, want)}`);
    });
  }
});

deviceTest('matmul: non-contiguous operands, out, tf32 close to float32, bad input names the op and the shapes', (t, device) => {
  const av = randomValues('float32', 6 * 4, 3) as Float32Array;
  const bv = randomValues('float32', 6 * 5, 4) as Float32Array;
  using a = gx.tensor(av, { shape: [6, 4], device });
  using at = gx.transpose(a, 0, 1);  // [4, 6], not contiguous
  using b = gx.tensor(bv, { shape: [6, 5], device });
  using out = gx.full([4, 5], Number.NaN, { device });
  const r = gx.matmul(at, b, { out });
  t.is(r, out);
  const want = new Float64Array(20);
  for (let i = 0; i < 4; i++) for (let j = 0; j < 5; j++) for (let q = 0; q < 6; q++) want[i * 5 + j] += av[q * 4 + i] * bv[q * 5 + j];
  t.true(maxRelError(values(out), want) <= 1e-5);
  // The other operand transposed, and both (on CUDA each reaches cuBLAS as a transpose flag).
  using bt = gx.transpose(gx.tensor(bv, { shape: [6, 5], device }).transpose(0, 1).contiguous(), 0, 1);  // [6, 5] view
  using r2 = gx.matmul(at, bt);
  t.true(maxRelError(values(r2), want) <= 1e-5, 'self and other transposed');
  using ct = gx.transpose(gx.matmul(gx.tensor(av, { shape: [6, 4], device }), gx.ones([4, 5], { device })), 0, 1);  // [5, 6] view
  using r3 = gx.matmul(ct, b);  // [5, 6] @ [6, 5]
  const want3 = new Float64Array(25);
  for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) for (let q = 0; q < 6; q++) want3[i * 5 + j] += (av[q * 4] + av[q * 4 + 1] + av[q * 4 + 2] + av[q * 4 + 3]) * bv[q * 5 + j];
  t.true(maxRelError(values(r3), want3) <= 1e-5, 'a transposed product');
  using tf = gx.matmul(at, b, { allowTf32: true });
  t.true(maxRelError(values(tf), want) <= 5e-3, 'tf32 within its 10-bit mantissa');
  using c = gx.ones([3, 4], { device });
  t.throws(() => gx.matmul(c, c), { instanceOf: RangeError, message: /gx\.matmul: inner dimensions differ: \[3, 4\] @ \[3, 4\] \(4 vs 3\)/ });
  using i32 = gx.ones([2, 2], { device, dtype: 'int32' });
  t.throws(() => gx.matmul(i32, i32), { instanceOf: TypeError, message: /gx\.matmul: dtype int32 is not supported/ });
  using d = gx.ones([4, 2], { device, dtype: 'float64' });
  t.throws(() => gx.matmul(c, d), { instanceOf: TypeError, message: /gx\.matmul: dtypes differ: float32 \[3, 4\] and float64 \[4, 2\]/ });
  using s = gx.tensor(1, { device });
  t.throws(() => gx.matmul(s, c), { instanceOf: RangeError, message: /at least 1 dimension/ });
  using bad = gx.empty([3, 3], { device });
  using e = gx.ones([4, 2], { device });
  t.throws(() => gx.matmul(c, e, { out: bad }), { message: /out must be a contiguous float32 \[3, 2\]/ });
});

cudaTest('matmul: operands on different devices are an error', (t) => {
  using a = gx.ones([2, 2]);
  using b = gx.ones([2, 2], { device: 'cuda' });
  t.throws(() => gx.matmul(a, b), { message: /gx\.matmul: operands are on cpu and cuda:0/ });
});


// ---------------------------------------------------------------------------
// SVD: checked by what defines it (signs of singular vector pairs are free)

function mat(t: gx.Tensor): { rows: number; cols: number; at: (i: number, j: number) => number } {
  const [rows, cols] = t.shape;
  const v = values(t);
  return { rows, cols, at: (i, j) => v[i * cols + j] };
}

/** A random orthogonal n x n matrix (Gram-Schmidt on seeded random columns), row-major. */
function orthogonal(n: number, seed: number): number[] {
  const r = Array.from(randomValues('float64', n * n, seed) as Float64Array);
  const q: number[][] = [];
  for (let j = 0; j < n; j++) {
    let v = Array.from({ length: n }, (_, i) => r[i * n + j]);
    for (const w of q) {
      const d = v.reduce((s, x, i) => s + x * w[i], 0);
      v = v.map((x, i) => x - d * w[i]);
    }
    const norm = Math.hypot(...v);
    q.push(v.map((x) => x / norm));
  }
  return Array.from({ length: n * n }, (_, k) => q[k % n][Math.floor(k / n)]);  // column j is q[j]
}

deviceTest('linalg.svd: U diag(S) Vh rebuilds A, U and Vh are orthonormal, S descending; tall, wide, square; both modes', (t, device) => {
  const shapes = [[7, 4], [4, 7], [5, 5], [1, 3], [3, 1], [12, 9]];
  for (const dtype of ['float64', 'float32'] as const) {
    const tol = dtype === 'float64' ? 1e-10 : 2e-5;
    shapes.forEach(([m, n], c) => {
      for (const fullMatrices of [false, true]) {
        using a = gx.tensor(randomValues(dtype, m * n, 90 + c) as Float64Array | Float32Array, { shape: [m, n], device });
        const { U, S, Vh } = gx.linalg.svd(a, { fullMatrices });
        try {
          const k = Math.min(m, n);
          const what = `${dtype} [${m}, ${n}] full=${fullMatrices} on ${device}`;
          t.deepEqual(U.shape, fullMatrices ? [m, m] : [m, k], `${what}: U`);
          t.deepEqual(S.shape, [k], `${what}: S`);
          t.deepEqual(Vh.shape, fullMatrices ? [n, n] : [k, n], `${what}: Vh`);
          const s = values(S);
          t.true(s.every((x, i) => x >= 0 && (i === 0 || x <= s[i - 1] * (1 + tol))), `${what}: S ${s}`);
          const u = mat(U), vh = mat(Vh), av = mat(a);
          const scale = Math.max(1, s[0] ?? 0);
          let worst = 0;
          for (let i = 0; i < m; i++) {
            for (let j = 0; j < n; j++) {
              let x = 0;
              for (let q = 0; q < k; q++) x += u.at(i, q) * s[q] * vh.at(q, j);
              worst = Math.max(worst, Math.abs(x - av.at(i, j)) / scale);
            }
          }
          t.true(worst <= tol * 10, `${what}: reconstruction error ${worst}`);
          const ortho = (g: (i: number, j: number) => number, size: number, len: number): number => {
            let e = 0;
            for (let p = 0; p < size; p++) {
              for (let q = 0; q < size; q++) {
                let d = 0;
                for (let i = 0; i < len; i++) d += g(i, p) * g(i, q);
                e = Math.max(e, Math.abs(d - (p === q ? 1 : 0)));
              }
            }
            return e;
          };
          t.true(ortho(u.at, u.cols, m) <= tol * 10, `${what}: U^T U = I`);
          t.true(ortho((i, p) => vh.at(p, i), vh.rows, n) <= tol * 10, `${what}: Vh Vh^T = I`);
        } finally {
          U.dispose();
          S.dispose();
          Vh.dispose();
        }
      }
    });
  }
});

deviceTest('linalg.svd: recovers known singular values (A = Q1 diag(s) Q2^T), rank-deficient too', (t, device) => {
  const n = 6, m = 9;
  const q1 = orthogonal(m, 3), q2 = orthogonal(n, 4);
  for (const want of [[9, 4, 2.5, 1, 0.5, 0.125], [3, 2, 1, 0, 0, 0]]) {
    const a = new Float64Array(m * n);
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) for (let q = 0; q < n; q++) a[i * n + j] += q1[i * m + q] * want[q] * q2[j * n + q];
    using ta = gx.tensor(a, { shape: [m, n], device });
    const r = gx.linalg.svd(ta, { fullMatrices: false });
    try {
      const s = values(r.S);
      s.forEach((x, i) => t.true(Math.abs(x - want[i]) <= 1e-10 * want[0], `S[${i}] = ${x}, expected ${want[i]}`));
    } finally {
      r.U.dispose();
      r.S.dispose();
      r.Vh.dispose();
    }
  }
  using i32 = gx.ones([2, 2], { device, dtype: 'int32' });
  t.throws(() => gx.linalg.svd(i32), { instanceOf: TypeError, message: /gx\.linalg\.svd: dtype int32 is not supported; expected float32 or float64/ });
  using b3 = gx.ones([2, 2, 2], { device });
  t.throws(() => gx.linalg.svd(b3), { instanceOf: RangeError, message: /expected a 2-d matrix, got \[2, 2, 2\] \(batched SVD is not supported yet\)/ });
});

cudaTest('linalg.svd: the same singular values on the CPU and on CUDA', (t) => {
  using a = gx.tensor(randomValues('float64', 40 * 25, 77) as Float64Array, { shape: [40, 25] });
  using g = a.to('cuda');
  const c = gx.linalg.svd(a, { fullMatrices: false });
  const d = gx.linalg.svd(g, { fullMatrices: false });
  try {
    const sc = values(c.S), sd = values(d.S);
    sc.forEach((x, i) => t.true(Math.abs(x - sd[i]) <= 1e-10 * sc[0], `S[${i}]: cpu ${x}, cuda ${sd[i]}`));
  } finally {
    for (const r of [c, d]) {
      r.U.dispose();
      r.S.dispose();
      r.Vh.dispose();
    }
  }
});

// Found by the fuzz suite: the CPU SVD squared unscaled entries (overflow past ~1e154, underflow below ~1e-154).
deviceTest('svd of float64 matrices with huge or tiny entries', (t, device) => {
  using big = gx.tensor([[1e300, 0], [0, 3e299]], { dtype: 'float64', device });
  const s1 = gx.linalg.svd(big).S.toArraySync();
  t.true(Math.abs(s1[0] / 1e300 - 1) < 1e-12 && Math.abs(s1[1] / 3e299 - 1) < 1e-12, `S = ${Array.from(s1)}`);
  using tiny = gx.tensor([[1e-311]], { dtype: 'float64', device });
  const s2 = gx.linalg.svd(tiny).S.toArraySync();
  t.true(Math.abs(s2[0] / 1e-311 - 1) < 1e-3, `S = ${Array.from(s2)}`);
});

// Found by the fuzz suite on the H100: cuSOLVER never returned for a 6 x 3 float64 matrix holding both NaN and
// infinity. Non-finite input is an Error on every device, as in torch.
deviceTest('svd of a matrix with NaN or infinity is an Error naming gx.linalg.svd', (t, device) => {
  for (const bad of [NaN, Infinity, -Infinity]) {
    using a = gx.tensor([[1, 2, 3], [4, bad, 6]], { dtype: 'float64', device });
    t.throws(() => gx.linalg.svd(a), { message: /^gx\.linalg\.svd: the input holds non-finite values/ });
  }
  using both = gx.tensor([[0, 1, Infinity], [NaN, 3e38, 2], [1, 0, 0], [5, 5, 5], [1, 2, 3], [0, 0, 1]], { dtype: 'float64', device });
  t.throws(() => gx.linalg.svd(both), { message: /non-finite/ });
});
