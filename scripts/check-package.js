#!/usr/bin/env node
// What a user gets from `npm install gpuext`, checked: packs the tarball (the
// prebuilt binaries first, scripts/prebuild.js --if-stale), checks its size
// and contents, installs it into a fresh app and runs a script there on the
// CPU. Run by .ci/run after the tests (`npm run check:package`). Ends with
// `N passed, N failed` and exits non-zero when a check failed.
//   GPUEXT_PACK_MAX_MB   the largest tarball allowed (default 10, for CI's one-arch
//                        pack; a five-arch release packed 14.5 MB on 2026-11-28)
// The prebuild honours GPUEXT_CUDA_ARCH / GPUEXT_NO_CUDA, so CI can pack a
// cheaper build than the five-arch one a release carries.
//   --contents-only      no prebuild and no install: packs what is there and
//                        checks the manifest, the shipped examples and the
//                        files (seconds; the prebuilt binaries' checks are skipped)
'use strict';
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.resolve(__dirname, '..');
const tag = `${process.platform}-${process.arch}`;
const maxMb = Number(process.env.GPUEXT_PACK_MAX_MB || 10);
const contentsOnly = process.argv.includes('--contents-only');
const { PUBLISHED_SCRIPTS } = require('./pack-manifest');

// The oldest C and C++ runtimes the prebuilt binaries may need, written once in
// scripts/glibc-floor.js; the README states the same floor (checked below).
const { FLOOR, neededVersions } = require('./glibc-floor');
let passed = 0, failed = 0;

function check(name, ok, detail = '') {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok' : 'not ok'} - package: ${name}${ok || !detail ? '' : `: ${detail}`}`);
  return ok;
}

function run(cmd, args, opts = {}) {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  return { code: r.status ?? 1, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, stdout: r.stdout ?? '', seconds: (Date.now() - t0) / 1000 };
}

/** Files under dir (relative), for the absolute-path search. */
function walk(dir, rel = '') {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(dir, path.join(rel, e.name)) : [path.join(rel, e.name)]));
}

/** Every `examples/...` path the README names (a file, or a directory when it has no extension). */
function readmeExamples() {
  const text = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  return [...new Set([...text.matchAll(/(?<![\w/])examples\/[\w./-]*[\w]/g)].map((m) => m[0]))];
}

function checkManifestAndExamples(unpackedPkg, files) {
  const pkg = JSON.parse(fs.readFileSync(path.join(unpackedPkg, 'package.json'), 'utf8'));
  const scripts = Object.keys(pkg.scripts ?? {});
  check(`the published package.json has only the installer's scripts (${PUBLISHED_SCRIPTS.join(', ')})`,
    JSON.stringify(scripts) === JSON.stringify(PUBLISHED_SCRIPTS), scripts.join(', '));
  const dev = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  check('the checkout keeps its development scripts after the pack', dev.scripts?.prepare !== undefined && !fs.existsSync(path.join(root, '.package.json.dev')));
  check('package.json has keywords', Array.isArray(pkg.keywords) && pkg.keywords.includes('cuda'));
  // A module path (`./examples/lltm/lltm` in an import) names its .ts.
  const missing = readmeExamples().filter((e) => !files.some((f) => f === e || f === `${e}.ts` || f.startsWith(`${e}/`)));
  check('every examples/ path the README names ships', missing.length === 0, missing.join(', '));
  // Each example compiled beside its source: `node node_modules/gpuext/dist/examples/mlp.js` runs it.
  const sources = files.filter((f) => /^examples\/([\w-]+|lltm\/lltm|lltm-cpp\/lltm-cpp)\.ts$/.test(f));
  const uncompiled = sources.filter((f) => !files.includes(`dist/${f.replace(/\.ts$/, '.js')}`));
  check(`the examples' compiled forms ship (${sources.length})`, sources.length > 0 && uncompiled.length === 0, uncompiled.join(', '));
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  check(`the README states the prebuilds' floor (glibc ${FLOOR.GLIBC})`, readme.includes(`glibc ${FLOOR.GLIBC}`));
}

/**
 * Every linux binary under prebuilds/ (this machine's and any other arch's a
 * release carries): the highest symbol version it needs of each runtime, and
 * none above the floor.
 */
function checkFloor(unpackedPkg, files) {
  const floor = Object.entries(FLOOR).map(([k, v]) => `${k}_${v}`).join(', ');
  for (const f of files.filter((x) => /^prebuilds\/linux-[^/]+\/[^/]+\.node$/.test(x))) {
    const { highest, over } = neededVersions(path.join(unpackedPkg, f));
    console.log(`# ${f} needs ${Object.keys(FLOOR).map((k) => `${k}_${highest[k] ?? '-'}`).join(', ')} at most`);
    check(`${f} loads on glibc ${FLOOR.GLIBC} (needs at most ${floor})`, over.length === 0,
      `${over.slice(0, 12).join(', ')} (NOTE [ The glibc floor of the prebuilt binaries ]: wrap the call in csrc/compat/glibc_floor.cpp, ` +
      'or raise FLOOR in scripts/glibc-floor.js and the README together)');
  }
}

/** npm pack into `work` with the published manifest (NOTE [ Publishing the packed tarball ]); the checkout's is restored after. */
function packTarball(work) {
  // --ignore-scripts: the prebuild ran before and the caller compiled dist/ (npm test does); so the manifest is stripped here.
  run(process.execPath, ['scripts/pack-manifest.js', 'strip'], { cwd: root });
  try {
    return run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: root });
  } finally {
    run(process.execPath, ['scripts/pack-manifest.js', 'restore'], { cwd: root });
  }
}

function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-package-'));
  if (!contentsOnly) {
    const prebuild = run(process.execPath, ['scripts/prebuild.js', '--if-stale'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    process.stdout.write(prebuild.out);
    if (!check('prebuilt binaries built', prebuild.code === 0)) return;
  }

  const pack = packTarball(work);
  if (!check('npm pack', pack.code === 0, pack.out.slice(-2000))) return;
  const info = JSON.parse(pack.stdout)[0];
  const files = info.files.map((f) => f.path);
  const tarball = path.join(work, info.filename);
  console.log(`# ${info.filename}: ${(info.size / 1e6).toFixed(1)} MB, ${(info.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${info.entryCount} files`);
  check(`tarball at most ${maxMb} MB`, info.size <= maxMb * 1e6, `${(info.size / 1e6).toFixed(1)} MB`);
  for (const f of [...(contentsOnly ? [] : [`prebuilds/${tag}/gpuext_core.node`, `prebuilds/${tag}/gx_ops.node`, `prebuilds/${tag}/build.json`]),
    'dist/lib/index.js', 'dist/lib/index.d.ts', 'scripts/install.js', 'binding.gyp', 'csrc/include/gpuext/extension.h',
    'setup.config.json', 'LICENSE', 'README.md', 'CHANGELOG.md']) {
    check(`ships ${f}`, files.includes(f));
  }
  const leftovers = files.filter((f) => /^(ops\/build|build|test|bench|dist\/test|dist\/bench|node_modules)\//.test(f) ||
    /\.(o|map|log|tgz)$/.test(f) || path.basename(f) === 'manifest.json');
  check('no build leftovers, tests or benches', leftovers.length === 0, leftovers.slice(0, 10).join(', '));

  // No path of the packer's machine inside any shipped file, binaries included.
  const unpacked = path.join(work, 'unpacked');
  fs.mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', tarball, '-C', unpacked]);
  const needles = [...new Set([root, fs.realpathSync(root)])];
  const withPaths = walk(path.join(unpacked, 'package')).filter((f) => {
    const bytes = fs.readFileSync(path.join(unpacked, 'package', f));
    return needles.some((n) => bytes.includes(n));
  });
  check(`no absolute paths of the packer (${needles.join(', ')})`, withPaths.length === 0, withPaths.slice(0, 10).join(', '));
  checkManifestAndExamples(path.join(unpacked, 'package'), files);
  if (contentsOnly) {
    fs.rmSync(work, { recursive: true, force: true });
    return;
  }

  // CUDA runtime linked in; cuBLAS / cuSOLVER / NVRTC loaded at first use: a driver is all the binaries need.
  const build = JSON.parse(fs.readFileSync(path.join(unpacked, 'package', 'prebuilds', tag, 'build.json'), 'utf8'));
  console.log(`# prebuilt: ${build.cuda ? `CUDA ${build.cuda}, ${build.archs.join(', ')} + PTX ${build.ptx.join(', ')}` : 'CPU only'}`);
  for (const f of ['gpuext_core.node', 'gx_ops.node']) {
    const dyn = run('readelf', ['-d', path.join(unpacked, 'package', 'prebuilds', tag, f)]);
    const needed = [...dyn.out.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
    const cudaLibs = needed.filter((n) => /^lib(cudart|cublas|cublasLt|cusolver|nvrtc|cuda)\.so/.test(n));
    check(`${f} needs no CUDA shared library (${needed.join(' ')})`, dyn.code === 0 && cudaLibs.length === 0, cudaLibs.join(', '));
  }
  checkFloor(path.join(unpacked, 'package'), files);

  // A fresh app: the install compiles nothing, and the quick start runs.
  const app = path.join(work, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  const install = run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--foreground-scripts'], { cwd: app });
  process.stdout.write(install.out.split('\n').filter((l) => /gpuext/.test(l)).map((l) => `# ${l}\n`).join(''));
  console.log(`# npm install of the tarball into a fresh app: ${install.seconds.toFixed(1)} s`);
  if (!check('npm install <tarball> in a fresh app', install.code === 0, install.out.slice(-3000))) return;
  const pkg = path.join(app, 'node_modules', 'gpuext');
  check('the install used the prebuilt binaries', /gpuext: using the prebuilt binaries/.test(install.out), install.out.slice(-1500));
  const compiled = ['build', 'ops/build', 'install.log'].filter((p) => fs.existsSync(path.join(pkg, p)));
  check('the install compiled nothing', compiled.length === 0, `found ${compiled.join(', ')}`);

  fs.writeFileSync(path.join(app, 'main.js'), `import * as gx from 'gpuext';
const a = gx.tensor([[1, 2, 3], [4, 5, 6]]);
const sum = Array.from(gx.add(a, 10).sum({ axis: 1 }).toArraySync());
const ext = await gx.loadInline({ name: 'app_ops', buildDirectory: 'build', cpp: \`
gx::Tensor twice(const gx::Tensor& x) {
  gx::Tensor y = gx::empty_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = 2 * x.data_ptr<float>()[i];
  return y;
}
GX_LIBRARY(app_ops, m) { m.def("twice(Tensor x) -> Tensor").impl(gx::kCPU, twice); }\` });
const twice = Array.from(ext.twice(gx.tensor([1.5, -2])).toArraySync());
console.log(JSON.stringify({ sum, twice, cuda: gx.cuda.isCompiled() }));
`);
  const script = run(process.execPath, ['main.js'], { cwd: app, env: { ...process.env, GPUEXT_CACHE_DIR: path.join(work, 'cache') } });
  const last = script.stdout.trim().split('\n').pop() ?? '';
  let result;
  try {
    result = JSON.parse(last);
  } catch {
    result = undefined;
  }
  check('the app runs gx.add and a reduction on the CPU', script.code === 0 && JSON.stringify(result?.sum) === '[36,45]', script.out.slice(-2000));
  check('the app builds and calls its own op (gx.loadInline)', JSON.stringify(result?.twice) === '[3,-4]', script.out.slice(-2000));
  check('the app got the prebuilt core', result?.cuda === Boolean(build.cuda), `cudaCompiled ${result?.cuda}, prebuild CUDA ${build.cuda}`);
  fs.rmSync(work, { recursive: true, force: true });
}

try {
  main();
} catch (e) {
  check('no unexpected error', false, e && e.stack ? e.stack : String(e));
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
