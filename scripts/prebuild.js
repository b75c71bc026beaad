#!/usr/bin/env node
// Builds the binaries a published package carries (`npm run build:prebuilds`;
// `npm pack` / `npm publish` run it through prepack with --if-stale):
// prebuilds/<platform>-<arch>/gpuext_core.node and gx_ops.node, with CUDA code
// for every arch of DEFAULT_ARCHS plus PTX (GPUEXT_CUDA_ARCH narrows it),
// compressed, the CUDA runtime linked statically (a driver is all a GPU
// machine needs), on linux held to the glibc floor (scripts/glibc-floor.js),
// and a build.json saying what they hold. A package without CUDA code is
// refused unless GPUEXT_NO_CUDA=1 asks for one.
//   --if-stale    do nothing when build.json records the same inputs and archs
//   --arch arm64  cross-compile linux-arm64 binaries for the CPU only (CUDA on
//                 arm64 needs a source build: there is no sbsa cross toolkit
//                 here), with aarch64-linux-gnu-g++ (GPUEXT_CROSS_CXX names
//                 another); the checkout's own build/ is kept aside meanwhile
// The ops are built into build/prebuild-ops, so a checkout's own ops/build
// (for its GPUs) stays as it is; the core is built in build/Release.
'use strict';
const { spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const archAt = process.argv.indexOf('--arch');
const arch = archAt > 0 ? process.argv[archAt + 1] : process.arch;
const cross = arch !== process.arch;
const tag = `${process.platform}-${arch}`;
const outDir = path.join(root, 'prebuilds', tag);
const opsOut = path.join(root, 'build', 'prebuild-ops');

process.env.GPUEXT_PREBUILD = '1';
// A cross build is CPU-only: set before find-cuda.js makes its plan.
if (cross) process.env.GPUEXT_NO_CUDA = '1';
const { cudaPlan, gencode } = require('./find-cuda');

// What the binaries are built from. A change to any of these makes --if-stale rebuild.
const INPUTS = ['binding.gyp', 'setup.config.json', 'package.json', 'csrc', 'ops', 'lib/toolkit',
  'scripts/find-cuda.js', 'scripts/glibc-floor.js', 'scripts/build-core.js', 'scripts/build-ops.js', 'scripts/prebuild.js'];

function listFiles(rel) {
  const abs = path.join(root, rel);
  if (!fs.statSync(abs).isDirectory()) return [rel];
  return fs.readdirSync(abs).filter((n) => !(rel === 'ops' && n === 'build'))
    .flatMap((n) => listFiles(path.join(rel, n)));
}

function inputsHash(plan, nvccVersion) {
  const h = crypto.createHash('sha256');
  h.update(JSON.stringify([plan.cuda ? plan.arch : 'cpu', nvccVersion, tag]));
  for (const f of INPUTS.flatMap(listFiles).sort()) {
    h.update(`\0${f}\0`);
    h.update(fs.readFileSync(path.join(root, f)));
  }
  return h.digest('hex');
}

function nvccVersion(plan) {
  if (!plan.cuda) return null;
  const r = spawnSync(path.join(plan.home, 'bin', 'nvcc'), ['--version'], { encoding: 'utf8' });
  const m = /release (\d+\.\d+)/.exec(r.stdout || '');
  return m ? m[1] : 'unknown';
}

function step(what, argv, env = process.env) {
  console.log(`gpuext prebuild: ${what}`);
  const t0 = Date.now();
  const r = spawnSync(argv[0], argv.slice(1), { cwd: root, stdio: 'inherit', env });
  // Thrown, not exited: a cross build puts the checkout's build/ back first.
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status ?? r.signal})`);
  console.log(`gpuext prebuild: ${what}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

// The cross compilers of each target arch (Debian's g++-aarch64-linux-gnu).
const CROSS = { arm64: { cxx: 'aarch64-linux-gnu-g++', cc: 'aarch64-linux-gnu-gcc', pkg: 'g++-aarch64-linux-gnu' } };

/** The environment a cross build compiles in (node-gyp's make and the toolkit both read CXX), or exits saying what is missing. */
function crossEnv() {
  const c = CROSS[arch];
  if (!c || process.platform !== 'linux') {
    console.error(`gpuext prebuild: no cross build for ${tag} (known: ${Object.keys(CROSS).map((a) => `linux-${a}`).join(', ')})`);
    process.exit(2);
  }
  const cxx = process.env.GPUEXT_CROSS_CXX || c.cxx;
  const cc = process.env.GPUEXT_CROSS_CXX ? cxx.replace(/g\+\+$/, 'gcc') : c.cc;
  if (spawnSync(cxx, ['--version']).status !== 0) {
    console.error(`gpuext prebuild: ${cxx} does not run; install it (Debian: apt-get install ${c.pkg}) or name one with GPUEXT_CROSS_CXX`);
    process.exit(1);
  }
  // node-gyp takes the target arch from npm_config_arch (no -m64 for arm64).
  return { ...process.env, CXX: cxx, CC: cc, LINK: cxx, npm_config_arch: arch };
}

/**
 * Runs build(env) with the checkout's build/ moved aside (node-gyp rebuild
 * empties build/, and a cross-built core there would not load here), and puts
 * it back after, whatever happened.
 */
function withHostBuildKept(buildFn) {
  const kept = path.join(root, `.build-host-${process.pid}`);
  const hostBuild = path.join(root, 'build');
  const had = fs.existsSync(hostBuild);
  if (had) fs.renameSync(hostBuild, kept);
  try {
    buildFn();
  } finally {
    fs.rmSync(hostBuild, { recursive: true, force: true });
    if (had) fs.renameSync(kept, hostBuild);
  }
}

/** Compiles the TypeScript, the core and the ops, and copies both binaries into outDir. */
function buildBinaries(env) {
  const node = process.execPath;
  step('compile the TypeScript (the toolkit builds the ops)', [node, require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json']);
  step('build the core', [node, 'scripts/build-core.js'], env);
  // A cross-built library cannot be loaded here to describe it: no bindings (the package ships the host's).
  step('build the ops', [node, 'scripts/build-ops.js', '--out-dir', opsOut, ...(cross ? ['--no-bindings'] : [])], env);
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  fs.copyFileSync(path.join(root, 'build', 'Release', 'gpuext_core.node'), path.join(outDir, 'gpuext_core.node'));
  fs.copyFileSync(path.join(opsOut, 'gx_ops.node'), path.join(outDir, 'gx_ops.node'));
  // CUDA's math for the jit's PTX path, beside the ops (scripts/build-jit-math.js), when the build made it.
  for (const f of ['jit-math.ptx', 'jit-math.json']) if (fs.existsSync(path.join(opsOut, f))) fs.copyFileSync(path.join(opsOut, f), path.join(outDir, f));
}

function main() {
  const plan = cudaPlan();
  if (!plan.cuda && process.env.GPUEXT_NO_CUDA !== '1') {
    console.error(`gpuext prebuild: refusing to pack binaries without CUDA code (${plan.why}); ` +
      'install the CUDA toolkit, or set GPUEXT_NO_CUDA=1 to pack CPU-only binaries on purpose.');
    process.exit(1);
  }
  const cuda = nvccVersion(plan);
  const hash = inputsHash(plan, cuda);
  const infoFile = path.join(outDir, 'build.json');
  if (process.argv.includes('--if-stale')) {
    try {
      const info = JSON.parse(fs.readFileSync(infoFile, 'utf8'));
      const present = ['gpuext_core.node', 'gx_ops.node'].every((f) => fs.existsSync(path.join(outDir, f)));
      if (present && info.inputs === hash) {
        console.log(`gpuext prebuild: ${path.relative(root, outDir)} is current (${plan.cuda ? plan.arch : 'CPU only'})`);
        return;
      }
    } catch {
      // no build.json: build
    }
  }
  console.log(`gpuext prebuild: ${tag}, ${plan.cuda ? `CUDA ${cuda} for ${plan.arch} + PTX` : 'CPU only'} (${plan.why})`);
  if (cross) {
    const env = crossEnv();
    withHostBuildKept(() => buildBinaries(env));
  } else {
    buildBinaries(process.env);
  }
  const ptx = plan.cuda ? gencode(plan.arch).map((f) => /code=(compute_\w+)/.exec(f)?.[1]).filter(Boolean) : [];
  const info = {
    version: JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version,
    platform: tag,
    napi: true,
    cuda,
    // Why there is no CUDA code (on a GPU machine, gx.cuda.unavailableReason() says to build from source).
    ...(cuda ? {} : { cpuOnly: cross ? `no CUDA cross toolkit for ${tag} was at hand` : 'packed without CUDA (GPUEXT_NO_CUDA=1)' }),
    archs: plan.cuda ? plan.arch.split(',') : [],
    ptx,
    inputs: hash,
  };
  fs.writeFileSync(infoFile, `${JSON.stringify(info, null, 2)}\n`);
  for (const f of ['gpuext_core.node', 'gx_ops.node']) {
    console.log(`gpuext prebuild: ${path.relative(root, path.join(outDir, f))} ${(fs.statSync(path.join(outDir, f)).size / 1e6).toFixed(1)} MB`);
  }
}

try {
  main();
} catch (e) {
  console.error(`gpuext prebuild: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
