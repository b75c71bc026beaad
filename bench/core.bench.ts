// Core benchmarks: import + first CUDA op, host<->device copy bandwidth,
// allocation latency from the caching allocator, CPU creation. Where python3
// with torch (and CUDA) is importable, the same work runs there in the same
// call (bench/torch_core.py) and the ratios are printed.
//
//   npm run bench            (tsc, then node dist/bench/core.bench.js)
//
// Timing: process.hrtime.bigint(); GPU work is synchronized inside the timed
// region; every figure is a median. GB/s = bytes / median seconds / 1e9.
// Without a GPU only the CPU section runs and the process exits 0.
import { spawnSync } from 'child_process';
import * as path from 'path';

import * as gx from '../lib';
import {
  MiB, REPO, PYTHON,
  nowNs, elapsedNs, median, perCallNs,
  fmt, ratio, printTable, printHeader, section, progress,
  isRecord, numField, strField, lastJsonLine, tail, childFailure,
  liveCounts, checkLive, printIssues, runMain,
  runPythonJson,
} from './util';

const LIB_ENTRY = path.resolve(__dirname, '..', 'lib', 'index.js'); // dist/lib/index.js
const TORCH_SCRIPT = path.join(REPO, 'bench', 'torch_core.py');

const IMPORT_RUNS = 5;
const COPY_MIB = [1, 16, 256];
const COPY_WARMUP = 3;
const COPY_REPEAT = 20;
const COPY_REPEAT_LARGE = 10; // for 64 MiB and more
const ALLOC_NUMEL = [256, 1 << 20, 64 << 20];
const ALLOC_ITERS = 10_000;
const ALLOC_BATCH = 100; // calls per timed batch; the median is over batches

// ---------------------------------------------------------------- helpers

/** Median nanoseconds of fn() after `warmup` untimed calls. */
function medianNs(fn: () => void, warmup: number, repeat: number): number {
  for (let i = 0; i < warmup; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = nowNs();
    fn();
    samples.push(elapsedNs(t0));
  }
  return median(samples);
}

async function medianNsAsync(fn: () => Promise<void>, warmup: number, repeat: number): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = nowNs();
    await fn();
    samples.push(elapsedNs(t0));
  }
  return median(samples);
}

function gbps(bytes: number, ns: number): number {
  return ns > 0 ? bytes / ns : NaN; // bytes/ns == GB/s
}

function sizeLabel(bytes: number): string {
  return bytes >= MiB ? `${bytes / MiB} MiB` : bytes >= 1024 ? `${bytes / 1024} KiB` : `${bytes} B`;
}

function numelLabel(n: number): string {
  if (n >= MiB && n % MiB === 0) return `${n / MiB} Mi`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} Ki`;
  return String(n);
}

// ---------------------------------------------------------------- 1. import + first CUDA op

interface ImportFigures {
  wallMs: number; // whole child process, measured by the parent
  totalMs?: number; // in the child: gx from process start (performance.now()), python from script start
  importMs?: number; // require / import alone
}
type ImportResult = { ok: true; fig: ImportFigures; runs: number } | { ok: false; error: string };

const GX_CHILD = [
  `const t0 = performance.now();`,
  `const gx = require(${JSON.stringify(LIB_ENTRY)});`,
  `const t1 = performance.now();`,
  `const a = gx.tensor([1, 2, 3], { device: 'cuda' });`,
  `const v = a.toArraySync();`,
  `a.dispose();`,
  `const t2 = performance.now();`,
  `if (v[0] !== 1 || v[2] !== 3) throw new Error('bad readback: ' + Array.from(v).join(','));`,
  `console.log(JSON.stringify({ totalMs: t2, importMs: t1 - t0 }));`,
].join('\n');

function pyChild(importLine: string, opLine: string): string {
  return [
    'import time, json',
    't0 = time.perf_counter()',
    importLine,
    't1 = time.perf_counter()',
    opLine,
    't2 = time.perf_counter()',
    'print(json.dumps({"totalMs": (t2 - t0) * 1e3, "importMs": (t1 - t0) * 1e3}))',
  ].join('\n');
}

const TORCH_CHILD = pyChild('import torch', 'torch.ones(3, device="cuda").cpu()');
const CUPY_CHILD = pyChild('import cupy', 'cupy.ones(3).get()');

/** Runs the child `runs` times (stopping at the first failure); medians of each figure. */
function timeChild(cmd: string, args: readonly string[], runs: number, what: string): ImportResult {
  const wall: number[] = [];
  const total: number[] = [];
  const imp: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = nowNs();
    const r = spawnSync(cmd, args, {
      encoding: 'utf8',
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
      timeout: 120_000,
      cwd: REPO,
    });
    const ms = elapsedNs(t0) / 1e6;
    if (r.error !== undefined || r.status !== 0) return { ok: false, error: childFailure(r, what) };
    const o = lastJsonLine(r.stdout);
    if (o === undefined) return { ok: false, error: `${what}: no JSON on stdout: ${tail(r.stdout)}` };
    wall.push(ms);
    const t = numField(o, 'totalMs');
    const m = numField(o, 'importMs');
    if (t !== undefined) total.push(t);
    if (m !== undefined) imp.push(m);
  }
  return {
    ok: true,
    runs,
    fig: {
      wallMs: median(wall),
      totalMs: total.length > 0 ? median(total) : undefined,
      importMs: imp.length > 0 ? median(imp) : undefined,
    },
  };
}

// ---------------------------------------------------------------- torch side

type CopyKind = 'h2d_pageable' | 'h2d_pinned' | 'd2h_pageable' | 'd2h_pinned' | 'd2h_cpu' | 'd2h_out' | 'h2d_new';

interface CopyRow {
  kind: CopyKind;
  bytes: number;
  ns: number;
}

interface TorchAlloc {
  numel: number;
  medianUs: number;
  deviceMallocsDelta?: number;
}

interface TorchResult {
  version: string;
  device: string;
  copy: Map<string, number>; // `${kind}/${bytes}` -> GB/s
  alloc: Map<number, TorchAlloc>;
}

function runTorch(): { ok: true; r: TorchResult } | { ok: false; error: string } {
  const args = [
    TORCH_SCRIPT,
    '--copy-mib', COPY_MIB.join(','),
    '--alloc-numel', ALLOC_NUMEL.join(','),
    '--warmup', String(COPY_WARMUP),
    '--repeat', String(COPY_REPEAT),
    '--repeat-large', String(COPY_REPEAT_LARGE),
    '--alloc-iters', String(ALLOC_ITERS),
    '--alloc-batch', String(ALLOC_BATCH),
  ];
  const run = runPythonJson(args[0], args.slice(1), 600_000);
  if (!run.ok) return run;
  const o = run.o;
  const copy = new Map<string, number>();
  const alloc = new Map<number, TorchAlloc>();
  const copies = o['copy'];
  if (Array.isArray(copies)) {
    for (const c of copies) {
      if (!isRecord(c)) continue;
      const kind = strField(c, 'kind');
      const bytes = numField(c, 'bytes');
      const g = numField(c, 'gbps');
      if (kind !== undefined && bytes !== undefined && g !== undefined) copy.set(`${kind}/${bytes}`, g);
    }
  }
  const allocs = o['alloc'];
  if (Array.isArray(allocs)) {
    for (const a of allocs) {
      if (!isRecord(a)) continue;
      const numel = numField(a, 'numel');
      const us = numField(a, 'median_us');
      if (numel !== undefined && us !== undefined) {
        alloc.set(numel, { numel, medianUs: us, deviceMallocsDelta: numField(a, 'device_mallocs_delta') });
      }
    }
  }
  return { ok: true, r: { version: strField(o, 'torch') ?? '?', device: strField(o, 'device') ?? '?', copy, alloc } };
}

// ---------------------------------------------------------------- 2. copies (gpuext)

const COPY_LABEL: Record<CopyKind, { name: string; gx: string; torch: string }> = {
  h2d_pageable: { name: 'H2D pageable', gx: 'cudaDst.copy_(cpuSrc)', torch: 'dst.copy_(src)' },
  h2d_pinned: { name: 'H2D pinned', gx: 'cudaDst.copy_(pinnedSrc)', torch: 'dst.copy_(pinnedSrc)' },
  d2h_pageable: { name: 'D2H pageable', gx: 'cpuDst.copy_(cudaSrc)', torch: 'dst.copy_(src)' },
  d2h_pinned: { name: 'D2H pinned', gx: 'pinnedDst.copy_(cudaSrc)', torch: 'pinnedDst.copy_(src)' },
  d2h_cpu: { name: 'D2H toArray', gx: 'await cudaSrc.toArray()', torch: 'src.cpu()' },
  d2h_out: { name: 'D2H toArray out', gx: 'await cudaSrc.toArray({ out })', torch: 'dst.copy_(src) (pageable)' },
  h2d_new: { name: 'H2D new tensor', gx: "gx.tensor(f32, {device:'cuda'})", torch: "src.to('cuda')" },
};
const COPY_ORDER: readonly CopyKind[] = ['h2d_pageable', 'h2d_pinned', 'd2h_pageable', 'd2h_pinned', 'd2h_cpu', 'd2h_out', 'h2d_new'];
// The torch row each gpuext row is set against (toArray into an existing array: torch's copy into a pageable tensor).
const TORCH_KIND: Partial<Record<CopyKind, CopyKind>> = { d2h_out: 'd2h_pageable' };

// problems: wrong data or a failed child (exit 1); warnings: figures off expectation (exit 0).
const problems: string[] = [];
const warnings: string[] = [];

function expectValue(what: string, values: Float32Array, want: number): void {
  const n = values.length;
  if (n === 0 || values[0] !== want || values[n >> 1] !== want || values[n - 1] !== want) {
    problems.push(`${what}: expected every element ${want}, got [${values[0]}, ..., ${values[n - 1]}]`);
  }
}

async function benchCopies(): Promise<CopyRow[]> {
  const rows: CopyRow[] = [];
  const sync = (): void => gx.cuda.synchronize();
  for (const mib of COPY_MIB) {
    progress(`gpuext: copies of ${mib} MiB`);
    const bytes = mib * MiB;
    const n = bytes / 4;
    const repeat = mib >= 64 ? COPY_REPEAT_LARGE : COPY_REPEAT;
    const data = new Float32Array(n).fill(1.5);
    const made: gx.Tensor[] = [];
    const keep = <T extends gx.Tensor>(t: T): T => {
      made.push(t);
      return t;
    };
    try {
      const cpuSrc = keep(gx.tensor(data)); // pageable host
      const pinnedSrc = keep(gx.empty([n], { pinned: true }).fill_(1.5));
      const cpuDst = keep(gx.empty([n]).fill_(0)); // fill: touch the pages before timing
      const pinnedDst = keep(gx.empty([n], { pinned: true }).fill_(0));
      const cudaSrc = keep(gx.empty([n], { device: 'cuda' }).fill_(2.5));
      const cudaDst = keep(gx.empty([n], { device: 'cuda' }));
      sync();

      const add = (kind: CopyKind, ns: number): void => {
        rows.push({ kind, bytes, ns });
      };
      add('h2d_pageable', medianNs(() => { cudaDst.copy_(cpuSrc); sync(); }, COPY_WARMUP, repeat));
      add('h2d_pinned', medianNs(() => { cudaDst.copy_(pinnedSrc); sync(); }, COPY_WARMUP, repeat));
      expectValue(`H2D ${mib} MiB`, cudaDst.toArraySync(), 1.5);
      add('d2h_pageable', medianNs(() => { cpuDst.copy_(cudaSrc); sync(); }, COPY_WARMUP, repeat));
      expectValue(`D2H pageable ${mib} MiB`, cpuDst.toArraySync(), 2.5);
      add('d2h_pinned', medianNs(() => { pinnedDst.copy_(cudaSrc); sync(); }, COPY_WARMUP, repeat));
      expectValue(`D2H pinned ${mib} MiB`, pinnedDst.toArraySync(), 2.5);
      let last: Float32Array | undefined;
      add('d2h_cpu', await medianNsAsync(async () => { last = await cudaSrc.toArray(); }, COPY_WARMUP, repeat));
      if (last !== undefined) expectValue(`toArray ${mib} MiB`, last, 2.5);
      last = undefined;
      const out = new Float32Array(n);
      add('d2h_out', await medianNsAsync(async () => { await cudaSrc.toArray({ out }); }, COPY_WARMUP, repeat));
      expectValue(`toArray({ out }) ${mib} MiB`, out, 2.5);
      // Allocation + copy from a JS typed array; the result is disposed outside the timed region.
      {
        const samples: number[] = [];
        for (let i = 0; i < COPY_WARMUP + repeat; i++) {
          const t0 = nowNs();
          const t = gx.tensor(data, { device: 'cuda' });
          sync();
          const ns = elapsedNs(t0);
          t.dispose();
          if (i >= COPY_WARMUP) samples.push(ns);
        }
        add('h2d_new', median(samples));
      }
    } finally {
      for (const t of made) t.dispose();
    }
  }
  return rows;
}

// ---------------------------------------------------------------- 3. allocation from the cache (gpuext)

interface AllocRow {
  numel: number;
  us: number;
  mallocsBefore: number;
  mallocsAfter: number;
  cacheHits: number;
  iters: number;
}

function benchAlloc(): AllocRow[] {
  const rows: AllocRow[] = [];
  for (const n of ALLOC_NUMEL) {
    progress(`gpuext: allocation of ${n} float32`);
    gx.empty([n], { device: 'cuda' }).dispose(); // warm the cache with this size
    const shape = [n];
    const opts = { device: 'cuda' } as const;
    const before = gx.memory.stats('cuda');
    const ns = perCallNs(() => gx.empty(shape, opts).dispose(), ALLOC_ITERS, ALLOC_BATCH);
    const after = gx.memory.stats('cuda');
    rows.push({
      numel: n,
      us: ns / 1e3,
      mallocsBefore: before.numDeviceMallocs,
      mallocsAfter: after.numDeviceMallocs,
      cacheHits: after.numCacheHits - before.numCacheHits,
      iters: Math.floor(ALLOC_ITERS / ALLOC_BATCH) * ALLOC_BATCH,
    });
  }
  return rows;
}

// ---------------------------------------------------------------- 4. CPU

interface CpuFigures {
  tensorFromF32Us: number;
  sliceUs: number; // the same 4 MB copied by JS, for scale
  emptyDisposeUs: number;
}

function benchCpu(): CpuFigures {
  const n = 1_000_000;
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = i;
  const samples: number[] = [];
  for (let i = 0; i < 5 + 50; i++) {
    const t0 = nowNs();
    const t = gx.tensor(data);
    const ns = elapsedNs(t0);
    t.dispose();
    if (i >= 5) samples.push(ns);
  }
  const sliceSamples: number[] = [];
  let sink = 0;
  for (let i = 0; i < 5 + 50; i++) {
    const t0 = nowNs();
    const c = data.slice();
    const ns = elapsedNs(t0);
    sink += c[n - 1];
    if (i >= 5) sliceSamples.push(ns);
  }
  if (sink !== 55 * (n - 1)) problems.push('Float32Array.slice baseline: wrong data');
  const check = gx.tensor(data);
  try {
    const v = check.toArraySync();
    if (v[n - 1] !== n - 1) problems.push(`gx.tensor(Float32Array(1e6)): last element ${v[n - 1]}, expected ${n - 1}`);
  } finally {
    check.dispose();
  }
  const shape = [n];
  gx.empty(shape).dispose();
  const emptyNs = perCallNs(() => gx.empty(shape).dispose(), 10_000, 100);
  return { tensorFromF32Us: median(samples) / 1e3, sliceUs: median(sliceSamples) / 1e3, emptyDisposeUs: emptyNs / 1e3 };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const summary: string[] = [];
  const cuda = gx.cuda.isAvailable();
  const live0 = liveCounts(cuda);

  printHeader('gpuext core benchmarks', cuda);

  // 4. CPU (always)
  section('CPU');
  progress('gpuext: CPU section');
  const cpu = benchCpu();
  printTable(['operation', 'median us', 'GB/s'], [
    ['gx.tensor(Float32Array(1e6))', fmt(cpu.tensorFromF32Us), fmt(gbps(4e6, cpu.tensorFromF32Us * 1e3))],
    ['  baseline: Float32Array.slice()', fmt(cpu.sliceUs), fmt(gbps(4e6, cpu.sliceUs * 1e3))],
    ['gx.empty([1e6]) + dispose()', fmt(cpu.emptyDisposeUs), ''],
  ]);
  const cpuSummary = [
    `CPU gx.tensor(Float32Array(1e6)): ${fmt(cpu.tensorFromF32Us)} us`,
    `CPU gx.empty([1e6]) + dispose: ${fmt(cpu.emptyDisposeUs)} us`,
  ];

  if (!cuda) {
    console.log(`\nCUDA not available: ${gx.cuda.unavailableReason()}; GPU sections skipped`);
  } else {
    // 1. import + first CUDA op, in fresh processes
    section(`import + first CUDA op (fresh process, median of ${IMPORT_RUNS})`);
    progress('import timing: gpuext');
    const gxImp = timeChild(process.execPath, ['-e', GX_CHILD], IMPORT_RUNS, 'node -e require(gpuext)');
    progress('import timing: torch');
    const torchImp = timeChild(PYTHON, ['-c', TORCH_CHILD], IMPORT_RUNS, `${PYTHON} -c 'import torch'`);
    progress('import timing: cupy');
    const cupyImp = timeChild(PYTHON, ['-c', CUPY_CHILD], IMPORT_RUNS, `${PYTHON} -c 'import cupy'`);
    const impNotes: string[] = [];
    const impRow = (name: string, r: ImportResult, inChild: string): string[] => {
      if (r.ok) return [name, fmt(r.fig.wallMs, 0), fmt(r.fig.totalMs, 0), fmt(r.fig.importMs, 0), inChild];
      impNotes.push(`${name}: ${r.error}`);
      return [name, 'n/a', 'n/a', 'n/a', 'skipped (below)'];
    };
    printTable(['', 'child wall ms', 'in-child ms', 'require/import ms', 'in-child clock'], [
      impRow('gpuext', gxImp, 'from process start'),
      impRow('torch', torchImp, 'from script start'),
      impRow('cupy', cupyImp, 'from script start'),
    ]);
    console.log("  gpuext: node -e: require(dist/lib) + gx.tensor([1,2,3],{device:'cuda'}).toArraySync()");
    console.log(`  torch:  ${PYTHON} -c: import torch; torch.ones(3, device='cuda').cpu()`);
    console.log(`  cupy:   ${PYTHON} -c: import cupy; cupy.ones(3).get()`);
    console.log('  child wall: spawn to exit, measured by the parent (same method for every row)');
    for (const n of impNotes) console.log(`  skipped: ${n}`);
    if (gxImp.ok) {
      const t = gxImp.fig.totalMs;
      const verdict = t === undefined ? 'n/a' : t <= 500 ? 'met' : 'MISSED';
      const vs = torchImp.ok
        ? `wall ${fmt(gxImp.fig.wallMs, 0)} ms vs torch ${fmt(torchImp.fig.wallMs, 0)} ms, ${ratio(torchImp.fig.wallMs, gxImp.fig.wallMs)} faster`
        : `wall ${fmt(gxImp.fig.wallMs, 0)} ms; torch n/a`;
      summary.unshift(`import+first CUDA op: ${fmt(t, 0)} ms from process start (target <= 500 ms: ${verdict}; ${vs})`);
    } else {
      problems.push(gxImp.error);
      summary.unshift(`import+first CUDA op: failed (${gxImp.error})`);
    }

    // 2 and 3, gpuext first, then torch in its own process
    const copies = await benchCopies();
    const allocs = benchAlloc();
    gx.memory.emptyCache(); // hand cached device and pinned memory back before torch runs
    progress(`torch: ${PYTHON} bench/torch_core.py`);
    const torch = runTorch();
    const torchNote = torch.ok ? `torch ${torch.r.version} on ${torch.r.device}` : `torch comparison skipped: ${torch.error}`;

    section('copy bandwidth, float32 (gpuext vs torch, same run)');
    console.log(`  ${torchNote}`);
    console.log(`  warmup ${COPY_WARMUP}, repeat ${COPY_REPEAT} (${COPY_REPEAT_LARGE} for >= 64 MiB)`);
    const copyRows: string[][] = [];
    const tGbps = (kind: CopyKind, bytes: number): number | undefined =>
      torch.ok ? torch.r.copy.get(`${TORCH_KIND[kind] ?? kind}/${bytes}`) : undefined;
    for (const kind of COPY_ORDER) {
      for (const row of copies.filter((c) => c.kind === kind)) {
        const g = gbps(row.bytes, row.ns);
        const t = tGbps(kind, row.bytes);
        copyRows.push([COPY_LABEL[kind].name, sizeLabel(row.bytes), fmt(row.ns / 1e6, 3), fmt(g), fmt(t), ratio(g, t)]);
      }
    }
    printTable(['copy', 'size', 'gpuext ms', 'gpuext GB/s', 'torch GB/s', 'gpuext/torch'], copyRows);
    console.log('  what each row times:');
    for (const kind of COPY_ORDER) {
      console.log(`    ${COPY_LABEL[kind].name.padEnd(15)} gpuext ${COPY_LABEL[kind].gx.padEnd(34)} torch ${COPY_LABEL[kind].torch}`);
    }
    const big = COPY_MIB[COPY_MIB.length - 1] * MiB;
    for (const kind of COPY_ORDER) {
      const row = copies.find((c) => c.kind === kind && c.bytes === big);
      if (row === undefined) continue;
      const g = gbps(row.bytes, row.ns);
      const t = tGbps(kind, row.bytes);
      const label = `${COPY_LABEL[kind].name} ${sizeLabel(big).replace(' ', '')}`;
      summary.push(`${label}: ${fmt(g)} GB/s (${t === undefined ? 'torch n/a' : `torch ${fmt(t)} GB/s, ${ratio(g, t)}`})`);
    }

    section(`allocation from the cache: gx.empty([n], {device:'cuda'}).dispose() (${ALLOC_ITERS} calls, median of batches of ${ALLOC_BATCH})`);
    console.log(`  ${torchNote}`);
    const allocRows: string[][] = [];
    for (const a of allocs) {
      const t = torch.ok ? torch.r.alloc.get(a.numel) : undefined;
      const delta = a.mallocsAfter - a.mallocsBefore;
      if (delta !== 0) warnings.push(`allocation of ${a.numel} float32: numDeviceMallocs grew by ${delta} in the timed loop`);
      allocRows.push([
        `${numelLabel(a.numel)} float32`,
        sizeLabel(a.numel * 4),
        fmt(a.us, 3),
        `${a.mallocsBefore} -> ${a.mallocsAfter} (delta ${delta})`,
        String(a.cacheHits),
        fmt(t?.medianUs, 3),
        t?.deviceMallocsDelta === undefined ? 'n/a' : String(t.deviceMallocsDelta),
        ratio(a.us, t?.medianUs),
      ]);
      summary.push(
        `alloc from cache ${numelLabel(a.numel)} float32: ${fmt(a.us, 3)} us, cudaMalloc delta ${delta} ` +
          `(${t === undefined ? 'torch n/a' : `torch ${fmt(t.medianUs, 3)} us, ${ratio(a.us, t.medianUs)} of torch's time`})`,
      );
    }
    printTable(['n', 'bytes', 'gpuext us/call', 'numDeviceMallocs', 'cache hits', 'torch us/call', 'torch mallocs delta', 'gpuext/torch time'], allocRows);
    console.log('  no synchronize in this loop: allocation does no GPU work (torch: torch.empty(n, device="cuda"); del)');
  }

  // Everything created here was disposed: the live counts must be back where they started.
  const live1 = checkLive(live0, cuda, warnings);

  section('summary');
  for (const s of [...summary, ...cpuSummary]) console.log(`  ${s}`);
  console.log(`  live tensors at exit: cpu ${live1.cpu}${cuda ? `, cuda ${live1.cuda}` : ''} (start: cpu ${live0.cpu}${cuda ? `, cuda ${live0.cuda}` : ''})`);
  printIssues(warnings, problems);
}

runMain(main);
