// gx.profiler: every op call recorded (name, device, shapes, host time, GPU
// time with the 'cuda' activity), ranges around them, the table of totals,
// and a trace valid in the Trace Event Format; the hook gone after stop.
// Serial: a profiler records the whole process's op calls.
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib/index';
import { extensionRuntime } from '../lib/extension/runtime';
import { native } from '../lib/core/native';
import { coreExtensionCall, coreOpCall } from '../lib/profiler/hook';
import { cudaTest, deviceTestSerial, rng, type TestDevice } from './helpers';

/** A small forward step of random sizes in a range; returns its value. */
function step(device: TestDevice, m: number, k: number, n: number): number {
  const x = gx.randn([m, k], { device });
  const w = gx.randn([k, n], { device });
  const out = gx.profiler.range('forward', () => gx.relu(gx.add(gx.matmul(x, w), 0.5)).sum());
  return out.item();
}

/** Checks the trace against the Trace Event Format: phases, numbers, names, nesting, time order per track. */
function checkTrace(t: ExecutionContext, trace: gx.profiler.ChromeTrace): void {
  t.is(trace.displayTimeUnit, 'ms');
  const byTid = new Map<number, gx.profiler.TraceEvent[]>();
  for (const e of trace.traceEvents) {
    t.true(e.ph === 'X' || e.ph === 'M', `phase ${e.ph}`);
    t.true(typeof e.name === 'string' && e.name.length > 0, 'every event is named');
    t.is(e.pid, process.pid);
    if (e.ph === 'M') continue;
    t.true(Number.isFinite(e.ts) && (e.ts ?? -1) >= 0 && Number.isFinite(e.dur) && (e.dur ?? -1) >= 0, `${e.name}: ts ${e.ts} dur ${e.dur}`);
    byTid.set(e.tid, [...(byTid.get(e.tid) ?? []), e]);
  }
  for (const [tid, events] of byTid) {
    for (let i = 1; i < events.length; i++) t.true((events[i].ts ?? 0) >= (events[i - 1].ts ?? 0), `track ${tid}: timestamps increase`);
  }
  // Host spans nest: an event starting inside another ends inside it too.
  const host = byTid.get(0) ?? [];
  for (const outer of host) {
    for (const inner of host) {
      const start = inner.ts ?? 0, end = start + (inner.dur ?? 0), oStart = outer.ts ?? 0, oEnd = oStart + (outer.dur ?? 0);
      if (inner !== outer && start > oStart && start < oEnd) t.true(end <= oEnd + 1e-6, `${inner.name} inside ${outer.name}`);
    }
  }
}

deviceTestSerial('profile records each op with its device and shapes, inside its range; the table and the trace agree', (t, device) => {
  const r = rng(17);
  const reps = 2 + Math.floor(r() * 3);
  const sizes = Array.from({ length: reps }, () => [2 + Math.floor(r() * 30), 2 + Math.floor(r() * 30), 2 + Math.floor(r() * 30)]);
  const values: number[] = [];
  const prof = gx.profiler.profile(() => {
    for (const [m, k, n] of sizes) values.push(step(device, m, k, n));
  }, { activities: device === 'cuda' ? ['cpu', 'cuda'] : ['cpu'] });
  t.false(gx.profiler.isActive());
  t.true(values.every(Number.isFinite));

  const where = device === 'cuda' ? 'cuda:0' : 'cpu';
  const matmuls = prof.events.filter((e) => e.name === 'matmul');
  t.is(matmuls.length, reps);
  matmuls.forEach((e, i) => {
    const [m, k, n] = sizes[i];
    t.is(e.device, where);
    t.deepEqual(e.shapes.slice(0, 2), [[m, k], [k, n]], 'the inputs\' shapes, in order');
    t.deepEqual(e.shapes[2], [m, n], 'the output');
  });
  const ranges = prof.events.filter((e) => e.kind === 'range');
  t.deepEqual(ranges.map((e) => e.name), Array(reps).fill('forward'));
  for (const e of prof.events.filter((x) => x.kind === 'op')) {
    // The inputs are drawn outside the range, the forward ops inside it.
    if (['matmul', 'relu', 'sum'].includes(e.name)) t.true(ranges.some((rg) => e.hostStart >= rg.hostStart && e.hostStart + e.hostDuration <= rg.hostStart + rg.hostDuration + 1e-6), `${e.name} in a range`);
    if (device === 'cuda' && e.device !== 'cpu') t.true((e.gpuDuration ?? -1) >= 0 && (e.gpuStart ?? -1) >= 0, `${e.name}: GPU time`);
  }

  // Totals: calls counted, rows largest host total first, every op listed.
  const avg = prof.keyAverages();
  t.is(avg.find((k) => k.name === 'matmul')?.count, reps);
  t.is(avg.find((k) => k.name === 'relu')?.count, reps);
  for (let i = 1; i < avg.length; i++) t.true(avg[i - 1].hostTotal >= avg[i].hostTotal);
  for (const k of avg) t.true(Math.abs(k.hostAverage * k.count - k.hostTotal) < 1e-6);
  const table = prof.table();
  t.regex(table, /^Name\s+Device\s+Calls\s+Host total\s+Host avg/);
  t.regex(table, new RegExp(`^matmul\\s+${where}\\s+${reps}\\s+[\\d.]+ (us|ms)`, 'm'));
  if (device === 'cuda') t.regex(table, /GPU total\s+GPU avg/);
  t.is(prof.table({ rowLimit: 1 }).split('\n').length, 3);

  const trace = prof.toChromeTrace();
  checkTrace(t, trace);
  const hostOps = trace.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'op');
  t.is(hostOps.length, prof.events.filter((e) => e.kind === 'op').length);
  if (device === 'cuda') {
    const kernels = trace.traceEvents.filter((e) => e.cat === 'kernel');
    t.is(kernels.filter((e) => e.name === 'matmul').length, reps, 'each CUDA op on the GPU track');
    t.true(trace.traceEvents.some((e) => e.ph === 'M' && e.args?.name === 'cuda:0 (GPU)'));
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-prof-')), 'trace.json');
  prof.exportChromeTrace(file);
  t.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), JSON.parse(JSON.stringify(trace)));
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});

test.serial('stop puts the core\'s call back; start/stop misuse, a throwing fn and an async fn', async (t) => {
  const core = coreOpCall();
  t.is(native.callOp, core);
  gx.profiler.start({ recordShapes: false });
  t.not(native.callOp, core, 'recording: the wrapper is in place');
  t.not(extensionRuntime.call, coreExtensionCall());
  t.throws(() => gx.profiler.start(), { message: /^gx\.profiler\.start: a profiler is already recording/ });
  gx.add(gx.ones([3]), 1);
  const p = gx.profiler.stop();
  t.is(native.callOp, core, 'stopped: exactly the core function again');
  t.is(extensionRuntime.call, coreExtensionCall());
  t.deepEqual(p.events.map((e) => [e.name, e.shapes]), [['add_scalar', []]]);
  t.throws(() => gx.profiler.stop(), { message: /^gx\.profiler\.stop: no profiler is recording/ });
  t.throws(() => gx.profiler.start({ activities: ['gpu'] as unknown as gx.profiler.Activity[] }), { instanceOf: TypeError, message: /activities must be an array of 'cpu' and 'cuda'/ });
  t.false(gx.profiler.isActive());

  // A throwing fn: the error passes through, the profiler stops, the failed call is recorded with its error.
  t.throws(() => gx.profiler.profile(() => gx.matmul(gx.ones([2, 3]), gx.ones([2, 3]))), { message: /matmul/ });
  t.false(gx.profiler.isActive());
  t.is(native.callOp, core);

  const asyncProf = await gx.profiler.profile(async () => {
    const x = gx.randn([4, 5]);
    await x.toArray();
    gx.profiler.range('after await', () => gx.exp(x));
  });
  t.deepEqual(asyncProf.events.map((e) => e.name).filter((n) => n !== 'randn'), ['after await', 'exp']);
  t.is(native.callOp, core);
  t.throws(() => gx.profiler.range('', () => 0), { instanceOf: TypeError, message: /^gx\.profiler\.range: name must be a non-empty string/ });
  t.is(gx.profiler.range('off', () => 42), 42, 'without a profiler, range just runs fn');
});

test.serial('NVTX: per-op ranges on request record the same calls; the binding checks its argument', (t) => {
  const x = gx.randn([3, 4]);
  const plain = gx.profiler.profile(() => gx.profiler.range('r', () => gx.exp(gx.mul(x, 2))));
  const nvtx = gx.profiler.profile(() => gx.profiler.range('r', () => gx.exp(gx.mul(x, 2))), { nvtx: true });
  t.deepEqual(nvtx.events.map((e) => [e.name, e.kind, e.shapes]), plain.events.map((e) => [e.name, e.kind, e.shapes]));
  t.throws(() => native.nvtxRangePush(7 as unknown as string), { instanceOf: TypeError, message: "nvtxRangePush: argument 'name' must be a string" });
  t.is(native.callOp, coreOpCall());
});

// Nsight Systems on the GPU machine: the ranges and the ops appear by name.
const HAS_NSYS = spawnSync('nsys', ['--version'], { encoding: 'utf8' }).status === 0;
const nsysTest = HAS_NSYS ? cudaTest : (title: string, body: (t: ExecutionContext) => void): void => test.skip(title, body);
nsysTest(`nsys profile lists gx.profiler.range and per-op NVTX ranges by name${HAS_NSYS ? '' : ' (skipped: no nsys on PATH)'}`, (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-nsys-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const index = path.resolve(__dirname, '../lib/index.js');
  const script = path.join(dir, 'app.js');
  const label = `step_${Math.random().toString(36).slice(2, 8)}`;
  fs.writeFileSync(script, `const gx = require(${JSON.stringify(index)});
const x = gx.randn([256, 256], { device: 'cuda' });
gx.profiler.start({ nvtx: true });
for (let i = 0; i < 3; i++) gx.profiler.range(${JSON.stringify(label)}, () => gx.relu(gx.matmul(x, x)).sum().item());
gx.profiler.stop();
`);
  const rep = path.join(dir, 'rep');
  const prof = spawnSync('nsys', ['profile', '--trace=nvtx,cuda', '--force-overwrite=true', '-o', rep, process.execPath, script], { encoding: 'utf8' });
  t.is(prof.status, 0, prof.stdout + prof.stderr);
  const stats = ['nvtx_sum', 'nvtxsum'].map((report) => spawnSync('nsys', ['stats', '--report', report, '--format', 'csv', `${rep}.nsys-rep`], { encoding: 'utf8' }));
  const out = stats.map((r) => r.stdout).join('\n');
  t.regex(out, new RegExp(label), out.slice(0, 3000));
  t.regex(out, /\bmatmul\b/);
  t.regex(out, /\brelu\b/);
});
