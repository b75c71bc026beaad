#!/usr/bin/env node
// npm's install script. A published package carries prebuilt binaries
// (prebuilds/<platform>-<arch>/, scripts/prebuild.js): when they load here,
// nothing is compiled. Otherwise it builds from source:
//   - `npm install --build-from-source` (npm sets npm_config_build_from_source),
//     or GPUEXT_BUILD_FROM_SOURCE=1;
//   - no prebuilt binary for this platform, or one that does not load;
//   - a git checkout (no dist/ yet): the core only here; the prepare script
//     compiles the TypeScript and then builds the ops.
// npm hides install scripts' output unless `--foreground-scripts`, so a source
// build also writes it to install.log (in the package) and says so first.
'use strict';
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist', 'lib');
const isCheckout = !fs.existsSync(path.join(dist, 'index.js'));

function fromSourceRequested() {
  const v = (process.env.npm_config_build_from_source || process.env.GPUEXT_BUILD_FROM_SOURCE || '').toLowerCase();
  return v !== '' && v !== 'false' && v !== '0';
}

/**
 * Why the prebuilt binaries cannot serve here ({ problem }), or what they see
 * ({ gpus, why }) when both load and an add runs on the CPU.
 */
function tryPrebuilt() {
  const { prebuildDir, binaryCandidates } = require(path.join(dist, 'platform', 'binaries.js'));
  const dir = prebuildDir(root);
  if (!fs.existsSync(dir)) return { problem: `no prebuilt binaries for ${path.basename(dir)}` };
  // Loading them in a child keeps a crash (a missing system library, a bad binary) out of npm's process.
  // The child must find the prebuilt ones, not stale source builds: it checks which paths it got.
  const check = `const gx = require(${JSON.stringify(dist)});
const b = require(${JSON.stringify(path.join(dist, 'platform', 'binaries.js'))});
const c = gx.add(gx.tensor([1, 2]), gx.tensor([3, 4])).toArraySync();
if (c[0] !== 4 || c[1] !== 6) throw new Error('gx.add gave ' + Array.from(c));
console.log(JSON.stringify({ core: b.findBinary('core'), ops: b.findBinary('ops'), gpus: gx.cuda.deviceCount(), why: gx.cuda.unavailableReason() }));`;
  const r = spawnSync(process.execPath, ['-e', check], { encoding: 'utf8', timeout: 120000, env: { ...process.env, GPUEXT_OPS_LIBRARY: '' } });
  if (r.status !== 0) {
    const first = (r.stderr || r.stdout || `exit ${r.status}, signal ${r.signal}`).trim().split('\n').find((l) => /error/i.test(l));
    return { problem: `the prebuilt binaries in ${dir} do not load here: ${first ?? r.stderr.trim().split('\n')[0]}` };
  }
  const used = JSON.parse(r.stdout.trim().split('\n').pop());
  const expected = [binaryCandidates('core', root)[1], binaryCandidates('ops', root)[1]];
  if (used.core !== expected[0] || used.ops !== expected[1]) return { problem: `binaries built here take precedence (${used.core}, ${used.ops})` };
  return used;
}

function describePrebuild() {
  try {
    const info = JSON.parse(fs.readFileSync(path.join(require(path.join(dist, 'platform', 'binaries.js')).prebuildDir(root), 'build.json'), 'utf8'));
    return info.cuda ? `CUDA ${info.cuda} code for ${info.archs.join(', ')} + PTX` : 'CPU only';
  } catch {
    return 'no build.json';
  }
}

/** Runs `node script` with its output on ours and in the log; resolves with the exit code. */
function run(script, log) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, script)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => { process.stdout.write(d); log.write(d); });
    child.stderr.on('data', (d) => { process.stderr.write(d); log.write(d); });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

async function buildFromSource(reason) {
  // Not under build/: node-gyp rebuild deletes that folder first.
  const logFile = path.join(root, 'install.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const log = fs.createWriteStream(logFile);
  const say = (line) => { console.log(line); log.write(`${line}\n`); };
  say(`gpuext: building from source (${reason}); progress goes to ${logFile}`);
  const t0 = Date.now();
  const steps = isCheckout ? ['build-core.js'] : ['build-core.js', 'build-ops.js'];
  let code = 0;
  for (const s of steps) {
    code = await run(s, log);
    if (code !== 0) break;
  }
  if (code === 0 && !isCheckout) writeCodeCache();
  say(code === 0 ? `gpuext: built ${isCheckout ? 'the core (the prepare script builds the ops)' : 'from source'} in ${((Date.now() - t0) / 1000).toFixed(0)} s`
    : `gpuext: the source build failed (exit ${code}); the whole log is ${logFile}`);
  await new Promise((resolve) => log.end(resolve));
  return code;
}

/** V8's code cache of the installed modules (NOTE [ Code cache ] in lib/platform/code-cache.ts): best effort, it only saves time. */
function writeCodeCache() {
  const r = spawnSync(process.execPath, [path.join(__dirname, 'code-cache.js')], { cwd: root, encoding: 'utf8', timeout: 120000 });
  console.log((r.stdout || r.stderr || '').trim().split('\n').pop());
}

async function main() {
  if (fromSourceRequested()) return buildFromSource('--build-from-source');
  if (isCheckout) return buildFromSource('a git checkout');
  const found = tryPrebuilt();
  if (found.problem) return buildFromSource(found.problem);
  writeCodeCache();
  console.log(`gpuext: using the prebuilt binaries (${describePrebuild()}); nothing to compile`);
  // Said now, not at the first GPU call: a driver too old for the binaries' CUDA, or none.
  console.log(found.gpus > 0 ? `gpuext: ${found.gpus} CUDA device${found.gpus === 1 ? '' : 's'} usable`
    : `gpuext: no usable CUDA device (${found.why}); ops run on the CPU`);
  return 0;
}

main().then((code) => { process.exitCode = code; }, (e) => {
  console.error(`gpuext: install failed: ${e && e.stack ? e.stack : e}`);
  process.exitCode = 1;
});
