// Kernels written in TypeScript against the same kernel written in CUDA,
// side by side on one GPU (one H200 for the targets):
// - gx.vectorize of the Numba notebook's gaussian_pdf on 2^26 float32 beside a
//   hand-written gx.elementwiseKernel of the same formula, compiled with the
//   same contraction both ways (--fmad=false, vectorize's default, and
//   --fmad=true, NVRTC's; LANGUAGE.md "No contraction"; target >= 0.97x);
// - gx.fuse of the CuPy course's sin(x) + cos(y) / sqrt(z) and the fused
//   reduction sum(x * y + z) on 2^26 float32 against torch.compile and
//   cupy.fuse (bench/jit_py.py, the device's python; target >= 0.95x
//   torch.compile's speed; fuse's first call under 100 ms);
// - first calls of gx.jit.rawkernel and gx.vectorize in fresh processes
//   (bench/jit-first-call.ts, spawned): cold (an empty cache directory:
//   parse, translate, NVRTC, load; target <= 50 ms) and warm (the same
//   directory again, median of 3: the translation and kernel caches; target
//   <= 5 ms), after require('gpuext') and CUDA's initialization, which are
//   printed beside them, and the driver's JIT alone (bench/jit-driver-floor.ts:
//   an empty kernel, one float32 division), the floor under a cold first call;
// - 1-element calls of jit.rawkernel and vectorize against the same
//   RawKernel / elementwiseKernel (target <= 1.10x).
//
//   npm run bench:jit    (tsc, then node dist/bench/jit.bench.js)
//
// Timing: a synchronize before and after each timed call; medians of 20
// (bandwidth) and of 20 batches of 1000 calls (latency). Without a GPU it
// prints the first-call figures of the host side (translation or its cache,
// `.source()`) and skips the rest.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { setPtxEnabled } from '../lib/jit/rawkernel';
import { childFailure, elapsedNs, fmt, lastJsonLine, median, nowNs, perCallNs, REPO, rotatedMedians, runPythonJson, section } from './util';

const N = 2 ** 26;

interface FirstCall {
  /** construct + first call, ms (wall and CPU). */
  firstMs: number;
  firstCpuMs: number;
  laps: Record<string, { wall: number; cpu: number }>;
  counts: { translations: number };
  acornLoaded: boolean;
  /** Whether the compiler front (rtc/compiler.ts: a kernel cache miss, or a request the warm lookup does not key) was loaded. */
  compilerLoaded: boolean;
  inspectorLoaded: boolean;
  /** PTX modules the driver loaded (NOTE [ PTX path ]): 0 when the kernel was compiled by NVRTC. */
  ptxLoaded: number;
  /** The ms the driver's PTX loads took (its JIT cold, its cache warm). */
  ptxLoadMs: number;
  /** Modules compiled from V8's code cache, and entries refused (NOTE [ Code cache ]): none used means a stale or missing cache. */
  codeCache: { used: number; refused: number };
}

/**
 * A fresh process (bench/jit-first-call.ts): require, CUDA init, then `mode`'s kernel built and first called, each timed.
 * The driver's own cache of PTX it compiled (NOTE [ PTX path ]) lives in the same directory: cold is cold for both caches.
 */
function firstCall(mode: 'rawkernel' | 'vectorize', cacheDir: string): FirstCall {
  const r = spawnSync(process.execPath, [path.join(__dirname, 'jit-first-call.js'), mode], {
    encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_DIR: cacheDir, CUDA_CACHE_PATH: path.join(cacheDir, 'driver') }, timeout: 120_000,
  });
  const o = r.status === 0 ? lastJsonLine(r.stdout ?? '') : undefined;
  if (o === undefined) throw new Error(`first-call child failed: ${childFailure(r, 'jit-first-call')}`);
  return o as unknown as FirstCall;
}

/**
 * Cold (each an empty cache directory) three times, then warm (the last one's directory) three times: each the median's run,
 * with the range. The first cold run may be the process's first read of NVRTC (a cold page cache), the others not.
 */
function firstCalls(mode: 'rawkernel' | 'vectorize'): { cold: FirstCall; warm: FirstCall; coldRange: number[]; warmRange: number[] } {
  const dirs = [0, 1, 2].map(() => fs.mkdtempSync(path.join(os.tmpdir(), `gx-jit-bench-${mode}-`)));
  const colds = dirs.map((d) => firstCall(mode, d)).sort((p, q) => p.firstMs - q.firstMs);
  const warms = [0, 1, 2].map(() => firstCall(mode, dirs[2])).sort((p, q) => p.firstMs - q.firstMs);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  const range = (rs: FirstCall[]): number[] => [rs[0].firstMs, rs[rs.length - 1].firstMs];
  return { cold: colds[1], warm: warms[1], coldRange: range(colds), warmRange: range(warms) };
}

/** The driver's JIT alone in a fresh process with its cache empty (bench/jit-driver-floor.ts): the floor under a cold first call. */
function driverFloor(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-floor-'));
  try {
    const r = spawnSync(process.execPath, [path.join(__dirname, 'jit-driver-floor.js')], {
      encoding: 'utf8', env: { ...process.env, CUDA_CACHE_PATH: dir }, timeout: 60_000,
    });
    const o = r.status === 0 ? lastJsonLine(r.stdout ?? '') : undefined;
    if (o === undefined) return `  the driver's JIT: not measured (${childFailure(r, 'jit-driver-floor')})`;
    const f = o as { firstEmpty: number; empty: number; oneDivision: number; fourDivisions: number };
    return `  the driver's JIT of PTX, fresh process, its cache empty (the floor under a cold first call): first module (an empty kernel) ` +
      `${fmt(f.firstEmpty, 2)} ms, an empty kernel ${fmt(f.empty, 2)} ms, one float32 division ${fmt(f.oneDivision, 2)} ms, four ${fmt(f.fourDivisions, 2)} ms`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const describeFirst = (what: string, r: ReturnType<typeof firstCalls>, coldTarget: number, warmTarget: number): string => {
  const part = (f: FirstCall, range: number[]): string =>
    `${fmt(f.firstMs, 2)} ms, median of 3 (${fmt(range[0], 2)}–${fmt(range[1], 2)}; CPU ${fmt(f.firstCpuMs, 2)}; require gpuext ${fmt(f.laps.require.wall)} ms before it)`;
  const loaded = (b: boolean): string => (b ? 'loaded' : 'not loaded');
  return `  ${what} first call, fresh process: cold ${part(r.cold, r.coldRange)} (target <= ${coldTarget}: ${r.cold.firstMs <= coldTarget ? 'met' : 'MISSED'}); ` +
    `warm disk cache ${part(r.warm, r.warmRange)}, ${r.warm.counts.translations} translations, acorn ${loaded(r.warm.acornLoaded)}, ` +
    `compiler ${loaded(r.warm.compilerLoaded)}, inspector ${loaded(r.warm.inspectorLoaded)}, ` +
    `${r.cold.ptxLoaded > 0 ? `loaded as PTX (the driver's load ${fmt(r.cold.ptxLoadMs, 2)} ms cold, ${fmt(r.warm.ptxLoadMs, 2)} warm)` : 'compiled by NVRTC'} ` +
    `(target <= ${warmTarget}: ${r.warm.firstMs <= warmTarget ? 'met' : 'MISSED'}); code cache: ${r.cold.codeCache.used} modules from it cold, ` +
    `${r.cold.codeCache.refused} refused${r.cold.codeCache.used === 0 ? ' (none: run `node scripts/code-cache.js` after tsc)' : ''}`;
};

function main(): void {
  if (!gx.cuda.isAvailable()) {
    section('first calls in fresh processes, host side only (no CUDA device: translation or its cache, no compile or launch)');
    console.log(describeFirst('jit.rawkernel', firstCalls('rawkernel'), 50, 5));
    console.log(describeFirst('vectorize', firstCalls('vectorize'), 50, 5));
    console.log('jit: the rest skipped (no CUDA device)');
    return;
  }
  process.env.GPUEXT_CACHE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-bench-'));
  const sync = (): void => gx.cuda.synchronize();
  const SQRT_2PI = Math.sqrt(2 * Math.PI);

  // First calls in fresh processes (cold and warm disk caches), before this process touches CUDA.
  const rawFirst = firstCalls('rawkernel');
  const vecFirst = firstCalls('vectorize');
  const jitFloor = driverFloor();
  using one = gx.ones([1], { device: 'cuda' });
  sync();
  let t0 = nowNs();
  const gaussianPdf = gx.vectorize(['float32(float32, float32, float32)'],
    (x, mean, sigma) => Math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI));
  // The same function with NVRTC's default contraction, as the hand-written kernel compiles (LANGUAGE.md: No contraction).
  const gaussianPdfFmad = gx.vectorize(['float32(float32, float32, float32)'],
    (x, mean, sigma) => Math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI), { options: ['--fmad=true'] });

  const handBody = `const float t = (x - mean) / sigma; y = expf(-0.5f * t * t) / (sigma * ${SQRT_2PI}f);`;
  const hand = gx.elementwiseKernel('float32 x, float32 mean, float32 sigma', 'float32 y', handBody, { name: 'gaussian_pdf_hand' });
  const handExact = gx.elementwiseKernel('float32 x, float32 mean, float32 sigma', 'float32 y', handBody,
    { name: 'gaussian_pdf_hand_nofmad', options: ['--fmad=false'] });
  using x = gx.randn([N], { device: 'cuda' });
  using yv = gx.empty([N], { device: 'cuda' });
  using yh = gx.empty([N], { device: 'cuda' });
  const time = (f: () => void): number => {
    for (let i = 0; i < 10; i++) f();
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
  // Timed in three rounds, each in another order (the first kernel timed after the compiles ran slower in
  // earlier runs, whichever it was), each kernel's figure the median over the rounds.
  const kernels = [
    () => { gaussianPdf(x, 0, 1, { out: yv }); },
    () => { hand(x, 0, 1, yh); },
    () => { gaussianPdfFmad(x, 0, 1, { out: yv }); },
    () => { handExact(x, 0, 1, yh); },
  ];
  const [vNs, hNs, vfNs, heNs] = rotatedMedians(kernels, time, 3);
  // Same values (to float32 rounding of the two formulas).
  const a = yv.toArraySync() as Float32Array, b = yh.toArraySync() as Float32Array;
  let worst = 0;
  for (let i = 0; i < N; i += 4099) worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(Math.abs(b[i]), 1e-30));
  const lat = (f: () => void): number => perCallNs(f, 10_000, 1_000, { warmup: 1_000, sync }) / 1e3;
  // A pair side by side: five rounds, alternating which goes first (the host's speed drifts over a second).
  const latPair = (a: () => void, b: () => void): [number, number] => {
    const [la, lb] = rotatedMedians([a, b], lat, 5);
    return [la, lb];
  };
  using o1 = gx.empty([1], { device: 'cuda' });
  const [vLat, hLat] = latPair(() => { gaussianPdf(one, 0, 1, { out: o1 }); }, () => { hand(one, 0, 1, o1); });

  // gx.jit.rawkernel: the 1-element latency against a RawKernel.
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
  const [jLat, rLat] = latPair(() => { square([1], [32], jArgs); }, () => { squareRaw.launch([1], [32], jArgs); });
  // The PTX route against NVRTC's, the same kernel over 2^26 float32 (NOTE [ PTX path ]): steady state, not first calls.
  setPtxEnabled(false);
  const squareNvrtc = jit.rawkernel(function elementwise_square(x: gx.jit.Array, y: gx.jit.Array, size: number) {
    const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
    const ntid = jit.gridDim.x * jit.blockDim.x;
    for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
  });
  using sx = gx.rand([N], { device: 'cuda' });
  using sy = gx.empty([N], { device: 'cuda' });
  squareNvrtc([1], [32], [sx, sy, 1]);
  setPtxEnabled(true);
  // What a PTX route for vectorize would run: the gaussian as a grid-stride jit.rawkernel (Math.exp a library call).
  const SQRT_2PI_ = SQRT_2PI;
  const gaussBody = function gaussian_rawkernel(x: gx.jit.Array, y: gx.jit.Array, size: number): void {
    for (let i = jit.grid(1); i < size; i += jit.gridsize(1)) y[i] = Math.exp(-0.5 * ((x[i] - 0) / 1) ** 2) / (1 * SQRT_2PI_);
  };
  const gaussRaw = jit.rawkernel(gaussBody);
  setPtxEnabled(false);
  const gaussNvrtc = jit.rawkernel(gaussBody);
  gaussNvrtc([1], [32], [sx, sy, 1]);
  setPtxEnabled(true);
  const bigArgs = [sx, sy, N];
  gaussRaw([1], [32], [sx, sy, 1]);
  const gaussPtxNs = median([0, 1, 2].map(() => time(() => gaussRaw([4 * 132], [512], bigArgs))));
  const gaussNvrtcNs = median([0, 1, 2].map(() => time(() => gaussNvrtc([4 * 132], [512], bigArgs))));
  const [ptxNs, nvrtcNs] = [0, 1, 2].reduce<number[][]>((acc, r) => {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) acc[k].push(time(() => (k === 0 ? square : squareNvrtc)([4 * 132], [512], bigArgs)));
    return acc;
  }, [[], []]).map(median);

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
  console.log(`  vectorize gaussian_pdf --fmad=true      ${fmt(vfNs / 1e6, 3).padStart(6)} ${gbs(bytes, vfNs / 1e6).padStart(7)} | ${'-'.padStart(16)} ${'-'.padStart(5)} | ${'-'.padStart(12)} | ${fmt(heNs / 1e6, 3)} ${gbs(bytes, heNs / 1e6)} (hand --fmad=false)`);
  console.log(`  fuse: ${vs(fuseMs, tcE, 0.95)}; fused sum: ${vs(sumMs, tcS, 0.95)} (gx unfused ${fmt(sumUnfusedMs, 3)} ms)`);
  console.log(`  vectorize vs the hand-written elementwiseKernel, same contraction (target >= 0.97): --fmad=false both ${fmt(heNs / vNs, 3)}x ` +
    `(${heNs / vNs >= 0.97 ? 'met' : 'MISSED'}), --fmad=true both ${fmt(hNs / vfNs, 3)}x (${hNs / vfNs >= 0.97 ? 'met' : 'MISSED'}); ` +
    `vectorize's default against the hand kernel's default ${fmt(hNs / vNs, 3)}x`);

  section('summary');
  console.log(`  gaussian_pdf 2^26 float32: vectorize ${fmt(bytes / vNs)} GB/s vs hand-written elementwiseKernel ${fmt(bytes / hNs)} GB/s = ${fmt(hNs / vNs, 3)}x (target >= 0.97: ${hNs / vNs >= 0.97 ? 'met' : 'MISSED'}); worst relative difference ${worst.toExponential(1)}`);
  console.log(describeFirst('vectorize', vecFirst, 50, 5));
  console.log(jitFloor);
  console.log(`  1-element call: vectorize ${fmt(vLat, 2)} us vs elementwiseKernel ${fmt(hLat, 2)} us = ${fmt(vLat / hLat, 3)}x (target <= 1.10: ${vLat / hLat <= 1.1 ? 'met' : 'MISSED'})`);
  console.log(describeFirst('jit.rawkernel', rawFirst, 50, 5));
  console.log(`  1-element call: jit.rawkernel ${fmt(jLat, 2)} us vs the same RawKernel ${fmt(rLat, 2)} us = ${fmt(jLat / rLat, 3)}x (target <= 1.10: ${jLat / rLat <= 1.1 ? 'met' : 'MISSED'})`);
  console.log(`  gaussian_pdf 2^26 float32 as a jit.rawkernel through PTX (${gaussRaw.ptx(sx, sy, N) === undefined ? 'NVRTC: no PTX' : 'PTX'}): ${fmt(gaussPtxNs / 1e6, 3)} ms ` +
    `(${gbs(8 * N, gaussPtxNs / 1e6)} GB/s) vs its NVRTC route ${fmt(gaussNvrtcNs / 1e6, 3)} ms = ${fmt(gaussNvrtcNs / gaussPtxNs, 3)}x NVRTC's speed; vectorize ${fmt(vNs / 1e6, 3)} ms`);
  console.log(`  jit.rawkernel square 2^26 float32, steady state: PTX route ${fmt(ptxNs / 1e6, 3)} ms (${gbs(8 * N, ptxNs / 1e6)} GB/s) vs NVRTC route ${fmt(nvrtcNs / 1e6, 3)} ms (${gbs(8 * N, nvrtcNs / 1e6)} GB/s) = ${fmt(nvrtcNs / ptxNs, 3)}x NVRTC's speed`);
  const tc = pyNum('torch_compile_ms');
  console.log(`  fuse sin(x)+cos(y)/sqrt(z) 2^26 float32: gx.fuse ${fmt(fuseMs, 3)} ms (first call ${fmt(fuseFirstMs)} ms, target < 100: ${fuseFirstMs < 100 ? 'met' : 'MISSED'}), gx unfused ${fmt(unfusedMs, 3)} ms, ` +
    `torch.compile ${tc === undefined ? '-' : fmt(tc, 3)} ms (first call ${fmt(pyNum('torch_compile_first_ms') ?? NaN)} ms), cupy.fuse ${fmt(pyNum('cupy_fuse_ms') ?? NaN, 3)} ms, cupy unfused ${fmt(pyNum('cupy_ms') ?? NaN, 3)} ms` +
    `${tc === undefined ? ` (python: ${py.ok ? JSON.stringify(py.o) : py.error})` : `; speed vs torch.compile ${fmt(tc / fuseMs, 3)}x (target >= 0.95: ${tc / fuseMs >= 0.95 ? 'met' : 'MISSED'})`}`);
}

main();
