// The CPU matmul and SVD on both of their paths in every run: the system BLAS
// / LAPACK when this machine has one (gx.backends()), and the built-in GEMM /
// Jacobi SVD (switched in-process with setCpuBlasEnabled, and for a whole
// process with GPUEXT_BLAS=none in a child), so CI without OpenBLAS still
// tests the built-in kernel and a machine with OpenBLAS tests both. matmul is
// checked against a float64 JS reference on random inputs over shapes that
// cross the kernel's tile and block edges, views, batches, out= (poisoned
// first) and every float dtype.
import { execFileSync } from 'child_process';
import * as path from 'path';

import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { gemmKernelsAvailable, setCpuBlasEnabled, setGemmKernel } from '../lib/ops/backends';
import { randomValues } from './helpers';

const FLOAT_DTYPES = ['float32', 'float64', 'float16', 'bfloat16'] as const;
type FloatDType = (typeof FLOAT_DTYPES)[number];

const HAVE_BLAS = !gx.backends().cpu.blas.startsWith('built-in');
const HAVE_LAPACK = !gx.backends().cpu.lapack.startsWith('built-in');

/** The paths to test: 'blas' when a BLAS loaded here, and the built-in GEMM with each micro-kernel the CPU runs. */
const KERNELS = gemmKernelsAvailable();
const PATHS: readonly string[] = [...(HAVE_BLAS ? ['blas'] : []), ...KERNELS.map((k) => `builtin ${k}`)];

function onPath<R>(p: string, fn: () => R): R {
  const was = setCpuBlasEnabled(p === 'blas');
  const kernel = p.startsWith('builtin ') ? setGemmKernel(p.slice('builtin '.length)) : undefined;
  try {
    return fn();
  } finally {
    setCpuBlasEnabled(was);
    if (kernel !== undefined) setGemmKernel(kernel);
  }
}

/** Random values exact in `dtype`, as a tensor of that dtype, and the values as numbers. */
function input(shape: number[], dtype: FloatDType, seed: number): [gx.Tensor, number[]] {
  const n = shape.reduce((x, y) => x * y, 1);
  const src = dtype === 'float16' || dtype === 'bfloat16' ? randomValues(dtype, n, seed) as Float32Array
    : Float32Array.from(randomValues('float32', n, seed) as Float32Array, (x) => x / 16);
  using f = gx.tensor(src, { shape });
  const t = gx.astype(f, dtype);
  return [t, Array.from(t.toArraySync() as ArrayLike<number>)];
}

/** Values of a 2-d or 3-d (batch) view read through its strides: [batch][i][j] flattened. */
function values(t: gx.Tensor): number[] {
  using c = t.contiguous();
  return Array.from(c.toArraySync() as ArrayLike<number>);
}

/** a [b?, m, k] @ b [b?, k, n] in float64 (operands given as flat row-major values), with sum |a||b| per entry. */
function reference(a: number[], b: number[], batch: number, m: number, k: number, n: number, aBatched: boolean, bBatched: boolean):
  { want: Float64Array; mag: Float64Array } {
  const want = new Float64Array(batch * m * n);
  const mag = new Float64Array(batch * m * n);
  for (let p = 0; p < batch; p++) {
    const ao = aBatched ? p * m * k : 0, bo = bBatched ? p * k * n : 0;
    for (let i = 0; i < m; i++) {
      for (let q = 0; q < k; q++) {
        const x = a[ao + i * k + q];
        for (let j = 0; j < n; j++) {
          const y = b[bo + q * n + j];
          want[p * m * n + i * n + j] += x * y;
          mag[p * m * n + i * n + j] += Math.abs(x * y);
        }
      }
    }
  }
  return { want, mag };
}

// Accumulation error (relative to sum |a||b|) and the output's rounding (relative to the result).
const ACC: Record<FloatDType, number> = { float64: 1e-13, float32: 2e-5, float16: 2e-5, bfloat16: 2e-5 };
const ROUND: Record<FloatDType, number> = { float64: 0, float32: 0, float16: 2 ** -10, bfloat16: 2 ** -7 };

function checkClose(t: ExecutionContext, got: ArrayLike<number>, ref: { want: Float64Array; mag: Float64Array }, dtype: FloatDType, what: string): void {
  t.is(got.length, ref.want.length, `${what}: length`);
  let bad = -1;
  for (let i = 0; i < ref.want.length; i++) {
    const err = Math.abs(got[i] - ref.want[i]);
    if (!(err <= ACC[dtype] * ref.mag[i] + ROUND[dtype] * Math.abs(ref.want[i]) + 1e-300)) { bad = i; break; }
  }
  t.is(bad, -1, bad < 0 ? what : `${what}: entry ${bad} is ${got[bad]}, expected ${ref.want[bad]} (sum |a||b| ${ref.mag[bad]})`);
}

// [m, k, n]: 1 x 1, vectors, odd sizes, the micro-tile (6 x 8/16/32) and its neighbours, KC (256) crossed,
// NC (2048 float64 / 3072 float32) crossed, a short wide one (threads split columns), matrix-vector ones large
// enough for threads, and one with several M blocks per thread.
const SHAPES: [number, number, number][] = [
  [1, 1, 1], [1, 37, 1], [1, 53, 41], [47, 29, 1], [7, 13, 5], [6, 16, 32], [5, 15, 31], [63, 64, 65], [64, 63, 64],
  [65, 65, 63], [129, 7, 130], [17, 300, 23], [13, 513, 9], [3, 5, 3100], [5, 300, 700], [700, 300, 1], [1, 300, 700], [200, 90, 100], [0, 4, 3], [3, 0, 4],
];

for (const p of PATHS) {
  test(`matmul [${p}]: 2-d shapes across tile and block edges, every float dtype, out poisoned`, (t) => {
    const live = gx.memory.stats('cpu').liveTensors;
    onPath(p, () => {
      for (const dtype of FLOAT_DTYPES) {
        SHAPES.forEach(([m, k, n], c) => {
          if (dtype !== 'float32' && dtype !== 'float64' && m * k * n > 300_000) return;  // half types: a few sizes suffice
          const [a, av] = input([m, k], dtype, 100 + c);
          const [b, bv] = input([k, n], dtype, 200 + c);
          using _a = a;
          using _b = b;
          const ref = reference(av, bv, 1, m, k, n, false, false);
          using r = gx.matmul(a, b);
          checkClose(t, values(r), ref, dtype, `${dtype} ${m}x${k} @ ${k}x${n}`);
          using out = gx.full([m, n], Number.NaN, { dtype });
          gx.matmul(a, b, { out });
          checkClose(t, values(out), ref, dtype, `${dtype} ${m}x${k} @ ${k}x${n} into out`);
        });
      }
    });
    t.is(gx.memory.stats('cpu').liveTensors, live, 'no tensor leaked');
  });

  test(`matmul [${p}]: transposed, sliced, expanded and batched views read without copies, broadcast batches`, (t) => {
    const live = gx.memory.stats('cpu').liveTensors;
    onPath(p, () => {
      for (const dtype of ['float32', 'float64', 'bfloat16'] as const) {
        const [m, k, n] = [37, 70, 29];
        // Transposes: a stored [k, m], b stored [n, k].
        const [at, atv] = input([k, m], dtype, 1);
        const [bt, btv] = input([n, k], dtype, 2);
        using _at = at;
        using _bt = bt;
        using a = gx.transpose(at, 0, 1);
        using b = gx.transpose(bt, 0, 1);
        const av = values(a), bv = values(b);
        t.deepEqual(av.length, atv.length);
        t.deepEqual(bv.length, btv.length);
        const ref = reference(av, bv, 1, m, k, n, false, false);
        using ca = a.contiguous();
        using cb = b.contiguous();
        for (const [x, y, what] of [[a, b, 'aT @ bT'], [ca, b, 'a @ bT'], [a, cb, 'aT @ b']] as const) {
          using r = gx.matmul(x, y);
          checkClose(t, values(r), ref, dtype, `${dtype} ${what}`);
        }
        // Matrix-vector products on views: a strided row of aT, a contiguous row, a column of bT.
        using arow = gx.narrow(a, 0, 2, 1);
        using crow = gx.narrow(ca, 0, 2, 1);
        using bcol = gx.narrow(b, 1, 3, 1);
        const arowv = values(arow), bcolv = values(bcol);
        for (const [x, what] of [[arow, 'row of aT @ bT'], [crow, 'row @ bT']] as const) {
          using r = gx.matmul(x, b);
          checkClose(t, values(r), reference(arowv, bv, 1, 1, k, n, false, false), dtype, `${dtype} ${what}`);
        }
        using rc = gx.matmul(a, bcol);
        checkClose(t, values(rc), reference(av, bcolv, 1, m, k, 1, false, false), dtype, `${dtype} aT @ column of bT`);
        // Slices: every other column of a wider matrix (row stride > columns; column stride 2, so BLAS copies).
        const [wide] = input([m, 2 * k + 3], dtype, 3);
        using _w = wide;
        using sl = gx.narrow(wide, 1, 3, k);
        using every2 = gx.sliceDims(wide, null, [0, 2 * k, 2]);
        for (const [x, what] of [[sl, 'narrow'], [every2, 'step 2']] as const) {
          const xv = values(x);
          using r = gx.matmul(x, cb);
          checkClose(t, values(r), reference(xv, bv, 1, m, k, n, false, false), dtype, `${dtype} ${what} @ b`);
        }
        // An expanded row (stride 0 across rows).
        const [row, rowv] = input([1, k], dtype, 4);
        using _row = row;
        using ex = gx.expand(row, [m, k]);
        using r0 = gx.matmul(ex, cb);
        const exv = Array.from({ length: m * k }, (_, i) => rowv[i % k]);
        checkClose(t, values(r0), reference(exv, bv, 1, m, k, n, false, false), dtype, `${dtype} expanded @ b`);
      }
      // Batches: [4, m, k] @ [4, k, n], a transposed batch (permute), a broadcast one, and batch dims that do not
      // collapse into one stride (a permuted 4-d).
      const dtype = 'float32';
      const [B, m, k, n] = [4, 9, 11, 7];
      const [a3] = input([B, k, m], dtype, 5);
      const [b3, b3v] = input([B, k, n], dtype, 6);
      const [b2, b2v] = input([k, n], dtype, 7);
      using _a3 = a3;
      using _b3 = b3;
      using _b2 = b2;
      using a3t = gx.permute(a3, [0, 2, 1]);  // [B, m, k], column-major matrices
      const a3tv = values(a3t);
      using r1 = gx.matmul(a3t, b3);
      checkClose(t, values(r1), reference(a3tv, b3v, B, m, k, n, true, true), dtype, 'batched transposed');
      using r2 = gx.matmul(a3t, b2);
      checkClose(t, values(r2), reference(a3tv, b2v, B, m, k, n, true, false), dtype, 'batched @ broadcast');
      const [a4] = input([3, 2, m, k], dtype, 8);
      using _a4 = a4;
      using a4p = gx.permute(a4, [1, 0, 2, 3]);  // batch dims [2, 3] with strides that do not collapse
      const a4pv = values(a4p);
      using r3 = gx.matmul(a4p, b2);
      t.deepEqual(r3.shape, [2, 3, m, n]);
      checkClose(t, values(r3), reference(a4pv, b2v, 6, m, k, n, true, false), dtype, 'non-collapsible batch');
      // Many small batches (the parallel-over-batches path), into a poisoned out.
      const [as, asv] = input([64, 5, 6], 'float64', 9);
      const [bs, bsv] = input([64, 6, 4], 'float64', 10);
      using _as = as;
      using _bs = bs;
      using out = gx.full([64, 5, 4], Number.NaN, { dtype: 'float64' });
      gx.matmul(as, bs, { out });
      checkClose(t, values(out), reference(asv, bsv, 64, 5, 6, 4, true, true), 'float64', 'many small batches');
    });
    t.is(gx.memory.stats('cpu').liveTensors, live, 'no tensor leaked');
  });
}

test('matmul: the BLAS and the built-in kernel agree on a large float32 product (several blocks, threads)', (t) => {
  const [m, k, n] = [301, 520, 333];
  const [a, av] = input([m, k], 'float32', 20);
  const [b, bv] = input([k, n], 'float32', 21);
  using _a = a;
  using _b = b;
  const ref = reference(av, bv, 1, m, k, n, false, false);
  for (const p of PATHS) {
    using out = gx.full([m, n], Number.NaN);  // poisoned: the allocator would hand back the other path's result
    onPath(p, () => gx.matmul(a, b, { out }));
    checkClose(t, values(out), ref, 'float32', p);
  }
});

test('gx.backends() names the CPU BLAS, LAPACK and kernel; GPUEXT_BLAS=none gives the built-in ones in a fresh process', (t) => {
  const b = gx.backends().cpu;
  t.regex(b.gemmKernel, /^(avx512f|avx2\+fma|generic)$/);
  t.is(KERNELS[0], b.gemmKernel, 'the best kernel the CPU has is the default');
  t.true(KERNELS.includes('generic'));
  t.throws(() => setGemmKernel('sse9'), { message: /'sse9' is not a micro-kernel this CPU can run/ });
  t.true(b.blas.length > 0 && b.lapack.length > 0);
  if (HAVE_BLAS) t.regex(b.blas, /\.so[.\d]* \((cblas|Fortran gemm)\)$/);
  if (HAVE_LAPACK) t.regex(b.lapack, /\(gesdd\)$/);
  const was = setCpuBlasEnabled(false);
  try {
    t.regex(gx.backends().cpu.blas, /^built-in kernel/);
  } finally {
    setCpuBlasEnabled(was);
  }
  // A fresh process with BLAS off by the environment: the choice is reported, and a product is right.
  const script = `
    const gx = require(${JSON.stringify(path.resolve(__dirname, '../lib'))});
    const a = gx.tensor(new Float64Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3] });
    const b = gx.tensor(new Float64Array([7, 8, 9, 10, 11, 12]), { shape: [3, 2] });
    const c = gx.matmul(a, b);
    const s = gx.linalg.svd(gx.tensor(new Float64Array([3, 0, 0, 4]), { shape: [2, 2] })).S;
    process.stdout.write(JSON.stringify({ b: gx.backends().cpu, c: Array.from(c.toArraySync()), s: Array.from(s.toArraySync()) }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, GPUEXT_BLAS: 'none' }, encoding: 'utf8' })) as
    { b: gx.CpuBackends; c: number[]; s: number[] };
  t.is(out.b.blas, 'built-in kernel (GPUEXT_BLAS=none)');
  t.regex(out.b.lapack, /^built-in Jacobi SVD/);
  t.deepEqual(out.c, [58, 64, 139, 154]);
  t.deepEqual(out.s, [4, 3]);
  // A library that is not a BLAS is refused, naming it; the built-in kernel takes over.
  const bad = JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, GPUEXT_BLAS: 'libc.so.6' }, encoding: 'utf8' })) as
    { b: gx.CpuBackends; c: number[] };
  t.deepEqual(bad.c, [58, 64, 139, 154]);
  if (!HAVE_BLAS) t.regex(bad.b.blas, /^built-in kernel \(.*libc\.so\.6 has neither cblas_sgemm/);
});

// ---------------------------------------------------------------------------
// SVD on both paths: LAPACK gesdd (when loaded) and the Jacobi SVD.

const SVD_PATHS: readonly string[] = HAVE_LAPACK ? ['blas', 'builtin'] : ['builtin'];

for (const p of SVD_PATHS) {
  test(`linalg.svd [${p === 'blas' ? 'lapack' : 'jacobi'}]: rebuilds A, orthonormal U and Vh, S descending; tall, wide, rank-deficient; non-finite is an Error`, (t) => {
    const live = gx.memory.stats('cpu').liveTensors;
    onPath(p, () => {
      for (const dtype of ['float32', 'float64'] as const) {
        const tol = dtype === 'float64' ? 1e-10 : 2e-4;
        for (const [m, n] of [[1, 1], [7, 4], [4, 7], [6, 6], [30, 17]]) {
          for (const fullMatrices of [true, false]) {
            const [a, av] = input([m, n], dtype, m * 31 + n);
            using _a = a;
            const { U, S, Vh } = gx.linalg.svd(a, { fullMatrices });
            using _u = U;
            using _s = S;
            using _v = Vh;
            const k = Math.min(m, n);
            t.deepEqual(U.shape, fullMatrices ? [m, m] : [m, k]);
            t.deepEqual(Vh.shape, fullMatrices ? [n, n] : [k, n]);
            const u = values(U), s = values(S), vh = values(Vh);
            const uc = U.shape[1], vr = Vh.shape[0];
            const scale = Math.max(...av.map(Math.abs));
            for (let i = 1; i < k; i++) t.true(s[i - 1] >= s[i] && s[i] >= 0, `${dtype} ${m}x${n}: S descending`);
            let worst = 0;
            for (let i = 0; i < m; i++) {
              for (let j = 0; j < n; j++) {
                let x = 0;
                for (let q = 0; q < k; q++) x += u[i * uc + q] * s[q] * vh[q * n + j];
                worst = Math.max(worst, Math.abs(x - av[i * n + j]) / scale);
              }
            }
            t.true(worst <= tol, `${dtype} ${m}x${n} full=${fullMatrices}: |U S Vh - A| ${worst}`);
            let orth = 0;
            for (let x = 0; x < uc; x++) for (let y = 0; y < uc; y++) {
              let d = 0;
              for (let i = 0; i < m; i++) d += u[i * uc + x] * u[i * uc + y];
              orth = Math.max(orth, Math.abs(d - (x === y ? 1 : 0)));
            }
            for (let x = 0; x < vr; x++) for (let y = 0; y < vr; y++) {
              let d = 0;
              for (let j = 0; j < n; j++) d += vh[x * n + j] * vh[y * n + j];
              orth = Math.max(orth, Math.abs(d - (x === y ? 1 : 0)));
            }
            t.true(orth <= tol * 10, `${dtype} ${m}x${n} full=${fullMatrices}: orthonormality ${orth}`);
          }
        }
      }
      // Rank 1, known singular values, huge and tiny entries.
      using r1 = gx.tensor(new Float64Array([1, 2, 3, 2, 4, 6, 3, 6, 9, 4, 8, 12]), { shape: [4, 3] });
      const s1 = gx.linalg.svd(r1, { fullMatrices: false });
      const sv = values(s1.S);
      s1.U.dispose(); s1.S.dispose(); s1.Vh.dispose();
      t.true(Math.abs(sv[0] - Math.sqrt(14 * 30)) < 1e-10 && sv[1] < 1e-10 && sv[2] < 1e-10, `rank 1: ${sv}`);
      for (const f of [1e300, 1e-300]) {
        using big = gx.tensor(new Float64Array([3 * f, 0, 0, 4 * f]), { shape: [2, 2] });
        const r = gx.linalg.svd(big);
        const s = values(r.S);
        r.U.dispose(); r.S.dispose(); r.Vh.dispose();
        t.true(Math.abs(s[0] / (4 * f) - 1) < 1e-12 && Math.abs(s[1] / (3 * f) - 1) < 1e-12, `entries near ${f}: ${s}`);
      }
      using nan = gx.tensor(new Float32Array([1, Number.NaN, 3, 4]), { shape: [2, 2] });
      t.throws(() => gx.linalg.svd(nan), { message: /^gx\.linalg\.svd: the input holds non-finite values/ });
    });
    t.is(gx.memory.stats('cpu').liveTensors, live, 'no tensor leaked');
  });
}
