#!/usr/bin/env node
// Finds the CUDA toolkit, and decides what a source build of gpuext compiles
// CUDA code for (cudaPlan); used by binding.gyp, build-core.js, build-ops.js
// and the build toolkit.
//   node scripts/find-cuda.js home      -> CUDA root ("" when not found)
//   node scripts/find-cuda.js enabled   -> 1 or 0 (whether the plan has CUDA)
//   node scripts/find-cuda.js gencode   -> nvcc -gencode flags for the plan's archs
//   node scripts/find-cuda.js fatbin    -> nvcc's fatbinary flags (compression, for packing)
// The plan, first match wins:
//   GPUEXT_NO_CUDA=1 or no toolkit  -> CPU only
//   GPUEXT_CUDA_ARCH=sm_80,sm_90 | all | native -> those archs
//   GPUEXT_PREBUILD=1 (a build for packing, scripts/prebuild.js) -> all of DEFAULT_ARCHS
//   otherwise the GPUs present (nvidia-smi), and CPU only when there are none:
//   a clone compiles only what this machine can run.
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

/** sm_XY of each GPU nvidia-smi lists (sorted, no repeats); null when nvidia-smi does not run. */
function presentArchs() {
  let out;
  try {
    out = execFileSync('nvidia-smi', ['--query-gpu=compute_cap', '--format=csv,noheader'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 30000 });
  } catch {
    return null;
  }
  const archs = out.split('\n').map((l) => /^\s*(\d+)\.(\d+)\s*$/.exec(l)).filter(Boolean).map((m) => `sm_${m[1]}${m[2]}`);
  return [...new Set(archs)].sort();
}

/**
 * What a source build compiles: { cuda: false, why } or { cuda: true, home, arch, why },
 * arch being a GPUEXT_CUDA_ARCH-style spec ('sm_80,sm_90' or 'native'); `why` is for
 * the one line the build prints. Computed once per process.
 */
let planCache;
function cudaPlan() {
  if (planCache) return planCache;
  const howTo = 'to build the CUDA code anyway, set GPUEXT_CUDA_ARCH=sm_90 (your GPU\'s arch) or GPUEXT_CUDA_ARCH=all';
  const home = cudaHome();
  const spec = (process.env.GPUEXT_CUDA_ARCH || '').trim();
  if (process.env.GPUEXT_NO_CUDA === '1') {
    planCache = { cuda: false, why: 'CUDA disabled by GPUEXT_NO_CUDA=1' };
  } else if (!home) {
    planCache = { cuda: false, why: 'no CUDA toolkit found (looked at CUDA_HOME, CUDA_PATH, /usr/local/cuda, nvcc on PATH)' };
  } else if (spec) {
    planCache = { cuda: true, home, arch: spec === 'all' ? DEFAULT_ARCHS.join(',') : spec, why: `GPUEXT_CUDA_ARCH=${spec}` };
  } else if (process.env.GPUEXT_PREBUILD === '1') {
    planCache = { cuda: true, home, arch: DEFAULT_ARCHS.join(','), why: 'a build for packing: every default arch' };
  } else {
    const present = presentArchs();
    planCache = present && present.length
      ? { cuda: true, home, arch: present.join(','), why: 'the GPUs present (nvidia-smi)' }
      : { cuda: false, why: `no GPU found (${present ? 'nvidia-smi lists none' : 'nvidia-smi does not run'}); ${howTo}` };
  }
  return planCache;
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

/**
 * nvcc's fatbinary flags: in a build for packing, the device code compressed
 * for size. ops/softmax/softmax.cu for the five default archs + PTX, nvcc 13.0
 * (2026-11-29): 2.53 MB by default, 0.58 MB with -Xfatbin -compress-all,
 * 0.47 MB with --compress-mode=size, 3.11 MB with --no-compress. A source
 * build (its own GPUs' archs only) keeps nvcc's default.
 */
function fatbinFlags() {
  return process.env.GPUEXT_PREBUILD === '1' ? ['--compress-mode=size'] : [];
}

module.exports = { cudaHome, cudaPlan, presentArchs, gencode, fatbinFlags, DEFAULT_ARCHS };

if (require.main === module) {
  const what = process.argv[2];
  if (what === 'home') console.log(cudaHome());
  else if (what === 'enabled') console.log(cudaPlan().cuda ? 1 : 0);
  else if (what === 'gencode') console.log(cudaPlan().cuda ? gencode(cudaPlan().arch).join(' ') : '');
  else if (what === 'fatbin') console.log(fatbinFlags().join(' '));
  else {
    console.error('usage: find-cuda.js home|enabled|gencode|fatbin');
    process.exit(2);
  }
}
