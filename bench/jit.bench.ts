// Kernels written in TypeScript against the same kernel written in CUDA:
// gx.vectorize of the Numba notebook's gaussian_pdf on 2^26 float32 beside a
// hand-written gx.elementwiseKernel of the same formula (target: >= 0.95x its
// bandwidth), the first call of a new vectorized function (parse, translate,
// compile, load, after CUDA is initialized; the disk cache is a fresh directory), and the call latency
// on one element (target: within 10% of the elementwiseKernel's).
//
//   npm run bench:jit    (tsc, then node dist/bench/jit.bench.js)
//
// Also gx.jit.rawkernel: the first call of a new kernel in a fresh process
// (empty disk cache: parse, translate, NVRTC, load; target <= 50 ms) and in
// another fresh process finding it in the disk cache (target <= 1 ms), both
// after CUDA is initialized; its 1-element call against the same kernel as a
// gx.RawKernel (target within 10%). And gx.fuse of the CuPy course's
// sin(x) + cos(y) / sqrt(z) on 2^26 float32 against torch.compile and
// cupy.fuse (bench/jit_py.py, same call; target >= 0.95x torch.compile's speed,
// first call under 100 ms), and the fused reduction sum(x * y + z) beside
// torch.compile's (target >= 0.95x), printed side by side with vectorize
// against the hand-written elementwiseKernel (target >= 0.97x).
//
// Timing: a synchronize before and after each timed call; medians of 20
// (bandwidth) and of 20 batches of 1000 calls (latency). Without a GPU it
// prints a skip line and exits 0.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { elapsedNs, fmt, median, nowNs, perCallNs, REPO, runPythonJson, section } from './util';

const N = 2 ** 26;

/** A fresh node process: CUDA initialized, then a new rawkernel's first call timed; prints the ms. */
const FIRST_CALL_CHILD = `
const gx = require(process.argv[1]);
const { jit } = gx;
const x = gx.ones([1], { device: 'cuda' });
gx.cuda.synchronize();
const t0 = process.hrtime.bigint();
const square = jit.rawkernel(function elementwise_square(x, y, size) {
  const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
  const ntid = jit.gridDim.x * jit.blockDim.x;
  for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
});
square([1], [32], [x, x, 1]);
gx.cuda.synchronize();
console.log(Number(process.hrtime.bigint() - t0) / 1e6);
`;

function firstCallMs(cacheDir: string): number {
  const r = spawnSync(process.execPath, ['-e', FIRST_CALL_CHILD, path.join(REPO, 'dist', 'lib')], {
    encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_DIR: cacheDir }, timeout: 120_000,
  });
  const ms = Number((r.stdout ?? '').trim().split('\n').pop());
  if (r.status !== 0 || !Number.isFinite(ms)) throw new Error(`first-call child failed: ${r.stderr}`);
  return ms;
}

function main(): void {
  if (!gx.cuda.isAvailable()) {
    console.log('jit: skipped (no CUDA device)');
    return;
  }
  process.env.GPUEXT_CACHE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-bench-'));
  const sync = (): void => gx.cuda.synchronize();
  const SQRT_2PI = Math.sqrt(2 * Math.PI);

  // CUDA is initialized first (its context costs the same to every kernel); the timed part is
  // vectorize() and its first call: parse, translate, compile, load, launch.
  using one = gx.ones([1], { device: 'cuda' });
  sync();
  let t0 = nowNs();
  const gaussianPdf = gx.vectorize(['float32(float32, float32, float32)'],
    (x, mean, sigma) => Math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI));
  gaussianPdf(one, 0, 1).dispose();
  sync();
  const firstMs = elapsedNs(t0) / 1e6;

  const hand = gx.elementwiseKernel('float32 x, float32 mean, float32 sigma', 'float32 y',
    `const float t = (x - mean) / sigma; y = expf(-0.5f * t * t) / (sigma * ${SQRT_2PI}f);`, { name: 'gaussian_pdf_hand' });
  using x = gx.randn([N], { device: 'cuda' });
  using yv = gx.empty([N], { device: 'cuda' });
  using yh = gx.empty([N], { device: 'cuda' });
  const time = (f: () => void): number => {
    for (let i = 0; i < 3; i++) f();
    const s: number[] = [];
    for (let i = 0; i < 20; i++) {
      sync();
      t0 = nowNs();
      f();
      sync();
      s.push(elapsedNs(t0));
    }
    return median(s);
  };
  const bytes = 2 * 4 * N;
  const vNs = time(() => { gaussianPdf(x, 0, 1, { out: yv }); });
  const hNs = time(() => { hand(x, 0, 1, yh); });
  // Same values (to float32 rounding of the two formulas).
  const a = yv.toArraySync() as Float32Array, b = yh.toArraySync() as Float32Array;
  let worst = 0;
  for (let i = 0; i < N; i += 4099) worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(Math.abs(b[i]), 1e-30));
  const lat = (f: () => void): number => perCallNs(f, 20_000, 1_000, { warmup: 2_000, sync }) / 1e3;
  using o1 = gx.empty([1], { device: 'cuda' });
  const vLat = lat(() => { gaussianPdf(one, 0, 1, { out: o1 }); });
  const hLat = lat(() => { hand(one, 0, 1, o1); });

  // gx.jit.rawkernel: first calls in fresh processes, then the 1-element latency against a RawKernel.
  const jitDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-bench-raw-'));
  const rawFirst = firstCallMs(jitDir);
  const rawHits = [0, 1, 2].map(() => firstCallMs(jitDir));
  const { jit } = gx;
  const square = jit.rawkernel(function elementwise_square(x: gx.jit.Array, y: gx.jit.Array, size: number) {
    const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
    const ntid = jit.gridDim.x * jit.blockDim.x;
    for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
  });
  const squareRaw = new gx.RawKernel(`extern "C" __global__ void square_raw(float* x, float* y, long long size) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x, ntid = gridDim.x * blockDim.x;
  for (int i = tid; i < (int)size; i += ntid) y[i] = x[i] * x[i];
}`, 'square_raw');
  const jArgs = [one, o1, 1];
  const jLat = lat(() => { square([1], [32], jArgs); });
  const rLat = lat(() => { squareRaw.launch([1], [32], jArgs); });

  // gx.fuse of sin(x) + cos(y) / sqrt(z), beside torch.compile and cupy.fuse.
  using fx = gx.rand([N], { device: 'cuda' }).add(0.1);
  using fy = gx.rand([N], { device: 'cuda' }).add(0.1);
  using fz = gx.rand([N], { device: 'cuda' }).add(0.1);
  sync();
  t0 = nowNs();
  const fused = gx.fuse(function elementwise_computation(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) {
    return gx.add(gx.sin(x), gx.div(gx.cos(y), gx.sqrt(z)));
  });
  fused(fx, fy, fz).dispose();
  sync();
  const fuseFirstMs = elapsedNs(t0) / 1e6;
  const fuseMs = time(() => { fused(fx, fy, fz).dispose(); }) / 1e6;
  const unfusedMs = time(() => { gx.tidy(() => { gx.add(gx.sin(fx), gx.div(gx.cos(fy), gx.sqrt(fz))); }); }) / 1e6;
  // A fused reduction: sum(x * y + z), one kernel reading three 2^26 float32 arrays.
  const fusedSum = gx.fuse(function fused_sum(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) {
    return gx.sum(gx.add(gx.mul(x, y), z));
  });
  fusedSum(fx, fy, fz).dispose();
  const sumMs = time(() => { fusedSum(fx, fy, fz).dispose(); }) / 1e6;
  const sumUnfusedMs = time(() => { gx.tidy(() => { gx.sum(gx.add(gx.mul(fx, fy), fz)); }); }) / 1e6;
  const py = runPythonJson(path.join(REPO, 'bench', 'jit_py.py'), [], 600_000);
  const pyNum = (k: string): number | undefined => (py.ok && typeof py.o[k] === 'number' ? py.o[k] as number : undefined);

  const gbs = (b: number, ms: number | undefined): string => (ms === undefined ? '-' : fmt(b / (ms * 1e6)));
  const vs = (mine: number, theirs: number | undefined, target: number): string =>
    (theirs === undefined ? 'torch.compile: -' : `${fmt(theirs / mine, 3)}x torch.compile's speed (target >= ${target}: ${theirs / mine >= target ? 'met' : 'MISSED'})`);
  section('side by side (one H200: gx vs torch.compile, cupy.fuse and the hand-written kernel)');
  console.log('  kernel                              gx ms    GB/s   | torch.compile ms  GB/s | cupy.fuse ms | hand ms   GB/s');
  const tcE = pyNum('torch_compile_ms'), tcS = pyNum('torch_compile_sum_ms');
  console.log(`  fuse sin(x)+cos(y)/sqrt(z) 2^26 f32  ${fmt(fuseMs, 3).padStart(6)} ${gbs(16 * N, fuseMs).padStart(7)} | ${(tcE === undefined ? '-' : fmt(tcE, 3)).padStart(16)} ${gbs(16 * N, tcE).padStart(5)} | ${fmt(pyNum('cupy_fuse_ms') ?? NaN, 3).padStart(12)} |`);
  console.log(`  fuse sum(x*y+z) 2^26 f32             ${fmt(sumMs, 3).padStart(6)} ${gbs(12 * N, sumMs).padStart(7)} | ${(tcS === undefined ? '-' : fmt(tcS, 3)).padStart(16)} ${gbs(12 * N, tcS).padStart(5)} | ${fmt(pyNum('cupy_fuse_sum_ms') ?? NaN, 3).padStart(12)} |`);
  console.log(`  vectorize gaussian_pdf 2^26 f32      ${fmt(vNs / 1e6, 3).padStart(6)} ${gbs(bytes, vNs / 1e6).padStart(7)} | ${'-'.padStart(16)} ${'-'.padStart(5)} | ${'-'.padStart(12)} | ${fmt(hNs / 1e6, 3)} ${gbs(bytes, hNs / 1e6)}`);
  console.log(`  fuse: ${vs(fuseMs, tcE, 0.95)}; fused sum: ${vs(sumMs, tcS, 0.95)} (gx unfused ${fmt(sumUnfusedMs, 3)} ms); vectorize: ${fmt(hNs / vNs, 3)}x the hand-written elementwiseKernel (target >= 0.97: ${hNs / vNs >= 0.97 ? 'met' : 'MISSED'})`);

  section('summary');
  console.log(`  gaussian_pdf 2^26 float32: vectorize ${fmt(bytes / vNs)} GB/s vs hand-written elementwiseKernel ${fmt(bytes / hNs)} GB/s = ${fmt(hNs / vNs, 3)}x (target >= 0.95: ${hNs / vNs >= 0.95 ? 'met' : 'MISSED'}); worst relative difference ${worst.toExponential(1)}`);
  console.log(`  first call of a new vectorized function (fresh disk cache): ${fmt(firstMs)} ms (target <= 50 ms: ${firstMs <= 50 ? 'met' : 'MISSED'})`);
  console.log(`  1-element call: vectorize ${fmt(vLat, 2)} us vs elementwiseKernel ${fmt(hLat, 2)} us = ${fmt(vLat / hLat, 3)}x (target <= 1.10: ${vLat / hLat <= 1.1 ? 'met' : 'MISSED'})`);
  const hit = median(rawHits);
  console.log(`  jit.rawkernel first call, fresh process: empty cache ${fmt(rawFirst)} ms (target <= 50: ${rawFirst <= 50 ? 'met' : 'MISSED'}), disk-cache hit ${fmt(hit, 2)} ms (median of 3; target <= 1: ${hit <= 1 ? 'met' : 'MISSED'})`);
  console.log(`  1-element call: jit.rawkernel ${fmt(jLat, 2)} us vs the same RawKernel ${fmt(rLat, 2)} us = ${fmt(jLat / rLat, 3)}x (target <= 1.10: ${jLat / rLat <= 1.1 ? 'met' : 'MISSED'})`);
  const tc = pyNum('torch_compile_ms');
  console.log(`  fuse sin(x)+cos(y)/sqrt(z) 2^26 float32: gx.fuse ${fmt(fuseMs, 3)} ms (first call ${fmt(fuseFirstMs)} ms, target < 100: ${fuseFirstMs < 100 ? 'met' : 'MISSED'}), gx unfused ${fmt(unfusedMs, 3)} ms, ` +
    `torch.compile ${tc === undefined ? '-' : fmt(tc, 3)} ms (first call ${fmt(pyNum('torch_compile_first_ms') ?? NaN)} ms), cupy.fuse ${fmt(pyNum('cupy_fuse_ms') ?? NaN, 3)} ms, cupy unfused ${fmt(pyNum('cupy_ms') ?? NaN, 3)} ms` +
    `${tc === undefined ? ` (python: ${py.ok ? JSON.stringify(py.o) : py.error})` : `; speed vs torch.compile ${fmt(tc / fuseMs, 3)}x (target >= 0.95: ${tc / fuseMs >= 0.95 ? 'met' : 'MISSED'})`}`);
}

main();
