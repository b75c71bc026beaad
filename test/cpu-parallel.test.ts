// The CPU backend's threads and host caching allocator (issue 13): results
// against references for sizes around the parallel grain, views and
// broadcasting through the general loop, reductions bit-identical whatever
// the thread count (child processes with GPUEXT_NUM_THREADS), the allocator's
// reuse and statistics, and ops from several worker_threads at once. Outputs
// are poisoned first so unwritten elements show.
import test from 'ava';
import { spawnSync } from 'child_process';
import path from 'path';
import { Worker } from 'worker_threads';

import * as gx from '../lib';
import { native } from '../lib/core/native';
import { rng } from './rng';

const GRAIN = 1 << 15;  // kDefaultGrain (csrc/include/gpuext/parallel.h)
const CHUNK = 1 << 15;  // CpuReduce::kChunk (ops/reduce/cpu_reduce.h)
const SIZES = [1, 7, GRAIN - 1, GRAIN, GRAIN + 1, 4 * GRAIN + 3, 1_000_003];
const LIB = path.resolve(__dirname, '../lib/index.js');

function randomF32(n: number, seed: number, scale = 10): Float32Array {
  const r = rng(seed);
  return Float32Array.from({ length: n }, () => (r() - 0.5) * scale);
}

function poisoned(shape: number[], dtype: gx.DType = 'float32'): gx.Tensor {
  return gx.full(shape, dtype === 'float32' || dtype === 'float64' ? NaN : 123, { dtype });
}

/** First index where got differs from want by more than rtol (NaN never matches), or -1. */
function mismatch(got: ArrayLike<number>, want: ArrayLike<number>, rtol: number): number {
  if (got.length !== want.length) return 0;
  for (let i = 0; i < want.length; i++) {
    const g = got[i], w = want[i];
    if (!(Math.abs(g - w) <= rtol * Math.abs(w))) return i;
  }
  return -1;
}

test('elementwise ops and casts around the grain match references into poisoned outputs', (t) => {
  for (const n of SIZES) {
    const av = randomF32(n, n), bv = randomF32(n, n + 1);
    using a = gx.tensor(av);
    using b = gx.tensor(bv);
    using sum = poisoned([n]);
    gx.add(a, b, { out: sum });
    const s = sum.toArraySync() as Float32Array;
    t.is(mismatch(s, av.map((x, i) => Math.fround(x + bv[i])), 0), -1, `add n=${n}`);
    using e = poisoned([n]);
    gx.exp(a, { out: e });
    t.is(mismatch(e.toArraySync() as Float32Array, Array.from(av, (x) => Math.exp(x)), 2 ** -23), -1, `exp n=${n}`);
    using sc = poisoned([n]);
    gx.mul(a, 3, { out: sc });
    t.is(mismatch(sc.toArraySync() as Float32Array, av.map((x) => Math.fround(x * 3)), 0), -1, `mul scalar n=${n}`);
    using rs = poisoned([n]);
    gx.sub(10, a, { out: rs });  // the scalar first
    t.is(mismatch(rs.toArraySync() as Float32Array, av.map((x) => Math.fround(10 - x)), 0), -1, `scalar - tensor n=${n}`);
    using sg = poisoned([n]);
    gx.sigmoid(a, { out: sg });  // a compute-bound functor on float32: the widest clone
    t.is(mismatch(sg.toArraySync() as Float32Array, Array.from(av, (x) => 1 / (1 + Math.exp(-x))), 4 * 2 ** -23), -1, `sigmoid n=${n}`);
    // astype allocates: poison a block of the result's size first, which the cache hands back.
    poisoned([n], 'float64').dispose();
    using d = gx.astype(a, 'float64');
    t.is(mismatch(d.toArraySync() as Float64Array, av, 0), -1, `astype float64 n=${n}`);
    poisoned([n], 'int32').dispose();
    using i32 = gx.astype(a, 'int32');
    t.is(mismatch(i32.toArraySync() as Int32Array, av.map((x) => Math.trunc(x)), 0), -1, `astype int32 n=${n}`);
  }
});

test('exp of float32 at the edges: 0, infinities, NaN, overflow, subnormal results', (t) => {
  const xs = [0, -0, 1, -1, 88.72, 88.73, 89, 1e30, Infinity, -Infinity, NaN, -87.5, -100, -103.9, -104, -1e30, 1e-30];
  using x = gx.tensor(new Float32Array(xs));
  const got = gx.exp(x).toArraySync() as Float32Array;
  xs.forEach((v, i) => {
    const want = Math.fround(Math.exp(Math.fround(v)));
    if (Number.isNaN(want)) t.true(Number.isNaN(got[i]), `exp(${v})`);
    else if (want === 0 || !Number.isFinite(want) || want < 1.2e-38) t.true(got[i] === want || Math.abs(got[i] - want) <= 1.5e-45, `exp(${v}) = ${got[i]}, expected ${want}`);
    else t.true(Math.abs(got[i] - want) <= 2 ** -23 * want, `exp(${v}) = ${got[i]}, expected ${want}`);
  });
});

test('ones, zeros, full and copies around the grain write every element', (t) => {
  for (const n of SIZES) {
    using o = gx.ones([n]);
    t.true((o.toArraySync() as Float32Array).every((v) => v === 1), `ones n=${n}`);
    using f = gx.full([n], -2.5, { dtype: 'float64' });
    t.true((f.toArraySync() as Float64Array).every((v) => v === -2.5), `full float64 n=${n}`);
    using i8 = gx.full([n], -3, { dtype: 'int8' });
    t.true((i8.toArraySync() as Int8Array).every((v) => v === -3), `full int8 n=${n}`);
  }
  // A transposed (strided) matrix laid out by contiguous(), and fill_ of a strided view.
  const rows = 301, cols = 401;  // 120701 elements: several chunks
  const v = randomF32(rows * cols, 5);
  using m = gx.tensor(v, { shape: [rows, cols] });
  using tr = m.transpose(0, 1).contiguous();
  const got = tr.toArraySync() as Float32Array;
  let bad = -1;
  for (let i = 0; i < cols && bad < 0; i++) for (let j = 0; j < rows; j++) if (got[i * rows + j] !== v[j * cols + i]) { bad = i * rows + j; break; }
  t.is(bad, -1, 'transpose().contiguous()');
  using z = gx.zeros([rows, cols]);
  z.transpose(0, 1).fill_(4);
  t.true((z.toArraySync() as Float32Array).every((x) => x === 4), 'fill_ of a transposed view');
});

test('broadcasting and strided views take the general loop correctly', (t) => {
  const rows = 513, cols = 257;  // 131841 elements
  const av = randomF32(rows * cols, 11), rv = randomF32(cols, 12), cv = randomF32(rows, 13);
  using a = gx.tensor(av, { shape: [rows, cols] });
  using r = gx.tensor(rv, { shape: [cols] });
  using c = gx.tensor(cv, { shape: [rows, 1] });
  using out = poisoned([rows, cols]);
  gx.add(a, r, { out });
  t.is(mismatch(out.toArraySync() as Float32Array, av.map((x, i) => Math.fround(x + rv[i % cols])), 0), -1, 'row broadcast');
  gx.mul(a, c, { out });
  t.is(mismatch(out.toArraySync() as Float32Array, av.map((x, i) => Math.fround(x * cv[Math.floor(i / cols)])), 0), -1, 'column broadcast');
  // a transposed input: out[i][j] = a[j][i] + 1, written through the general loop.
  using o2 = poisoned([cols, rows]);
  gx.add(a.transpose(0, 1), 1, { out: o2 });
  const g2 = o2.toArraySync() as Float32Array;
  let bad = -1;
  for (let i = 0; i < cols && bad < 0; i++) for (let j = 0; j < rows; j++) if (g2[i * rows + j] !== Math.fround(av[j * cols + i] + 1)) { bad = i * rows + j; break; }
  t.is(bad, -1, 'transposed input');
  // a float64 result from float32 and float64 inputs (mixed dtypes: the general loop).
  using d = gx.tensor(Float64Array.from(rv), { shape: [cols] });
  using o3 = poisoned([rows, cols], 'float64');
  gx.add(a, d, { out: o3 });
  t.is(mismatch(o3.toArraySync() as Float64Array, Array.from(av, (x, i) => x + rv[i % cols]), 0), -1, 'mixed dtypes');
});

test('reductions around the chunk size match float64 references', (t) => {
  for (const n of [1, CHUNK - 1, CHUNK, CHUNK + 1, 10 * CHUNK + 5, 1_000_003]) {
    const v = randomF32(n, 3 * n);
    using x = gx.tensor(v);
    let s = 0, mx = -Infinity, am = 0;
    for (let i = 0; i < n; i++) {
      s += v[i];
      if (v[i] > mx) { mx = v[i]; am = i; }
    }
    t.true(Math.abs((gx.sum(x).item() as number) - s) <= 1e-6 * Math.max(1, Math.abs(s)) + 1e-3, `sum n=${n}`);
    t.true(Math.abs((gx.mean(x).item() as number) - s / n) <= 1e-5, `mean n=${n}`);
    t.is(gx.max(x).item(), mx, `max n=${n}`);
    t.is(Number(gx.argmax(x).item()), am, `argmax n=${n}`);
  }
  // Over one dimension of a matrix, each output long enough to be chunked, and the other way.
  const rows = 3, cols = 3 * CHUNK + 17;
  const v = randomF32(rows * cols, 99);
  using m = gx.tensor(v, { shape: [rows, cols] });
  using rs = poisoned([rows]);
  gx.sum(m, { axis: 1, out: rs });
  const got = rs.toArraySync() as Float32Array;
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let j = 0; j < cols; j++) s += v[r * cols + j];
    t.true(Math.abs(got[r] - s) <= 1e-6 * Math.abs(s) + 1e-3, `row sum ${r}`);
  }
  using cs = poisoned([cols]);
  gx.sum(m, { axis: 0, out: cs });
  const gc = cs.toArraySync() as Float32Array;
  t.is(mismatch(gc, Array.from({ length: cols }, (_, j) => Math.fround(v[j] + v[cols + j] + v[2 * cols + j])), 1e-6), -1, 'column sums');
  // argmax keeps the first of equal maxima across chunks.
  const eq = new Float32Array(5 * CHUNK);
  eq[CHUNK + 3] = 7;
  eq[4 * CHUNK + 1] = 7;
  using e = gx.tensor(eq);
  t.is(Number(gx.argmax(e).item()), CHUNK + 3);
});

const childScript = `
const gx = require(process.argv[1]);
let s = 12345;
const next = () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s / 4294967296 - 0.5; };
const n = 7 * 142858;
const host = new Float32Array(n);
for (let i = 0; i < n; i++) host[i] = next() * 1000 + (i % 3 === 0 ? 1e4 : 0);
const x = gx.tensor(host);
const m = x.view(n / 7, 7);
const parts = {
  sum: gx.sum(x), mean: gx.mean(x), prod: gx.prod(gx.div(x, 1e4).add(1)), var: gx.var(x), std: gx.std(m, { axis: 0 }),
  max: gx.max(x), argmin: gx.argmin(x), rowsum: gx.sum(m, { axis: 1 }), colsum: gx.sum(m, { axis: 0 }),
  lse: gx.logsumexp(gx.div(x, 1e3)), softmax: gx.softmax(m, -1), cumsum: gx.cumsum(m, 1),
  sum64: gx.sum(x.astype('float64')),
};
const out = {};
for (const [k, t] of Object.entries(parts)) out[k] = Buffer.from(t.toArraySync().buffer).toString('base64');
process.stdout.write(JSON.stringify(out));
`;

test('reductions give the same bits with 1, 2 and 3 threads', (t) => {
  const results = ['1', '2', '3'].map((threads) => {
    const r = spawnSync(process.execPath, ['-e', childScript, LIB], {
      encoding: 'utf8', env: { ...process.env, GPUEXT_NUM_THREADS: threads }, timeout: 120_000, maxBuffer: 64 << 20,
    });
    t.is(r.status, 0, `child with ${threads} threads: ${r.stderr}`);
    return JSON.parse(r.stdout || '{}') as Record<string, string>;
  });
  t.true(Object.keys(results[0]).length >= 13);
  for (const k of Object.keys(results[0])) {
    t.is(results[1][k], results[0][k], `${k}: 2 threads vs 1`);
    t.is(results[2][k], results[0][k], `${k}: 3 threads vs 1`);
  }
});

test.serial('the host allocator reuses freed blocks, counts them, and emptyCache returns them', (t) => {
  gx.memory.emptyCache('cpu');
  const base = gx.memory.stats('cpu');
  t.is(base.cachedBytes, 0, 'nothing cached after emptyCache');
  const n = 3 * 1024 * 1024;  // 12 MiB: a cached, huge-page block
  const first = gx.empty([n]);
  const ptr = native.describe(first.handle()).dataPtr;
  const s0 = gx.memory.stats('cpu');
  t.is(s0.allocatedBytes - base.allocatedBytes, 4 * n, 'allocated = live bytes');
  t.is(s0.liveTensors - base.liveTensors, 1);
  first.dispose();
  const s1 = gx.memory.stats('cpu');
  t.is(s1.allocatedBytes, base.allocatedBytes, 'allocated back to baseline');
  t.true(s1.cachedBytes >= 4 * n, 'the freed block is cached');
  t.is(s1.reservedBytes, s1.allocatedBytes + s1.cachedBytes);
  const second = gx.empty([n - 5]);  // same size class
  const s2 = gx.memory.stats('cpu');
  t.is(native.describe(second.handle()).dataPtr, ptr, 'same block handed out again');
  t.is(s2.numDeviceMallocs, s1.numDeviceMallocs, 'no new mapping on reuse');
  t.is(s2.numCacheHits, s1.numCacheHits + 1);
  t.is(s2.allocatedBytes - base.allocatedBytes, 4 * (n - 5));
  second.dispose();
  gx.memory.emptyCache('cpu');
  const s3 = gx.memory.stats('cpu');
  t.is(s3.cachedBytes, 0, 'emptyCache returned every cached block');
  t.is(s3.allocatedBytes, base.allocatedBytes);
  t.is(s3.numAllocs - base.numAllocs, s3.numFrees - base.numFrees, 'every allocation freed');
  t.true(s3.numDeviceFrees > s2.numDeviceFrees);
  // A cached block handed out again holds old data: ops write every element (poison, then ones).
  const p = gx.full([n], NaN);
  p.dispose();
  using o = gx.ones([n]);
  t.true((o.toArraySync() as Float32Array).every((x) => x === 1));
  // Sizes of many classes: live bytes return to baseline, reserved stays allocated + cached.
  for (let i = 0; i < 200; i++) gx.empty([65536 + 4099 * (i % 23)]).dispose();
  const s4 = gx.memory.stats('cpu');
  t.is(s4.allocatedBytes, base.allocatedBytes + 4 * n);
  t.is(s4.reservedBytes, s4.allocatedBytes + s4.cachedBytes);
  gx.memory.emptyCache();
  t.is(gx.memory.stats('cpu').cachedBytes, 0, 'emptyCache() without a device covers the cpu');
});

const workerScript = `
const { parentPort, workerData } = require('worker_threads');
const gx = require(workerData.lib);
const n = 200003;
const host = new Float32Array(n);
for (let i = 0; i < n; i++) host[i] = ((i * 7 + workerData.seed) % 1001) / 100 - 5;
let bad = 0, sums = [];
for (let round = 0; round < 15; round++) {
  const x = gx.tensor(host);
  const y = gx.exp(x);
  const z = gx.add(x, y);
  const v = z.toArraySync();
  for (let i = 0; i < n; i += 997) if (Math.abs(v[i] - (host[i] + Math.exp(host[i]))) > 1e-5 * Math.abs(v[i]) + 1e-6) bad++;
  const s = gx.sum(z);
  sums.push(s.item());
  for (const t of [x, y, z, s]) t.dispose();
}
parentPort.postMessage({ bad, sums });
`;

test('ops from four worker_threads at once give correct, repeatable results', async (t) => {
  const run = (seed: number): Promise<{ bad: number; sums: number[] }> => new Promise((resolve, reject) => {
    const w = new Worker(workerScript, { eval: true, workerData: { lib: LIB, seed } });
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => { if (code !== 0) reject(new Error(`worker exited with ${code}`)); });
  });
  const results = await Promise.all([1, 2, 3, 4].map(run));
  results.forEach((r, i) => {
    t.is(r.bad, 0, `worker ${i}: wrong elements`);
    t.true(r.sums.every((s) => s === r.sums[0]), `worker ${i}: the same sum every round`);
  });
});

const capScript = `
const gx = require(process.argv[1]);
const mib = 1 << 20;
const blocks = [4, 5, 6, 7].map((m) => gx.empty([m * mib / 4]));
const live = gx.memory.stats('cpu');
blocks.forEach((b) => b.dispose());
const s = gx.memory.stats('cpu');
process.stdout.write(JSON.stringify({ cached: s.cachedBytes, allocated: s.allocatedBytes, liveAllocated: live.allocatedBytes,
  reserved: s.reservedBytes, frees: s.numDeviceFrees - live.numDeviceFrees }));
`;

test('the cache keeps at most GPUEXT_CPU_CACHE_BYTES, unmapping the oldest blocks first', (t) => {
  const r = spawnSync(process.execPath, ['-e', capScript, LIB], {
    encoding: 'utf8', env: { ...process.env, GPUEXT_CPU_CACHE_BYTES: String(12 << 20) }, timeout: 60_000,
  });
  t.is(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout || '{}') as Record<string, number>;
  t.true(o.cached > 0 && o.cached <= 12 << 20, `cached ${o.cached} bytes under a 12 MiB cap`);
  t.true(o.frees >= 2, 'blocks past the cap went back to the OS');
  t.is(o.reserved, o.allocated + o.cached);
  t.is(o.liveAllocated - o.allocated, 22 << 20, 'allocated counts the bytes of live tensors');
});
