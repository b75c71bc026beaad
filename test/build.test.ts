// The build toolkit: config validation, glob, compiler error parsing, the
// object cache (a no-change rebuild runs no compiler), missing nvcc, and
// extensions built
// from a temporary project and called (CPU here; CUDA where there is a GPU).
// Tests marked [core] need the core's extension loader (native.describeExtension,
// loadLibrary); the rest exercise only the toolkit.
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'child_process';
import fs from 'fs';
import path from 'path';

import * as gx from '../lib';
import { build, type BuildEvent, type BuildResult } from '../lib/toolkit/build';
import { parseDepfile } from '../lib/toolkit/compile';
import { KNOWN_FIELDS, loadConfig, normalizeArch, resolveConfig } from '../lib/toolkit/config';
import { BuildError, ConfigError, parseFirstError, ToolchainError } from '../lib/toolkit/errors';
import { expandBraces, glob, matchGlob } from '../lib/toolkit/glob';
import { findCuda, packageRoot } from '../lib/toolkit/toolchain';
import { load, loadInline } from '../lib/toolkit/load';
import { cudaTest } from './helpers';
import { buildErr, countingWrapper, cppProject, CU_ARCH, cuProject, nvccTest, root, tmpdir, twiceCpp, write } from './build-helpers';

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

test('a library put in place of the one the link wrote is linked again, not called up to date by its name', async (t) => {
  const dir = cppProject('stamped');
  const config = path.join(dir, 'setup.config.json');
  const first = await build({ config, bindings: false });
  t.true(first.linked);
  const made = fs.readFileSync(first.outPath);
  t.like(await build({ config, bindings: false }), { compiled: 0, linked: false }, 'untouched: up to date');
  // Another build's library over it (as an archive extracted over a build directory leaves it): same name, other file.
  fs.rmSync(first.outPath);
  fs.writeFileSync(first.outPath, Buffer.concat([made, Buffer.from('another build')]));
  const again = await build({ config, bindings: false });
  t.like(again, { compiled: 0, cached: 2, linked: true }, 'linked from the cached objects');
  t.deepEqual(fs.readFileSync(again.outPath), made, 'the library its objects make');
  t.like(await build({ config, bindings: false }), { compiled: 0, linked: false });
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
    const { load } = require(${JSON.stringify(path.join(root, 'dist/lib/toolkit/load.js'))});
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
