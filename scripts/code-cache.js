#!/usr/bin/env node
// Writes V8's code cache of gpuext's modules into dist/.code-cache/ (NOTE
// [ Code cache ] in lib/platform/code-cache.ts): a child process loads
// gpuext with GPUEXT_CODE_CACHE=write and runs a short warm-up on the CPU (a
// jit.rawkernel, a vectorize and a fuse, each translated from an empty
// translation cache (CUDA source and PTX) and run on the simulator, plus a few eager ops), so the
// functions the first jit call runs are compiled in the cache. Run by the
// build after tsc; a failure leaves no cache, and gpuext then compiles from
// source as before.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.resolve(__dirname, '..');

function warmUp() {
  const gx = require(path.join(root, 'dist', 'lib'));
  const { jit } = gx;
  const x = gx.arange(0, 8, 1, { dtype: 'float32' });
  const y = gx.zeros([8]);
  const square = jit.rawkernel(function elementwise_square(x, y, size) {
    const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
    const ntid = jit.gridDim.x * jit.blockDim.x;
    for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
  });
  square.source(x, y, 8);
  square.ptx(x, y, 8);
  square([1], [8], [x, y, 8]);
  const SQRT_2PI = Math.sqrt(2 * Math.PI);
  const pdf = gx.vectorize(['float32(float32, float32, float32)'], (v, mean, sigma) => Math.exp(-0.5 * ((v - mean) / sigma) ** 2) / (sigma * SQRT_2PI));
  pdf(x, 0, 1);
  pdf.source();
  pdf.ptx();
  const f = gx.fuse((a, b) => gx.sin(a).add(gx.cos(b)));
  f(x, y);
  gx.matmul(x.reshape([2, 4]), x.reshape([4, 2])).sum().item();
}

if (process.argv[2] === '--child') {
  warmUp();
} else {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-code-cache-'));
  const r = spawnSync(process.execPath, [__filename, '--child'], {
    stdio: 'inherit',
    env: { ...process.env, GPUEXT_CODE_CACHE: 'write', GPUEXT_CACHE_DIR: cacheDir },
  });
  fs.rmSync(cacheDir, { recursive: true, force: true });
  if (r.status !== 0) {
    console.error('gpuext: the code cache was not written (modules compile from source)');
  } else {
    const dir = path.join(root, 'dist', '.code-cache');
    const file = path.join(dir, `${process.version}-${process.arch}.bin`);
    console.log(`gpuext: code cache written (${(fs.statSync(file).size / 1e6).toFixed(1)} MB, ${path.relative(root, file)})`);
  }
}
