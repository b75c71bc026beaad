#!/usr/bin/env node
// Builds the core addon (build/Release/gpuext_core.node) with node-gyp; run by
// `npm install`. With no CUDA toolkit it builds a CPU-only core and says so once.
//   GPUEXT_CUDA_ARCH=sm_90 | sm_80,sm_90 | native   archs for the core's kernels
//   GPUEXT_NO_CUDA=1                                force a CPU-only core
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { cudaHome } = require('./find-cuda');

const root = path.resolve(__dirname, '..');
const home = cudaHome();
if (home) {
  console.log(`gpuext: building the core with CUDA from ${home} (arch: ${process.env.GPUEXT_CUDA_ARCH || 'default list'})`);
} else {
  console.log('gpuext: no CUDA toolkit found (looked at CUDA_HOME, CUDA_PATH, /usr/local/cuda, nvcc on PATH); ' +
    'building a CPU-only core. Install the CUDA toolkit and run `npm rebuild gpuext` for GPU support.');
}

const nodeGyp = require.resolve('node-gyp/bin/node-gyp.js');
const jobs = String(Math.max(1, require('os').availableParallelism?.() ?? require('os').cpus().length));
const args = [nodeGyp, 'rebuild', '--jobs', jobs];
// node-gyp downloads Node's headers unless told where they are. Use the ones
// installed beside this node binary when npm has not named a nodedir, so the
// build works offline.
const prefix = path.resolve(path.dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) {
  args.push(`--nodedir=${prefix}`);
}
const result = spawnSync(process.execPath, args, {
  cwd: root,
  stdio: 'inherit',
  env: process.env,
});
if (result.status !== 0) {
  console.error('gpuext: building the core failed (see the compiler output above).');
  process.exit(result.status === null ? 1 : result.status);
}
