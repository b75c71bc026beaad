// CPU backend benchmarks (issue 13): gx.add, gx.exp, gx.sum of 10^7 float32
// (result allocated, and into `out`), gx.ones([1000, 1000, 20]) and gx.matmul
// of square float32 matrices (512, 1024), against NumPy doing the same work on
// the same values in the same run (bench/numpy_cpu.py), with the ratio
// gx time / NumPy time (target: <= 1 for add, exp, sum and ones; <= 2 for
// matmul 1024, docs/DESIGN.md's targets table).
//
//   npm run bench:cpu        (tsc, then node dist/bench/cpu.bench.js)
//
// Timing: each call alone, process.hrtime.bigint() around it, 3 untimed
// warmup calls, the median of 15 (matmul: of 5); a result is disposed after
// its timed region (NumPy's is dropped the same way). Results are checked once
// against JS references on sampled elements. GPUEXT_NUM_THREADS sets the
// threads of gpuext's CPU loops; NumPy's elementwise loops use one thread.
// Exit status 1: a wrong result or a failed call.
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import {
  REPO, nowNs, elapsedNs, median, fmt, ratio, printTable, printHeader, section, progress, isRecord, numField,
  strField, liveCounts, checkLive, printIssues, runPythonJson, patternA, patternB,
} from './util';

const NUMPY_SCRIPT = path.join(REPO, 'bench', 'numpy_cpu.py');
const N = 10 ** 7;
const WARMUP = 3;
const REPEAT = 15;
const MM_REPEAT = 5;
const MM_SIZES = [512, 1024] as const;
const ONES_SHAPE = [1000, 1000, 20];
/** The exp input: values in [-8, 8), exact in float32 (as numpy_cpu.py's). */
const expPattern = (i: number): number => ((i % 1021) - 510) / 64;
const mmPattern = (i: number): number => ((i % 17) - 8) / 8;

const problems: string[] = [];
const warnings: string[] = [];

interface Row {
  key: string;
  label: string;
  ms: number;
  target: number;
}

/** Median ms of f() (each call timed alone); f's tensor result is disposed outside the timed region. */
function timeMs(f: () => gx.Tensor | void, repeat = REPEAT): number {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + repeat; i++) {
    const t0 = nowNs();
    const r = f();
    const ns = elapsedNs(t0);
    if (r instanceof gx.Tensor) r.dispose();
    if (i >= WARMUP) samples.push(ns / 1e6);
  }
  return median(samples);
}

function fromPattern(n: number, p: (i: number) => number, shape?: number[]): gx.Tensor {
  const host = new Float32Array(n);
  for (let i = 0; i < n; i++) host[i] = p(i);
  return gx.tensor(host, shape ? { shape } : {});
}

function checkSamples(what: string, got: Float32Array, want: (i: number) => number, rtol: number): void {
  const n = got.length;
  const idx = [0, 1, 2, 1020, 1021, n >> 1, n - 2, n - 1];
  for (let i = 4093; i < n; i += 4093) idx.push(i);
  for (const i of idx) {
    const w = want(i);
    if (!(Math.abs(got[i] - w) <= rtol * Math.abs(w))) {
      problems.push(`${what}: element ${i} is ${got[i]}, expected ${w}`);
      return;
    }
  }
}

function verify(a: gx.Tensor, b: gx.Tensor, e: gx.Tensor): void {
  using s = gx.add(a, b);
  checkSamples('gx.add', s.toArraySync() as Float32Array, (i) => Math.fround(patternA(i) + patternB(i)), 0);
  using x = gx.exp(e);
  checkSamples('gx.exp', x.toArraySync() as Float32Array, (i) => Math.exp(expPattern(i)), 2 ** -23);
  using t = gx.sum(a);
  let want = 0;
  for (let i = 0; i < N; i++) want += patternA(i);  // exact in float64
  const got = t.item() as number;
  if (!(Math.abs(got - want) <= 1e-6 * want)) problems.push(`gx.sum: got ${got}, expected ${want}`);
  using o = gx.ones(ONES_SHAPE);
  checkSamples('gx.ones', o.toArraySync() as Float32Array, () => 1, 0);
}

function verifyMatmul(m: gx.Tensor, s: number): void {
  using r = gx.matmul(m, m);
  const v = r.toArraySync() as Float32Array;
  for (const [i, j] of [[0, 0], [1, 7], [s - 1, s - 1], [s >> 1, 3]]) {
    let want = 0;
    for (let k = 0; k < s; k++) want += Math.fround(mmPattern(i * s + k)) * Math.fround(mmPattern(k * s + j));
    if (!(Math.abs(v[i * s + j] - want) <= 1e-4 * Math.max(1, Math.abs(want)))) {
      problems.push(`gx.matmul ${s}: element [${i}, ${j}] is ${v[i * s + j]}, expected ${want}`);
      return;
    }
  }
}

function benchGx(): Row[] {
  progress(`gpuext: inputs of ${N} float32`);
  const a = fromPattern(N, patternA);
  const b = fromPattern(N, patternB);
  const e = fromPattern(N, expPattern);
  const out = gx.empty([N]);
  const out0 = gx.empty([]);
  const rows: Row[] = [];
  try {
    verify(a, b, e);
    const run = (key: string, label: string, f: () => gx.Tensor | void, target: number): void => {
      progress(`gpuext: ${label}`);
      rows.push({ key, label, ms: timeMs(f), target });
    };
    run('add', 'add 1e7 float32', () => gx.add(a, b), 1);
    run('add_out', 'add 1e7 float32, out', () => { gx.add(a, b, { out }); }, 1);
    run('exp', 'exp 1e7 float32', () => gx.exp(e), 1);
    run('exp_out', 'exp 1e7 float32, out', () => { gx.exp(e, { out }); }, 1);
    run('sum', 'sum 1e7 float32', () => gx.sum(a), 1);
    run('sum_out', 'sum 1e7 float32, out', () => { gx.sum(a, { out: out0 }); }, 1);
    run('ones', 'ones([1000, 1000, 20])', () => gx.ones(ONES_SHAPE), 1);
  } finally {
    for (const t of [a, b, e, out, out0]) t.dispose();
  }
  for (const s of MM_SIZES) {
    const m = fromPattern(s * s, mmPattern, [s, s]);
    try {
      verifyMatmul(m, s);
      progress(`gpuext: matmul ${s}`);
      rows.push({ key: `matmul${s}`, label: `matmul ${s}x${s} float32`, ms: timeMs(() => gx.matmul(m, m), MM_REPEAT), target: s === 1024 ? 2 : NaN });
    } finally {
      m.dispose();
    }
  }
  return rows;
}

function runNumpy(): { ok: true; version: string; blas: string; ms: Map<string, number> } | { ok: false; error: string } {
  const r = runPythonJson(NUMPY_SCRIPT, ['--numel', String(N), '--warmup', String(WARMUP), '--repeat', String(REPEAT),
    '--mm-sizes', MM_SIZES.join(',')], 600_000);
  if (!r.ok) return r;
  const ms = new Map<string, number>();
  const ops = r.o.ops;
  if (isRecord(ops)) {
    for (const [k, v] of Object.entries(ops)) {
      const m = isRecord(v) ? numField(v, 'median_ms') : undefined;
      if (m !== undefined) ms.set(k, m);
    }
  }
  return { ok: true, version: strField(r.o, 'numpy') ?? '?', blas: strField(r.o, 'blas') ?? '?', ms };
}

function main(): void {
  const live0 = liveCounts(false);
  printHeader('gpuext CPU backend benchmarks', false);
  console.log(`  cpus: ${os.availableParallelism()} (${os.cpus()[0]?.model ?? '?'}); GPUEXT_NUM_THREADS=${process.env.GPUEXT_NUM_THREADS ?? '(unset: all)'}`);
  const rows = benchGx();
  const s = gx.memory.stats('cpu');
  console.log(`  host allocator: ${s.numCacheHits} cache hits, ${s.numDeviceMallocs} system allocations, ` +
    `${fmt(s.cachedBytes / 2 ** 20, 0)} MiB cached`);
  progress('numpy: running bench/numpy_cpu.py');
  const np = runNumpy();
  section(`median ms (${REPEAT} calls after ${WARMUP} warmup; matmul ${MM_REPEAT}); ratio = gx / NumPy, lower is better`);
  if (!np.ok) {
    console.log(`  numpy: n/a (${np.error})`);
    warnings.push(`numpy: ${np.error}`);
  } else {
    console.log(`  numpy ${np.version} (BLAS: ${np.blas})`);
  }
  const summary: string[] = [];
  printTable(['op', 'gx ms', 'numpy ms', 'ratio', 'target'], rows.map((r) => {
    const n = np.ok ? np.ms.get(r.key) : undefined;
    const met = n === undefined || Number.isNaN(r.target) ? '' : r.ms / n <= r.target ? 'met' : 'MISSED';
    if (met !== '') summary.push(`${r.label}: ${fmt(r.ms)} ms vs NumPy ${fmt(n)} ms (${ratio(r.ms, n)}; target <= ${r.target}x: ${met})`);
    return [r.label, fmt(r.ms), fmt(n), ratio(r.ms, n), Number.isNaN(r.target) ? '-' : `<= ${r.target}x ${met}`];
  }));
  section('summary');
  for (const l of summary) console.log(`  ${l}`);
  checkLive(live0, false, warnings);
  printIssues(warnings, problems);
}

try {
  main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
}
