// gx.profiler on a real training step, on CUDA: what a user sees when their
// step is slow. One MLP step (3 layers of 1024, batch 4096, Adam: large
// enough that the GPU, not the launches, sets the time) is
//   1. timed by gx.benchmark (events around the whole step),
//   2. profiled with the 'cuda' activity and NVTX ranges, ten steps each in a
//      gx.profiler.range('step'),
// and the bench checks what the profile claims:
//   - every op that ran on the GPU has its GPU span on the device's track, in
//     the order the host issued the ops, each span starting no earlier than
//     the GPU span before it ended (the stream is in order);
//   - the table's GPU total per step agrees with gx.benchmark's GPU time
//     within 10% (the events around each op add a few microseconds of their own);
// and writes the Chrome trace to $OUT/profiler-step.trace.json (or
// ./profiler-step.trace.json) for ui.perfetto.dev. Under `nsys profile`
// (scripts/nsys-profile.sh) the NVTX ranges 'step' and one per op show in
// Nsight Systems by name.
//
//   npm run bench:profiler-step      GPUEXT_BENCH_PROFILE_STEPS=10
import * as path from 'path';

import * as gx from '../lib';
import { fmt, printIssues, printTable, section } from './util';

const HIDDEN = 1024;
const BATCH = 16384;
const STEPS = Number(process.env.GPUEXT_BENCH_PROFILE_STEPS ?? 10);
const TOLERANCE = 0.10;
const WARMUP_STEPS = 200;

function makeStep(device: gx.DeviceLike): { step: () => void; dispose: () => void } {
  gx.manualSeed(0);
  const dims = [64, HIDDEN, HIDDEN, 1];
  const params: gx.Tensor[] = [];
  for (let i = 0; i + 1 < dims.length; i++) {
    const bound = 1 / Math.sqrt(dims[i]);
    params.push(gx.tidy(() => gx.rand([dims[i], dims[i + 1]], { device }).mul(2 * bound).sub(bound)).requiresGrad_());
    params.push(gx.zeros([dims[i + 1]], { device }).requiresGrad_());
  }
  const x = gx.randn([BATCH, dims[0]], { device });
  const y = gx.randn([BATCH, 1], { device });
  const opt = new gx.optim.Adam(params, { lr: 1e-3 });
  const step = (): void => {
    gx.tidy(() => {
      let h: gx.Tensor = x;
      for (let i = 0; i < params.length; i += 2) {
        h = gx.add(gx.matmul(h, params[i]), params[i + 1]);
        if (i + 2 < params.length) h = gx.tanh(h);
      }
      const loss = gx.mean(gx.square(gx.sub(h, y)));
      loss.backward();
      opt.step();
      opt.zeroGrad();
    });
  };
  return { step, dispose: () => { for (const t of [...params, x, y]) t.dispose(); } };
}

/** Checks the trace's GPU track against the host's op order; returns the problems found. */
function checkTrace(prof: gx.profiler.Profile): string[] {
  const problems: string[] = [];
  const ops = prof.events.filter((e) => e.kind === 'op' && e.device.startsWith('cuda'));
  const missing = ops.filter((e) => e.gpuStart === undefined || e.gpuDuration === undefined);
  if (ops.length === 0) problems.push('no CUDA op was recorded');
  if (missing.length > 0) problems.push(`${missing.length} CUDA ops have no GPU span (first: ${missing[0].name})`);
  let lastEnd = -Infinity;
  for (const e of ops) {
    if (e.gpuStart === undefined || e.gpuDuration === undefined) continue;
    // Events of one stream complete in order; 0.5 us slack for the conversion to the host clock.
    if (e.gpuStart + 0.5 < lastEnd) {
      problems.push(`GPU span of ${e.name} starts ${fmt(lastEnd - e.gpuStart, 2)} us before the previous one ended`);
      break;
    }
    lastEnd = e.gpuStart + e.gpuDuration;
  }
  const trace = prof.toChromeTrace();
  const gpuSpans = trace.traceEvents.filter((t) => t.cat === 'kernel');
  if (gpuSpans.length !== ops.length - missing.length) problems.push(`the trace has ${gpuSpans.length} GPU spans for ${ops.length} CUDA ops`);
  const opNames = new Set(ops.map((e) => e.name));
  const stray = gpuSpans.filter((t) => !opNames.has(t.name));
  if (stray.length > 0) problems.push(`GPU spans not named after an op: ${stray[0].name}`);
  return problems;
}

function main(): void {
  if (!gx.cuda.isAvailable()) {
    console.log('bench:profiler-step: no CUDA device: skipped');
    return;
  }
  const { step, dispose } = makeStep('cuda');
  // Warm up past the core's switch to batched memory reports (NOTE [ Memory
  // pressure ] in csrc/binding/tensor_handle.cpp: after 4096 explicit
  // disposals in a row): before it, each 16 MiB tensor of the step is reported
  // to V8 and starts collections that make the step host-bound.
  for (let i = 0; i < WARMUP_STEPS; i++) step();
  gx.cuda.synchronize();
  const bench = gx.benchmark(step, { nWarmup: 5, nRepeat: 30, name: 'mlp step' });
  const prof = gx.profiler.profile(() => {
    for (let i = 0; i < STEPS; i++) gx.profiler.range('step', step);
  }, { activities: ['cpu', 'cuda'], nvtx: true });
  dispose();
  const rows = prof.keyAverages();
  const gpuPerStep = rows.reduce((s, k) => s + (k.gpuTotal ?? 0), 0) / STEPS / 1000;
  const hostPerStep = rows.reduce((s, k) => s + k.hostTotal, 0) / STEPS / 1000;
  const benchGpu = bench.gpu?.median ?? NaN;
  const file = path.join(process.env.OUT ?? '.', 'profiler-step.trace.json');
  prof.exportChromeTrace(file);

  section(`gx.profiler on an MLP step (3 x ${HIDDEN}, batch ${BATCH}, Adam), ${STEPS} steps`);
  console.log(prof.table({ sortBy: 'gpu', rowLimit: 12 }));
  const problems = checkTrace(prof);
  const agree = Math.abs(gpuPerStep / benchGpu - 1);
  if (!(agree <= TOLERANCE)) problems.push(`profile GPU total per step ${fmt(gpuPerStep, 3)} ms vs gx.benchmark ${fmt(benchGpu, 3)} ms: off by ${fmt(agree * 100, 1)}%`);
  console.log('\n== summary');
  printTable(['figure', 'value'], [
    ['gx.benchmark GPU per step (median)', `${fmt(benchGpu, 3)} ms`],
    ['gx.benchmark CPU per step (median)', `${fmt(bench.cpu.median, 3)} ms`],
    ['profile: sum of op GPU times per step', `${fmt(gpuPerStep, 3)} ms (${fmt(agree * 100, 1)}% off; target <= ${TOLERANCE * 100}%)`],
    ['profile: sum of op host times per step', `${fmt(hostPerStep, 3)} ms`],
    ['ops recorded', String(prof.events.filter((e) => e.kind === 'op').length)],
    ['trace', file],
  ]);
  printIssues([], problems);
  if (problems.length > 0) process.exitCode = 1;
}

main();
