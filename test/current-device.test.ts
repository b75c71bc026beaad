// The current device (NOTE [ Current device ] in csrc/cuda/runtime.h):
// gx.cuda.setDevice / currentDevice, and 'cuda', new gx.Device('cuda'),
// .cuda(), streams, kernels, C++'s gx::kCUDA and gx::current_device() meaning
// it; GPUEXT_DEVICE at load and `gpuext run` setting it per rank. On the CPU
// the errors; on a GPU machine the cases run on the last GPU (cuda:1 with two,
// where the worker-thread case checks that the setting is per thread; the
// code path alone on cuda:0 with one).
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Worker } from 'worker_threads';

import * as gx from '../lib';
import { cudaTest } from './helpers';

const LIB = path.resolve(__dirname, '../lib');
const CLI = path.resolve(__dirname, '../lib/cli/main.js');
const COUNT = gx.cuda.isAvailable() ? gx.cuda.deviceCount() : 0;
const LAST = Math.max(0, COUNT - 1);

const cpuOnly = COUNT === 0 ? test : test.skip;
// With GPUEXT_REQUIRE_MULTI_GPU=1 (npm run test:multi-gpu) a missing second GPU fails instead of skipping.
const twoGpus = COUNT >= 2 || process.env.GPUEXT_REQUIRE_MULTI_GPU === '1' ? test.serial : test.skip;

/** Runs `fn` with cuda:`index` current, then makes cuda:0 current again (tests share the process). */
function onDevice<T>(index: number, fn: () => T): T {
  gx.cuda.setDevice(index);
  try {
    return fn();
  } finally {
    gx.cuda.setDevice(0);
  }
}

const values = (x: gx.Tensor): number[] => Array.from(x.toArraySync() as ArrayLike<number | bigint>, Number);

test('gx.cuda.setDevice refuses what is not a CUDA device index, naming the function and the argument', (t) => {
  t.throws(() => gx.cuda.setDevice(-1), { instanceOf: RangeError, message: /^gx\.cuda\.setDevice: argument 'device' must be a device index/ });
  t.throws(() => gx.cuda.setDevice(1.5), { instanceOf: RangeError, message: /^gx\.cuda\.setDevice: argument 'device' must be a device index/ });
  const missing = gx.cuda.setDevice as (d?: unknown) => void;
  t.throws(() => missing(), { instanceOf: RangeError, message: /^gx\.cuda\.setDevice: argument 'device' must be a device index .*got undefined/ });
  t.throws(() => gx.cuda.setDevice('cpu'), { instanceOf: TypeError, message: /^gx\.cuda\.setDevice: expected a CUDA device, got 'cpu'/ });
  t.throws(() => gx.cuda.setDevice('gpu:1'), { instanceOf: TypeError, message: /^gx\.cuda\.setDevice: unknown device "gpu:1"/ });
  t.throws(() => gx.cuda.setDevice(COUNT + 3), { message: new RegExp(`^gx\\.cuda\\.setDevice: .*cuda:${COUNT + 3}`) });
});

cpuOnly('without a GPU: setDevice and currentDevice say there is none and why; \'cuda\' keeps its error', (t) => {
  const why = gx.cuda.unavailableReason();
  t.true(why.length > 0);
  const quoted = why.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  t.throws(() => gx.cuda.setDevice(0), { message: new RegExp(`^gx\\.cuda\\.setDevice: cannot make cuda:0 current: there is no GPU \\(${quoted}\\)$`) });
  t.throws(() => gx.cuda.setDevice('cuda:1'), { message: /^gx\.cuda\.setDevice: cannot make cuda:1 current: there is no GPU/ });
  t.throws(() => gx.cuda.currentDevice(), { message: new RegExp(`^gx\\.cuda\\.currentDevice: there is no GPU \\(${quoted}\\)$`) });
  t.throws(() => gx.ones([2], { device: 'cuda' }), { instanceOf: RangeError, message: /^gx\.ones: device 'cuda:0' requested but CUDA is not available/ });
  t.is(String(new gx.Device('cuda')), 'cuda:0');
  t.throws(() => gx.ones([2]).cuda(), { message: /cuda:0/ });
});

cudaTest(`setDevice(${LAST}): 'cuda', new Device('cuda'), .cuda(), streams and events, currentStream mean cuda:${LAST}`, (t) => {
  t.is(gx.cuda.currentDevice(), 0, 'a thread starts on cuda:0');
  onDevice(LAST, () => {
    t.is(gx.cuda.currentDevice(), LAST);
    const want = `cuda:${LAST}`;
    const host = gx.randn([3, 5], { generator: new gx.Generator(11) });
    gx.tidy(() => {
      const a = gx.ones([2], { device: 'cuda' });
      t.is(String(a.device), want);
      t.is(String(new gx.Device('cuda')), want);
      const moved = host.cuda();
      t.is(String(moved.device), want);
      t.deepEqual(values(moved), values(host));
      t.is(String(host.to('cuda').device), want);
      t.is(String(gx.randn([4], { device: 'cuda' }).device), want);
      t.is(String(new gx.Stream().device), want);
      t.is(String(new gx.Event().device), want);
      t.is(String(gx.cuda.currentStream().device), want);
      t.is(String(gx.cuda.currentStream('cuda:0').device), 'cuda:0', 'an explicit index is kept');
      t.is(String(gx.ones([1], { device: 'cuda:0' }).device), 'cuda:0');
    });
  });
  t.is(gx.cuda.currentDevice(), 0);
  t.is(String(gx.ones([1], { device: 'cuda' }).device), 'cuda:0', "'cuda' follows setDevice back");
});

cudaTest(`kernels launched with no device given run on cuda:${LAST} after setDevice(${LAST})`, (t) => {
  onDevice(LAST, () => {
    // No tensor argument: the launch's device is the current one; the global it sets is that device's copy.
    const mod = new gx.RawModule('__device__ int mark; extern "C" __global__ void set_mark(int v) { mark = v; }');
    const setMark = mod.getFunction('set_mark');
    setMark.launch([1], [1], [4242]);
    gx.cuda.synchronize();
    t.is(new Int32Array(mod.getGlobalBytes('mark', `cuda:${LAST}`))[0], 4242);
    if (COUNT >= 2) t.is(new Int32Array(mod.getGlobalBytes('mark', 'cuda:0'))[0], 0, 'cuda:0 untouched');

    const x = gx.randn([257], { generator: new gx.Generator(5) });
    const ew = gx.elementwiseKernel('float32 x', 'float32 y', 'y = x * x + 1.0f');
    const y = ew(x.to('cuda')) as gx.Tensor;
    t.is(String(y.device), `cuda:${LAST}`);
    const xs = values(x);
    const ys = values(y);
    t.true(ys.every((v, i) => Math.abs(v - (xs[i] * xs[i] + 1)) <= 1e-5 * Math.max(1, Math.abs(v))), 'elementwiseKernel values');
  });
});

cudaTest(`with cuda:${LAST} current, ops on cuda:0 tensors still run on cuda:0 and match the CPU`, async (t) => {
  const a = gx.randn([40, 24], { dtype: 'float32', generator: new gx.Generator(21) });
  const b = gx.randn([24, 16], { dtype: 'float32', generator: new gx.Generator(22) });
  gx.cuda.setDevice(LAST);
  try {
    const [ad, bd] = [a.to('cuda:0'), b.to('cuda:0')];
    const k = new gx.RawKernel('extern "C" __global__ void twice(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.f * x[i]; }', 'twice');
    const y = gx.full([40 * 24], -1, { device: 'cuda:0' });
    k.launch([4], [256], [ad.reshape(-1), y, 40 * 24]);
    const cases: [string, gx.Tensor, gx.Tensor, number][] = [
      ['matmul (cuBLAS)', gx.matmul(ad, bd), gx.matmul(a, b), 1e-3],
      ['exp + sum', gx.exp(ad).sum(1), gx.exp(a).sum(1), 1e-3],
      ['softmax', gx.softmax(ad, -1), gx.softmax(a, -1), 1e-6],
      ['RawKernel', y, a.reshape(-1).mul(2), 0],
    ];
    for (const [what, got, want, tol] of cases) {
      t.is(String(got.device), 'cuda:0', `${what} stays on cuda:0`);
      const g = Array.from(await got.toArray() as Float32Array);
      const w = values(want);
      const bad = g.findIndex((v, i) => !(Math.abs(v - w[i]) <= tol * Math.max(1, Math.abs(w[i]))));
      t.is(bad, -1, `${what}: element ${bad}: ${g[bad]} vs ${w[bad]}`);
    }
    t.is(gx.cuda.currentDevice(), LAST, 'the ops left the current device as it was');
  } finally {
    gx.cuda.setDevice(0);
  }
}, { serial: true });

// C++ over the ABI: gx::current_device() and gx::kCUDA (no index) are the current device too.
const EXT_SOURCE = `
#include <gpuext/extension.h>
#include <gpuext/ops.h>
#include <string>
std::string here() {
  const gx::Device d = gx::current_device();
  return d.is_cpu() ? "cpu" : "cuda:" + std::to_string(d.index);
}
gx::Tensor to_cuda(const gx::Tensor& x) { return x.to(gx::kCUDA); }
gx::Tensor ones_cuda(int64_t n) { return gx::ones({n}, gx::kCUDA); }
gx::Tensor twice_plus(const gx::Tensor& x) { return gx::ops::add(gx::ops::mul(x, 2.0), 1.0); }
GX_LIBRARY(curdev_ext, m) {
  m.def("here() -> str").impl(gx::kCPU, here);
  m.def("to_cuda(Tensor x) -> Tensor").impl(gx::kCPU, to_cuda);
  m.def("ones_cuda(int n) -> Tensor").impl(gx::kCPU, ones_cuda);
  m.def("twice_plus(Tensor x) -> Tensor").impl(gx::kCPU, twice_plus).impl(gx::kCUDA, twice_plus);
}
`;

type Fn = (...args: unknown[]) => unknown;
let ext: Record<string, Fn> | undefined;
async function extension(): Promise<Record<string, Fn>> {
  const buildDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-curdev-'));
  ext ??= await gx.loadInline({ name: 'curdev_ext', cpp: EXT_SOURCE, buildDirectory }) as Record<string, Fn>;
  return ext;
}

test.serial('C++: gx::current_device() and gx::kCUDA follow setDevice; an extension op\'s output lands on the current device', async (t) => {
  const ops = await extension();
  const x = gx.randn([6], { dtype: 'float64', generator: new gx.Generator(7) });
  const want = values(x).map((v) => 2 * v + 1);
  t.deepEqual(values(ops.twicePlus(x) as gx.Tensor), want);
  if (COUNT === 0) {
    t.is(ops.here(), 'cpu');
    t.throws(() => ops.toCuda(x), { message: /^curdev_ext::to_cuda: to: .*(CPU only|cuda:0)/ });
    return;
  }
  t.is(ops.here(), 'cuda:0');
  onDevice(LAST, () => {
    t.is(ops.here(), `cuda:${LAST}`);
    const moved = ops.toCuda(x) as gx.Tensor;
    t.is(String(moved.device), `cuda:${LAST}`);
    t.deepEqual(values(moved), values(x));
    const ones = ops.onesCuda(3) as gx.Tensor;
    t.is(String(ones.device), `cuda:${LAST}`);
    t.deepEqual(values(ones), [1, 1, 1]);
    const y = ops.twicePlus(x.to('cuda')) as gx.Tensor;
    t.is(String(y.device), `cuda:${LAST}`);
    t.deepEqual(values(y), want);
  });
});

twoGpus('the current device is per thread: a worker starts on cuda:0 while the main thread is on cuda:1', async (t) => {
  const script = `
    const { parentPort, workerData } = require('worker_threads');
    const gx = require(workerData.lib);
    const before = gx.cuda.currentDevice();
    gx.cuda.setDevice(0);
    parentPort.postMessage({ before, device: String(gx.ones([1], { device: 'cuda' }).device) });`;
  gx.cuda.setDevice(1);
  try {
    const w = new Worker(script, { eval: true, workerData: { lib: LIB } });
    const got = await new Promise<{ before: number; device: string }>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    await w.terminate();
    t.deepEqual(got, { before: 0, device: 'cuda:0' });
    t.is(gx.cuda.currentDevice(), 1, "the worker's setDevice(0) left this thread on cuda:1");
  } finally {
    gx.cuda.setDevice(0);
  }
});

/** A script that prints what a process sees: GPUEXT_DEVICE, its current device, and where 'cuda' puts a tensor. */
function probeScript(): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gx-curdev-run-')), 'probe.js');
  fs.writeFileSync(file, `const gx = require(${JSON.stringify(LIB)});
const gpu = gx.cuda.isAvailable();
console.log(JSON.stringify({ rank: process.env.RANK ?? null, env: process.env.GPUEXT_DEVICE ?? null,
  current: gpu ? gx.cuda.currentDevice() : null, device: gpu ? String(gx.ones([2], { device: 'cuda' }).device) : null }));
`);
  return file;
}

type Probe = { rank: string | null; env: string | null; current: number | null; device: string | null };
const probes = (stdout: string): Probe[] =>
  stdout.trim().split('\n').map((l) => JSON.parse(l) as Probe).sort((a, b) => Number(a.rank) - Number(b.rank));

/** What a process with LOCAL_RANK (or GPUEXT_DEVICE) `local` should see when the launcher sets the device. */
function expected(local: number, set: boolean): Probe {
  const index = set && COUNT > 0 ? local % COUNT : 0;
  return { rank: String(local), env: set ? String(local) : null, current: COUNT > 0 ? index : null, device: COUNT > 0 ? `cuda:${index}` : null };
}

test('GPUEXT_DEVICE=k: cuda:(k mod GPUs) current at load, quietly; a bad value is refused naming it', (t) => {
  const file = probeScript();
  const env = (v: string): NodeJS.ProcessEnv => ({ ...process.env, GPUEXT_DEVICE: v, RANK: '0' });
  const bad = spawnSync(process.execPath, [file], { encoding: 'utf8', env: env('one') });
  t.not(bad.status, 0);
  t.regex(bad.stderr, /gpuext: GPUEXT_DEVICE must be a device index \(an integer >= 0\), got "one"/);
  for (const k of [LAST, COUNT + LAST]) {
    const r = spawnSync(process.execPath, [file], { encoding: 'utf8', env: env(String(k)) });
    t.is(r.status, 0, r.stderr);
    t.is(r.stderr, '', `GPUEXT_DEVICE=${k}: nothing said`);
    t.deepEqual(probes(r.stdout), [{ ...expected(k, true), rank: '0' }], `GPUEXT_DEVICE=${k}`);
  }
});

test("gpuext run --nproc-per-node 2: rank k's { device: 'cuda' } is cuda:k; --no-set-device and GPUEXT_RUN_SET_DEVICE=0 leave it alone", (t) => {
  const file = probeScript();
  const run = (args: string[], env: NodeJS.ProcessEnv = process.env): Probe[] => {
    const { GPUEXT_DEVICE: _drop, ...clean } = env;
    const r = spawnSync(process.execPath, [CLI, 'run', '--nproc-per-node', '2', ...args, file], { encoding: 'utf8', env: clean, timeout: 60_000 });
    t.is(r.status, 0, r.stderr);
    return probes(r.stdout);
  };
  t.deepEqual(run([]), [expected(0, true), expected(1, true)]);
  t.deepEqual(run(['--no-set-device']), [expected(0, false), expected(1, false)]);
  t.deepEqual(run([], { ...process.env, GPUEXT_RUN_SET_DEVICE: '0' }), [expected(0, false), expected(1, false)]);
});
