#!/usr/bin/env node
// Builds the built-in ops (ops/**/*.cu, ops/**/*.cpp -> ops/build/gx_ops.node)
// with the extension toolkit from dist/ and the root setup.config.json: the
// same path user extensions take. Run by `npm ci` / `npm install` (the
// install script, when dist/ is there as in a published package; else the
// prepare script, after tsc) and `npm run build:ops`.
//   GPUEXT_CUDA_ARCH=sm_90 | sm_80,sm_90 | native   GPU archs (default: the core's default list)
//   GPUEXT_NO_CUDA=1                                force a CPU-only build
// Without a CUDA toolkit the build is CPU-only, as the core's is: the .cu
// sources are left out and GX_OPS_NO_CUDA leaves their registrations out.
'use strict';
const fs = require('fs');
const path = require('path');
const { cudaHome, DEFAULT_ARCHS } = require('./find-cuda');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist', 'lib');
const config = path.join(root, 'setup.config.json');

function main() {
  if (!fs.existsSync(path.join(dist, 'build', 'build.js'))) {
    // The install script passes --if-compiled: in a git checkout dist/ does not exist yet at install time
    // (prepare compiles it and builds the ops); an installed package ships dist/ and builds the ops here.
    if (process.argv.includes('--if-compiled')) return 0;
    console.error('gpuext: building the ops needs the compiled toolkit in dist/; run `npx tsc -p tsconfig.json` first.');
    return 1;
  }
  const { build } = require(path.join(dist, 'build', 'build.js'));
  const { loadConfig } = require(path.join(dist, 'build', 'config.js'));
  const { summary, reportError } = require(path.join(dist, 'cli', 'build.js'));
  const withCuda = Boolean(cudaHome());
  const arch = process.env.GPUEXT_CUDA_ARCH || DEFAULT_ARCHS.join(',');
  const out = { progress: false, out: (l) => console.log(l), err: (l) => console.error(l) };
  let resolved;
  try {
    resolved = loadConfig(config, { arch });
  } catch (e) {
    return reportError(e, out);
  }
  if (!withCuda) {
    resolved = {
      ...resolved,
      sources: resolved.sources.filter((s) => !s.endsWith('.cu')),
      defines: [...resolved.defines, 'GX_OPS_NO_CUDA'],
    };
  }
  console.log(`gpuext: building the built-in ops ${withCuda ? `with CUDA (arch: ${arch})` : '(CPU only: no CUDA toolkit)'}`);
  const verbose = process.env.GPUEXT_VERBOSE === '1';
  return build({
    resolved,
    verbose,
    onEvent: (e) => {
      if (e.type === 'compiled') console.log(`  [${e.index}/${e.total}] ${e.tool} ${e.file} ${e.seconds.toFixed(1)}s`);
      else if (verbose && e.type === 'command') console.log(`$ ${e.argv.join(' ')}`);
      else if (e.type === 'wait') console.error(`  waiting for another build (pid ${e.holder.pid})`);
    },
  }).then((r) => {
    console.log(`gpuext: ${summary(r)}`);
    return 0;
  }, (e) => reportError(e, out));
}

Promise.resolve(main()).then((code) => {
  process.exitCode = code;
});
