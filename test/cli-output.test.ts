// What `gpuext build` prints when its output is piped, as in a CI log
// (NOTE [ Build progress ] in lib/cli/build.ts): one whole line per compiled
// unit on stderr, the closing line alone on stdout; and in --watch, each
// warning once however often it rebuilds.
import test from 'ava';
import { spawn } from 'child_process';
import fs from 'fs';
import path from 'path';

import { NATIVE_WITHOUT_GPU } from '../lib/toolkit/build';
import { detectToolchain, nativeGpuModels } from '../lib/toolkit/toolchain';
import { cli, gpuext, removeTmpdirsAfter, workspace } from './cli-helpers';

removeTmpdirsAfter();

/** A project of `count` .cpp files; `ns` is the GX_LIBRARY namespace (a warning when it is not `name`). */
function project(prefix: string, name: string, count: number, ns = name): string {
  const dir = workspace(prefix);
  fs.mkdirSync(path.join(dir, 'ops'));
  fs.writeFileSync(path.join(dir, 'setup.config.json'), JSON.stringify({ name, sources: ['ops/*.cpp'] }));
  for (let i = 0; i < count; i++) fs.writeFileSync(path.join(dir, 'ops', `f${i}.cpp`), `int f${i}() { return ${i}; }\n`);
  fs.writeFileSync(path.join(dir, 'ops', 'op.cpp'), `#include <gpuext/extension.h>
namespace { gx::Tensor ident(const gx::Tensor& x) { return x; } }
GX_LIBRARY(${ns}, m) { m.def("ident(Tensor x) -> Tensor").impl(gx::kCPU, ident); }
`);
  return dir;
}

test('piped, a build prints [k/N] per compiled unit on stderr, whole lines, and only the closing line on stdout', async (t) => {
  const extra = 1 + Math.floor(Math.random() * 3);
  const proj = project('piped', 'piped', extra);
  const r = await gpuext(['build'], proj);
  t.is(r.code, 0, r.stderr);
  const total = extra + 2; // the extra files, op.cpp and extension_main.cpp
  t.regex(r.stdout, new RegExp(`^built build/piped\\.node \\+ piped\\.js/\\.d\\.ts in [\\d.]+s \\(${total} compiled, 0 cached\\)\\n$`));
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  t.is(lines.length, total, r.stderr);
  lines.forEach((l, i) => t.regex(l, new RegExp(`^\\[${i + 1}/${total}\\] \\S+ (ops/(f\\d|op)\\.cpp|extension_main\\.cpp \\(gpuext\\)) [\\d.]+s$`)));
  const files = lines.map((l) => l.split(' ')[2]).sort();
  t.deepEqual(files, [...Array.from({ length: extra }, (_, i) => `ops/f${i}.cpp`), 'ops/op.cpp', 'extension_main.cpp'].sort());
  t.false(/\r/.test(r.stdout + r.stderr), 'no carriage returns');

  // A one-file change compiles one unit: [1/1].
  fs.appendFileSync(path.join(proj, 'ops', 'f0.cpp'), '// changed\n');
  const again = await gpuext(['build'], proj);
  t.regex(again.stderr, /^\[1\/1\] \S+ ops\/f0\.cpp [\d.]+s\n$/);
  t.regex(again.stdout, new RegExp(`\\(1 compiled, ${total - 1} cached\\)\\n$`));
});

/** Runs `gpuext build --watch` in `dir`, applies each edit after a build, and returns everything it printed. */
async function watchRun(dir: string, file: string, edits: number, done: RegExp): Promise<string> {
  const child = spawn(process.execPath, [cli, 'build', '--watch'], { cwd: dir, env: { ...process.env, CI: '1' } });
  let out = '';
  const waitFor = (count: number): Promise<void> => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for build ${count}; output:\n${out}`)), 90_000);
    const check = (): void => {
      if ((out.match(new RegExp(done.source, 'g')) ?? []).length >= count) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve();
      }
    };
    const poll = setInterval(check, 50);
  });
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  try {
    for (let i = 1; i <= edits + 1; i++) {
      await waitFor(i);
      if (i <= edits) fs.appendFileSync(file, `// edit ${i}\n`);
    }
  } finally {
    child.kill('SIGINT');
    await new Promise((r) => child.once('close', r));
  }
  return out;
}

test('--watch prints a warning once, however many rebuilds repeat it', async (t) => {
  const proj = project('watch-warn', 'warned', 0, 'other_ns');
  const out = await watchRun(proj, path.join(proj, 'ops', 'op.cpp'), 2, /built build\/warned\.node/);
  t.is((out.match(/built build\/warned\.node/g) ?? []).length, 3, out);
  t.is((out.match(/warning: ops\/op\.cpp:3: GX_LIBRARY\(other_ns, m\)/g) ?? []).length, 1, out);
  // A build without --watch warns each time it links.
  fs.appendFileSync(path.join(proj, 'ops', 'op.cpp'), '// edit 3\n');
  const once = await gpuext(['build'], proj);
  t.regex(once.stderr, /warning: ops\/op\.cpp:3: GX_LIBRARY\(other_ns, m\)/);
});

const archTest = detectToolchain().nvcc !== undefined && nativeGpuModels().length === 0 ? test : test.skip;

archTest('--watch with "arch": "native" and no GPU warns once (nvcc, no GPU visible)', async (t) => {
  const dir = workspace('watch-arch');
  fs.mkdirSync(path.join(dir, 'ops'));
  fs.writeFileSync(path.join(dir, 'setup.config.json'), JSON.stringify({ name: 'arch_warn', sources: ['ops/*.cu'], arch: 'native' }));
  // Fails in the preprocessor: each rebuild runs (and warns) without waiting for a real compile.
  const src = path.join(dir, 'ops', 'k.cu');
  fs.writeFileSync(src, '#error stop here\n');
  const out = await watchRun(dir, src, 2, /watching \d+ files?/);
  t.is((out.match(/#error|error: stop here|stop here/g) ?? []).length >= 3, true, out);
  t.is(out.split(NATIVE_WITHOUT_GPU).length - 1, 1, out);
});
