// Indexing and scatter benchmarks on the GPU, side by side with PyTorch
// (bench/torch_indexing.py, run in the same process tree when python3
// imports torch with CUDA):
//   scatterAdd  2^24 float32 values into 2^16 bins (random int64 indices): time; target gx <= 1.2x torch's time
//   gather      along the last axis of a 4096 x 8192 float32 tensor (int64 index of the same shape): GB/s;
//               target >= 0.95x torch's bandwidth
//   histc       2^24 float32 values in [0, 1) into 256 bins over [0, 1]: time and GB/s (no target)
//   x.index(mask)  2^24 float32 values, a bool mask of about half true (x[mask] in torch): time (no target)
//
//   npm run bench:indexing     (tsc, then node dist/bench/indexing.bench.js)
//
// Timing as bench/ops.bench.ts: process.hrtime.bigint(), a device
// synchronize before and after each call inside the timed region, the
// median of REPEAT after WARMUP calls; every call allocates its result, as
// torch's. gpuext's gather and scatterAdd read their index check back (a
// sync per call, NOTE [ Walking an index ] in ops/index/index_iter.h), and
// x.index(mask) its count (as torch's does); those are inside the times.
// GB/s = bytes moved / s / 1e9: gather 16 bytes per output element (an
// int64 index read, a float32 read from x, a float32 write), histc 4 bytes
// per input element. Each result is checked against a CPU computation
// first. Without a GPU the process says why and exits 0; a wrong result or
// a failed call exits 1.
import * as path from 'path';

import * as gx from '../lib';
import {
  REPO, nowNs, elapsedNs, median, fmt, ratio, printTable, printHeader, section, progress,
  isRecord, numField, strField, liveCounts, checkLive, printIssues, runMain, runPythonJson,
} from './util';

const TORCH_SCRIPT = path.join(REPO, 'bench', 'torch_indexing.py');
const WARMUP = 5;
const REPEAT = 50;

const SCATTER_N = 2 ** 24;
const SCATTER_BINS = 2 ** 16;
const SCATTER_TARGET = 1.2;  // gpuext time / torch time at most
const GATHER_ROWS = 4096;
const GATHER_COLS = 8192;
const GATHER_TARGET = 0.95;  // gpuext GB/s / torch GB/s at least
const GATHER_BYTES = GATHER_ROWS * GATHER_COLS * (8 + 4 + 4);
const HISTC_N = 2 ** 24;
const HISTC_BINS = 256;
const MASK_N = 2 ** 24;

type Case = 'scatterAdd' | 'gather' | 'histc' | 'maskIndex';
const CASES: readonly Case[] = ['scatterAdd', 'gather', 'histc', 'maskIndex'];

const problems: string[] = [];
const warnings: string[] = [];

/** Median ns of f() with a device sync before and after each call inside the timed region. */
function timeOp(f: () => gx.Tensor): number {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + REPEAT; i++) {
    gx.cuda.synchronize();
    const t0 = nowNs();
    const r = f();
    gx.cuda.synchronize();
    const ns = elapsedNs(t0);
    r.dispose();
    if (i >= WARMUP) samples.push(ns);
  }
  return median(samples);
}

/** A deterministic generator (mulberry32) for the inputs. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function checkClose(where: string, got: ArrayLike<number>, want: ArrayLike<number>, rtol: number, atol: number): void {
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= atol + rtol * Math.abs(want[i]))) {
      problems.push(`${where}: element ${i} is ${got[i]}, expected ${want[i]}`);
      return;
    }
  }
}

function benchScatterAdd(): number {
  progress(`gpuext: scatterAdd of ${SCATTER_N} float32 into ${SCATTER_BINS} bins`);
  const r = random(1);
  const idxHost = new BigInt64Array(SCATTER_N);
  const srcHost = new Float32Array(SCATTER_N);
  const want = new Float64Array(SCATTER_BINS);
  for (let i = 0; i < SCATTER_N; i++) {
    const k = Math.floor(r() * SCATTER_BINS);
    idxHost[i] = BigInt(k);
    srcHost[i] = Math.fround(r() - 0.5);
    want[k] += srcHost[i];
  }
  using x = gx.zeros([SCATTER_BINS], { device: 'cuda' });
  using index = gx.tensor(idxHost, { device: 'cuda' });
  using src = gx.tensor(srcHost, { device: 'cuda' });
  {
    using out = gx.scatterAdd(x, 0, index, src);
    checkClose('scatterAdd', out.toArraySync() as Float32Array, want, 1e-3, 1e-3);
  }
  return timeOp(() => gx.scatterAdd(x, 0, index, src));
}

function benchGather(): number {
  progress(`gpuext: gather along the last axis of ${GATHER_ROWS} x ${GATHER_COLS} float32`);
  const n = GATHER_ROWS * GATHER_COLS;
  const r = random(2);
  const xHost = new Float32Array(n);
  for (let i = 0; i < n; i++) xHost[i] = Math.fround(r());
  const idxHost = new BigInt64Array(n);
  const idxNum = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    idxNum[i] = Math.floor(r() * GATHER_COLS);
    idxHost[i] = BigInt(idxNum[i]);
  }
  using x = gx.tensor(xHost, { device: 'cuda', shape: [GATHER_ROWS, GATHER_COLS] });
  using index = gx.tensor(idxHost, { device: 'cuda', shape: [GATHER_ROWS, GATHER_COLS] });
  {
    using out = gx.gather(x, 1, index);
    const v = out.toArraySync() as Float32Array;
    for (const row of [0, 1, 2047, GATHER_ROWS - 1]) {
      for (let j = 0; j < GATHER_COLS; j += 7) {
        const p = row * GATHER_COLS + j;
        const want = xHost[row * GATHER_COLS + idxNum[p]];
        if (v[p] !== want) {
          problems.push(`gather: element ${p} is ${v[p]}, expected ${want}`);
          break;
        }
      }
    }
  }
  return timeOp(() => gx.gather(x, 1, index));
}

function benchHistc(): number {
  progress(`gpuext: histc of ${HISTC_N} float32 into ${HISTC_BINS} bins`);
  const r = random(3);
  const host = new Float32Array(HISTC_N);
  const want = new Float64Array(HISTC_BINS);
  for (let i = 0; i < HISTC_N; i++) {
    host[i] = Math.fround(r());
    let b = Math.trunc(Math.fround(Math.fround(host[i] * HISTC_BINS) / 1));
    if (b >= HISTC_BINS) b = HISTC_BINS - 1;
    want[b]++;
  }
  using x = gx.tensor(host, { device: 'cuda' });
  {
    using h = gx.histc(x, { bins: HISTC_BINS, min: 0, max: 1 });
    checkClose('histc', h.toArraySync() as Float32Array, want, 0, 0);
  }
  return timeOp(() => gx.histc(x, { bins: HISTC_BINS, min: 0, max: 1 }));
}

function benchMaskIndex(): number {
  progress(`gpuext: x.index(mask) on ${MASK_N} float32`);
  const r = random(4);
  const host = new Float32Array(MASK_N);
  const maskHost = new Uint8Array(MASK_N);
  let kept = 0;
  for (let i = 0; i < MASK_N; i++) {
    host[i] = Math.fround(r());
    maskHost[i] = r() < 0.5 ? 1 : 0;
    kept += maskHost[i];
  }
  using x = gx.tensor(host, { device: 'cuda' });
  using mask = gx.tensor(maskHost, { device: 'cuda', dtype: 'bool' });
  {
    using out = x.index(mask);
    const v = out.toArraySync() as Float32Array;
    if (v.length !== kept) problems.push(`x.index(mask): ${v.length} elements, expected ${kept}`);
    else {
      for (let i = 0, k = 0; i < MASK_N; i++) {
        if (!maskHost[i]) continue;
        if (v[k] !== host[i]) {
          problems.push(`x.index(mask): element ${k} is ${v[k]}, expected ${host[i]}`);
          break;
        }
        k++;
      }
    }
  }
  return timeOp(() => x.index(mask));
}

interface TorchResult { ok: true; device: string; version: string; ns: Map<Case, number>; errors: string[] }

function runTorch(): TorchResult | { ok: false; error: string } {
  const r = runPythonJson(TORCH_SCRIPT, ['--warmup', String(WARMUP), '--repeat', String(REPEAT),
    '--scatter-n', String(SCATTER_N), '--scatter-bins', String(SCATTER_BINS), '--gather-rows', String(GATHER_ROWS),
    '--gather-cols', String(GATHER_COLS), '--histc-n', String(HISTC_N), '--histc-bins', String(HISTC_BINS), '--mask-n', String(MASK_N)], 600_000);
  if (!r.ok) return r;
  const ns = new Map<Case, number>();
  const errors: string[] = [];
  const cases = r.o.cases;
  for (const c of CASES) {
    const e = isRecord(cases) ? cases[c] : undefined;
    const s = isRecord(e) ? numField(e, 'median_s') : undefined;
    if (s !== undefined) ns.set(c, s * 1e9);
    else errors.push(`torch ${c}: ${isRecord(e) ? strField(e, 'error') ?? 'no figure' : 'not run'}`);
  }
  return { ok: true, device: strField(r.o, 'device') ?? '?', version: strField(r.o, 'torch') ?? '?', ns, errors };
}

function main(): void {
  const cuda = gx.cuda.isAvailable();
  const live0 = liveCounts(cuda);
  printHeader('gpuext indexing and scatter benchmarks', cuda);
  const summary: string[] = [];
  section(`GPU (median of ${REPEAT} after ${WARMUP} warmup; every call allocates its result)`);
  if (!cuda) {
    console.log(`  skipped: CUDA not available: ${gx.cuda.unavailableReason()}`);
    summary.push('GPU figures: skipped, no GPU');
  } else {
    const ours = new Map<Case, number>([
      ['scatterAdd', benchScatterAdd()], ['gather', benchGather()], ['histc', benchHistc()], ['maskIndex', benchMaskIndex()],
    ]);
    progress('torch: running bench/torch_indexing.py');
    const torch = runTorch();
    if (!torch.ok) console.log(`  torch: n/a (${torch.error})`);
    else console.log(`  torch ${torch.version} on ${torch.device}`);
    const theirs = (c: Case): number | undefined => (torch.ok ? torch.ns.get(c) : undefined);
    const ms = (ns: number | undefined): string => fmt(ns === undefined ? undefined : ns / 1e6, 3);
    const gbps = (bytes: number, ns: number | undefined): number | undefined => (ns === undefined ? undefined : bytes / ns);
    const rows: string[][] = [];
    {
      const g = ours.get('scatterAdd'), tg = theirs('scatterAdd');
      const r = g !== undefined && tg !== undefined ? g / tg : undefined;
      const verdict = r === undefined ? 'n/a' : r <= SCATTER_TARGET ? 'met' : 'MISSED';
      rows.push(['gx.scatterAdd / torch.scatter_add (2^24 -> 2^16 bins)', ms(g), ms(tg), ratio(g, tg), `time <= ${SCATTER_TARGET}x`, verdict]);
      summary.push(`scatterAdd 2^24 float32 into 2^16 bins: ${ms(g)} ms vs torch ${ms(tg)} ms (time ${ratio(g, tg)}; target <= ${SCATTER_TARGET}x: ${verdict})`);
    }
    {
      const g = gbps(GATHER_BYTES, ours.get('gather')), tg = gbps(GATHER_BYTES, theirs('gather'));
      const r = g !== undefined && tg !== undefined ? g / tg : undefined;
      const verdict = r === undefined ? 'n/a' : r >= GATHER_TARGET ? 'met' : 'MISSED';
      rows.push([`gx.gather / torch.gather (${GATHER_ROWS}x${GATHER_COLS}, axis -1)`, ms(ours.get('gather')), ms(theirs('gather')),
        ratio(ours.get('gather'), theirs('gather')), `GB/s >= ${GATHER_TARGET}x`, verdict]);
      summary.push(`gather ${GATHER_ROWS}x${GATHER_COLS} float32 along the last axis: ${fmt(g, 0)} GB/s vs torch ${fmt(tg, 0)} GB/s ` +
        `(${ratio(g, tg)}; target >= ${GATHER_TARGET}: ${verdict})`);
    }
    {
      const g = ours.get('histc'), tg = theirs('histc');
      rows.push([`gx.histc / torch.histc (2^24 -> ${HISTC_BINS} bins)`, ms(g), ms(tg), ratio(g, tg), 'none', '']);
      summary.push(`histc 2^24 float32 into ${HISTC_BINS} bins: ${ms(g)} ms (${fmt(gbps(4 * HISTC_N, g), 0)} GB/s) vs torch ${ms(tg)} ms ` +
        `(${fmt(gbps(4 * HISTC_N, tg), 0)} GB/s); time ${ratio(g, tg)}`);
    }
    {
      const g = ours.get('maskIndex'), tg = theirs('maskIndex');
      rows.push(['x.index(mask) / x[mask] (2^24, half kept)', ms(g), ms(tg), ratio(g, tg), 'none', '']);
      summary.push(`x.index(mask) 2^24 float32, half kept: ${ms(g)} ms vs torch x[mask] ${ms(tg)} ms; time ${ratio(g, tg)}`);
    }
    printTable(['op', 'gpuext ms', 'torch ms', 'time gpuext/torch', 'target', ''], rows);
    if (torch.ok) for (const e of torch.errors) warnings.push(e);
  }
  checkLive(live0, cuda, warnings);
  section('summary');
  for (const s of summary) console.log(`  ${s}`);
  printIssues(warnings, problems);
}

runMain(main);
