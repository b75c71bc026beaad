// Built-in op benchmarks: gx.add and gx.mul (output allocated per call) and
// gx.sum on 2^28 float32 on the GPU, and row softmax (gx.softmax(x, -1)) on a
// 4096 x 4096 float32 matrix, against torch.add, torch.mul, torch.sum and
// torch.softmax in the same run (bench/torch_ops.py, where python3 imports
// torch with CUDA), with the ratios and the issue's targets: add/mul >= 97% of
// PyTorch's bandwidth, sum and softmax >= 90%. A CPU section (2^22 elements,
// add/mul/sum) always runs.
//
//   npm run bench:ops        (tsc, then node dist/bench/ops.bench.js)
//
// Timing: process.hrtime.bigint(); a device synchronize before and after each
// call inside the timed region; the median of 20 (softmax: 100) after 3 warmup calls. GB/s =
// bytes moved / s / 1e9: 3 * 4 * n for add and mul, 4 * n for sum, 2 * 4 *
// rows * cols for softmax (one read and one write of the matrix). Without a
// GPU the GPU section says why it is skipped and the process exits 0. Exit
// status 1: a wrong result or a failed gpuext call.
import * as path from 'path';

import * as gx from '../lib';
import {
  REPO, nowNs, elapsedNs, median, fmt, ratio, printTable, printHeader, section, progress,
  isRecord, numField, strField, liveCounts, checkLive, printIssues, runMain, runPythonJson, patternA, patternB,
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

const SOFTMAX_ROWS = 4096;
const SOFTMAX_COLS = 4096;
const SOFTMAX_TARGET = 0.9;
const SOFTMAX_REPEAT = 100; // a ~50 us call: more samples for a steady median
const SOFTMAX_BYTES = 2 * 4 * SOFTMAX_ROWS * SOFTMAX_COLS;
/** The softmax input: logits in [-8, 8) with a period that is not the row length. */
const softmaxPattern = (i: number): number => ((i % 1021) - 510) / 64;

const problems: string[] = [];
const warnings: string[] = [];

/** Median ns of f() with a device sync before and after each call inside the timed region (sync may be a no-op). */
function timeOp(f: () => gx.Tensor, sync: () => void, repeat = REPEAT): number {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + repeat; i++) {
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

/** Checks sampled rows of a row softmax against a float64 reference (relative 1e-5). */
function verifySoftmax(r: gx.Tensor, where: string): void {
  const v = r.toArraySync() as Float32Array;
  for (const row of [0, 1, 2047, SOFTMAX_ROWS - 1]) {
    const base = row * SOFTMAX_COLS;
    let mx = -Infinity;
    for (let j = 0; j < SOFTMAX_COLS; j++) mx = Math.max(mx, Math.fround(softmaxPattern(base + j)));
    let s = 0;
    for (let j = 0; j < SOFTMAX_COLS; j++) s += Math.exp(Math.fround(softmaxPattern(base + j)) - mx);
    for (let j = 0; j < SOFTMAX_COLS; j++) {
      const want = Math.exp(Math.fround(softmaxPattern(base + j)) - mx) / s;
      if (!(Math.abs(v[base + j] - want) <= 1e-5 * want)) {
        problems.push(`${where} softmax: row ${row} element ${j} is ${v[base + j]}, expected ${want}`);
        return;
      }
    }
  }
}

/** GB/s of gx.softmax(x, -1) on a SOFTMAX_ROWS x SOFTMAX_COLS float32 matrix on the GPU. */
function benchSoftmax(): number {
  progress(`gpuext: softmax on ${SOFTMAX_ROWS} x ${SOFTMAX_COLS} float32 on cuda`);
  const host = new Float32Array(SOFTMAX_ROWS * SOFTMAX_COLS);
  for (let i = 0; i < host.length; i++) host[i] = softmaxPattern(i);
  const x = gx.tensor(host, { device: 'cuda', shape: [SOFTMAX_ROWS, SOFTMAX_COLS] });
  try {
    const r = gx.softmax(x, -1);
    try {
      verifySoftmax(r, 'cuda');
    } finally {
      r.dispose();
    }
    return SOFTMAX_BYTES / timeOp(() => gx.softmax(x, -1), () => gx.cuda.synchronize(), SOFTMAX_REPEAT);
  } finally {
    x.dispose();
  }
}

function runTorch(): { ok: true; device: string; version: string; gbps: Map<OpName, number>; softmax?: number; errors: string[] } | { ok: false; error: string } {
  const r = runPythonJson(TORCH_SCRIPT, ['--numel', String(BIG_NUMEL), '--warmup', String(WARMUP), '--repeat', String(REPEAT),
    '--softmax-rows', String(SOFTMAX_ROWS), '--softmax-cols', String(SOFTMAX_COLS), '--softmax-repeat', String(SOFTMAX_REPEAT)], 600_000);
  if (!r.ok) return r;
  const gbps = new Map<OpName, number>();
  const errors: string[] = [];
  const ops = r.o.ops;
  const sm = isRecord(ops) ? ops.softmax : undefined;
  const softmax = isRecord(sm) ? numField(sm, 'gbps') : undefined;
  if (softmax === undefined) errors.push(`torch.softmax: ${isRecord(sm) ? strField(sm, 'error') ?? 'no figure' : 'not run'}`);
  for (const op of OPS) {
    const e = isRecord(ops) ? ops[op] : undefined;
    const g = isRecord(e) ? numField(e, 'gbps') : undefined;
    if (g !== undefined) gbps.set(op, g);
    else errors.push(`torch.${op}: ${isRecord(e) ? strField(e, 'error') ?? 'no figure' : 'not run'}`);
  }
  return { ok: true, device: strField(r.o, 'device') ?? '?', version: strField(r.o, 'torch') ?? '?', gbps, softmax, errors };
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
    const softmax = benchSoftmax();
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
    {
      const g = softmax, tg = torch.ok ? torch.softmax : undefined;
      const r = tg !== undefined ? g / tg : undefined;
      const verdict = r === undefined ? 'n/a' : r >= SOFTMAX_TARGET ? 'met' : 'MISSED';
      summary.push(`softmax ${SOFTMAX_ROWS}x${SOFTMAX_COLS} float32 (axis -1): ${fmt(g, 0)} GB/s vs torch ${fmt(tg, 0)} GB/s ` +
        `(${ratio(g, tg)}; target >= ${SOFTMAX_TARGET}: ${verdict})`);
      rows.push([`gx.softmax / torch.softmax (${SOFTMAX_ROWS}x${SOFTMAX_COLS}, -1)`, fmt(SOFTMAX_BYTES / g / 1e6, 3), fmt(g, 0),
        fmt(tg, 0), ratio(g, tg), `>= ${SOFTMAX_TARGET}`, verdict]);
    }
    printTable(['op', 'gpuext ms', 'gpuext GB/s', 'torch GB/s', 'ratio', 'target', ''], rows);
    if (torch.ok) for (const e of torch.errors) warnings.push(e);
  }
  checkLive(live0, cuda, warnings);
  section('summary');
  for (const s of summary) console.log(`  ${s}`);
  printIssues(warnings, problems);
}

runMain(main);
