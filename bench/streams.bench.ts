// Stream and graph benchmarks (issue 6): do two kernels on two streams
// overlap, and what does a kernel cost when replayed from a CUDA graph. The
// kernels are built here with gx.loadInline; CuPy's graph figure comes from
// bench/cupy_graph.py in the same call when python3 has cupy.
//
//   npm run bench:streams    (tsc, then node dist/bench/streams.bench.js)
//
// Timing: gx.benchmark (timing events on the current stream around each run,
// the end event waited for; host time inside the run); medians throughout.
// Without a GPU it prints a skip line and exits 0.
import * as path from 'path';

import * as gx from '../lib';
import { benchmark, type BenchmarkResult } from '../lib/profiler/benchmark';
import {
  REPO, PYTHON,
  fmt, ratio, printTable, printHeader, section, progress,
  numField, numArrayField, strField,
  liveCounts, checkLive, printIssues, runMain,
  runPythonJson,
} from './util';

const CUPY_SCRIPT = path.join(REPO, 'bench', 'cupy_graph.py');

// Two streams: each kernel spins this many SM clock cycles (about 2 ms at
// 1.7-2 GHz), so launch costs of a few microseconds do not blur the ratio.
const SPIN_CYCLES = 4_000_000;
const OVERLAP_WARMUP = 3;
const OVERLAP_REPEAT = 20;
const OVERLAP_TARGET = 1.2;

// Graphs: K tiny kernels per graph, R replays per timed run.
const GRAPH_KERNELS = 100;
const GRAPH_REPLAYS = 200;
const GRAPH_WARMUP = 3;
const GRAPH_REPEAT = 20;
const PLACEMENTS = 12;
const PLACEMENT_FLOATS = 16 << 20;
const EAGER_ROUNDS = 20; // rounds of K eager launches per timed run
const GRAPH_TARGET_US = 1.5;
const CUPY_ANCHOR_US = 1.03; // CuPy's graph replay per kernel on the H100 (issue 6)

const SRC = `
namespace {

// Every thread busy-waits \`cycles\` SM clock cycles; thread 0 of each block
// writes the cycles it saw to out[block].
__global__ void spin_kernel(long long cycles, int64_t* out) {
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int64_t>(now - start);
}

__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

void spin(const gx::Tensor& out, int64_t cycles, int64_t blocks) {
  GX_CHECK(out.dtype() == gx::kInt64 && out.is_contiguous(), "out must be a contiguous int64 tensor");
  GX_CHECK(blocks >= 1 && blocks <= out.numel(), "blocks must be in [1, out.numel()], got ", blocks);
  GX_CHECK(cycles >= 0, "cycles must be >= 0, got ", cycles);
  spin_kernel<<<static_cast<unsigned>(blocks), 32, 0, gx::current_stream()>>>(static_cast<long long>(cycles),
                                                                             out.data_ptr<int64_t>());
  GX_CHECK_LAUNCH();
}

// c = a + b into an existing tensor: no allocation, so it captures as one kernel node.
void add_out(const gx::Tensor& a, const gx::Tensor& b, const gx::Tensor& c) {
  GX_CHECK(a.numel() == b.numel() && a.numel() == c.numel(), "sizes differ");
  const int64_t n = c.numel();
  add_kernel<<<gx::blocks(n, 32), 32, 0, gx::current_stream()>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                                 c.data_ptr<float>(), n);
  GX_CHECK_LAUNCH();
}

}  // namespace

GX_LIBRARY(bench_streams, m) {
  m.def("spin(Tensor out, int cycles, int blocks) -> ()", "Busy-waits cycles clock cycles in each block.")
      .impl(gx::kCUDA, spin);
  m.def("add_out(Tensor a, Tensor b, Tensor c) -> ()", "c = a + b (float32) into c.").impl(gx::kCUDA, add_out);
}
`;

// The m.def() schemas above: gx.loadInline types the ops from them and checks them against the build.
const SCHEMAS = ['spin(Tensor out, int cycles, int blocks) -> ()', 'add_out(Tensor a, Tensor b, Tensor c) -> ()'] as const;
type BenchOps = gx.OpsOf<typeof SCHEMAS>;

const warnings: string[] = [];
const problems: string[] = [];

function gpuMedian(r: BenchmarkResult): number {
  return r.gpu?.median ?? NaN;
}

function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'n/a' : ok ? 'met' : 'MISSED';
}

// ---------------------------------------------------------------- 1. two streams overlap

interface OverlapFigures {
  blocks: number;
  one: BenchmarkResult;
  sameStream: BenchmarkResult;
  twoStreams: BenchmarkResult;
}

function benchOverlap(ops: BenchOps): OverlapFigures {
  const sms = gx.cuda.getDeviceProperties().multiProcessorCount;
  const blocks = Math.max(1, Math.floor(sms / 2));
  const cur = gx.cuda.currentStream();
  const s1 = new gx.Stream({ nonBlocking: true });
  const s2 = new gx.Stream({ nonBlocking: true });
  const o1 = gx.zeros([blocks], { dtype: 'int64', device: 'cuda' });
  const o2 = gx.zeros([blocks], { dtype: 'int64', device: 'cuda' });
  try {
    cur.synchronize(); // the zero fills are done before the side streams write
    // Each run: the side streams start after what the current stream holds
    // (the start event), and the current stream waits for them at the end, so
    // the events gx.benchmark records on it span all the work.
    const onStreams = (launches: readonly (readonly [gx.Stream, gx.Tensor])[]): (() => void) => () => {
      for (const [s] of launches) s.waitStream(cur);
      for (const [s, out] of launches) gx.withStream(s, () => ops.spin(out, SPIN_CYCLES, blocks));
      for (const [s] of launches) cur.waitStream(s);
    };
    const opts = (name: string): { nWarmup: number; nRepeat: number; name: string } =>
      ({ nWarmup: OVERLAP_WARMUP, nRepeat: OVERLAP_REPEAT, name });
    progress(`two streams: spin ${SPIN_CYCLES} cycles x ${blocks} blocks (${sms} SMs)`);
    const one = benchmark(onStreams([[s1, o1]]), opts('one kernel'));
    const sameStream = benchmark(onStreams([[s1, o1], [s1, o1]]), opts('two, one stream'));
    const twoStreams = benchmark(onStreams([[s1, o1], [s2, o2]]), opts('two, two streams'));
    cur.synchronize();
    for (const [name, out] of [['s1', o1], ['s2', o2]] as const) {
      const seen = out.toArraySync();
      for (let i = 0; i < seen.length; i++) {
        if (seen[i] < BigInt(SPIN_CYCLES)) {
          problems.push(`spin kernel on ${name}: block ${i} reports ${seen[i]} cycles, expected >= ${SPIN_CYCLES}`);
          break;
        }
      }
    }
    return { blocks, one, sameStream, twoStreams };
  } finally {
    cur.synchronize();
    o1.dispose();
    o2.dispose();
  }
}

// ---------------------------------------------------------------- 2. graph replay

interface GraphFigures {
  replay: BenchmarkResult; // one run = GRAPH_REPLAYS replays of GRAPH_KERNELS kernels, on a non-blocking stream
  eager: BenchmarkResult; // one run = EAGER_ROUNDS * GRAPH_KERNELS eager launches
  gpuUsPerKernel: number;
  cpuUsPerReplay: number;
  /** The same replays on the default current stream (a blocking one). */
  defaultStreamGpuUsPerKernel: number;
  nodes: number;
  eagerGpuUsPerKernel: number;
  eagerCpuUsPerLaunch: number;
  keptAllocations: number;
  /** The same replay with the built-in gx.add and with a RawKernel (NOTE [ Graph replay by kernel kind ]). */
  kinds: { builtin: number; rawKernel: number; placements: number[] };
}

// NOTE [ Graph replay by kernel kind ]: the same one-element add captured three
// ways in one process, so the comparison with CuPy does not hang on one
// compiler or launch path: the extension op (nvcc, launched through the
// runtime), the built-in gx.add into an out= tensor (nvcc, the ops library's
// tail kernel) and a RawKernel of CuPy's very source (NVRTC, cuLaunchKernel).
function replayUsPerKernel(launch: () => void, name: string): number {
  const cur = gx.cuda.currentStream();
  launch(); // loads the kernel before capture
  cur.synchronize();
  const g = gx.cuda.graph(() => {
    for (let k = 0; k < GRAPH_KERNELS; k++) launch();
  });
  const s = new gx.Stream({ nonBlocking: true });
  try {
    s.waitStream(cur);
    const r = gx.withStream(s, () => benchmark(() => {
      for (let i = 0; i < GRAPH_REPLAYS; i++) g.replay(s);
    }, { nWarmup: GRAPH_WARMUP, nRepeat: GRAPH_REPEAT, name }));
    s.synchronize();
    if (g.nodes !== GRAPH_KERNELS) problems.push(`graph (${name}): ${g.nodes} nodes captured, expected ${GRAPH_KERNELS}`);
    return (gpuMedian(r) * 1e3) / (GRAPH_REPLAYS * GRAPH_KERNELS);
  } finally {
    g.dispose();
  }
}

/**
 * Offsets (in floats) of a, b and c for placement `p` in a buffer of
 * PLACEMENT_FLOATS: the same generator as bench/cupy_graph.py's placements(),
 * so both sides place their operands at the same offsets.
 */
function placementOffsets(count: number): number[][] {
  let seed = 12345;
  const next = (): number => {
    seed = (seed * 48271) % 2147483647; // MINSTD: exact in doubles
    return (seed % (PLACEMENT_FLOATS / 64)) * 64;
  };
  return Array.from({ length: count }, () => [next(), next(), next()]);
}

/**
 * NOTE [ Graph replay over placements ]: a one-element kernel's time in a
 * graph is mostly the latency of its loads and store, and that depends on
 * where the operands sit (on the H200, 0.80 to 0.90 us per kernel for the
 * same kernel at different offsets of one buffer, in CuPy and in gpuext
 * alike). One placement per side compares address luck, so both sides
 * replay the kernel at PLACEMENTS offsets of a 64 MiB buffer and compare
 * the medians.
 */
function replayKinds(a: gx.Tensor, b: gx.Tensor, c: gx.Tensor): GraphFigures['kinds'] {
  const raw = new gx.RawKernel(CUPY_ADD_SRC, 'add1');
  const builtin = replayUsPerKernel(() => { gx.add(a, b, { out: c }); }, 'graph of gx.add(a, b, { out: c })');
  const rawKernel = replayUsPerKernel(() => raw.launch([1], [32], [a, b, c, 1]), 'graph of RawKernel add1');
  const buf = gx.zeros([PLACEMENT_FLOATS], { device: 'cuda' });
  try {
    const placements = placementOffsets(PLACEMENTS).map(([oa, ob, oc]) => {
      const views = [oa, ob, oc].map((o) => buf.narrow(0, o, 1));
      try {
        return replayUsPerKernel(() => raw.launch([1], [32], [...views, 1]), `graph of RawKernel add1 at ${oa}, ${ob}, ${oc}`);
      } finally {
        for (const v of views) v.dispose();
      }
    });
    return { builtin, rawKernel, placements };
  } finally {
    buf.dispose();
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** bench/cupy_graph.py's kernel, character for character. */
const CUPY_ADD_SRC = `
extern "C" __global__ void add1(const float* a, const float* b, float* c, long long n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
`;

function benchGraph(ops: BenchOps): GraphFigures {
  const cur = gx.cuda.currentStream();
  const a = gx.full([1], 1, { device: 'cuda' });
  const b = gx.full([1], 2, { device: 'cuda' });
  const c = gx.full([1], Number.NaN, { device: 'cuda' });
  let g: gx.CUDAGraph | undefined;
  try {
    ops.addOut(a, b, c); // loads the kernel before capture
    cur.synchronize();
    c.fill_(Number.NaN);
    progress(`graph: capturing ${GRAPH_KERNELS} launches`);
    g = gx.cuda.graph(() => {
      for (let k = 0; k < GRAPH_KERNELS; k++) ops.addOut(a, b, c);
    });
    const graph = g;
    const before = c.toArraySync()[0];
    if (!Number.isNaN(before)) problems.push(`graph: c = ${before} after capture, expected NaN (nothing runs during capture)`);
    graph.replay(cur);
    const after = c.toArraySync()[0];
    if (after !== 3) problems.push(`graph: c = ${after} after replay, expected 3`);

    if (graph.nodes !== GRAPH_KERNELS) problems.push(`graph: ${graph.nodes} nodes captured, expected ${GRAPH_KERNELS} (one per kernel)`);

    // NOTE [ Graph replay measured as CuPy's ]: bench/cupy_graph.py replays on a non-blocking stream, the
    // timing events on that stream, R replays between them; so does this (gx.benchmark records on the
    // current stream, made the non-blocking one here). The default current stream is a blocking one
    // (cudaStreamDefault), measured beside it.
    const nonBlocking = new gx.Stream({ nonBlocking: true });
    nonBlocking.waitStream(cur);
    progress(`graph: ${GRAPH_REPEAT} runs of ${GRAPH_REPLAYS} replays on a non-blocking stream`);
    const replay = gx.withStream(nonBlocking, () => benchmark(() => {
      for (let r = 0; r < GRAPH_REPLAYS; r++) graph.replay(nonBlocking);
    }, { nWarmup: GRAPH_WARMUP, nRepeat: GRAPH_REPEAT, name: `graph x${GRAPH_REPLAYS}, non-blocking stream` }));
    nonBlocking.synchronize();
    progress(`graph: ${GRAPH_REPEAT} runs of ${GRAPH_REPLAYS} replays on the default current stream`);
    const onDefault = benchmark(() => {
      for (let r = 0; r < GRAPH_REPLAYS; r++) graph.replay(cur);
    }, { nWarmup: GRAPH_WARMUP, nRepeat: GRAPH_REPEAT, name: `graph x${GRAPH_REPLAYS}, default stream` });
    progress(`graph: eager, ${GRAPH_REPEAT} runs of ${EAGER_ROUNDS * GRAPH_KERNELS} launches`);
    const eager = benchmark(() => {
      for (let r = 0; r < EAGER_ROUNDS * GRAPH_KERNELS; r++) ops.addOut(a, b, c);
    }, { nWarmup: GRAPH_WARMUP, nRepeat: GRAPH_REPEAT, name: `eager x${EAGER_ROUNDS * GRAPH_KERNELS}` });
    const eagerLaunches = EAGER_ROUNDS * GRAPH_KERNELS;
    const kinds = replayKinds(a, b, c);
    return {
      kinds,
      replay,
      eager,
      gpuUsPerKernel: (gpuMedian(replay) * 1e3) / (GRAPH_REPLAYS * GRAPH_KERNELS),
      cpuUsPerReplay: (replay.cpu.median * 1e3) / GRAPH_REPLAYS,
      defaultStreamGpuUsPerKernel: (gpuMedian(onDefault) * 1e3) / (GRAPH_REPLAYS * GRAPH_KERNELS),
      nodes: graph.nodes,
      eagerGpuUsPerKernel: (gpuMedian(eager) * 1e3) / eagerLaunches,
      eagerCpuUsPerLaunch: (eager.cpu.median * 1e3) / eagerLaunches,
      keptAllocations: graph.keptAllocations,
    };
  } finally {
    cur.synchronize();
    g?.dispose();
    a.dispose();
    b.dispose();
    c.dispose();
  }
}

// ---------------------------------------------------------------- CuPy

interface CupyFigures {
  version: string;
  device: string;
  gpuUsPerKernel?: number;
  cpuUsPerReplay?: number;
  eagerGpuUsPerKernel?: number;
  eagerCpuUsPerLaunch?: number;
  placements?: number[];
}

type CupyRun = { ok: true; r: CupyFigures; runs?: [CupyFigures, CupyFigures] } | { ok: false; error: string };

/** The figures of two CuPy runs averaged, field by field (placements element by element); one run when the other failed. */
function meanOfRuns(a: CupyRun, b: CupyRun): CupyRun {
  if (!a.ok || !b.ok) return a.ok ? a : b;
  const mean = (x: number | undefined, y: number | undefined): number | undefined => (x === undefined || y === undefined ? undefined : (x + y) / 2);
  const p = a.r.placements, q = b.r.placements;
  return {
    ok: true,
    runs: [a.r, b.r],
    r: {
      version: a.r.version,
      device: a.r.device,
      gpuUsPerKernel: mean(a.r.gpuUsPerKernel, b.r.gpuUsPerKernel),
      cpuUsPerReplay: mean(a.r.cpuUsPerReplay, b.r.cpuUsPerReplay),
      eagerGpuUsPerKernel: mean(a.r.eagerGpuUsPerKernel, b.r.eagerGpuUsPerKernel),
      eagerCpuUsPerLaunch: mean(a.r.eagerCpuUsPerLaunch, b.r.eagerCpuUsPerLaunch),
      placements: p === undefined || q === undefined || p.length !== q.length ? undefined : p.map((x, i) => (x + q[i]) / 2),
    },
  };
}

function runCupy(): CupyRun {
  const args = [
    CUPY_SCRIPT,
    '--kernels', String(GRAPH_KERNELS),
    '--replays', String(GRAPH_REPLAYS),
    '--samples', String(GRAPH_REPEAT),
    '--eager-rounds', String(EAGER_ROUNDS),
    '--placements', String(PLACEMENTS),
  ];
  const run = runPythonJson(args[0], args.slice(1), 300_000);
  if (!run.ok) return run;
  const o = run.o;
  return {
    ok: true,
    r: {
      version: strField(o, 'cupy') ?? '?',
      device: strField(o, 'device') ?? '?',
      gpuUsPerKernel: numField(o, 'graph_gpu_us_per_kernel'),
      cpuUsPerReplay: numField(o, 'graph_cpu_us_per_replay'),
      eagerGpuUsPerKernel: numField(o, 'eager_gpu_us_per_kernel'),
      eagerCpuUsPerLaunch: numField(o, 'eager_cpu_us_per_launch'),
      placements: numArrayField(o, 'placements_gpu_us_per_kernel'),
    },
  };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const summary: string[] = [];
  const cuda = gx.cuda.isAvailable();
  printHeader('gpuext stream and graph benchmarks', cuda);
  if (!cuda) {
    console.log(`\nCUDA not available: ${gx.cuda.unavailableReason()}; stream and graph benchmarks skipped`);
    return;
  }
  const live0 = liveCounts(cuda);

  progress('building the benchmark kernels (gx.loadInline)');
  let ops: BenchOps;
  try {
    ops = await gx.loadInline({ name: 'bench_streams', cuda: SRC, schemas: SCHEMAS });
  } catch (err) {
    problems.push(`gx.loadInline of the benchmark kernels failed: ${err instanceof Error ? err.message : String(err)}`);
    printIssues(warnings, problems);
    return;
  }

  // 1. graph replay, before the spin kernels of the overlap test. NOTE [ Graph replay in turn with CuPy ]: CuPy
  // runs before gpuext's replays and again after them, and gpuext is compared with the mean of its two runs, so
  // a drift of the GPU's speed over the process (the two sides differed by 0.6-1.1%, CuPy measured second)
  // falls on both sides alike.
  progress(`cupy (before gpuext): ${PYTHON} bench/cupy_graph.py`);
  const cupyBefore = runCupy();
  const gr = benchGraph(ops);
  progress(`cupy (after gpuext): ${PYTHON} bench/cupy_graph.py`);
  const cupyAfter = runCupy();
  const cupy = meanOfRuns(cupyBefore, cupyAfter);
  const cupyNote = cupy.ok ? `cupy ${cupy.r.version} on ${cupy.r.device}` : `cupy n/a: ${cupy.error}`;
  section(`graph replay: ${GRAPH_KERNELS} launches of a 1-element add_out per graph, ${GRAPH_REPLAYS} replays per run, ` +
    `warmup ${GRAPH_WARMUP}, repeat ${GRAPH_REPEAT}`);
  console.log(`  ${cupyNote}`);
  const cg = cupy.ok ? cupy.r : undefined;
  printTable(['', 'gpuext', 'cupy', 'gpuext/cupy'], [
    ['graph: GPU us per kernel (non-blocking stream, both)', fmt(gr.gpuUsPerKernel, 3), fmt(cg?.gpuUsPerKernel, 3), ratio(gr.gpuUsPerKernel, cg?.gpuUsPerKernel)],
    ['graph: the same, built-in gx.add(a, b, { out: c })', fmt(gr.kinds.builtin, 3), fmt(cg?.gpuUsPerKernel, 3), ratio(gr.kinds.builtin, cg?.gpuUsPerKernel)],
    ['graph: the same, RawKernel of cupy\'s source (NVRTC)', fmt(gr.kinds.rawKernel, 3), fmt(cg?.gpuUsPerKernel, 3), ratio(gr.kinds.rawKernel, cg?.gpuUsPerKernel)],
    ['graph: GPU us per kernel, gpuext on its default stream', fmt(gr.defaultStreamGpuUsPerKernel, 3), '', ''],
    [`graph: host us per replay (${GRAPH_KERNELS} kernels)`, fmt(gr.cpuUsPerReplay, 2), fmt(cg?.cpuUsPerReplay, 2), ratio(gr.cpuUsPerReplay, cg?.cpuUsPerReplay)],
    ['eager: GPU us per kernel', fmt(gr.eagerGpuUsPerKernel, 3), fmt(cg?.eagerGpuUsPerKernel, 3), ratio(gr.eagerGpuUsPerKernel, cg?.eagerGpuUsPerKernel)],
    ['eager: host us per launch', fmt(gr.eagerCpuUsPerLaunch, 2), fmt(cg?.eagerCpuUsPerLaunch, 2), ratio(gr.eagerCpuUsPerLaunch, cg?.eagerCpuUsPerLaunch)],
    ['anchor: cupy graph, issue 6', '', fmt(CUPY_ANCHOR_US, 2), ''],
  ]);
  console.log('  GPU us per kernel: events around a run / kernels in it; eager launches are host-bound, so its GPU');
  console.log(`  time follows the launch rate. gpuext eager: the op addOut(a, b, c) from JS; cupy eager: RawKernel(...).`);
  console.log(`  graph memory kept: ${gr.keptAllocations} allocation(s); nodes per graph: ${gr.nodes} (cupy: ${GRAPH_KERNELS} launches captured)`);
  for (const r of [gr.replay, gr.eager]) console.log(`  ${r.toString()}`);
  const graphOk = Number.isFinite(gr.gpuUsPerKernel) ? gr.gpuUsPerKernel <= GRAPH_TARGET_US : undefined;
  const gxPlaced = median(gr.kinds.placements);
  const cupyPlaced = cg?.placements === undefined ? undefined : median(cg.placements);
  summary.push(`graph replay per kernel, median over ${PLACEMENTS} placements of the same kernel: gpuext ${fmt(gxPlaced, 3)} us, ` +
    `cupy ${fmt(cupyPlaced, 3)} us${cupy.ok && cupy.runs !== undefined ? ' (its runs before and after, averaged)' : ''} (target <= cupy: ${verdict(cupyPlaced === undefined ? undefined : gxPlaced <= cupyPlaced)}); ` +
    `one placement each: extension op ${fmt(gr.gpuUsPerKernel, 3)}, built-in gx.add ${fmt(gr.kinds.builtin, 3)}, RawKernel ${fmt(gr.kinds.rawKernel, 3)} us`);
  console.log(`  placements (NOTE [ Graph replay over placements ]), us per kernel: gpuext ${gr.kinds.placements.map((x) => fmt(x, 3)).join(' ')}`);
  console.log(`                                                        cupy   ${(cg?.placements ?? []).map((x) => fmt(x, 3)).join(' ')}`);
  if (cupy.ok && cupy.runs !== undefined) {
    const [before, after] = cupy.runs.map((r) => (r.placements === undefined ? undefined : median(r.placements)));
    console.log(`  cupy's two runs (NOTE [ Graph replay in turn with CuPy ]), median over placements: before gpuext ${fmt(before, 3)} us, ` +
      `after ${fmt(after, 3)} us; one placement: ${cupy.runs.map((r) => fmt(r.gpuUsPerKernel, 3)).join(', ')} us`);
  }
  summary.push(`graph replay per kernel: gpuext ${fmt(gr.gpuUsPerKernel, 3)} us, cupy ${fmt(cg?.gpuUsPerKernel, 3)} us, both on a ` +
    `non-blocking stream, one placement each (see the placements line for the comparison)`);
  summary.push(`graph replay: ${fmt(gr.gpuUsPerKernel, 3)} us per kernel on the GPU ` +
    `(eager ${fmt(gr.eagerGpuUsPerKernel, 2)} us; cupy ${fmt(cg?.gpuUsPerKernel, 3)} us here, ${CUPY_ANCHOR_US} us in issue 6) ` +
    `(target <= ${GRAPH_TARGET_US} us: ${verdict(graphOk)})`);
  summary.push(`graph replay host cost: ${fmt(gr.cpuUsPerReplay, 2)} us per replay of ${GRAPH_KERNELS} kernels ` +
    `(${cg?.cpuUsPerReplay === undefined ? 'cupy n/a' : `cupy ${fmt(cg.cpuUsPerReplay, 2)} us`})`);

  // 2. two streams
  const ov = benchOverlap(ops);
  const one = gpuMedian(ov.one);
  const same = gpuMedian(ov.sameStream);
  const two = gpuMedian(ov.twoStreams);
  section(`two streams overlap: spin ${SPIN_CYCLES} cycles in ${ov.blocks} blocks of 32 threads (half the SMs), ` +
    `warmup ${OVERLAP_WARMUP}, repeat ${OVERLAP_REPEAT}`);
  printTable(['run', 'GPU ms', 'vs one', 'host launch us'], [
    ['one kernel, one stream', fmt(one, 3), '1.00x', fmt(ov.one.cpu.median * 1e3)],
    ['two kernels, same stream', fmt(same, 3), ratio(same, one), fmt(ov.sameStream.cpu.median * 1e3)],
    ['two kernels, two streams', fmt(two, 3), ratio(two, one), fmt(ov.twoStreams.cpu.median * 1e3)],
  ]);
  console.log('  GPU ms: events on the current stream; the side streams wait for it at the start, and it waits');
  console.log('  for both at the end (waitStream). Same stream: the serial reference (about 2x).');
  for (const r of [ov.one, ov.sameStream, ov.twoStreams]) console.log(`  ${r.toString()}`);
  const overlapOk = Number.isFinite(two / one) ? two / one < OVERLAP_TARGET : undefined;
  summary.push(`two streams overlap: two/one = ${ratio(two, one)} (one ${fmt(one, 3)} ms, two ${fmt(two, 3)} ms, ` +
    `same stream ${ratio(same, one)}) (target < ${OVERLAP_TARGET}: ${verdict(overlapOk)})`);
  if (same / one < 1.5) warnings.push(`two kernels on one stream took only ${ratio(same, one)} of one: the spin kernel may not be serializing`);

  // 3. pinned copies: measured by core.bench.ts
  section('pinned host->device copy vs PyTorch');
  console.log('  measured by `npm run bench` (bench/core.bench.ts): the "H2D pinned" rows and summary line, gpuext vs torch');
  console.log('  in the same run (target >= 90% of torch); not repeated here.');
  summary.push('pinned H2D vs torch: see `npm run bench` (bench/core.bench.ts, H2D pinned; target >= 0.90x torch)');

  const live1 = checkLive(live0, cuda, warnings);
  section('summary');
  for (const s of summary) console.log(`  ${s}`);
  console.log(`  live tensors at exit: cuda ${live1.cuda} (start: ${live0.cuda})`);
  printIssues(warnings, problems);
}

runMain(main);
