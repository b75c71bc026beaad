// What `gpuext build` says when an extension is wrong, in the user's terms:
// a link error by its first `multiple definition` / `undefined reference`, a
// symbol the loader misses by its C++ name and declaration, a registration
// error at the line of its m.def (never at build/.<name>.node.tmp-...), a
// GX_LIBRARY namespace other than the extension's name, and a compile error
// inside a gpuext macro or header at the user's line. Small .cpp projects
// (g++); the nvcc cases only where nvcc is installed (compiled for one arch).
import test, { type ExecutionContext } from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { build, type BuildEvent } from '../lib/toolkit/build';
import { linkProblem } from '../lib/toolkit/diagnostics';
import { BuildError } from '../lib/toolkit/errors';
import { detectToolchain } from '../lib/toolkit/toolchain';

const root = path.resolve(__dirname, '../..');
const HAS_NVCC = detectToolchain().nvcc !== undefined;
const nvccTest = HAS_NVCC ? test : test.skip;
const CU_ARCH = gx.cuda.isAvailable() ? 'native' : 'sm_80';

const tmpdirs: string[] = [];
test.after.always(() => {
  for (const d of tmpdirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A project named `name` with `files` under ops/ (sources: ops/*.cpp and ops/*.cu). */
function project(name: string, files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gpuext-msg-${name}-`));
  tmpdirs.push(dir);
  fs.mkdirSync(path.join(dir, 'ops'));
  fs.writeFileSync(path.join(dir, 'setup.config.json'),
    JSON.stringify({ name, sources: Object.keys(files).map((f) => `ops/${f}`), runtimeImport: root, arch: CU_ARCH }));
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, 'ops', f), text);
  return dir;
}

const IDENT = 'gx::Tensor ident(const gx::Tensor& x) { return x; }\n';

/** Builds `dir` and returns the BuildError it must fail with. */
async function failure(t: ExecutionContext, dir: string): Promise<BuildError> {
  const e: unknown = await build({ config: path.join(dir, 'setup.config.json') }).then(() => undefined, (x: unknown) => x);
  if (!(e instanceof BuildError)) {
    t.fail(`expected a BuildError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    throw new Error('no BuildError');
  }
  t.notRegex(e.message, /\.tmp-|\.gpuext\/obj/, 'no temporary or object file names');
  return e;
}

test('a multiple definition at link time is shown with both sources, not the object files', async (t) => {
  const dir = project('msg_twice', {
    'a.cpp': `#include <gpuext/extension.h>\n${IDENT}GX_LIBRARY(msg_twice, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident); }\n`,
    'b.cpp': `#include <gpuext/extension.h>\n${IDENT}`,
  });
  const e = await failure(t, dir);
  t.is(e.stage, 'link');
  t.regex(e.message, /^ops\/b\.cpp: error: multiple definition of `ident\(gx::Tensor const&\)'; ops\/a\.cpp: first defined here\n {2}\(in function `ident\(gx::Tensor const&\)'\)\n/);
});

test('the first undefined reference of a link log is the message, at its source', (t) => {
  // GNU ld's words, as it prints them when a link needs every symbol (an executable, or -z defs).
  const obj = '/p/build/.gpuext/obj/0123abcd.o';
  const log = [
    `/usr/bin/ld: ${obj}: in function \`gx_library_body_my_ops(gx::Library&)':`,
    "op.cpp:(.text+0x1d): undefined reference to `add_cpu(gx::Tensor const&, gx::Tensor const&)'",
    "op.cpp:(.text+0x3a): undefined reference to `add_gpu(gx::Tensor const&, gx::Tensor const&)'",
    'collect2: error: ld returned 1 exit status',
  ].join('\n');
  t.deepEqual(linkProblem(log, new Map([[obj, 'ops/op.cpp']]), ['/p/ops/op.cpp'], '/p'), {
    file: 'ops/op.cpp', line: undefined, message: "undefined reference to `add_cpu(gx::Tensor const&, gx::Tensor const&)'",
    context: ["  (in function `gx_library_body_my_ops(gx::Library&)')"],
  });
  const withLine = "/p/ops/op.cpp:12: undefined reference to `f()'";
  t.like(linkProblem(withLine, new Map(), ['/p/ops/op.cpp'], '/p'), { file: 'ops/op.cpp', line: 12, message: "undefined reference to `f()'" });
  t.is(linkProblem('collect2: error: ld returned 1 exit status', new Map(), [], '/p'), undefined);
});

test('a symbol declared but defined nowhere is named in C++ at its declaration', async (t) => {
  const dir = project('msg_undef', {
    'op.cpp': `#include <gpuext/extension.h>
gx::Tensor add_cpu(const gx::Tensor& a);
GX_LIBRARY(msg_undef, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, add_cpu); }
`,
  });
  const e = await failure(t, dir);
  t.regex(e.message, /^ops\/op\.cpp:2: error: undefined symbol `add_cpu\(gx::Tensor const&\)': the extension uses it but none of its sources defines it/);
  t.regex(e.message, /\n {4}2 \| gx::Tensor add_cpu\(const gx::Tensor& a\);/);
});

test('registration errors point at the m.def in the source', async (t) => {
  const schema = project('msg_schema', {
    'op.cpp': `#include <gpuext/extension.h>
${IDENT}GX_LIBRARY(msg_schema, m) {
  m.def("ok(Tensor x) -> Tensor").impl(gx::kCPU, ident);
  m.def("ident(Tensr x) -> Tensor").impl(gx::kCPU, ident);
}
`,
  });
  const twice = project('msg_dupe', {
    'op.cpp': `#include <gpuext/extension.h>
${IDENT}GX_LIBRARY(msg_dupe, m) {
  m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident);

  m.def("ident(Tensor y) -> Tensor").impl(gx::kCPU, ident);
}
`,
  });
  const [s, d] = await Promise.all([failure(t, schema), failure(t, twice)]);
  t.is(s.stage, 'load');
  t.regex(s.message, /^ops\/op\.cpp:5: error: invalid schema "ident\(Tensr x\) -> Tensor": unknown type 'Tensr' at column 7/);
  t.regex(s.message, /\n {4}5 \| {3}m\.def\("ident\(Tensr x\) -> Tensor"\)/);
  t.is(s.file, 'ops/op.cpp');
  t.is(s.line, 5);
  t.regex(d.message, /^ops\/op\.cpp:6: error: duplicate op 'msg_dupe::ident': defined twice/, 'the second definition');
});

test('a GX_LIBRARY namespace other than the extension\'s name is a warning at its line', async (t) => {
  const other = project('msg_named', {
    'op.cpp': `#include <gpuext/extension.h>\n${IDENT}\nGX_LIBRARY(other_name, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident); }\n`,
  });
  const same = project('msg_same', {
    'op.cpp': `#include <gpuext/extension.h>\n${IDENT}GX_LIBRARY(msg_same, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident); }\n`,
  });
  const warnings = (dir: string): Promise<string[]> => {
    const out: string[] = [];
    const onEvent = (e: BuildEvent): void => {
      if (e.type === 'warning') out.push(e.text);
    };
    return build({ config: path.join(dir, 'setup.config.json'), onEvent }).then(() => out);
  };
  const [w, none] = await Promise.all([warnings(other), warnings(same)]);
  t.deepEqual(w, ["warning: ops/op.cpp:4: GX_LIBRARY(other_name, m) registers its ops under 'other_name' (other_name::ident), " +
    "but setup.config.json names the extension 'msg_named'; write GX_LIBRARY(msg_named, m) so that its ops and their errors carry the extension's name"]);
  t.deepEqual(none, []);
});

test('a compile error inside a gpuext macro is shown at the user\'s line (g++)', async (t) => {
  const dir = project('msg_macro', {
    'op.cpp': `#include <gpuext/extension.h>
struct Opaque {};
gx::Tensor ident(const gx::Tensor& x) {
  GX_CHECK(x.dim() == 1, "expected 1-d, got ", Opaque{});
  return x;
}
GX_LIBRARY(msg_macro, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident); }
`,
  });
  const e = await failure(t, dir);
  t.is(e.file, 'ops/op.cpp');
  t.is(e.line, 4);
  t.regex(e.message, /^ops\/op\.cpp:4:3: error: .*append_to.*\(inside GX_CHECK, at gpuext\/check\.h:\d+\)\n {4}4 \| {3}GX_CHECK\(x\.dim\(\) == 1, "expected 1-d, got ", Opaque\{\}\);\n/);
});

test('GX_CHECK_LAUNCH() in a host-compiled file says where it belongs, at the user\'s line', async (t) => {
  const dir = project('msg_hostlaunch', {
    'op.cpp': `#include <gpuext/extension.h>
${IDENT}void launch() {
  GX_CHECK_LAUNCH();
}
GX_LIBRARY(msg_hostlaunch, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident); }
`,
  });
  const e = await failure(t, dir);
  t.regex(e.message, /^ops\/op\.cpp:4:3: error: static assertion failed: GX_CHECK_LAUNCH\(\) checks a CUDA kernel launch: it belongs in a \.cu file \(compiled by nvcc\), after the <<<\.\.\.>>> launch \(inside GX_CHECK_LAUNCH, at gpuext\/extension\.h:\d+\)\n {4}4 \| {3}GX_CHECK_LAUNCH\(\);\n/);
});

nvccTest('nvcc: an error in a macro\'s expansion shows the line as written; one in a gpuext template, the user\'s line', async (t) => {
  const launch = project('msg_launch', {
    'k.cu': `#include <gpuext/extension.h>
__global__ void k(float* x) { x[0] = 1; }
int launch(float* x) {
  k<<<1, 1, 0, gx::current_stream()>>>(x);
  return GX_CHECK_LAUNCH();
}
`,
  });
  const template = project('msg_template', {
    'k.cu': `#include <gpuext/extension.h>
struct Opaque {};
void check(const gx::Tensor& x) {
  GX_CHECK(x.dim() == 1, "expected 1-d, got ", Opaque{});
}
`,
  });
  const [l, m] = await Promise.all([failure(t, launch), failure(t, template)]);
  t.regex(l.message, /^ops\/k\.cu:5: error: expected an expression \(in GX_CHECK_LAUNCH\)\n {4}5 \| {3}return GX_CHECK_LAUNCH\(\);\n/);
  t.notRegex(l.message, /cudaGetLastError/, 'not the expansion');
  t.regex(m.message, /^ops\/k\.cu:4: error: no instance of overloaded function "gx::append_to" .*\(inside GX_CHECK, at gpuext\/check\.h:\d+\)\n {4}4 \| {3}GX_CHECK/);
});

test('gx exports the error classes gx.load and the build throw', async (t) => {
  const e = await t.throwsAsync(gx.load({ name: 'not an identifier', sources: ['ops/x.cpp'] }), { instanceOf: gx.ConfigError });
  t.is(e?.field, 'name');
  const dir = project('msg_class', { 'op.cpp': 'int broken( {\n' });
  const b = await t.throwsAsync(gx.load({ name: 'msg_class', sources: [path.join(dir, 'ops', 'op.cpp')], buildDirectory: path.join(dir, 'cache') }),
    { instanceOf: gx.BuildError });
  t.is(b?.stage, 'compile');
  t.regex(b?.message ?? '', /op\.cpp:1:\d+: error: /);
  const cu = project('msg_tool', { 'k.cu': '__global__ void k() {}\n' });
  const tc = await t.throwsAsync(build({ config: path.join(cu, 'setup.config.json'), nvcc: path.join(cu, 'no-nvcc') }), { instanceOf: gx.ToolchainError });
  t.is(tc?.tool, 'nvcc');
});
