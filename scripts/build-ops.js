#!/usr/bin/env node
// Builds the built-in ops (ops/**/*.cu, ops/**/*.cpp -> ops/build/gx_ops.node)
// with the extension toolkit from dist/ and the root setup.config.json: the
// same path user extensions take, compiling on every core. Run by `npm ci` /
// `npm install` in a checkout (the prepare script, after tsc), by
// scripts/install.js where no prebuilt binary fits, and `npm run build:ops`.
// CUDA archs are cudaPlan()'s choice (scripts/find-cuda.js), as the core's:
//   GPUEXT_CUDA_ARCH=sm_90 | sm_80,sm_90 | all | native   GPU archs
//   GPUEXT_NO_CUDA=1                                     force a CPU-only build
// A CPU-only plan leaves the .cu sources out, and GX_OPS_NO_CUDA their
// registrations.
//   --out-dir DIR   build there instead of the config's ops/build (scripts/prebuild.js)
//   --no-bindings   do not load the library to write its bindings (a cross
//                   build's library cannot load here; prebuild.js --arch)
'use strict';
const fs = require('fs');
const path = require('path');
const { cudaHome, cudaPlan, fatbinFlags } = require('./find-cuda');
const { buildJitMath } = require('./build-jit-math');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist', 'lib');
const config = path.join(root, 'setup.config.json');

/**
 * A build for packing (scripts/prebuild.js): the GPU code compressed, and on
 * linux the glibc floor's shim and link flags (scripts/glibc-floor.js).
 */
function forPacking(resolved) {
  const nvccFlags = [...resolved.nvccFlags, ...fatbinFlags()];
  if (process.platform !== 'linux') return { ...resolved, nvccFlags };
  const floor = require('./glibc-floor');
  return { ...resolved, nvccFlags, sources: [...resolved.sources, path.join(root, floor.SHIM)], linkFlags: floor.linkFlags() };
}

/**
 * CUDA's math as PTX for the jit (scripts/build-jit-math.js): it needs nvcc, not a GPU, so it is built
 * wherever a toolkit is found. Without it, jit kernels calling library math go through NVRTC.
 */
function jitMath(outDir) {
  const home = cudaHome();
  if (!home || process.env.GPUEXT_NO_CUDA === '1') return;
  const err = buildJitMath(outDir, path.join(home, 'bin', 'nvcc'));
  console.log(err === '' ? `gpuext: built ${path.relative(root, path.join(outDir, 'jit-math.ptx'))} (CUDA's math for the jit's PTX path)`
    : `gpuext: ${err} (jit kernels calling library math go through NVRTC)`);
}

function main() {
  if (!fs.existsSync(path.join(dist, 'toolkit', 'build.js'))) {
    // --if-compiled: nothing to do before tsc has run (a checkout's prepare script compiles dist/, then builds the ops).
    if (process.argv.includes('--if-compiled')) return 0;
    console.error('gpuext: building the ops needs the compiled toolkit in dist/; run `npx tsc -p tsconfig.json` first.');
    return 1;
  }
  const { build } = require(path.join(dist, 'toolkit', 'build.js'));
  const { loadConfig } = require(path.join(dist, 'toolkit', 'config.js'));
  const { summary, reportError } = require(path.join(dist, 'cli', 'build.js'));
  const plan = cudaPlan();
  const withCuda = plan.cuda;
  const arch = withCuda ? plan.arch : 'native';
  const out = { progress: false, out: (l) => console.log(l), err: (l) => console.error(l) };
  let resolved;
  try {
    resolved = loadConfig(config, { arch });
  } catch (e) {
    return reportError(e, out);
  }
  const at = process.argv.indexOf('--out-dir');
  if (at > 0) {
    if (!process.argv[at + 1]) {
      console.error('gpuext: --out-dir needs a directory');
      return 2;
    }
    resolved = { ...resolved, outDir: path.resolve(process.argv[at + 1]) };
  }
  // __FILE__ (in error messages) says ops/... and csrc/..., not this checkout's path,
  // which a packed prebuilt binary would otherwise carry.
  const prefixMap = `-ffile-prefix-map=${root}${path.sep}=`;
  resolved = { ...resolved, cxxFlags: [...resolved.cxxFlags, prefixMap], nvccFlags: [...resolved.nvccFlags, '-Xcompiler', prefixMap] };
  if (process.env.GPUEXT_PREBUILD === '1') resolved = forPacking(resolved);
  if (!withCuda) {
    resolved = {
      ...resolved,
      sources: resolved.sources.filter((s) => !s.endsWith('.cu')),
      defines: [...resolved.defines, 'GX_OPS_NO_CUDA'],
    };
  }
  console.log(withCuda ? `gpuext: building the built-in ops with CUDA for ${arch} (${plan.why})`
    : `gpuext: building the built-in ops for the CPU only: ${plan.why}`);
  const verbose = process.env.GPUEXT_VERBOSE === '1';
  return build({
    resolved,
    verbose,
    bindings: !process.argv.includes('--no-bindings'),
    onEvent: (e) => {
      if (e.type === 'compiled') console.log(`  [${e.index}/${e.total}] ${e.tool} ${e.file} ${e.seconds.toFixed(1)}s`);
      else if (verbose && e.type === 'command') console.log(`$ ${e.argv.join(' ')}`);
      else if (e.type === 'wait') console.error(`  waiting for another build (pid ${e.holder.pid})`);
    },
  }).then((r) => {
    console.log(`gpuext: ${summary(r)}`);
    jitMath(resolved.outDir);
    return 0;
  }, (e) => reportError(e, out));
}

Promise.resolve(main()).then((code) => {
  process.exitCode = code;
});
