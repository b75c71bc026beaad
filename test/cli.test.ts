// The gpuext command line: doctor, init + build + run of the scaffold, clean,
// watch, compile errors and exit codes. Runs dist/lib/cli/main.js as a user
// would (CI=1, piped: stdout has the closing line, stderr the progress). Tests marked [core] need the core's
// extension loader.
import test from 'ava';
import { spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { gpuextDependency } from '../lib/cli/init';
import { detectToolchain, nativeGpuModels } from '../lib/toolkit/toolchain';
import { cli, gpuext, removeTmpdirsAfter, root, run, tmpdir, workspace } from './cli-helpers';

const HAS_NVCC = detectToolchain().nvcc !== undefined;
const nvccTest = HAS_NVCC ? test : test.skip;
removeTmpdirsAfter();

function cppProject(prefix: string, name: string): string {
  const dir = workspace(prefix);
  fs.mkdirSync(path.join(dir, 'ops'));
  fs.writeFileSync(path.join(dir, 'setup.config.json'), JSON.stringify({ name, sources: ['ops/*.cpp'] }));
  fs.writeFileSync(path.join(dir, 'ops', 'op.cpp'), `#include <gpuext/extension.h>
namespace {
gx::Tensor ident(const gx::Tensor& x) { return x; }
}
GX_LIBRARY(${name}, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident); }
`);
  return dir;
}

test('help, unknown commands and unknown options', async (t) => {
  const help = await gpuext(['help'], root);
  t.is(help.code, 0);
  t.regex(help.stdout, /build .*\n.*init .*\n.*doctor .*\n.*clean/);
  // --version prints package.json's version, the same string as gx.version.
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-v', 'version']) {
    const v = await gpuext([flag], root);
    t.is(v.code, 0, flag);
    t.is(v.stdout.trim(), pkg.version, flag);
  }
  t.is(gx.version, pkg.version);
  t.regex(gx.version, /^\d+\.\d+\.\d+/);
  const unknown = await gpuext(['frobnicate'], root);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /gpuext: unknown command 'frobnicate'/);
  const badOpt = await gpuext(['build', '--fast'], root);
  t.is(badOpt.code, 2);
  t.regex(badOpt.stderr, /gpuext build: unknown option '--fast'/);
  const noValue = await gpuext(['build', '--config'], root);
  t.is(noValue.code, 2);
  t.regex(noValue.stderr, /option '--config' needs a value/);
  const buildHelp = await gpuext(['build', '--help'], root);
  t.is(buildHelp.code, 0);
  t.regex(buildHelp.stdout, /--arch SPEC/);
  t.is((await gpuext(['init'], root)).code, 2);
});

test('doctor reports the toolchain and the cache, and fails when the host compiler is missing', async (t) => {
  const cache = tmpdir('doctor');
  const ok = await gpuext(['doctor'], os.tmpdir(), { GPUEXT_CACHE_DIR: cache });
  t.is(ok.code, 0, ok.stdout + ok.stderr);
  t.regex(ok.stdout, /^ok\s+host compiler\s+\S*(g\+\+|c\+\+|clang)/m);
  t.regex(ok.stdout, /^(ok|warn)\s+nvcc\s+/m);
  t.regex(ok.stdout, /^ok\s+core\s+(built with CUDA|CPU-only build), C ABI \d+\.\d+/m);
  t.regex(ok.stdout, /^(ok|warn)\s+(GPUs|cuda:0)\s+/m);
  if (/^warn\s+GPUs/m.test(ok.stdout) && /built with CUDA/.test(ok.stdout)) {
    // Each reason for no GPU gets its own words and fix (no driver, an old one, none visible).
    const noDriver = !fs.existsSync('/proc/driver/nvidia/version');
    t.regex(ok.stdout, noDriver
      ? /GPUs\s+none \(no NVIDIA driver is installed \(libcuda\.so\.1 not found\)\); ops run on the CPU\n\s+fix: on a machine with an NVIDIA GPU, install the driver/
      : /GPUs\s+none \((the NVIDIA driver supports CUDA [\d.]+ but gpuext was built with CUDA [\d.]+: update the driver|no CUDA device is visible)/);
    t.notRegex(ok.stdout, /cudaErrorInsufficientDriver/);
  }
  t.regex(ok.stdout, /^(ok|warn)\s+Node headers/m);
  t.regex(ok.stdout, /^(ok\s+CPU BLAS\s+matmul: \S+ \((cblas|Fortran gemm)\)|warn\s+CPU BLAS\s+matmul: built-in kernel)/m);
  t.regex(ok.stdout, new RegExp(`^ok\\s+cache\\s+${cache.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is writable`, 'm'));
  t.regex(ok.stdout, /ready to build extensions/);

  const bad = await gpuext(['doctor'], os.tmpdir(), { CXX: '/nonexistent/c++', GPUEXT_NVCC: '/nonexistent/nvcc', GPUEXT_CACHE_DIR: cache });
  t.is(bad.code, 1);
  t.regex(bad.stdout, /^FAIL\s+host compiler\s+host C\+\+ compiler '\/nonexistent\/c\+\+' not found \(from CXX\)/m);
  t.regex(bad.stdout, /fix: Install a C\+\+17 compiler/);
  t.regex(bad.stdout, /^warn\s+nvcc\s+nvcc not found at \/nonexistent\/nvcc.*\(needed for \.cu sources only\)/m, 'no .cu project here: a warning');
  t.regex(bad.stdout, /fix: Install the CUDA toolkit/);
  t.regex(bad.stdout, /1 problem stops builds: host compiler/);
});

nvccTest('[core] init scaffolds a project that builds and runs as it stands; clean removes the build', async (t) => {
  const ws = workspace('init');
  const init = await gpuext(['init', 'my-ops'], ws);
  t.is(init.code, 0, init.stderr);
  t.regex(init.stdout, /created my-ops\/ \(extension 'my_ops'\)/);
  t.notRegex(init.stdout, /npm install/, 'gpuext already resolves from there');
  const proj = path.join(ws, 'my-ops');
  for (const f of ['setup.config.json', 'ops/add.cu', 'main.js', 'package.json', '.gitignore']) t.true(fs.existsSync(path.join(proj, f)), f);
  const config: unknown = JSON.parse(fs.readFileSync(path.join(proj, 'setup.config.json'), 'utf8'));
  const schema = config && typeof config === 'object' && '$schema' in config && typeof config.$schema === 'string' ? config.$schema : '';
  t.is(schema, '../node_modules/gpuext/setup.config.schema.json');
  t.true(fs.existsSync(path.resolve(proj, schema)), 'the $schema path points at the installed schema');
  const pkg: unknown = JSON.parse(fs.readFileSync(path.join(proj, 'package.json'), 'utf8'));
  t.like(pkg, { scripts: { build: 'gpuext build', start: 'node main.js' } });

  const again = await gpuext(['init', 'my-ops'], ws);
  t.is(again.code, 1);
  t.regex(again.stderr, /already has setup\.config\.json.*--force/);

  t.like(JSON.parse(fs.readFileSync(path.join(proj, 'setup.config.json'), 'utf8')), { sources: ['ops/**/*.{cu,cpp}'], arch: 'native' });
  const b = await gpuext(['build'], proj);
  t.is(b.code, 0, b.stdout + b.stderr);
  if (nativeGpuModels().length === 0) t.regex(b.stderr, /warning: "arch" is "native" but no NVIDIA GPU is visible here/);
  else t.notRegex(b.stderr, /warning/);
  t.regex(b.stdout, /^built build\/my_ops\.node \+ my_ops\.js\/\.d\.ts in [\d.]+s \(2 compiled, 0 cached\)\n$/);
  t.regex(fs.readFileSync(path.join(proj, 'build/my_ops.d.ts'), 'utf8'), /export declare function addGpu\(a: Tensor, b: Tensor\): Tensor/);

  const start = await run(process.execPath, ['main.js'], proj);
  t.is(start.code, 0, start.stdout + start.stderr);
  t.regex(start.stdout, /running on (cuda|cpu)/);
  t.regex(start.stdout, /values: \[ 1\.5, 2\.5, 3\.5, 4\.5, 5\.5, 6\.5 \]/);
  t.regex(start.stdout, /as expected: .*shapes differ: \[2, 3\] vs \[3\]/);

  const noop = await gpuext(['build'], proj);
  t.is(noop.code, 0);
  t.regex(noop.stdout, /^build\/my_ops\.node is up to date \(0 compiled, 2 cached\) in [\d.]+s\n$/);

  const c = await gpuext(['clean'], proj);
  t.is(c.code, 0, c.stderr);
  t.regex(c.stdout, /removed 4 build outputs of my_ops from build/);
  t.false(fs.existsSync(path.join(proj, 'build')));
  t.regex((await gpuext(['clean'], proj)).stdout, /nothing to clean in build/);
});

test('init . in an existing project adds its files beside package.json, which gains only a script', async (t) => {
  const app = workspace('existing');
  const pkg = { name: 'my-app', version: '2.0.0', type: 'commonjs', scripts: { build: 'tsc', test: 'ava' }, dependencies: { gpuext: 'file:../gpuext' } };
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify(pkg));
  fs.writeFileSync(path.join(app, 'main.js'), '// the app\n');
  fs.writeFileSync(path.join(app, '.gitignore'), 'dist');
  const init = await gpuext(['init', '.', '--name', 'app_ops'], app);
  t.is(init.code, 0, init.stderr);
  t.deepEqual(JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')),
    { ...pkg, scripts: { ...pkg.scripts, 'build:ops': 'gpuext build' } }, 'only a script is added; "build" was taken');
  t.is(fs.readFileSync(path.join(app, 'main.js'), 'utf8'), '// the app\n', "the app's main.js is untouched");
  t.regex(fs.readFileSync(path.join(app, 'app_ops-example.js'), 'utf8'), /require\('\.\/build\/app_ops'\)/);
  t.true(fs.existsSync(path.join(app, 'ops', 'add.cu')));
  t.is(fs.readFileSync(path.join(app, '.gitignore'), 'utf8'), 'dist\nbuild/\nnode_modules/\n');
  t.regex(init.stdout, /next:\n  npm run build:ops\n  node app_ops-example\.js$/m);

  const again = await gpuext(['init', '.', '--name', 'app_ops'], app);
  t.is(again.code, 1, 'the added files are not overwritten without --force');
  t.regex(again.stderr, /already has setup\.config\.json, ops\/add\.cu, app_ops-example\.js \(use --force/);

  fs.writeFileSync(path.join(app, 'package.json'), '{ "name": ');
  const bad = await gpuext(['init', 'x'], app);
  t.is(bad.code, 0, 'a new subdirectory has no package.json of its own');
  const broken = tmpdir('broken');
  fs.writeFileSync(path.join(broken, 'package.json'), '{\n  "name": \n');
  const e = await gpuext(['init', '.'], broken);
  t.is(e.code, 1);
  t.regex(e.stderr, /package\.json:3:1: is not valid JSON/);
});

test('init: the new project depends on the gpuext that made it', (t) => {
  const top = tmpdir('dep');
  const app = path.join(top, 'app');
  const installed = path.join(app, 'node_modules', 'gpuext');
  fs.mkdirSync(installed, { recursive: true });
  const spec = (deps: Record<string, string> | undefined): string => {
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', dependencies: deps }));
    return gpuextDependency(path.join(app, 'tools', 'my-ops'), installed);
  };
  t.is(spec({ gpuext: 'file:../gpuext-0.1.0.tgz' }), 'file:../../../gpuext-0.1.0.tgz', 'a relative tarball, seen from the new directory');
  t.is(spec({ gpuext: '~0.1.0' }), '~0.1.0', 'a registry range as the app has it');
  t.is(spec({ gpuext: 'file:/opt/gpuext.tgz' }), 'file:/opt/gpuext.tgz');
  t.regex(spec(undefined), /^\d+\.\d+\.\d+/, 'no installing project: this version');
  t.is(gpuextDependency(path.join(top, 'new'), path.join(top, 'checkout')), 'file:../checkout', 'a checkout: a path to it');
});

nvccTest('build: a compile error exits 1 with file:line; --verbose prints commands and the log; missing nvcc says how to fix it', async (t) => {
  const ws = workspace('err');
  t.is((await gpuext(['init', 'p'], ws)).code, 0);
  const proj = path.join(ws, 'p');
  const src = path.join(proj, 'ops/add.cu');
  fs.writeFileSync(src, fs.readFileSync(src, 'utf8').replace('c[i] = a[i] + b[i];', 'c[i] = a[i] + missing_b[i];'));
  const line = fs.readFileSync(src, 'utf8').split('\n').findIndex((l) => l.includes('missing_b')) + 1;
  const e = await gpuext(['build', '--arch', 'sm_80'], proj);
  t.is(e.code, 1);
  t.regex(e.stderr, new RegExp(`^ops/add\\.cu:${line}: error: identifier "missing_b" is undefined`, 'm'));
  t.regex(e.stderr, /\(run with --verbose for the full compiler log\)/);
  t.is(e.stdout, '');
  const v = await gpuext(['build', '--verbose', '--arch', 'sm_80'], proj);
  t.is(v.code, 1);
  t.regex(v.stdout, /^\$ \S*nvcc .* -gencode=arch=compute_80,code=sm_80 .*-c \S*ops\/add\.cu -o \S+ -MD -MF \S+$/m);
  t.regex(v.stdout, /error detected in the compilation/);
  t.notRegex(v.stderr, /--verbose/);

  const nonvcc = await gpuext(['build'], proj, { GPUEXT_NVCC: '/nonexistent/bin/nvcc' });
  t.is(nonvcc.code, 1);
  t.regex(nonvcc.stderr, /nvcc not found at \/nonexistent\/bin\/nvcc \(given by GPUEXT_NVCC\), but CUDA sources need it \(ops\/add\.cu\)/);
  t.regex(nonvcc.stderr, /set CUDA_HOME/);

  const badArch = await gpuext(['build', '--arch', 'turing'], proj);
  t.is(badArch.code, 1);
  t.regex(badArch.stderr, /"--arch" has 'turing', which is not an arch like sm_90/);
  const noConfig = await gpuext(['build'], ws);
  t.is(noConfig.code, 1);
  t.regex(noConfig.stderr, /setup\.config\.json: not found/);
});

test('[core] build --watch rebuilds on a change and keeps watching after an error', async (t) => {
  const proj = cppProject('watch', 'watched');
  const child = spawn(process.execPath, [cli, 'build', '--watch'], { cwd: proj, env: { ...process.env, CI: '1' } });
  let out = '';
  const waitFor = (re: RegExp, count: number): Promise<void> => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re} x${count}; output:\n${out}`)), 60_000);
    const check = (): void => {
      if ((out.match(new RegExp(re.source, 'g')) ?? []).length >= count) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        child.stderr.off('data', check);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    check();
  });
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  try {
    await waitFor(/watching \d+ files/, 1);
    t.regex(out, /built build\/watched\.node/);
    const src = path.join(proj, 'ops/op.cpp');
    fs.writeFileSync(src, fs.readFileSync(src, 'utf8').replace('return x;', 'return y;'));
    await waitFor(/ops\/op\.cpp:\d+:\d+: error: 'y' was not declared/, 1);
    await waitFor(/watching \d+ files/, 2);
    fs.writeFileSync(src, fs.readFileSync(src, 'utf8').replace('return y;', 'return x; /* fixed */'));
    await waitFor(/built build\/watched\.node/, 2);
    t.regex(out, /built build\/watched\.node .*\(1 compiled, 1 cached\)\n[^]*$/);
    t.pass();
  } finally {
    child.kill('SIGINT');
    await new Promise((r) => child.once('close', r));
  }
  t.false(fs.existsSync(path.join(proj, 'build/.gpuext/lock')), 'the lock is gone after Ctrl-C');
});
