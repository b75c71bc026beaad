// Kernels written in TypeScript against the same kernel written in CUDA:
// gx.vectorize of the Numba notebook's gaussian_pdf on 2^26 float32 beside a
// hand-written gx.elementwiseKernel of the same formula (target: >= 0.95x its
// bandwidth), the first call of a new vectorized function (parse, translate,
// compile, load, after CUDA is initialized; the disk cache is a fresh directory), and the call latency
// on one element (target: within 10% of the elementwiseKernel's).
//
//   npm run bench:jit    (tsc, then node dist/bench/jit.bench.js)
//
// Timing: a synchronize before and after each timed call; medians of 20
// (bandwidth) and of 20 batches of 1000 calls (latency). Without a GPU it
// prints a skip line and exits 0.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { elapsedNs, fmt, median, nowNs, perCallNs, section } from './util';

const N = 2 ** 26;

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

  section('summary');
  console.log(`  gaussian_pdf 2^26 float32: vectorize ${fmt(bytes / vNs)} GB/s vs hand-written elementwiseKernel ${fmt(bytes / hNs)} GB/s = ${fmt(hNs / vNs, 3)}x (target >= 0.95: ${hNs / vNs >= 0.95 ? 'met' : 'MISSED'}); worst relative difference ${worst.toExponential(1)}`);
  console.log(`  first call of a new vectorized function (fresh disk cache): ${fmt(firstMs)} ms (target <= 50 ms: ${firstMs <= 50 ? 'met' : 'MISSED'})`);
  console.log(`  1-element call: vectorize ${fmt(vLat, 2)} us vs elementwiseKernel ${fmt(hLat, 2)} us = ${fmt(vLat / hLat, 3)}x (target <= 1.10: ${vLat / hLat <= 1.1 ? 'met' : 'MISSED'})`);
}

main();
