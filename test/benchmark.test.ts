// gx.benchmark: statistics for a function of known CPU cost, GPU times on
// cuda only, toString, option validation, synchronous functions only, and on
// a GPU a kernel that spins a given number of clock cycles (built here with
// gx.loadInline) whose GPU time must grow with the cycle count.
import test, { type ExecutionContext } from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { benchmark, stats, type BenchmarkResult, type BenchmarkStats } from '../lib/profiler/benchmark';
import { loadInline, type LoadedOps } from '../lib/toolkit/load';
import { cudaTest, deviceTest } from './helpers';

// spin(out, cycles, blocks): `blocks` blocks of 32 threads each busy-wait
// `cycles` SM clock cycles on the current stream; thread 0 of each block
// writes the cycles it saw to out[block] (int64).
const SPIN_SRC = `
namespace {
__global__ void spin_kernel(long long cycles, int64_t* out) {
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int64_t>(now - start);
}

void spin(const gx::Tensor& out, int64_t cycles, int64_t blocks) {
  GX_CHECK(out.dtype() == gx::kInt64 && out.is_contiguous(), "out must be a contiguous int64 tensor");
  GX_CHECK(blocks >= 1 && blocks <= out.numel(), "blocks must be in [1, out.numel()], got ", blocks);
  GX_CHECK(cycles >= 0, "cycles must be >= 0, got ", cycles);
  spin_kernel<<<static_cast<unsigned>(blocks), 32, 0, gx::current_stream()>>>(static_cast<long long>(cycles),
                                                                             out.data_ptr<int64_t>());
  GX_CHECK_LAUNCH();
}
}  // namespace

GX_LIBRARY(benchmark_test, m) {
  m.def("spin(Tensor out, int cycles, int blocks) -> ()", "Busy-waits cycles clock cycles in each block.")
      .impl(gx::kCUDA, spin);
}
`;

const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-benchmark-'));
test.after.always(() => fs.rmSync(cache, { recursive: true, force: true }));

let ops: LoadedOps | undefined;
test.before(async () => {
  if (!gx.cuda.isAvailable()) return;
  ops = await loadInline({ name: 'benchmark_test', cuda: SPIN_SRC, buildDirectory: cache });
});

/** Busy-waits `ms` milliseconds on the host. */
function busyWait(ms: number): void {
  const end = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
  while (process.hrtime.bigint() < end) { /* spin */ }
}

function checkStats(t: ExecutionContext, s: BenchmarkStats, what: string): void {
  t.true(s.min <= s.median && s.median <= s.max, `${what}: min ${s.min} <= median ${s.median} <= max ${s.max}`);
  t.true(s.min <= s.mean && s.mean <= s.max, `${what}: mean ${s.mean} within [min, max]`);
  t.true(s.std >= 0 && s.std <= s.max - s.min, `${what}: std ${s.std}`);
}

deviceTest('benchmark times a busy-wait of known CPU cost', (t, device) => {
  const r = benchmark(() => busyWait(0.2), { nWarmup: 3, nRepeat: 25, device, name: 'busy' });
  t.is(r.name, 'busy');
  t.true(r.cpuTimes instanceof Float64Array);
  t.is(r.cpuTimes.length, 25);
  t.true(r.cpu.median >= 0.15 && r.cpu.median <= 5, `CPU median ${r.cpu.median} ms`);
  t.true(r.cpu.min >= 0.19, `CPU min ${r.cpu.min} ms: a run cannot be shorter than the wait`);
  checkStats(t, r.cpu, 'cpu');
  t.is(r.cpu.min, Math.min(...r.cpuTimes));
  t.is(r.cpu.max, Math.max(...r.cpuTimes));
  if (device === 'cuda') {
    t.true(r.gpuTimes instanceof Float64Array);
    t.is(r.gpuTimes?.length, 25);
    t.is(String(r.device), 'cuda:0');
    const gpu = r.gpu;
    if (gpu === undefined) {
      t.fail('no GPU statistics on cuda');
    } else {
      checkStats(t, gpu, 'gpu');
      t.true(gpu.min >= 0, `GPU min ${gpu.min} ms`);
    }
    t.regex(r.toString(), /GPU-0:\s+\d+\.\d{3} (ns|us|ms|s)\b/);
  } else {
    t.is(r.gpuTimes, undefined);
    t.is(r.gpu, undefined);
    t.is(r.device, undefined);
    t.notRegex(r.toString(), /GPU/);
  }
  const line = r.toString();
  t.regex(line, /^busy\s*:\s+CPU:\s+\d+\.\d{3} (ns|us|ms|s)\s+\+\/-\s+\d+\.\d{3} \(min:\s+\d+\.\d{3} \/ median:\s+\d+\.\d{3} \/ max:\s+\d+\.\d{3}\) (ns|us|ms|s)/);
  t.false(line.includes('\n'), 'one line');
});

test('statistics: min, median (odd and even counts), mean, population std', (t) => {
  const odd = stats(Float64Array.from([5, 1, 3]));
  t.deepEqual(odd, { min: 1, median: 3, mean: 3, max: 5, std: Math.sqrt(8 / 3) });
  const even = stats(Float64Array.from([4, 1, 3, 2]));
  t.is(even.median, 2.5);
  t.is(even.mean, 2.5);
  t.is(even.std, Math.sqrt(1.25));
  const one = stats(Float64Array.from([7]));
  t.deepEqual(one, { min: 7, median: 7, mean: 7, max: 7, std: 0 });
});

test('toString picks units and shows one run without a spread', (t) => {
  const r = benchmark(() => busyWait(2), { nWarmup: 0, nRepeat: 1, device: 'cpu', name: 'two_ms' });
  t.is(r.cpuTimes.length, 1);
  t.regex(r.toString(), /^two_ms\s+:\s+CPU:\s+\d+\.\d{3} ms$/);
  const fast = benchmark(function noop() { /* nothing */ }, { nWarmup: 1, nRepeat: 5, device: 'cpu' });
  t.is(fast.name, 'noop', 'the name defaults to the function\'s');
  t.regex(fast.toString(), /^noop\s+:\s+CPU:\s+\d+\.\d{3} (ns|us) /);
  t.is(benchmark(() => undefined, { nRepeat: 1, device: 'cpu' }).name.length > 0, true);
});

test('warmup calls are made and not timed; every repeat is', (t) => {
  let calls = 0;
  const r = benchmark(() => { calls++; }, { nWarmup: 7, nRepeat: 13, device: 'cpu' });
  t.is(calls, 20);
  t.is(r.cpuTimes.length, 13);
  let defaults = 0;
  const d = benchmark(() => { defaults++; }, { device: 'cpu' });
  t.is(defaults, 110, 'nWarmup 10 and nRepeat 100 by default');
  t.is(d.cpuTimes.length, 100);
});

test('maxDuration stops early, after at least one run', (t) => {
  const r = benchmark(() => busyWait(2), { nWarmup: 0, nRepeat: 1000, maxDuration: 0.01, device: 'cpu' });
  t.true(r.cpuTimes.length >= 1 && r.cpuTimes.length <= 10, `${r.cpuTimes.length} runs in 10 ms of 2 ms each`);
  t.is(r.cpu.min, Math.min(...r.cpuTimes));
  const once = benchmark(() => busyWait(1), { nWarmup: 0, nRepeat: 50, maxDuration: 1e-9, device: 'cpu' });
  t.is(once.cpuTimes.length, 1);
});

test('bad options throw a RangeError naming the option', (t) => {
  const f = (): void => undefined;
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ nRepeat: 0 }, /option 'nRepeat' must be an integer >= 1, got 0/],
    [{ nRepeat: -3 }, /option 'nRepeat'/],
    [{ nRepeat: 2.5 }, /option 'nRepeat'/],
    [{ nRepeat: Number.NaN }, /option 'nRepeat'/],
    [{ nRepeat: '10' }, /option 'nRepeat' must be an integer >= 1, got "10"/],
    [{ nWarmup: -1 }, /option 'nWarmup' must be a non-negative integer, got -1/],
    [{ nWarmup: Infinity }, /option 'nWarmup'/],
    [{ maxDuration: 0 }, /option 'maxDuration' must be a positive number of seconds, got 0/],
    [{ maxDuration: -1 }, /option 'maxDuration'/],
    [{ maxDuration: Number.NaN }, /option 'maxDuration'/],
    [{ maxDuration: '1' }, /option 'maxDuration'/],
    [{ name: 5 }, /option 'name' must be a string/],
  ];
  for (const [opts, message] of bad) {
    // Options of the wrong type, as plain JavaScript could pass them.
    t.throws(() => Reflect.apply(benchmark, undefined, [f, { device: 'cpu', ...opts }]), { instanceOf: RangeError, message },
      JSON.stringify(opts));
  }
  t.throws(() => Reflect.apply(benchmark, undefined, [f, { device: 'cpu', nRepeats: 5 }]),
    { instanceOf: TypeError, message: /gx\.benchmark: unknown option 'nRepeats'; did you mean 'nRepeat'\?/ });
  t.throws(() => benchmark(f, { device: 'cuda:99' }), { instanceOf: RangeError, message: /gx\.benchmark: device 'cuda:99'/ });
  t.throws(() => benchmark(f, { device: 'gpu' }), { instanceOf: TypeError, message: /gx\.benchmark: unknown device "gpu"/ });
  t.throws(() => Reflect.apply(benchmark, undefined, [42]), { instanceOf: TypeError, message: /argument 'fn' must be a function/ });
  t.notThrows(() => benchmark(f, { nWarmup: 0, nRepeat: 1, maxDuration: Infinity, device: 'cpu' }));
});

deviceTest('a Promise-returning fn is a TypeError (benchmark is synchronous)', (t, device) => {
  let calls = 0;
  const asyncFn = async (): Promise<void> => { calls++; };
  t.throws(() => benchmark(asyncFn, { device }), { instanceOf: TypeError, message: /gx\.benchmark: fn must be synchronous \(it returned a Promise\)/ });
  t.is(calls, 1, 'stops at the first call');
  t.throws(() => benchmark(() => Promise.reject(new Error('never seen')), { nWarmup: 0, device }), { instanceOf: TypeError, message: /synchronous/ });
  t.throws(() => benchmark(() => ({ then: (): void => undefined }), { nWarmup: 0, device }), { instanceOf: TypeError });
});

deviceTest('an error thrown by fn propagates', (t, device) => {
  t.throws(() => benchmark(() => { throw new Error('inside fn'); }, { device }), { message: 'inside fn' });
  let n = 0;
  t.throws(() => benchmark(() => { if (++n === 15) throw new RangeError('run 5'); }, { device }), { instanceOf: RangeError, message: 'run 5' });
});

// About 0.5 ms at H100 clocks (1.7-2 GHz): long enough to dwarf launch overhead.
const CYCLES = 1_000_000;

cudaTest('GPU time grows with the spinning kernel\'s cycle count', (t) => {
  if (ops === undefined) throw new Error('the spin kernel was not built');
  const spin = ops.spin;
  using out = gx.zeros([1], { dtype: 'int64', device: 'cuda' });
  const time = (cycles: number): BenchmarkResult =>
    benchmark(() => spin(out, cycles, 1), { nWarmup: 3, nRepeat: 20, name: `spin_${cycles}` });
  time(CYCLES); // clocks up, caches warm
  const one = time(CYCLES);
  const two = time(2 * CYCLES);
  t.log(one.toString());
  t.log(two.toString());
  const g1 = one.gpu, g2 = two.gpu;
  if (g1 === undefined || g2 === undefined) {
    t.fail('no GPU statistics on a GPU machine');
    return;
  }
  // Minimums: other test files may share the GPU, which can only add time to a run.
  t.true(g1.min > 0.05, `1M cycles took ${g1.min} ms on the GPU`);
  t.true(g2.min > 1.6 * g1.min, `2x cycles: ${g2.min} ms vs ${g1.min} ms`);
  t.true(g2.min < 2.5 * g1.min, `2x cycles: ${g2.min} ms vs ${g1.min} ms`);
  t.true(g2.median > 1.3 * g1.median, `2x cycles, medians: ${g2.median} ms vs ${g1.median} ms`);
  t.true(one.cpu.median < g1.median, `launching (${one.cpu.median} ms) is cheaper than running (${g1.median} ms)`);
  const seen = out.toArraySync();
  t.true(seen[0] >= BigInt(2 * CYCLES), `the kernel spun ${seen[0]} cycles`);
});

cudaTest('GPU time is taken on the current stream (inside withStream)', (t) => {
  if (ops === undefined) throw new Error('the spin kernel was not built');
  const spin = ops.spin;
  using out = gx.zeros([1], { dtype: 'int64', device: 'cuda' });
  const s = new gx.Stream({ nonBlocking: true });
  out.recordStream(s);
  const onDefault = benchmark(() => spin(out, CYCLES, 1), { nWarmup: 2, nRepeat: 10 });
  const onSide = gx.withStream(s, () => benchmark(() => spin(out, CYCLES, 1), { nWarmup: 2, nRepeat: 10 }));
  const a = onDefault.gpu?.min ?? NaN, b = onSide.gpu?.min ?? NaN;
  t.true(b > 0.7 * a && b < 1.4 * a, `on a side stream ${b} ms vs ${a} ms on the default one`);
  s.synchronize();
});
