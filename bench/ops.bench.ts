// Built-in op benchmarks: gx.add and gx.mul (output allocated per call) and
// gx.sum on 2^28 float32 on the GPU, against torch.add, torch.mul and
// torch.sum in the same run (bench/torch_ops.py, where python3 imports torch
// with CUDA), with the ratios and the issue's targets: add/mul >= 97% of
// PyTorch's bandwidth, sum >= 90%. A CPU section (2^22 elements) always runs.
//
//   npm run bench:ops        (tsc, then node dist/bench/ops.bench.js)
//
// Timing: process.hrtime.bigint(); a device synchronize before and after each
// call inside the timed region; the median of 20 after 3 warmup calls. GB/s =
// bytes moved / s / 1e9: 3 * 4 * n for add and mul, 4 * n for sum. Without a
// GPU the GPU section says why it is skipped and the process exits 0. Exit
// status 1: a wrong result or a failed gpuext call.
import * as path from 'path';

import * as gx from '../lib';
import {
  REPO, nowNs, elapsedNs, median, fmt, ratio, printTable, printHeader, section, progress,
  isRecord, numField, strField, liveCounts, checkLive, printIssues, runPythonJson, patternA, patternB,
} from './util';

const TORCH_SCRIPT = path.join(REPO, 'bench', 'torch_ops.py');
const BIG_NUMEL = 2 ** 28;
const CPU_NUMEL = 2 ** 22;
const WARMUP = 3;
const REPEAT = 20;
const TARGETS: Record<OpName, number> = { add: 0.97, mul: 0.97, sum: 0.9 };

type OpName = 'add' | 'mul' | 'sum';
const OPS: readonly OpName[] = ['add', 'mul', 'sum'];
const BYTES = (op: OpName, n: number): number => (op === 'sum' ? 4 * n : 3 * 4 * n);

const problems: string[] = [];
const warnings: string[] = [];

/** Median ns of f() with a device sync before and after each call inside the timed region (sync may be a no-op). */
function timeOp(f: () => gx.Tensor, sync: () => void): number {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + REPEAT; i++) {
    sync();
    const t0 = nowNs();
    const r = f();
    sync();
    const ns = elapsedNs(t0);
    r.dispose();
    if (i >= WARMUP) samples.push(ns);
  }
  return median(samples);
}

/** The exact sum of a's pattern over n elements (every partial sum is exact in float64). */
function exactSumA(n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += patternA(i);
  return s;
}

/** Checks add/mul at sampled elements and sum against the exact value (a float32 sum: relative 1e-5). */
function verify(op: OpName, a: gx.Tensor, b: gx.Tensor, n: number, where: string): void {
  const r = op === 'add' ? gx.add(a, b) : op === 'mul' ? gx.mul(a, b) : gx.sum(a);
  try {
    if (op === 'sum') {
      const got = r.item() as number;
      const want = exactSumA(n);
      if (!(Math.abs(got - want) <= 1e-5 * Math.abs(want))) problems.push(`${where} sum: got ${got}, expected ${want}`);
      return;
    }
    const v = r.toArraySync() as Float32Array;
    const idx = [0, 1, 2, 1020, 1021, n >> 1, n - 2, n - 1];
    for (let i = 4093; i < n; i += 4093) idx.push(i);
    for (const i of idx) {
      const want = Math.fround(op === 'add' ? patternA(i) + patternB(i) : patternA(i) * patternB(i));
      if (v[i] !== want) {
        problems.push(`${where} ${op}: element ${i} is ${v[i]}, expected ${want}`);
        return;
      }
    }
  } finally {
    r.dispose();
  }
}

function benchDevice(device: 'cpu' | 'cuda', n: number): Map<OpName, number> {
  const out = new Map<OpName, number>();
  progress(`gpuext: inputs of ${n} float32 on ${device}`);
  const host = new Float32Array(n);
  for (let i = 0; i < n; i++) host[i] = patternA(i);
  const a = gx.tensor(host, { device });
  for (let i = 0; i < n; i++) host[i] = patternB(i);
  const b = gx.tensor(host, { device });
  const sync = device === 'cuda' ? (): void => gx.cuda.synchronize() : (): void => undefined;
  try {
    for (const op of OPS) {
      progress(`gpuext: ${op} on ${device}`);
      verify(op, a, b, n, device);
      const f = op === 'add' ? (): gx.Tensor => gx.add(a, b) : op === 'mul' ? (): gx.Tensor => gx.mul(a, b) : (): gx.Tensor => gx.sum(a);
      out.set(op, BYTES(op, n) / timeOp(f, sync));
    }
  } finally {
    a.dispose();
    b.dispose();
  }
  return out;
}

function runTorch(): { ok: true; device: string; version: string; gbps: Map<OpName, number>; errors: string[] } | { ok: false; error: string } {
  const r = runPythonJson(TORCH_SCRIPT, ['--numel', String(BIG_NUMEL), '--warmup', String(WARMUP), '--repeat', String(REPEAT)], 600_000);
  if (!r.ok) return r;
  const gbps = new Map<OpName, number>();
  const errors: string[] = [];
  const ops = r.o.ops;
  for (const op of OPS) {
    const e = isRecord(ops) ? ops[op] : undefined;
    const g = isRecord(e) ? numField(e, 'gbps') : undefined;
    if (g !== undefined) gbps.set(op, g);
    else errors.push(`torch.${op}: ${isRecord(e) ? strField(e, 'error') ?? 'no figure' : 'not run'}`);
  }
  return { ok: true, device: strField(r.o, 'device') ?? '?', version: strField(r.o, 'torch') ?? '?', gbps, errors };
}

function main(): void {
  const cuda = gx.cuda.isAvailable();
  const live0 = liveCounts(cuda);
  printHeader('gpuext built-in op benchmarks', cuda);
  const summary: string[] = [];

  section(`CPU, ${CPU_NUMEL} float32 (for scale; no target)`);
  const cpu = benchDevice('cpu', CPU_NUMEL);
  printTable(['op', 'GB/s'], OPS.map((op) => [`gx.${op}`, fmt(cpu.get(op))]));

  section(`GPU, 2^${Math.log2(BIG_NUMEL)} float32 (median of ${REPEAT} after ${WARMUP} warmup; add/mul allocate their output)`);
  if (!cuda) {
    console.log(`  skipped: CUDA not available: ${gx.cuda.unavailableReason()}`);
    summary.push('GPU figures: skipped, no GPU');
  } else {
    const gpu = benchDevice('cuda', BIG_NUMEL);
    progress('torch: running bench/torch_ops.py');
    const torch = runTorch();
    if (!torch.ok) console.log(`  torch: n/a (${torch.error})`);
    else console.log(`  torch ${torch.version} on ${torch.device}`);
    const rows = OPS.map((op) => {
      const g = gpu.get(op), tg = torch.ok ? torch.gbps.get(op) : undefined;
      const r = g !== undefined && tg !== undefined ? g / tg : undefined;
      const verdict = r === undefined ? 'n/a' : r >= TARGETS[op] ? 'met' : 'MISSED';
      summary.push(`${op} 2^28 float32: ${fmt(g, 0)} GB/s vs torch ${fmt(tg, 0)} GB/s (${ratio(g, tg)}; target >= ${TARGETS[op]}: ${verdict})`);
      return [`gx.${op} / torch.${op}`, fmt(g !== undefined ? BYTES(op, BIG_NUMEL) / g / 1e6 : undefined, 3), fmt(g, 0),
        fmt(tg, 0), ratio(g, tg), `>= ${TARGETS[op]}`, verdict];
    });
    printTable(['op', 'gpuext ms', 'gpuext GB/s', 'torch GB/s', 'ratio', 'target', ''], rows);
    if (torch.ok) for (const e of torch.errors) warnings.push(e);
  }
  checkLive(live0, cuda, warnings);
  section('summary');
  for (const s of summary) console.log(`  ${s}`);
  printIssues(warnings, problems);
}

try {
  main();
} catch (err: unknown) {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
}
