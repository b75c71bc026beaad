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

