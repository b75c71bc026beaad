// Linear algebra benchmark (issue 5): gx.matmul against torch.matmul on
// n x n x n (default 8192) in bfloat16, float16, float32 with TF32 and plain
// float32, and gx.linalg.svd against torch.linalg.svd on a 10000 x 1000
// float32 matrix (reduced), side by side in one call (bench/torch_linalg.py);
// matmul results spot-checked against float64 dot products on the CPU, the
// SVD by rebuilding A from U S Vh on the GPU.
//
//   npm run bench:linalg     GPUEXT_BENCH_MATMUL_N=4096 for a quicker run
//
// Timing: after 1 s of bf16 matmuls (clocks up), gx.benchmark (CUDA events on
// the current stream around each call, the result allocated per call as
// torch's is), 10 warmup, median of 20. Both sides print the cuBLAS they use.
// TFLOPS = 2 n^3 / s. Target (issue 5): bf16 >= 0.95 of torch.matmul.
import * as fs from 'fs';

import * as gx from '../lib';
import { fmt, numField, printHeader, printIssues, printTable, progress, ratio, recField, runPythonJson, section, strField } from './util';

const N = Number(process.env.GPUEXT_BENCH_MATMUL_N ?? 8192);
const REPEAT = 20;
const TARGET_BF16 = 0.95;
const SVD_M = Number(process.env.GPUEXT_BENCH_SVD_M ?? 10000);
const SVD_N = Number(process.env.GPUEXT_BENCH_SVD_N ?? 1000);
const SVD_REPEAT = 5;
/** SVD target (issue 5): within 1.2x of torch.linalg.svd's time. */
const TARGET_SVD = 1.2;

interface Case {
  dtype: 'bfloat16' | 'float16' | 'float32';
  tf32: boolean;
}
const CASES: Case[] = [
  { dtype: 'bfloat16', tf32: false }, { dtype: 'float16', tf32: false }, { dtype: 'float32', tf32: true }, { dtype: 'float32', tf32: false },
];

function label(c: Case): string {
  return `${c.dtype}${c.tf32 ? ' (tf32)' : ''}`;
}

/** The largest relative error of a few sampled entries of a @ b against float64 dot products. */
function spotCheck(a: gx.Tensor, b: gx.Tensor, c: gx.Tensor): number {
  const av = a.to('cpu');
  const bv = b.to('cpu');
  const cv = c.to('cpu');
  try {
    // float16/bfloat16 read back as Float32Array: every value exact.
    const A = av.toArraySync() as Float32Array;
    const B = bv.toArraySync() as Float32Array;
    const C = cv.toArraySync() as Float32Array;
    let worst = 0;
    for (const [i, j] of [[0, 0], [N - 1, N - 1], [17, N - 3], [N >> 1, 5]]) {
      let s = 0;
      for (let q = 0; q < N; q++) s += A[i * N + q] * B[q * N + j];
      worst = Math.max(worst, Math.abs(C[i * N + j] - s) / Math.abs(s));
    }
    return worst;
  } finally {
    av.dispose();
    bv.dispose();
    cv.dispose();
  }
}

/** Paths of the shared libraries mapped into this process whose names contain `name` (Linux). */
function loadedLibraries(name: string): string[] {
  try {
    const maps = fs.readFileSync('/proc/self/maps', 'utf8').split('\n');
    return [...new Set(maps.map((l) => l.split(/\s+/)[5] ?? '').filter((p) => p.includes(name)))];
  } catch {
    return [];
  }
}

function main(): number {
  const cuda = gx.cuda.isAvailable();
  printHeader(`matmul ${N}^3: gpuext vs torch`, cuda);
  const warnings: string[] = [];
  const problems: string[] = [];
  if (!cuda) {
    console.log(`\nCUDA not available: ${gx.cuda.unavailableReason()}; skipped`);
    return 0;
  }
  const ours = new Map<string, { ms: number; err: number }>();
  // Clocks first: a GPU that has been idle runs its first hundreds of
  // milliseconds of tensor-core work slower, so both sides warm up for a
  // second before timing (torch_linalg.py does the same).
  progress('warming the GPU up (1 s of bf16 matmuls)');
  {
    using a = gx.rand([N, N], { device: 'cuda', dtype: 'bfloat16' });
    const t0 = Date.now();
    while (Date.now() - t0 < 1000) {
      gx.matmul(a, a).dispose();
      gx.cuda.synchronize();
    }
  }
  console.log(`  cuBLAS loaded from: ${loadedLibraries('libcublas').join(', ') || '?'}`);
  for (const c of CASES) {
    progress(`gpuext matmul ${label(c)}`);
    gx.manualSeed(1);
    using a = gx.rand([N, N], { device: 'cuda', dtype: c.dtype });
    using b = gx.rand([N, N], { device: 'cuda', dtype: c.dtype });
    const r = gx.benchmark(() => gx.matmul(a, b, { allowTf32: c.tf32 }).dispose(), { nWarmup: 10, nRepeat: REPEAT, name: label(c) });
    using out = gx.matmul(a, b, { allowTf32: c.tf32 });
    const err = spotCheck(a, b, out);
    const tol = c.dtype === 'float32' && !c.tf32 ? 1e-4 : 2e-2;
    if (!(err <= tol)) problems.push(`matmul ${label(c)}: sampled relative error ${err} > ${tol}`);
    ours.set(label(c), { ms: r.gpu?.median ?? Number.NaN, err });
  }
  // SVD of a 10000 x 1000 float32 matrix (the Dask + CuPy article's headline), reduced (fullMatrices: false).
  progress(`gpuext linalg.svd ${SVD_M} x ${SVD_N}`);
  let svdMs: number | undefined;
  let svdErr: number | undefined;
  {
    gx.manualSeed(2);
    using a = gx.rand([SVD_M, SVD_N], { device: 'cuda' });
    const run = (): gx.SvdResult => gx.linalg.svd(a, { fullMatrices: false });
    const r = gx.benchmark(() => {
      const o = run();
      o.U.dispose();
      o.S.dispose();
      o.Vh.dispose();
    }, { nWarmup: 2, nRepeat: SVD_REPEAT, name: 'svd' });
    svdMs = r.gpu?.median;
    const o = run();
    try {
      svdErr = gx.tidy(() => {
        const rebuilt = gx.matmul(gx.mul(o.U, o.S), o.Vh);
        return Number(gx.max(gx.abs(gx.sub(rebuilt, a))).item()) / Number(gx.max(gx.abs(a)).item());
      });
    } finally {
      o.U.dispose();
      o.S.dispose();
      o.Vh.dispose();
    }
    // gesvdj stops at its default tolerance (as torch's call does): float32 rebuilds A to about 1e-4.
    if (!(svdErr <= 1e-3)) problems.push(`svd: max |U S Vh - A| / max |A| = ${svdErr}`);
  }
  progress('torch: python3 bench/torch_linalg.py');
  const py = runPythonJson('bench/torch_linalg.py', ['--n', String(N), '--repeat', String(REPEAT), '--svd-m', String(SVD_M),
    '--svd-n', String(SVD_N), '--svd-repeat', String(SVD_REPEAT)], 600_000);
  const torchSvdMs = py.ok ? numField(recField(py.o, 'svd'), 'median_ms') : undefined;
  const torchSvdErr = py.ok ? numField(recField(py.o, 'svd'), 'rel_err') : undefined;
  const theirs = new Map<string, number>();
  if (!py.ok) warnings.push(`torch side: ${py.error}`);
  else {
    if (Array.isArray(py.o.cublas)) console.log(`  torch's cuBLAS: ${py.o.cublas.map(String).join(', ')}`);
    const list = py.o.matmul;
    if (Array.isArray(list)) {
      for (const e of list) {
        const o = recField({ e }, 'e');
        const ms = numField(o, 'median_ms');
        const dtype = strField(o, 'dtype');
        if (ms !== undefined && dtype !== undefined) theirs.set(`${dtype}${o?.tf32 === true ? ' (tf32)' : ''}`, ms);
      }
    }
  }
  const tflops = (ms: number | undefined): number | undefined => (ms === undefined || !Number.isFinite(ms) ? undefined : (2 * N ** 3) / (ms / 1e3) / 1e12);
  section(`matmul ${N} x ${N} x ${N}, result allocated per call; median of ${REPEAT} (CUDA events)`);
  printTable(['', 'gpuext ms', 'torch ms', 'gpuext TFLOPS', 'torch TFLOPS', 'torch/gpuext time', 'sampled rel err'], CASES.map((c) => {
    const o = ours.get(label(c));
    const t = theirs.get(label(c));
    return [label(c), fmt(o?.ms, 3), fmt(t, 3), fmt(tflops(o?.ms), 1), fmt(tflops(t), 1), ratio(t, o?.ms), o === undefined ? '' : o.err.toExponential(1)];
  }));
  const bf = ours.get('bfloat16')?.ms;
  const tbf = theirs.get('bfloat16');
  const speed = bf !== undefined && tbf !== undefined ? tbf / bf : undefined;
  section(`linalg.svd ${SVD_M} x ${SVD_N} float32, reduced (fullMatrices: false); median of ${SVD_REPEAT} (CUDA events)`);
  printTable(['', 'gpuext ms', 'torch ms', 'gpuext/torch time', 'max |U S Vh - A| / max |A|', 'torch\'s'], [
    ['svd', fmt(svdMs, 1), fmt(torchSvdMs, 1), ratio(svdMs, torchSvdMs), svdErr === undefined ? '' : svdErr.toExponential(1),
      torchSvdErr === undefined ? '' : torchSvdErr.toExponential(1)],
  ]);
  const svdRatio = svdMs !== undefined && torchSvdMs !== undefined ? svdMs / torchSvdMs : undefined;
  section('summary');
  console.log(`  svd ${SVD_M}x${SVD_N} float32: ${fmt(svdMs, 1)} ms vs torch ${fmt(torchSvdMs, 1)} ms = ${fmt(svdRatio, 2)}x the time ` +
    `(target <= ${TARGET_SVD}x: ${svdRatio === undefined ? 'not judged (no torch figure)' : svdRatio <= TARGET_SVD ? 'met' : 'MISSED'})`);
  console.log(`  bf16 matmul ${N}^3: ${fmt(tflops(bf), 1)} TFLOPS vs torch ${fmt(tflops(tbf), 1)} = ${fmt(speed, 3)}x ` +
    `(target >= ${TARGET_BF16}: ${speed === undefined ? 'not judged (no torch figure)' : speed >= TARGET_BF16 ? 'met' : 'MISSED'})`);
  printIssues(warnings, problems);
  return problems.length > 0 ? 1 : 0;
}

process.exitCode = main();
