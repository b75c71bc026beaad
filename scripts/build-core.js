#!/usr/bin/env node
// Builds the core addon (build/Release/gpuext_core.node) with node-gyp, in
// parallel on every core; run by `npm install` in a checkout, and by
// scripts/install.js where no prebuilt binary fits. What CUDA code it compiles
// is cudaPlan()'s choice (scripts/find-cuda.js), said in one line:
//   GPUEXT_CUDA_ARCH=sm_90 | sm_80,sm_90 | all | native   archs for the core's kernels
//   GPUEXT_NO_CUDA=1                                     force a CPU-only core
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { cudaPlan } = require('./find-cuda');

const root = path.resolve(__dirname, '..');
const plan = cudaPlan();
console.log(plan.cuda
  ? `gpuext: building the core with CUDA from ${plan.home} for ${plan.arch} (${plan.why})`
  : `gpuext: building the core for the CPU only: ${plan.why}`);

// node-gyp: the pinned devDependency in a checkout; in an installed package,
// the one npm bundles and names to install scripts (npm_config_node_gyp).
function findNodeGyp() {
  try {
    return require.resolve('node-gyp/bin/node-gyp.js');
  } catch {
    const bundled = process.env.npm_config_node_gyp;
    if (bundled && fs.existsSync(bundled)) return bundled;
  }
  console.error('gpuext: node-gyp not found: run this through npm (`npm rebuild gpuext --build-from-source`), ' +
    'which provides it, or `npm install -g node-gyp`.');
  process.exit(1);
}

const jobs = String(Math.max(1, os.availableParallelism?.() ?? os.cpus().length));
const args = [findNodeGyp(), 'rebuild', '--jobs', jobs];
// node-gyp downloads Node's headers unless told where they are. Use the ones
// installed beside this node binary when npm has not named a nodedir, so the
// build works offline.
const prefix = path.resolve(path.dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) {
  args.push(`--nodedir=${prefix}`);
}
// binding.gyp asks find-cuda.js again: hand it the plan made here (nvidia-smi runs once).
const env = { ...process.env };
if (plan.cuda) env.GPUEXT_CUDA_ARCH = plan.arch;
else env.GPUEXT_NO_CUDA = '1';
const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env });
if (result.status !== 0) {
  console.error('gpuext: building the core failed (see the compiler output above).');
  process.exit(result.status === null ? 1 : result.status);
}
