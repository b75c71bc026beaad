// NODE_DEBUG=gpuext: each subsystem's lines appear (in a child process, as a
// user would run it): binaries, BLAS, allocator growth and out-of-memory,
// gx.fuse, the extension build cache, the kernel cache, NCCL and the
// convolutions' path (on a GPU); a
// finer section (gpuext:load) shows only its own, and nothing prints with
// the log off.
import test, { type ExecutionContext } from 'ava';
import fs from 'fs';
import path from 'path';

import * as gx from '../lib/index';
import { findBinary } from '../lib/platform/binaries';
import { opsLibraryPath } from '../lib/extension/runtime';
import { backendInfo } from '../lib/rtc/compiler';
import { detectToolchain } from '../lib/toolkit/toolchain';
import { gpuext, removeTmpdirsAfter, run, tmpdir, workspace } from './cli-helpers';
import { cudaTest } from './helpers';

removeTmpdirsAfter();
const indexJs = path.resolve(__dirname, '../lib/index.js');
const compilerJs = path.resolve(__dirname, '../lib/rtc/compiler.js');
const cudnnJs = path.resolve(__dirname, '../lib/ops/conv/cudnn.js');

/** Runs `script` with node -e and NODE_DEBUG=`debug` (unset when undefined); resolves with its output. */
function node(script: string, debug: string | undefined, cwd = process.cwd()): ReturnType<typeof run> {
  const env: NodeJS.ProcessEnv = { NODE_DEBUG: debug ?? '' };
  return run(process.execPath, ['-e', script], cwd, env);
}

// A random size, so the logged figure comes from this run: 8-40 MiB of float32.
const MIB = 8 + Math.floor(Math.random() * 32);
const USE_OPS = `const gx = require(${JSON.stringify(indexJs)});
const a = gx.randn([48, 48]); gx.matmul(a, a).toArraySync();
const big = gx.randn([${MIB}, 1024, 256]);
setTimeout(() => big.dispose(), 300);`;

test('NODE_DEBUG=gpuext logs the binaries loaded, the CPU BLAS and the allocator growth', async (t) => {
  const r = await node(USE_OPS, 'gpuext');
  t.is(r.code, 0, r.stderr);
  const core = findBinary('core');
  t.truthy(core);
  t.regex(r.stderr, new RegExp(`^GPUEXT \\d+: load: core ${escape(core ?? '')} \\((built here|prebuilt), (built with CUDA|CPU-only), C ABI \\d+\\.\\d+\\)$`, 'm'));
  t.regex(r.stderr, new RegExp(`^GPUEXT \\d+: load: ops ${escape(opsLibraryPath())} \\((built here|prebuilt|named by GPUEXT_OPS_LIBRARY)\\)$`, 'm'));
  t.regex(r.stderr, /^GPUEXT \d+: blas: gemm=\S.*, lapack=\S.*, kernel=(avx512f|avx2\+fma|generic)$/m);
  // The allocator grew by at least the big tensor (the small ones may share the sample).
  const grown = [...r.stderr.matchAll(/^GPUEXT \d+: alloc: cpu: reserved ([\d.]+) MiB -> ([\d.]+) MiB/gm)];
  t.true(grown.length >= 1, r.stderr);
  t.true(grown.some((m) => Number(m[2]) - Number(m[1]) >= MIB * 1.0 - 0.05), `wanted growth of ${MIB} MiB:\n${r.stderr}`);
  t.is(r.stdout, '');
});

/** A child that makes `fails` allocations too large for `device` and grows its allocator by about `mib` MiB. */
function oomScript(device: string, fails: number, mib: number): string {
  return `const gx = require(${JSON.stringify(indexJs)});
${device === 'cpu' ? '' : `gx.memory.setLimit(${(mib + 64) * 2 ** 20}, '${device}');`}
const keep = gx.empty([${mib} * 262144], { device: '${device}' });
for (let i = 0; i < ${fails}; i++) { try { gx.empty([${device === 'cpu' ? '2 ** 50' : `${mib + 128} * 262144`}], { device: '${device}' }); process.exit(3); } catch {} }
setTimeout(() => keep.dispose(), 250);`;
}

for (const device of ['cpu', 'cuda']) {
  const register = device === 'cuda' ? cudaTest : (title: string, body: (t: ExecutionContext) => Promise<void>): void => test(title, body);
  register(`the allocator log says an allocation ran out of memory after the retry [${device}]`, async (t) => {
    const fails = 1 + Math.floor(Math.random() * 3);
    const mib = 4 + Math.floor(Math.random() * 12);
    const r = await node(oomScript(device, fails, mib), 'gpuext:alloc');
    t.is(r.code, 0, r.stderr);
    const where = device === 'cpu' ? 'cpu' : 'cuda:0';
    const counts = [...r.stderr.matchAll(new RegExp(`^GPUEXT:ALLOC \\d+: ${where}: (\\d+) allocation\\(s\\) ran out of memory after freeing the cache and retrying`, 'gm'))];
    t.is(counts.reduce((n, m) => n + Number(m[1]), 0), fails, r.stderr);
    t.regex(r.stderr, new RegExp(`^GPUEXT:ALLOC \\d+: ${where}: reserved 0\\.0 MiB -> `, 'm'));
  });
}

cudaTest('NCCL set-up is logged: the communicators, their devices and the NCCL version', async (t) => {
  const n = gx.cuda.deviceCount();
  const r = await node(`const gx = require(${JSON.stringify(indexJs)});
(async () => {
  const devices = Array.from({ length: ${n} }, (_, i) => 'cuda:' + i);
  const g = gx.distributed.initDeviceGroup(devices);
  const xs = devices.map((d) => gx.randn([5], { device: d }));
  await g.allReduce(xs, 'sum');
  process.stdout.write(gx.distributed.ncclVersion());
  g[Symbol.dispose]();
})();`, 'gpuext:nccl');
  t.is(r.code, 0, r.stderr);
  const devices = Array.from({ length: n }, (_, i) => `cuda:${i}`).join(', ');
  t.regex(r.stderr, new RegExp(`^GPUEXT:NCCL \\d+: communicators: ${n} ranks in this process on ${devices}, NCCL ${escape(r.stdout)}$`, 'm'));
});

test('a finer section logs only its subsystem, and nothing prints with the log off', async (t) => {
  const fine = await node(USE_OPS, 'gpuext:load');
  t.is(fine.code, 0, fine.stderr);
  t.regex(fine.stderr, /^GPUEXT:LOAD \d+: core \S+gpuext_core\.node/m);
  t.regex(fine.stderr, /^GPUEXT:LOAD \d+: ops \S+gx_ops\.node/m);
  t.notRegex(fine.stderr, /BLAS|ALLOC|blas:|alloc:/);
  const off = await node(USE_OPS, undefined);
  t.is(off.code, 0, off.stderr);
  t.is(off.stderr, '');
});

test('gx.fuse says once why a function runs unfused', async (t) => {
  const r = await node(`const gx = require(${JSON.stringify(indexJs)});
const f = gx.fuse(function soft(x) { return gx.softmax(x, 0); });
for (let i = 0; i < 3; i++) f(gx.randn([5])).toArraySync();`, 'gpuext:fuse');
  t.is(r.code, 0, r.stderr);
  t.is([...r.stderr.matchAll(/^GPUEXT:FUSE \d+: gx\.fuse\(soft\) runs unfused: \S/gm)].length, 1, r.stderr);
});

cudaTest('CUDA convolutions say once which path runs and why (cuDNN, or unfold + matmul)', async (t) => {
  const r = await node(`const gx = require(${JSON.stringify(indexJs)});
const x = gx.randn([2, 3, 8, 8], { device: 'cuda' }), w = gx.randn([4, 3, 3, 3], { device: 'cuda' });
const conv = () => gx.nn.functional.conv2d(x, w, null, { padding: 1 }).toArraySync();
for (let i = 0; i < 3; i++) conv();
require(${JSON.stringify(cudnnJs)}).setCudnnEnabled(false);
for (let i = 0; i < 3; i++) conv();`, 'gpuext:conv');
  t.is(r.code, 0, r.stderr);
  const lines = r.stderr.match(/^GPUEXT:CONV \d+: .*$/gm) ?? [];
  // cuDNN loaded, or why not: one line either way; then switched off: one line more.
  t.is(lines.filter((l) => /: cuDNN \d+ loaded: CUDA convolutions run through it/.test(l) || /: CUDA convolutions use unfold \+ matmul: (?!cuDNN is switched off)\S/.test(l)).length, 1, r.stderr);
  t.is(lines.filter((l) => /: CUDA convolutions use unfold \+ matmul: cuDNN is switched off/.test(l)).length, 1, r.stderr);
});

test('an extension build logs its object cache: misses, then hits and a skipped link', async (t) => {
  const proj = workspace('log-build');
  fs.mkdirSync(path.join(proj, 'ops'));
  fs.writeFileSync(path.join(proj, 'setup.config.json'), JSON.stringify({ name: 'logged', sources: ['ops/*.cpp'] }));
  fs.writeFileSync(path.join(proj, 'ops', 'op.cpp'), `#include <gpuext/extension.h>
namespace { gx::Tensor ident(const gx::Tensor& x) { return x; } }
GX_LIBRARY(logged, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident); }
`);
  const first = await gpuext(['build'], proj, { NODE_DEBUG: 'gpuext:build' });
  t.is(first.code, 0, first.stderr);
  t.regex(first.stderr, /^GPUEXT:BUILD \d+: logged: miss, compiling ops\/op\.cpp$/m);
  t.regex(first.stderr, /^GPUEXT:BUILD \d+: logged: link needed \(build\/logged\.node\)$/m);
  const again = await gpuext(['build'], proj, { NODE_DEBUG: 'gpuext' });
  t.is(again.code, 0, again.stderr);
  t.regex(again.stderr, /^GPUEXT \d+: build: logged: cache hit [0-9a-f]{16}\.o ops\/op\.cpp$/m);
  t.regex(again.stderr, /^GPUEXT \d+: build: logged: link skipped, outputs up to date$/m);
  t.notRegex(again.stderr, /miss, compiling/);
});

const INFO = backendInfo();
const compilerTest = INFO.backend !== null || detectToolchain().nvcc !== undefined ? test : test.skip;

compilerTest('run-time kernels log their cache: a miss, a memory hit, then a disk hit in a new process', async (t) => {
  const cacheDir = tmpdir('log-kernels');
  const scale = (1 + Math.random()).toFixed(6);
  const req = { source: `extern "C" __global__ void k(float* x) { x[threadIdx.x] *= ${scale}f; }`, name: 'k.cu', arch: 'sm_90' };
  const script = (times: number): string => `const c = require(${JSON.stringify(compilerJs)});
let r; for (let i = 0; i < ${times}; i++) r = c.compile(${JSON.stringify(req)}, { cacheDir: ${JSON.stringify(cacheDir)} });
process.stdout.write(r.key);`;
  const first = await node(script(2), 'gpuext:cache');
  t.is(first.code, 0, first.stderr);
  const key = first.stdout.slice(0, 16);
  t.regex(first.stderr, new RegExp(`^GPUEXT:CACHE \\d+: kernel ${key}: miss, compiled \\((nvrtc|nvcc)\\)$`, 'm'));
  t.regex(first.stderr, new RegExp(`^GPUEXT:CACHE \\d+: kernel ${key}: memory hit `, 'm'));
  const second = await node(script(1), 'gpuext');
  t.is(second.code, 0, second.stderr);
  t.regex(second.stderr, new RegExp(`^GPUEXT \\d+: cache: kernel ${key}: disk hit `, 'm'));
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
