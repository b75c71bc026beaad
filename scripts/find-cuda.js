#!/usr/bin/env node
// Finds the CUDA toolkit for binding.gyp and the build toolkit.
//   node scripts/find-cuda.js home      -> CUDA root ("" when not found)
//   node scripts/find-cuda.js enabled   -> 1 or 0
//   node scripts/find-cuda.js gencode   -> nvcc -gencode flags for GPUEXT_CUDA_ARCH
// GPUEXT_NO_CUDA=1 builds a CPU-only core even where nvcc exists.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

// Default targets: every arch CUDA 13 supports that a data-centre or desktop
// GPU of the last years has, plus PTX of the newest so later GPUs JIT it.
const DEFAULT_ARCHS = ['sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90'];

function hasToolkit(home) {
  return Boolean(home) && fs.existsSync(path.join(home, 'bin', 'nvcc')) &&
    fs.existsSync(path.join(home, 'include', 'cuda_runtime.h'));
}

function cudaHome() {
  if (process.env.GPUEXT_NO_CUDA === '1') return '';
  const candidates = [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'];
  try {
    const nvcc = execFileSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' }).trim();
    if (nvcc) candidates.push(path.dirname(path.dirname(fs.realpathSync(nvcc))));
  } catch {
    // no nvcc on PATH
  }
  return candidates.find(hasToolkit) || '';
}

function gencode(spec) {
  const archs = (spec || DEFAULT_ARCHS.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  if (archs.length === 1 && archs[0] === 'native') return ['-arch=native'];
  const flags = [];
  for (const a of archs) {
    const m = /^(?:sm_|compute_)?(\d+[a-z]?)$/.exec(a);
    if (!m) throw new Error(`GPUEXT_CUDA_ARCH: '${a}' is not an arch like sm_90 (or 'native')`);
    flags.push(`-gencode=arch=compute_${m[1]},code=sm_${m[1]}`);
  }
  const newest = /(\d+[a-z]?)$/.exec(archs[archs.length - 1])[1];
  flags.push(`-gencode=arch=compute_${newest},code=compute_${newest}`);
  return flags;
}

module.exports = { cudaHome, gencode, DEFAULT_ARCHS };

if (require.main === module) {
  const what = process.argv[2];
  if (what === 'home') console.log(cudaHome());
  else if (what === 'enabled') console.log(cudaHome() ? 1 : 0);
  else if (what === 'gencode') console.log(gencode(process.env.GPUEXT_CUDA_ARCH).join(' '));
  else {
    console.error('usage: find-cuda.js home|enabled|gencode');
    process.exit(2);
  }
}
