// Ordering op benchmarks on the GPU, against torch in the same run
// (bench/torch_sort.py, where python3 imports torch with CUDA):
//   sort of 2^26 float32 (one row: CUB's device-wide radix sort),
//   sort of 4096 rows of 8192 float32 along the last axis (a block per row),
//   topk k = 10 of 4096 x 65536 float32 (registers and a block merge),
// each returning values and int64 indices as torch does; the targets are
// gpuext's time within 1.1x torch's. Two more rows for scale (no target):
// unique of 2^24 int32 drawn from 2^20 values, with counts, and
// searchsorted of 2^24 float32 in a sorted sequence of 2^20.
//
//   npm run bench:sort       (tsc, then node dist/bench/sort.bench.js)
//
// Timing: process.hrtime.bigint(); a device synchronize before and after each
// call inside the timed region; the median of REPEAT after WARMUP untimed
// calls; the inputs are uniform random (gx.rand, torch.rand). Each result is
// checked first (sortedness, values equal to the input at the indices, topk
// against a sort). Without a GPU the process says why and exits 0. Exit
// status 1: a wrong result or a failed call.
import * as path from 'path';

import * as gx from '../lib';
import {
  REPO, nowNs, elapsedNs, median, fmt, printTable, printHeader, section, progress, isRecord, numField, strField,
  liveCounts, checkLive, printIssues, runMain, runPythonJson,
} from './util';

const TORCH_SCRIPT = path.join(REPO, 'bench', 'torch_sort.py');
const WARMUP = 3;
const REPEAT = 15;
const TARGET = 1.1;

const SORT_NUMEL = 2 ** 26;
const ROWS = 4096, COLS = 8192;
const TOPK_ROWS = 4096, TOPK_COLS = 65536, TOPK_K = 10;
const UNIQUE_NUMEL = 2 ** 24, UNIQUE_RANGE = 2 ** 20;
const SEARCH_SEQ = 2 ** 20, SEARCH_NUMEL = 2 ** 24;

type CaseName = 'sort_1d' | 'sort_rows' | 'topk' | 'unique' | 'searchsorted';
interface Case {
  name: CaseName;
  label: string;
  target: boolean;
  setup: () => gx.Tensor[];
  run: (inputs: gx.Tensor[]) => gx.Tensor[];
  check: (inputs: gx.Tensor[]) => string | undefined;
}

const problems: string[] = [];
const warnings: string[] = [];

/** Median ns of run() with a device synchronize before and after each call inside the timed region. */
function timeCase(c: Case, inputs: gx.Tensor[]): number {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + REPEAT; i++) {
    gx.cuda.synchronize();
    const t0 = nowNs();
    const outs = c.run(inputs);
    gx.cuda.synchronize();
    const ns = elapsedNs(t0);
    for (const o of outs) o.dispose();
    if (i >= WARMUP) samples.push(ns);
  }
  return median(samples);
}

const all = (t: gx.Tensor): boolean => gx.tidy(() => gx.all(t).item() as boolean);

/** values sorted ascending along the last axis, and equal to x at the indices. */
function checkSorted(x: gx.Tensor, values: gx.Tensor, indices: gx.Tensor): string | undefined {
  return gx.tidy(() => {
    const n = values.shape[values.ndim - 1];
    if (!all(gx.le(gx.narrow(values, -1, 0, n - 1), gx.narrow(values, -1, 1, n - 1)))) return 'values are not sorted';
    if (!all(gx.eq(gx.gather(x, -1, indices), values))) return 'values differ from the input at the indices';
    // Every index once: the indices sort to 0..n-1.
    const back = gx.sort(indices.astype('float64'), -1).values;
    if (!all(gx.eq(back, gx.arange(n, { dtype: 'float64', device: 'cuda' })))) return 'the indices are not a permutation';
    return undefined;
  });
}

const CASES: Case[] = [
  {
    name: 'sort_1d', label: `gx.sort, 2^${Math.log2(SORT_NUMEL)} float32`, target: true,
    setup: () => [gx.rand([SORT_NUMEL], { device: 'cuda' })],
    run: ([x]) => { const r = gx.sort(x); return [r.values, r.indices]; },
    check: ([x]) => gx.tidy(() => { const r = gx.sort(x); return checkSorted(x, r.values, r.indices); }),
  },
  {
    name: 'sort_rows', label: `gx.sort, ${ROWS} x ${COLS} float32, axis -1`, target: true,
    setup: () => [gx.rand([ROWS, COLS], { device: 'cuda' })],
    run: ([x]) => { const r = gx.sort(x, -1); return [r.values, r.indices]; },
    check: ([x]) => gx.tidy(() => { const r = gx.sort(x, -1); return checkSorted(x, r.values, r.indices); }),
  },
  {
    name: 'topk', label: `gx.topk k=${TOPK_K}, ${TOPK_ROWS} x ${TOPK_COLS} float32`, target: true,
    setup: () => [gx.rand([TOPK_ROWS, TOPK_COLS], { device: 'cuda' })],
    run: ([x]) => { const r = gx.topk(x, TOPK_K); return [r.values, r.indices]; },
    check: ([x]) => gx.tidy(() => {
      const r = gx.topk(x, TOPK_K);
      const head = gx.narrow(x, 0, 0, 256);
      const want = gx.narrow(gx.sort(head, -1, { descending: true }).values, -1, 0, TOPK_K);
      if (!all(gx.eq(gx.narrow(r.values, 0, 0, 256), want))) return 'topk values differ from a sort\'s first k';
      if (!all(gx.eq(gx.gather(x, -1, r.indices), r.values))) return 'topk values differ from the input at the indices';
      return undefined;
    }),
  },
  {
    name: 'unique', label: `gx.unique (counts), 2^${Math.log2(UNIQUE_NUMEL)} int32 of 2^${Math.log2(UNIQUE_RANGE)}`, target: false,
    setup: () => [gx.randint(0, UNIQUE_RANGE, [UNIQUE_NUMEL], { dtype: 'int32', device: 'cuda' })],
    run: ([x]) => { const r = gx.unique(x, { returnCounts: true }); return [r.values, r.counts as gx.Tensor]; },
    check: ([x]) => gx.tidy(() => {
      const r = gx.unique(x, { returnCounts: true });
      if (gx.sum(r.counts as gx.Tensor).item() !== x.numel) return 'unique counts do not add up to the input size';
      const n = r.values.numel;
      if (!all(gx.lt(gx.narrow(r.values, 0, 0, n - 1), gx.narrow(r.values, 0, 1, n - 1)))) return 'unique values are not increasing';
      return undefined;
    }),
  },
  {
    name: 'searchsorted', label: `gx.searchsorted, 2^${Math.log2(SEARCH_NUMEL)} in 2^${Math.log2(SEARCH_SEQ)} float32`, target: false,
    setup: () => {
      const raw = gx.rand([SEARCH_SEQ], { device: 'cuda' });
      const seq = gx.sort(raw).values;
      raw.dispose();
      return [seq, gx.rand([SEARCH_NUMEL], { device: 'cuda' })];
    },
    run: ([seq, v]) => [gx.searchsorted(seq, v)],
    check: ([seq, v]) => gx.tidy(() => {
      const i = gx.searchsorted(seq, v);
      // seq[i - 1] < v <= seq[i] wherever both exist.
      const lo = gx.clamp(gx.sub(i, 1), 0, SEARCH_SEQ - 1), hi = gx.clamp(i, 0, SEARCH_SEQ - 1);
      const below = gx.logicalOr(gx.eq(i, 0), gx.lt(gx.take(seq, lo), v));
      const above = gx.logicalOr(gx.eq(i, SEARCH_SEQ), gx.ge(gx.take(seq, hi), v));
      return all(gx.logicalAnd(below, above)) ? undefined : 'searchsorted positions are wrong';
    }),
  },
];

function runTorch(): { ok: true; device: string; version: string; ms: Map<CaseName, number>; errors: string[] } | { ok: false; error: string } {
  const r = runPythonJson(TORCH_SCRIPT, ['--sort-numel', String(SORT_NUMEL), '--rows', String(ROWS), '--cols', String(COLS),
    '--topk-rows', String(TOPK_ROWS), '--topk-cols', String(TOPK_COLS), '--k', String(TOPK_K), '--unique-numel', String(UNIQUE_NUMEL),
    '--unique-range', String(UNIQUE_RANGE), '--search-seq', String(SEARCH_SEQ), '--search-numel', String(SEARCH_NUMEL),
    '--warmup', String(WARMUP), '--repeat', String(REPEAT)], 600_000);
  if (!r.ok) return r;
  const ms = new Map<CaseName, number>();
  const errors: string[] = [];
  const ops = r.o.ops;
  for (const c of CASES) {
    const e = isRecord(ops) ? ops[c.name] : undefined;
    const s = isRecord(e) ? numField(e, 'median_s') : undefined;
    if (s !== undefined) ms.set(c.name, s * 1e3);
    else errors.push(`torch ${c.name}: ${isRecord(e) ? strField(e, 'error') ?? 'no figure' : 'not run'}`);
  }
  return { ok: true, device: strField(r.o, 'device') ?? '?', version: strField(r.o, 'torch') ?? '?', ms, errors };
}

function main(): void {
  const cuda = gx.cuda.isAvailable();
  const live0 = liveCounts(cuda);
  printHeader('gpuext ordering op benchmarks (sort, topk, unique, searchsorted)', cuda);
  const summary: string[] = [];
  section(`GPU (median of ${REPEAT} after ${WARMUP} warmup; results allocated per call)`);
  if (!cuda) {
    console.log(`  skipped: CUDA not available: ${gx.cuda.unavailableReason()}`);
    summary.push('GPU figures: skipped, no GPU');
  } else {
    const ms = new Map<CaseName, number>();
    for (const c of CASES) {
      progress(`gpuext: ${c.label}`);
      const inputs = c.setup();
      try {
        const bad = c.check(inputs);
        if (bad !== undefined) problems.push(`${c.label}: ${bad}`);
        ms.set(c.name, timeCase(c, inputs) / 1e6);
      } catch (e) {
        problems.push(`${c.label}: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        for (const t of inputs) t.dispose();
      }
    }
    progress('torch: running bench/torch_sort.py');
    const torch = runTorch();
    if (!torch.ok) console.log(`  torch: n/a (${torch.error})`);
    else console.log(`  torch ${torch.version} on ${torch.device}`);
    const rows = CASES.map((c) => {
      const g = ms.get(c.name), tm = torch.ok ? torch.ms.get(c.name) : undefined;
      const r = g !== undefined && tm !== undefined ? g / tm : undefined;
      const verdict = !c.target ? '' : r === undefined ? 'n/a' : r <= TARGET ? 'met' : 'MISSED';
      summary.push(`${c.label}: ${fmt(g, 3)} ms vs torch ${fmt(tm, 3)} ms (${r === undefined ? 'n/a' : `${fmt(r, 2)}x torch's time`}` +
        `${c.target ? `; target <= ${TARGET}x: ${verdict}` : '; no target'})`);
      return [c.label, fmt(g, 3), fmt(tm, 3), r === undefined ? 'n/a' : `${fmt(r, 2)}x`, c.target ? `<= ${TARGET}x` : '-', verdict];
    });
    printTable(['op', 'gpuext ms', 'torch ms', 'gpuext / torch', 'target', ''], rows);
    if (torch.ok) for (const e of torch.errors) warnings.push(e);
  }
  checkLive(live0, cuda, warnings);
  section('summary');
  for (const s of summary) console.log(`  ${s}`);
  printIssues(warnings, problems);
}

runMain(main);
