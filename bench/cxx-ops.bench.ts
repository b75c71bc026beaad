// The cost of calling a built-in op from C++ (<gpuext/ops.h>: a cached handle,
// then gx_api.call_op into the op registry), one element, on every device:
//   - the launch itself: the extension's own one-element add kernel launched
//     directly on the current stream (CUDA), or the addition inline (CPU);
//   - gx::ops::raw::add into a preallocated out: the C ABI call, the core's
//     schema checks and dispatch, and the op's launch;
//   - gx::ops::add: the same plus deciding the result dtype and allocating it;
//   - gx.add from TypeScript, into a new tensor and into `out`, for reference.
// Each C++ figure is a loop of CALLS calls inside one extension call (so no JS
// crossing is in it), divided by CALLS; CUDA work is synchronized inside the
// timed region. The target (issue 34): raw::add within 1 µs of the launch.
//
//   npm run bench:cxx     (tsc, then node dist/bench/cxx-ops.bench.js)
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { detectToolchain } from '../lib/toolkit/toolchain';
import { fmt, median, nowNs, elapsedNs, perCallNs, printHeader, printTable, section, progress } from './util';

const CALLS = 20_000;
const ROUNDS = 7;
const TARGET_OVER_LAUNCH_US = 1;

// The .cu needs nvcc; without it the extension is the C++ part alone (CPU figures only).
const COMMON = `
#include <gpuext/extension.h>
#include <gpuext/ops.h>

void raw_add(const gx::Tensor& a, const gx::Tensor& b, const gx::Tensor& out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gx::ops::raw::add(a, b, a.dtype(), out);
}
void ops_add(const gx::Tensor& a, const gx::Tensor& b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gx::ops::add(a, b);
}
void direct_add_cpu(const gx::Tensor& a, const gx::Tensor& b, const gx::Tensor& out, int64_t n) {
  volatile float* c = out.data_ptr<float>();
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) c[0] = x[0] + y[0];
}
`;
const CUDA = `
__global__ void add_one(const float* a, const float* b, float* c) { c[0] = a[0] + b[0]; }
void direct_add_cuda(const gx::Tensor& a, const gx::Tensor& b, const gx::Tensor& out, int64_t n) {
  cudaStream_t s = gx::current_stream();
  for (int64_t i = 0; i < n; ++i) add_one<<<1, 1, 0, s>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>());
  GX_CHECK_LAUNCH();
}
`;
const registration = (cuda: boolean): string => `
GX_LIBRARY(cxx_ops_bench, m) {
  m.def("raw_add(Tensor a, Tensor b, Tensor out, int n) -> ()").impl(gx::kCPU, raw_add)${cuda ? '.impl(gx::kCUDA, raw_add)' : ''};
  m.def("ops_add(Tensor a, Tensor b, int n) -> ()").impl(gx::kCPU, ops_add)${cuda ? '.impl(gx::kCUDA, ops_add)' : ''};
  m.def("direct_add(Tensor a, Tensor b, Tensor out, int n) -> ()").impl(gx::kCPU, direct_add_cpu)${cuda ? '.impl(gx::kCUDA, direct_add_cuda)' : ''};
}
`;

type Op = (...args: unknown[]) => unknown;

async function main(): Promise<void> {
  const cuda = gx.cuda.isAvailable();
  const nvcc = detectToolchain().nvcc !== undefined;
  printHeader('gpuext C++ op calls (<gpuext/ops.h>), one element, µs per call', cuda);
  progress('building the benchmark extension');
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-cxx-bench-'));
  const src = nvcc ? { cuda: COMMON + CUDA + registration(true) } : { cpp: COMMON + registration(false) };
  const ops = await gx.loadInline({ name: 'cxx_ops_bench', ...src, buildDirectory: cache, arch: cuda ? 'native' : 'sm_90' }) as Record<string, Op>;
  const devices: ('cpu' | 'cuda')[] = cuda ? ['cpu', 'cuda'] : ['cpu'];
  const rows: string[][] = [];
  const problems: string[] = [];
  for (const device of devices) {
    const sync = (): void => { if (device === 'cuda') gx.cuda.synchronize(); };
    const a = gx.tensor([1.5], { dtype: 'float32', device });
    const b = gx.tensor([2.25], { dtype: 'float32', device });
    const out = gx.empty([1], { dtype: 'float32', device });
    // One timed extension call of CALLS C++ calls, synchronized; the median of ROUNDS.
    const inCxx = (name: string, ...args: unknown[]): number => {
      ops[name](...args, 100);
      sync();
      const samples: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const t0 = nowNs();
        ops[name](...args, CALLS);
        sync();
        samples.push(elapsedNs(t0) / CALLS / 1000);
      }
      return median(samples);
    };
    const launch = inCxx('directAdd', a, b, out);
    const raw = inCxx('rawAdd', a, b, out);
    const alloc = inCxx('opsAdd', a, b);
    const ts = perCallNs(() => gx.add(a, b).dispose(), CALLS, 1000, { warmup: 1000, sync }) / 1000;
    const tsOut = perCallNs(() => { gx.add(a, b, { out }); }, CALLS, 1000, { warmup: 1000, sync }) / 1000;
    const got = Number(out.toArraySync()[0]);
    if (got !== 3.75) problems.push(`${device}: out holds ${got}, not 3.75`);
    if (device === 'cuda' && raw - launch > TARGET_OVER_LAUNCH_US) {
      problems.push(`cuda: raw::add is ${fmt(raw - launch)} µs over the launch (target ≤ ${TARGET_OVER_LAUNCH_US})`);
    }
    rows.push([device, fmt(launch), fmt(raw), fmt(raw - launch), fmt(alloc), fmt(ts), fmt(tsOut)]);
    [a, b, out].forEach((x) => x.dispose());
  }
  section(`one-element float32 add, ${CALLS} calls per C++ loop, median of ${ROUNDS}`);
  printTable(['device', 'launch', 'raw::add', 'over launch', 'ops::add', 'TS gx.add', 'TS gx.add(out)'], rows);
  if (!cuda) console.log('  (no GPU: CPU figures only; the launch column is the addition done inline)');
  for (const p of problems) console.log(`  PROBLEM: ${p}`);
  if (problems.length > 0) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
