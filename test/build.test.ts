// The build toolkit: config validation, glob, compiler error parsing, the
// object cache (a no-change rebuild runs no compiler), the lock (takeover of
// a dead build's lock, of one whose id names another process now, concurrent
// builds), a SIGKILLed build (its compilers end, its temporary files go with
// the next build), missing nvcc, and extensions built
// from a temporary project and called (CPU here; CUDA where there is a GPU).
// Tests marked [core] need the core's extension loader (native.describeExtension,
// loadLibrary); the rest exercise only the toolkit.
import test, { type ExecutionContext } from 'ava';
import { execFile, spawn, spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { build, type BuildEvent, type BuildResult } from '../lib/toolkit/build';
import { parseDepfile } from '../lib/toolkit/compile';
import { KNOWN_FIELDS, loadConfig, normalizeArch, resolveConfig } from '../lib/toolkit/config';
import { BuildError, ConfigError, parseFirstError, ToolchainError } from '../lib/toolkit/errors';
import { expandBraces, glob, matchGlob } from '../lib/toolkit/glob';
import { acquireLock } from '../lib/toolkit/lock';
import { bootId, pidAlive, startTicks } from '../lib/platform/procinfo';
import { detectToolchain, findCuda, packageRoot } from '../lib/toolkit/toolchain';
import { load, loadInline } from '../lib/load';
import { cudaTest } from './helpers';

const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'dist/lib/cli/main.js');
const HAS_NVCC = detectToolchain().nvcc !== undefined;
const CU_ARCH = gx.cuda.isAvailable() ? 'native' : 'sm_80';
const nvccTest = HAS_NVCC ? test : test.skip;

const tmpdirs: string[] = [];
test.after.always(() => {
  for (const d of tmpdirs) fs.rmSync(d, { recursive: true, force: true });
});

function tmpdir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `gpuext-${prefix}-`));
  tmpdirs.push(d);
  return d;
}

function write(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

/** A CPU-only op: y = 2x (float32). `name` keeps op names unique per test. */
function twiceCpp(lib: string, extra = ''): string {
  return `#include <gpuext/extension.h>
#include "scale.h"
${extra}
namespace {
gx::Tensor twice(const gx::Tensor& x) {
  GX_CHECK(x.dtype() == gx::kFloat32, "expected float32, got ", x.dtype());
  gx::Tensor y = gx::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = SCALE * px[i];
  return y;
}
}  // namespace
GX_LIBRARY(${lib}, m) {
  m.def("twice(Tensor x) -> Tensor", "Doubles every element.").impl(gx::kCPU, twice);
}
`;
}

/** A project with one .cpp op and a local header. */
function cppProject(name: string, extra: Record<string, unknown> = {}): string {
  const dir = tmpdir(name);
  write(dir, {
    'setup.config.json': JSON.stringify({ name, sources: ['ops/**/*.cpp'], runtimeImport: root, ...extra }),
    'ops/twice.cpp': twiceCpp(name),
    'ops/scale.h': '#pragma once\n#define SCALE 2.0f\n',
  });
  return dir;
}

/** A project with one .cu op (CUDA and CPU implementations). */
function cuProject(name: string): string {
  const dir = tmpdir(name);
  write(dir, {
    'setup.config.json': JSON.stringify({ name, sources: ['ops/*.cu'], arch: CU_ARCH, runtimeImport: root }),
    'ops/add.cu': `#include <gpuext/extension.h>
namespace {
__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
gx::Tensor add_cuda(const gx::Tensor& a, const gx::Tensor& b) {
  GX_CHECK(a.sizes() == b.sizes(), "shapes differ: ", a.sizes(), " vs ", b.sizes());
  gx::Tensor c = gx::empty_like(a);
  add_kernel<<<gx::blocks(a.numel()), 256, 0, gx::current_stream()>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.numel());
  GX_CHECK_LAUNCH();
  return c;
}
gx::Tensor add_cpu(const gx::Tensor& a, const gx::Tensor& b) {
  GX_CHECK(a.sizes() == b.sizes(), "shapes differ: ", a.sizes(), " vs ", b.sizes());
  gx::Tensor c = gx::empty_like(a);
  for (int64_t i = 0; i < a.numel(); ++i) c.data_ptr<float>()[i] = a.data_ptr<float>()[i] + b.data_ptr<float>()[i];
  return c;
}
}  // namespace
GX_LIBRARY(${name}, m) {
  m.def("add(Tensor a, Tensor b) -> Tensor", "Adds.").impl(gx::kCUDA, add_cuda).impl(gx::kCPU, add_cpu);
}
`,
  });
  return dir;
}

/** A compiler wrapper that logs each call, so a test can tell whether a build ran a compiler. */
function countingWrapper(dir: string, real: string, name: string): { exe: string; calls: () => number } {
  const exe = path.join(dir, 'tools', 'bin', name);
  const logFile = path.join(dir, 'tools', 'calls.log');
  write(dir, { [path.relative(dir, exe)]: `#!/bin/sh\necho "$*" >> '${logFile}'\nexec '${real}' "$@"\n` });
  fs.chmodSync(exe, 0o755);
  return {
    exe,
    calls: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).length : 0),
  };
}

function buildErr(t: ExecutionContext, e: unknown): BuildError {
  if (!(e instanceof BuildError)) {
    t.fail(`expected a BuildError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    throw e;
  }
  return e;
}

function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd, env: { ...process.env, CI: '1', ...env } }, (err, stdout, stderr) => {
      const code = err && 'code' in err && typeof err.code === 'number' ? err.code : err ? 1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

// --- config ---------------------------------------------------------------------

test('config: defaults and normalization', (t) => {
  const c = resolveConfig({ name: 'my_ops', sources: ['ops/*.cu'], defines: { A: 1, B: true, C: false, D: 'x' }, libraries: ['cublas'] },
    '/p/setup.config.json', '/p', {});
  t.is(c.outDir, path.resolve('/p/build'));
  t.is(c.runtimeImport, 'gpuext');
  t.deepEqual(c.defines, ['A=1', 'B', 'D=x']);
  t.deepEqual(c.libraries, ['cublas']);
  t.is(resolveConfig({ name: 'a', sources: ['x.cpp'], arch: ['sm_80', '90'] }, 'f', '/p').arch, 'sm_80,sm_90');
  t.is(resolveConfig({ name: 'a', sources: ['x.cpp'], arch: 'sm_90' }, 'f', '/p', { arch: 'native' }).arch, 'native', '--arch wins');
  t.is(normalizeArch('all'), findCuda().DEFAULT_ARCHS.join(','));
  t.is(normalizeArch(' sm_80 , compute_90 '), 'sm_80,sm_90');
  t.deepEqual(resolveConfig({ name: 'a', sources: ['x.cpp'], defines: ['X=1', 'Y'] }, 'f', '/p').defines, ['X=1', 'Y']);
});

test('config: every bad field is an error naming the file and the field', (t) => {
  const bad: [unknown, RegExp][] = [
    [[], /f\.json: must hold a JSON object/],
    [{ sources: ['a.cu'] }, /f\.json: "name" must be an identifier/],
    [{ name: 'my-ops', sources: ['a.cu'] }, /"name" must be an identifier/],
    [{ name: 'x' }, /f\.json: "sources" must be a non-empty array of glob strings/],
    [{ name: 'x', sources: [] }, /"sources" must be a non-empty array of glob strings/],
    [{ name: 'x', sources: 'ops/*.cu' }, /"sources" must be a non-empty array/],
    [{ name: 'x', sources: ['a.cu'], arch: 'sm_8x' }, /"arch" has 'sm_8x', which is not an arch like sm_90/],
    [{ name: 'x', sources: ['a.cu'], arch: 80 }, /"arch" must be "native", "all"/],
    [{ name: 'x', sources: ['a.cu'], nvccFlags: '-O3' }, /"nvccFlags" must be an array of strings/],
    [{ name: 'x', sources: ['a.cu'], defines: ['1X'] }, /"defines" entries must be "NAME" or "NAME=value"/],
    [{ name: 'x', sources: ['a.cu'], defines: { A: [1] } }, /"defines" value of A must be/],
    [{ name: 'x', sources: ['a.cu'], libraries: ['-lcublas'] }, /"libraries" entries are library names like "cublas"/],
    [{ name: 'x', sources: ['a.cu'], outDir: '' }, /"outDir" must be a non-empty string/],
    [{ name: 'x', sources: ['a.cu'], nvcc_flags: [] }, /"nvcc_flags" is not a setup.config.json field \(known: name, sources/],
  ];
  for (const [raw, re] of bad) {
    const e = t.throws(() => resolveConfig(raw, 'f.json', '/p'), { instanceOf: ConfigError });
    t.regex(e?.message ?? '', re, JSON.stringify(raw));
  }
});

test('config: a missing or malformed file names the file', (t) => {
  const dir = tmpdir('cfg');
  const missing = path.join(dir, 'setup.config.json');
  t.throws(() => loadConfig(missing), { instanceOf: ConfigError, message: /setup\.config\.json: not found \(run `gpuext init <dir>`/ });
  fs.writeFileSync(missing, '{ "name": "x", ');
  t.throws(() => loadConfig(missing), { instanceOf: ConfigError, message: /setup\.config\.json:1:16: is not valid JSON: Expected double-quoted property name$/ });
  fs.writeFileSync(missing, '{\n  "name": "x",\n  "sources": ["a.cu"],\n}\n');
  t.throws(() => loadConfig(missing), { instanceOf: ConfigError, message: /setup\.config\.json:4:1: is not valid JSON: Expected double-quoted property name$/ });
  fs.writeFileSync(missing, JSON.stringify({ name: 'x', sources: ['nothing/*.cu'] }));
  const cfg = loadConfig(missing);
  t.is(cfg.baseDir, dir);
  return build({ resolved: cfg }).then(
    () => t.fail('built with no sources'),
    (e: unknown) => {
      t.true(e instanceof ConfigError);
      t.regex(e instanceof Error ? e.message : '', /"sources" \("nothing\/\*\.cu"\) matched no files/);
    });
});

test('the schema file is valid JSON and lists every config field', (t) => {
  const schema: unknown = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'setup.config.schema.json'), 'utf8'));
  t.truthy(schema && typeof schema === 'object' && 'properties' in schema);
  const props = schema && typeof schema === 'object' && 'properties' in schema && schema.properties && typeof schema.properties === 'object'
    ? Object.keys(schema.properties) : [];
  t.deepEqual([...props].sort(), [...KNOWN_FIELDS].sort(), 'the schema and the config reader know the same fields');
});

// --- glob -----------------------------------------------------------------------

test('glob: *, ** and ?, sorted, skipping node_modules, dot directories and ignored dirs', (t) => {
  const dir = tmpdir('glob');
  write(dir, {
    'ops/a.cu': '', 'ops/b.cpp': '', 'ops/sub/c.cu': '', 'ops/sub/deep/d.cu': '', 'ops/x1.cu': '', 'ops/x22.cu': '',
    'node_modules/m/e.cu': '', '.hidden/f.cu': '', 'build/g.cu': '', 'top.cu': '',
  });
  const rel = (ps: string[]): string[] => ps.map((p) => path.relative(dir, p).split(path.sep).join('/'));
  t.deepEqual(rel(glob(['ops/*.cu'], dir)), ['ops/a.cu', 'ops/x1.cu', 'ops/x22.cu']);
  t.deepEqual(rel(glob(['ops/**/*.cu'], dir)), ['ops/a.cu', 'ops/sub/c.cu', 'ops/sub/deep/d.cu', 'ops/x1.cu', 'ops/x22.cu']);
  t.deepEqual(rel(glob(['ops/x?.cu'], dir)), ['ops/x1.cu']);
  t.deepEqual(rel(glob(['**/*.cu'], dir, { ignoreDirs: [path.join(dir, 'build')] })),
    ['ops/a.cu', 'ops/sub/c.cu', 'ops/sub/deep/d.cu', 'ops/x1.cu', 'ops/x22.cu', 'top.cu']);
  t.deepEqual(rel(glob(['ops/b.cpp', 'ops/missing.cpp', './top.cu'], dir)), ['ops/b.cpp', 'top.cu']);
  t.deepEqual(rel(glob([path.join(dir, 'ops/sub/*.cu')], '/')), ['ops/sub/c.cu'], 'absolute patterns');
  t.deepEqual(rel(glob(['ops/*.{cu,cpp}'], dir)), ['ops/a.cu', 'ops/b.cpp', 'ops/x1.cu', 'ops/x22.cu'], 'braces');
  t.deepEqual(rel(glob(['{ops/sub,ops}/{c,b}.{cu,cpp}'], dir)), ['ops/b.cpp', 'ops/sub/c.cu'], 'several groups');
  t.deepEqual(expandBraces('a{b,{c,d}e}f'), ['abf', 'acef', 'adef'], 'nested groups');
  t.deepEqual(expandBraces('a{b}c'), ['a{b}c'], 'one alternative is literal');
  t.deepEqual(expandBraces('a{b,c'), ['a{b,c'], 'an unclosed brace is literal');
  t.true(matchGlob('ops/**/*.cu', 'ops/a.cu'));
  t.true(matchGlob('ops/**', 'ops/a/b/c'));
  t.false(matchGlob('ops/*.cu', 'ops/sub/c.cu'));
  t.false(matchGlob('a.cu', 'aXcu'), 'dots are literal');
});

test('build: every "sources" pattern must match a source file, or the build names the one that did not', async (t) => {
  const dir = tmpdir('pattern');
  write(dir, { 'ops/a.cpp': '' });
  const file = path.join(dir, 'setup.config.json');
  fs.writeFileSync(file, JSON.stringify({ name: 'x', sources: ['ops/*.cpp', 'kernels/*.cu'] }));
  const e = await t.throwsAsync(build({ resolved: loadConfig(file) }), { instanceOf: ConfigError });
  t.regex(e?.message ?? '', /setup\.config\.json: "sources" pattern "kernels\/\*\.cu" matched no source files under /);
});

// --- compiler output --------------------------------------------------------------

test('the first error is parsed from gcc, clang, nvcc and linker output', (t) => {
  const gcc = "ops/add.cpp: In function 'int main()':\nops/add.cpp:12:5: error: 'foo' was not declared in this scope\n   12 |     foo;\n      |     ^~~\nops/add.cpp:13:1: error: second";
  t.like(parseFirstError(gcc), { file: 'ops/add.cpp', line: 12, column: 5, message: "'foo' was not declared in this scope" });
  t.deepEqual(parseFirstError(gcc)?.context, ['   12 |     foo;', '      |     ^~~']);
  t.like(parseFirstError('x.cu:1:10: fatal error: nope.h: No such file or directory'), { file: 'x.cu', line: 1, column: 10, message: 'nope.h: No such file or directory' });
  t.like(parseFirstError('/a/b/add.cu(3): error: identifier "foo" is undefined\n    x = foo;\n        ^\n'), { file: '/a/b/add.cu', line: 3, column: undefined, message: 'identifier "foo" is undefined' });
  t.like(parseFirstError('k.cu(7): error #20-D: identifier "q" is undefined'), { file: 'k.cu', line: 7, message: 'identifier "q" is undefined' });
  t.like(parseFirstError('ops/a.cu(2): warning #177-D: unused\nops/a.cu(9): error: bad'), { line: 9, message: 'bad' });
  t.like(parseFirstError("/usr/bin/ld: a.o: in function `f':\n/usr/bin/ld: undefined reference to `g'\ncollect2: error: ld returned 1 exit status"), { message: "a.o: in function `f':" });
  t.like(parseFirstError("ptxas fatal   : Unresolved extern function 'h'"), { file: 'ptxas', message: "Unresolved extern function 'h'" });
  t.is(parseFirstError('all good\n'), undefined);
});

test('depfiles: continuation lines, escaped spaces, first rule only', (t) => {
  const d = 'obj.o : a.cu \\\n    /usr/include/x.h \\\n    my\\ dir/h.h \\\n    b.h\n\nb.h:\n';
  t.deepEqual(parseDepfile(d), ['a.cu', '/usr/include/x.h', 'my dir/h.h', 'b.h']);
});

test('a compile error in a .cpp shows file:line:col and the compiler\'s words; --verbose keeps the log', async (t) => {
  const dir = cppProject('bad_cpp');
  write(dir, { 'ops/twice.cpp': '#include <gpuext/extension.h>\nint f() {\n  return foo + 1;\n}\n' });
  const e = buildErr(t, await build({ config: path.join(dir, 'setup.config.json') }).catch((x: unknown) => x));
  t.is(e.file, 'ops/twice.cpp');
  t.is(e.line, 3);
  t.is(e.column, 10);
  t.regex(e.compilerMessage, /'foo' was not declared in this scope/);
  t.regex(e.message, /^ops\/twice\.cpp:3:10: error: 'foo' was not declared in this scope/);
  t.regex(e.message, /\(run with --verbose for the full compiler log\)$/);
  t.regex(e.log, /return foo \+ 1;/);
  t.false(fs.existsSync(path.join(dir, 'build/bad_cpp.node')));
  const events: BuildEvent[] = [];
  const v = buildErr(t, await build({ config: path.join(dir, 'setup.config.json'), verbose: true, onEvent: (ev) => events.push(ev) })
    .catch((x: unknown) => x));
  t.notRegex(v.message, /--verbose/);
  t.true(events.some((ev) => ev.type === 'command' && ev.argv.includes('-MD')));
  t.true(events.some((ev) => ev.type === 'log' && /'foo' was not declared/.test(ev.text)));
  t.deepEqual(fs.readdirSync(path.join(dir, 'build/.gpuext/obj')).filter((f) => f.startsWith('tmp-')), [], 'no temporary objects left');
});

nvccTest('a compile error in a .cu shows file:line and nvcc\'s words', async (t) => {
  const dir = cuProject('bad_cu');
  write(dir, { 'ops/add.cu': '#include <gpuext/extension.h>\n__global__ void k(float* x) {\n  x[0] = undefined_thing;\n}\n' });
  const e = buildErr(t, await build({ config: path.join(dir, 'setup.config.json') }).catch((x: unknown) => x));
  t.is(e.file, 'ops/add.cu');
  t.is(e.line, 3);
  t.regex(e.message, /^ops\/add\.cu:3: error: identifier "undefined_thing" is undefined/);
});

test('missing nvcc with .cu sources is a ToolchainError that says how to get it', async (t) => {
  const dir = cuProject('no_nvcc');
  const e = await build({ config: path.join(dir, 'setup.config.json'), nvcc: path.join(dir, 'no/such/nvcc') }).catch((x: unknown) => x);
  t.true(e instanceof ToolchainError, String(e));
  const msg = e instanceof Error ? e.message : '';
  t.regex(msg, /nvcc not found at .*no\/such\/nvcc/);
  t.regex(msg, /CUDA sources need it \(ops\/add\.cu\)/);
  t.regex(msg, /CUDA_HOME/);
  t.regex(msg, /only \.cpp files build without CUDA/);
});

test('a .cpp-only extension builds without nvcc', async (t) => {
  const dir = cppProject('no_nvcc_cpp');
  const r = await build({ config: path.join(dir, 'setup.config.json'), nvcc: '/nonexistent/nvcc', bindings: false });
  t.true(fs.existsSync(r.outPath));
  t.is(r.compiled, 2);
});

// --- incremental ------------------------------------------------------------------

test('a no-change rebuild runs no compiler; a header change recompiles; flags are part of the key', async (t) => {
  const dir = cppProject('incr');
  const cxx = countingWrapper(dir, '/usr/bin/g++', 'cxx');
  const config = path.join(dir, 'setup.config.json');
  const opts = { config, cxx: cxx.exe, bindings: false };
  const first = await build(opts);
  t.is(first.compiled, 2);
  t.true(first.linked);
  const calls = cxx.calls();
  t.true(calls >= 3, 'compiles, version and link went through the wrapper');

  const again = await build(opts);
  t.is(cxx.calls(), calls, 'no compiler, linker or --version run');
  t.like(again, { compiled: 0, cached: 2, linked: false });
  t.true(again.seconds < 1);
  t.true(again.watchFiles.includes(path.join(dir, 'ops/scale.h')));

  fs.writeFileSync(path.join(dir, 'ops/scale.h'), '#pragma once\n#define SCALE 3.0f\n');
  const header = await build(opts);
  t.like(header, { compiled: 1, cached: 1, linked: true }, 'only the unit including the header');

  fs.writeFileSync(config, JSON.stringify({ name: 'incr', sources: ['ops/**/*.cpp'], cxxFlags: ['-O1'] }));
  t.like(await build(opts), { compiled: 2, linked: true }, 'new flags, new objects');
  fs.writeFileSync(config, JSON.stringify({ name: 'incr', sources: ['ops/**/*.cpp'] }));
  // Objects no build refers to are removed, so going back compiles again.
  t.like(await build(opts), { compiled: 2, linked: true });
  t.like(await build(opts), { compiled: 0, linked: false });
});

test('outputs are replaced atomically and the object cache holds only current objects', async (t) => {
  const dir = cppProject('atomic');
  const config = path.join(dir, 'setup.config.json');
  const r = await build({ config, bindings: false });
  const objs = fs.readdirSync(path.join(dir, 'build/.gpuext/obj'));
  t.is(objs.length, 2);
  t.true(objs.every((o) => /^[0-9a-f]{64}\.o$/.test(o)));
  fs.appendFileSync(path.join(dir, 'ops/twice.cpp'), '\n// edit\n');
  const inode = fs.statSync(r.outPath).ino;
  await build({ config, bindings: false });
  t.not(fs.statSync(r.outPath).ino, inode, 'a new file renamed over the old one');
  t.is(fs.readdirSync(path.join(dir, 'build/.gpuext/obj')).length, 2);
  t.deepEqual(fs.readdirSync(path.join(dir, 'build')).filter((f) => f.includes('.tmp-')), []);
  t.false(fs.existsSync(path.join(dir, 'build/.gpuext/lock')), 'lock released');
});

// --- lock -------------------------------------------------------------------------

test('a lock left by a dead build is taken over', async (t) => {
  const dir = cppProject('deadlock');
  const dead = spawnSync(process.execPath, ['-e', '0']).pid;
  t.truthy(dead);
  write(dir, { 'build/.gpuext/lock': JSON.stringify({ pid: dead, hostname: os.hostname(), startedAt: new Date().toISOString() }) });
  const events: BuildEvent[] = [];
  const r = await build({ config: path.join(dir, 'setup.config.json'), bindings: false, onEvent: (e) => events.push(e) });
  t.true(fs.existsSync(r.outPath));
  const takeover = events.find((e) => e.type === 'takeover');
  t.truthy(takeover);
  t.regex(takeover && takeover.type === 'takeover' ? takeover.why : '', new RegExp(`process ${dead} is gone`));
  t.false(fs.existsSync(path.join(dir, 'build/.gpuext/lock')));
});

test('a lock older than 30 minutes is taken over; a live one is waited for', async (t) => {
  const dir = tmpdir('lock');
  const file = path.join(dir, 'lock');
  fs.writeFileSync(file, JSON.stringify({ pid: process.pid, hostname: 'elsewhere', startedAt: '2020-01-01T00:00:00Z' }));
  const old = new Date(Date.now() - 31 * 60 * 1000);
  fs.utimesSync(file, old, old);
  let why = '';
  const a = await acquireLock(file, { onTakeover: (_h, w) => { why = w; } });
  t.regex(why, /3\d minutes old/);
  let waited = 0;
  const started = Date.now();
  const b = acquireLock(file, { pollMs: 20, onWait: (h) => { waited = h.pid; } });
  setTimeout(() => a.release(), 200);
  const lockB = await b;
  t.is(waited, process.pid, 'printed once who holds it');
  t.true(Date.now() - started >= 150);
  lockB.release();
  t.false(fs.existsSync(file));
});

const linuxTest = process.platform === 'linux' ? test : test.skip;

/** A process that stays alive until killed (a stand-in for a live build). */
function liveProcess(): { pid: number; kill: () => void } {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  if (c.pid === undefined) throw new Error('could not start a process');
  return { pid: c.pid, kill: () => c.kill('SIGKILL') };
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('a lock with this process\'s id taken by an earlier process (a restarted container) is taken over at once', async (t) => {
  const dir = tmpdir('ownpid');
  const file = path.join(dir, 'lock');
  const own = startTicks(process.pid);
  const locks = [
    // Written by an earlier node that had the same id (PID 1 in a container, say).
    { pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString(), startTicks: (own ?? 0) + 1000, bootId: bootId() },
    // Written by an older gpuext (no start time): ours only if this process holds it, and it does not.
    { pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString() },
  ];
  for (const info of locks) {
    fs.writeFileSync(file, JSON.stringify(info));
    let why = '';
    const started = Date.now();
    const lock = await acquireLock(file, { onTakeover: (_h, w) => { why = w; }, onWait: () => t.fail('waited for a dead lock') });
    t.regex(why, new RegExp(`taken by an earlier process with this process's id \\(${process.pid}\\)`));
    t.true(Date.now() - started < 5000);
    lock.release();
  }
});

linuxTest('a live holder is waited for; an id now naming another process, or from an earlier boot, is not', async (t) => {
  const dir = tmpdir('livepid');
  const file = path.join(dir, 'lock');
  const holder = liveProcess();
  try {
    const ticks = startTicks(holder.pid);
    t.not(ticks, undefined);
    const base = { pid: holder.pid, hostname: os.hostname(), startedAt: new Date().toISOString(), startTicks: ticks, bootId: bootId() };
    for (const [info, re] of [
      [{ ...base, startTicks: (ticks ?? 0) + 12345 }, new RegExp(`process ${holder.pid} has exited and its id now names another process`)],
      [{ ...base, bootId: 'an-earlier-boot' }, new RegExp(`taken by process ${holder.pid} before the machine restarted`)],
    ] as const) {
      fs.writeFileSync(file, JSON.stringify(info));
      let why = '';
      const lock = await acquireLock(file, { onTakeover: (_h, w) => { why = w; }, onWait: () => t.fail('waited for a stale lock') });
      t.regex(why, re);
      lock.release();
    }
    // The same process, still running: waited for until it is gone.
    fs.writeFileSync(file, JSON.stringify(base));
    let waited = 0;
    let why = '';
    let done = false;
    const pending = acquireLock(file, { pollMs: 20, onWait: (h) => { waited = h.pid; }, onTakeover: (_h, w) => { why = w; } })
      .then((l) => { done = true; return l; });
    await new Promise((r) => setTimeout(r, 300));
    t.false(done, 'a live holder is waited for');
    t.is(waited, holder.pid);
    holder.kill();
    const lock = await pending;
    t.regex(why, new RegExp(`process ${holder.pid} is gone`));
    lock.release();
  } finally {
    holder.kill();
  }
});

async function killedBuild(t: ExecutionContext, signal: NodeJS.Signals): Promise<void> {
  const name = `killed_${signal.toLowerCase()}`;
  const dir = cppProject(name);
  const pidsFile = path.join(dir, 'link.pids');
  // A "compiler" that compiles for real but hangs in the link, after creating its output as a linker does,
  // with a child of its own (as g++ runs collect2 and ld).
  write(dir, {
    'tools/cxx': `#!/bin/sh
case " $* " in
  *" -shared "*)
    prev=; for a in "$@"; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
    : > "$out"
    sleep 300 &
    echo "$$ $!" > '${pidsFile}'
    wait ;;
  *) exec /usr/bin/g++ "$@" ;;
esac
`,
  });
  fs.chmodSync(path.join(dir, 'tools/cxx'), 0o755);
  const script = `require(${JSON.stringify(path.join(root, 'dist/lib/toolkit/build.js'))})
    .build({ config: 'setup.config.json', bindings: false }).then(() => process.exit(3), () => process.exit(4));`;
  const builder = spawn(process.execPath, ['-e', script], { cwd: dir, env: { ...process.env, CXX: path.join(dir, 'tools/cxx') }, stdio: 'ignore' });
  const exited = new Promise((r) => builder.on('exit', r));
  await until('the link to start', () => fs.existsSync(pidsFile) && fs.readFileSync(pidsFile, 'utf8').trim().split(' ').length === 2);
  const compilers = fs.readFileSync(pidsFile, 'utf8').trim().split(' ').map(Number);
  t.teardown(() => {
    // Should the test fail, leave nothing running.
    for (const pid of [builder.pid ?? 0, ...compilers].filter((p) => p > 0 && pidAlive(p))) process.kill(pid, 'SIGKILL');
  });
  t.true(compilers.every((p) => pidAlive(p)));
  builder.kill(signal);
  await exited;
  await until('the compilers to end', () => !compilers.some(pidAlive)).catch(() => undefined);
  t.deepEqual(compilers.filter(pidAlive), [], 'the killed build\'s compiler and its child are gone');
  const leftovers = (): string[] => fs.readdirSync(path.join(dir, 'build')).filter((f) => f.includes('.tmp-'));
  t.is(leftovers().length, 1);
  t.regex(leftovers()[0], new RegExp(`^\\.${name}\\.node\\.tmp-${builder.pid}-`));
  // Temporary files of other dead writers, of an earlier process with our id, and of a live one.
  const dead = spawnSync(process.execPath, ['-e', '0']).pid;
  write(dir, {
    [`build/.gpuext/.manifest.json.tmp-${dead}-0badf00d`]: '{',
    [`build/.gpuext/obj/tmp-${process.pid}-7.o`]: '',
    [`build/.${name}.js.tmp-${process.ppid}-12345678`]: '',
  });
  const events: BuildEvent[] = [];
  const r = await build({ config: path.join(dir, 'setup.config.json'), bindings: false, onEvent: (e) => events.push(e) });
  t.true(fs.existsSync(r.outPath));
  // SIGTERM runs the lock's handler, which removes the lock; SIGKILL leaves it for the next build to take over.
  if (signal === 'SIGKILL') t.true(events.some((e) => e.type === 'takeover' && e.why.includes(`process ${builder.pid} is gone`)), 'the dead build\'s lock was taken over');
  t.deepEqual(leftovers(), [`.${name}.js.tmp-${process.ppid}-12345678`], 'only the live writer\'s file is kept');
  t.deepEqual(fs.readdirSync(path.join(dir, 'build/.gpuext')).filter((f) => f.includes('tmp-')), []);
  t.deepEqual(fs.readdirSync(path.join(dir, 'build/.gpuext/obj')).filter((f) => f.startsWith('tmp-')), []);
}

linuxTest('a build killed with SIGKILL leaves no compiler running, and the next build removes its temporary files', killedBuild, 'SIGKILL');
linuxTest('a build ended by SIGTERM stops its compilers, and the next build removes its temporary files', killedBuild, 'SIGTERM');

test('[core] two builds at once both succeed and the output loads', async (t) => {
  const dir = cppProject('concurrent');
  const [a, b] = await Promise.all([runCli(['build'], dir), runCli(['build'], dir)]);
  t.is(a.code, 0, a.stderr);
  t.is(b.code, 0, b.stderr);
  t.regex(a.stdout + b.stdout, /built build\/concurrent\.node/);
  t.is(a.stdout.trim().split('\n').length, 1, 'quiet outside a terminal: one line');
  const lib = gx.loadLibrary(path.join(dir, 'build/concurrent.node'));
  using x = gx.tensor([1, 2, 3]);
  const y = lib.functions.twice(x);
  t.true(y instanceof gx.Tensor);
  if (y instanceof gx.Tensor) {
    t.deepEqual(Array.from(y.toArraySync()), [2, 4, 6]);
    y.dispose();
  }
  t.deepEqual(fs.readdirSync(path.join(dir, 'build/.gpuext')).sort(), ['extension_main.cpp', 'manifest.json', 'obj']);
});

// --- extensions end to end ([core]: needs the core's extension loader) ---------------

test('[core] a .cpp extension builds, its typed bindings are generated and its op runs', async (t) => {
  const dir = cppProject('cpp_ext');
  const events: BuildEvent[] = [];
  const r: BuildResult = await build({ config: path.join(dir, 'setup.config.json'), onEvent: (e) => events.push(e) });
  t.deepEqual(r.bindings.map((b) => path.basename(b)).sort(), ['cpp_ext.d.ts', 'cpp_ext.js']);
  t.deepEqual(r.descriptor?.ops.map((o) => o.name), ['twice']);
  t.is(events.filter((e) => e.type === 'compiled').length, 2);
  const dts = fs.readFileSync(path.join(dir, 'build/cpp_ext.d.ts'), 'utf8');
  t.regex(dts, /twice\(x: Tensor\): Tensor/);
  const mod: unknown = require(path.join(dir, 'build/cpp_ext.js'));
  const twice = mod && typeof mod === 'object' && 'twice' in mod && typeof mod.twice === 'function' ? mod.twice : undefined;
  t.truthy(twice);
  using x = gx.tensor([1.5, -2]);
  const y: unknown = twice?.(x);
  t.true(y instanceof gx.Tensor);
  if (y instanceof gx.Tensor) {
    t.deepEqual(Array.from(y.toArraySync()), [3, -4]);
    y.dispose();
  }
});

test('[core] a registration error leaves the previous outputs in place and names the line of the m.def', async (t) => {
  const dir = cppProject('bad_schema');
  const config = path.join(dir, 'setup.config.json');
  await build({ config });
  const before = fs.readFileSync(path.join(dir, 'build/bad_schema.node'));
  fs.writeFileSync(path.join(dir, 'ops/twice.cpp'), twiceCpp('bad_schema').replace('twice(Tensor x) -> Tensor', 'twice(Tensr x) -> Tensor'));
  const e = buildErr(t, await build({ config }).catch((x: unknown) => x));
  t.is(e.stage, 'load');
  t.regex(e.message, /^ops\/twice\.cpp:\d+: error: invalid schema "twice\(Tensr x\) -> Tensor": unknown type 'Tensr'/);
  t.deepEqual(fs.readFileSync(path.join(dir, 'build/bad_schema.node')), before);
});

test('[core] an extension calling a function nothing defines fails its build at load, naming the symbol', async (t) => {
  // The loader binds every symbol at load (RTLD_NOW): lazily bound, the first call would have killed the process.
  const dir = cppProject('missing_symbol');
  const src = twiceCpp('missing_symbol').replace('gx::Tensor twice(', 'extern "C" float gx_test_nowhere_defined(float);\ngx::Tensor twice(');
  fs.writeFileSync(path.join(dir, 'ops/twice.cpp'), src.replace('py[i] = SCALE * px[i]', 'py[i] = gx_test_nowhere_defined(px[i])'));
  const e = buildErr(t, await build({ config: path.join(dir, 'setup.config.json') }).catch((x: unknown) => x));
  t.is(e.stage, 'load');
  t.regex(e.message, /gx_test_nowhere_defined/);
});

nvccTest('[core] a .cu extension builds with nvcc and runs its CPU implementation', async (t) => {
  const dir = cuProject('cu_ext');
  const r = await build({ config: path.join(dir, 'setup.config.json') });
  t.is(r.compiled, 2);
  t.deepEqual(r.descriptor?.ops.find((o) => o.name === 'add')?.devices, ['cpu', 'cuda']);
  const lib = gx.loadLibrary(r.outPath);
  using a = gx.tensor([1, 2, 3]);
  using b = gx.tensor([10, 20, 30]);
  const c = lib.functions.add(a, b);
  t.true(c instanceof gx.Tensor);
  if (c instanceof gx.Tensor) {
    t.deepEqual(Array.from(c.toArraySync()), [11, 22, 33]);
    c.dispose();
  }
  t.throws(() => lib.functions.add(a, gx.tensor([1])), { message: /shapes differ: \[3\] vs \[1\]/ });
});

cudaTest('[core] a .cu extension runs its CUDA implementation on the GPU', async (t) => {
  const dir = cuProject('cu_ext_gpu');
  const r = await build({ config: path.join(dir, 'setup.config.json'), arch: 'native' });
  const lib = gx.loadLibrary(r.outPath);
  const n = 1000;
  using a = gx.arange(n, { dtype: 'float32', device: 'cuda' });
  using b = gx.full([n], 0.5, { device: 'cuda' });
  const c = lib.functions.add(a, b);
  t.true(c instanceof gx.Tensor);
  if (c instanceof gx.Tensor) {
    t.is(String(c.device), 'cuda:0');
    const v = await c.toArray();
    t.deepEqual(Array.from(v), Array.from({ length: n }, (_, i) => i + 0.5));
    c.dispose();
  }
});

// --- gx.load / gx.loadInline ---------------------------------------------------------

/** The first error of a loadInline whose third line is wrong: its file, line and the source line quoted. */
async function inlineErrorAt(t: ExecutionContext, kind: 'cpp' | 'cuda', name: string): Promise<void> {
  const text = '// one\n// two\nint f() { return undeclared_thing; }\n';
  const e = buildErr(t, await loadInline({ name, [kind]: text, buildDirectory: tmpdir('inline-line'), arch: CU_ARCH }).catch((x: unknown) => x));
  t.is(path.basename(e.file), `${name}.${kind === 'cpp' ? 'cpp' : 'cu'}`);
  t.is(e.line, 3, 'the user\'s line, not one shifted by the pre-included header');
  t.regex(e.message, /undeclared_thing/);
  t.regex(e.message.split('\n')[1] ?? '', /int f\(\) \{ return undeclared_thing; \}/, 'the quoted source line is the user\'s');
}

test('[core] a loadInline C++ compile error points at the user\'s line and quotes it', (t) => inlineErrorAt(t, 'cpp', 'inl_line'));
nvccTest('[core] a loadInline CUDA compile error points at the user\'s line and quotes it', (t) => inlineErrorAt(t, 'cuda', 'inl_line_cu'));

const inlineCpp = (lib: string): string => `
gx::Tensor neg(const gx::Tensor& x) {
  gx::Tensor y = gx::empty_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<float>()[i] = -x.data_ptr<float>()[i];
  return y;
}
GX_LIBRARY(${lib}, m) { m.def("neg(Tensor x) -> Tensor").impl(gx::kCPU, neg); }
`;

test('[core] gx.load builds once; a second process gets it from the cache without a compiler', async (t) => {
  const dir = cppProject('loaded');
  const cache = tmpdir('cache');
  const cxx = countingWrapper(dir, '/usr/bin/g++', 'g++');
  const script = `
    const gx = require(${JSON.stringify(root)});
    const { load } = require(${JSON.stringify(path.join(root, 'dist/lib/load.js'))});
    load({ name: 'loaded', sources: ['ops/twice.cpp'] }).then((ops) => {
      console.log(JSON.stringify(Array.from(ops.twice(gx.tensor([1, 2])).toArraySync())));
    }, (e) => { console.error(e.message); process.exitCode = 1; });`;
  const run = (): Promise<{ code: number; out: string }> => new Promise((resolve) => {
    execFile(process.execPath, ['-e', script], { cwd: dir, env: { ...process.env, GPUEXT_CACHE_DIR: cache, CXX: cxx.exe } },
      (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr }));
  });
  const first = await run();
  t.is(first.code, 0, first.out);
  t.is(first.out.trim(), '[2,4]');
  const calls = cxx.calls();
  t.true(calls > 0);
  const second = await run();
  t.is(second.out.trim(), '[2,4]');
  t.is(cxx.calls(), calls, 'cache hit: no compiler run');
  const dirs = fs.readdirSync(path.join(cache, 'extensions'));
  t.is(dirs.length, 1);
  t.regex(dirs[0], /^loaded-[0-9a-f]{16}$/);
  // In this process too, and with relative sources resolved against the cwd.
  const ops = await load({ name: 'loaded', sources: [path.join(dir, 'ops/twice.cpp')], buildDirectory: path.join(cache, 'extensions') });
  t.is(typeof ops.twice, 'function');
});

test('[core] gx.loadInline builds C++ source text and returns its ops', async (t) => {
  const cache = tmpdir('inline');
  const ops = await loadInline({ name: 'inl', cpp: inlineCpp('inl'), buildDirectory: cache });
  using x = gx.tensor([1, -2.5]);
  const y = ops.neg(x);
  t.true(y instanceof gx.Tensor);
  if (y instanceof gx.Tensor) {
    t.deepEqual(Array.from(y.toArraySync()), [-1, 2.5]);
    y.dispose();
  }
  const again = await loadInline({ name: 'inl', cpp: inlineCpp('inl'), buildDirectory: cache });
  t.is(again, ops, 'same build, same library');
  const bad = await loadInline({ name: 'inl_bad', cpp: 'int f() { return nope; }', buildDirectory: cache }).catch((e: unknown) => e);
  t.true(bad instanceof BuildError);
  t.regex(bad instanceof Error ? bad.message : '', /inl_bad\.cpp:1:\d+: error: 'nope' was not declared/);
  await t.throwsAsync(loadInline({ name: 'x-y', cpp: 'int a;' }), { instanceOf: ConfigError, message: /gx\.loadInline: "name" must be an identifier/ });
  const notAnArray: unknown = '-O1';
  await t.throwsAsync(loadInline({ name: 'flags', cpp: 'int a;', cxxFlags: notAnArray as string[] }), { instanceOf: ConfigError, message: /"cxxFlags"/ });
  await t.throwsAsync(load({ name: 'x', sources: [] }), { message: /gx\.load: "sources" must be a non-empty array/ });
});

test('[core] gx.loadInline with schemas: typed ops, each schema checked against the registered one', async (t) => {
  const cache = tmpdir('inline-schemas');
  // Spacing may differ from the m.def() line; the schema may not.
  const ops = await loadInline({ name: 'inl_typed', cpp: inlineCpp('inl_typed'), buildDirectory: cache, schemas: ['neg( Tensor x )  ->  Tensor'] });
  using x = gx.tensor([1, -2.5]);
  using y = ops.neg(x);  // typed: (x: Tensor) => Tensor
  t.deepEqual(Array.from(y.toArraySync() as Float32Array), [-1, 2.5]);
  await t.throwsAsync(loadInline({ name: 'inl_typed', cpp: inlineCpp('inl_typed'), buildDirectory: cache, schemas: ['neg(Tensor x, float s) -> Tensor'] }), {
    instanceOf: ConfigError,
    message: "gx.loadInline: \"schemas\" [0] declares 'neg(Tensor x, float s) -> Tensor' but the extension registers 'neg(Tensor x) -> Tensor'; copy the schema from its m.def()",
  });
  await t.throwsAsync(loadInline({ name: 'inl_typed', cpp: inlineCpp('inl_typed'), buildDirectory: cache, schemas: ['negate(Tensor x) -> Tensor'] }), {
    instanceOf: ConfigError, message: /"schemas" \[0\] declares op 'negate', which the extension does not register \(it has neg\)/,
  });
  const oneString: unknown = 'neg(Tensor x) -> Tensor';
  await t.throwsAsync(loadInline({ name: 'inl_typed', cpp: 'int a;', schemas: oneString as string[] }), {
    instanceOf: ConfigError, message: /"schemas" must be an array of op schemas/,
  });
  const misspelled = { name: 'inl_typed', cpp: 'int a;', buildDirectry: cache };
  await t.throwsAsync(loadInline(misspelled), { instanceOf: TypeError, message: /^gx\.loadInline: unknown option 'buildDirectry'; did you mean 'buildDirectory'\?/ });
  await t.throwsAsync(load({ name: 'x', sources: ['a.cpp'], extra_cflags: ['-O3'] } as gx.LoadOptions), {
    instanceOf: TypeError, message: /^gx\.load: unknown option 'extra_cflags'; did you mean 'cxxFlags'\?/,
  });
});
