// V8's code cache of gpuext's modules (NOTE [ Code cache ] in
// lib/platform/code-cache.ts): written by scripts/code-cache.js, used by a
// fresh process (acorn's entry too), refused for a module whose file changed
// since, off with GPUEXT_CODE_CACHE=0, and never applied to other modules.
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '..', '..');

/** A fresh process that requires gpuext, runs an op and a jit translation, and prints the cache's counts. */
function child(env: Record<string, string> = {}): { used: number; refused: number; sum: number; source: boolean } {
  const code = `const gx = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
const { codeCacheCounts } = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'code-cache.js'))});
const sum = gx.add(gx.tensor([1, 2]), gx.tensor([3, 4])).sum().item();
const k = gx.jit.rawkernel((x, y) => { y[gx.jit.grid(1)] = x[gx.jit.grid(1)] * 2; });
const source = k.source(gx.ones([2]), gx.zeros([2])).includes('__global__');
console.log(JSON.stringify({ ...codeCacheCounts, sum, source }));`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { ...process.env, GPUEXT_CODE_CACHE: '', ...env } });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { used: number; refused: number; sum: number; source: boolean };
}

test.serial('a fresh process compiles gpuext\'s modules from the build\'s code cache, refuses a changed module\'s entry, and computes the same', (t) => {
  // The suite's own tsc run rewrote every module (new mtimes): the cache is made again for these files first.
  const w = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'code-cache.js')], { encoding: 'utf8' });
  t.is(w.status, 0, w.stderr);
  const fresh = child();
  t.true(fresh.used > 50, `${fresh.used} modules from the cache`);
  t.is(fresh.refused, 0);
  t.is(fresh.sum, 10);
  t.true(fresh.source);
  // A module touched after the cache was written (as an edit of the same length would be) is compiled from its source.
  const file = path.join(ROOT, 'dist', 'lib', 'jit', 'emit-cuda.js');
  const st = fs.statSync(file);
  fs.utimesSync(file, st.atime, new Date(st.mtimeMs + 5000));
  try {
    const touched = child();
    t.is(touched.refused, 1, 'the changed module\'s entry is refused');
    t.is(touched.used, fresh.used - 1);
    t.true(touched.source, 'and the module still works, compiled from source');
  } finally {
    // Restoring the mtime would not give back its sub-millisecond digits: the cache is written again instead.
    fs.utimesSync(file, st.atime, st.mtime);
    spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'code-cache.js')], { encoding: 'utf8' });
  }
  // acorn compiles from it too, from the file the translator finds it at (NOTE [ acorn by path ]).
  const acorn = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
const { codeCacheCounts } = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'code-cache.js'))});
const before = codeCacheCounts.used;
const parser = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'acorn.js'))}).loadAcorn();
console.log(JSON.stringify({ fromCache: codeCacheCounts.used - before, parses: parser.parse('x => x', { ecmaVersion: 'latest' }).body.length }));`],
  { encoding: 'utf8', env: { ...process.env, GPUEXT_CODE_CACHE: '' } });
  t.is(acorn.status, 0, acorn.stderr);
  t.deepEqual(JSON.parse(acorn.stdout.trim()), { fromCache: 1, parses: 1 }, 'acorn came from the code cache and parses');
  const off = child({ GPUEXT_CODE_CACHE: '0' });
  t.is(off.used, 0, 'GPUEXT_CODE_CACHE=0 turns it off');
  t.is(off.sum, 10);
});

test('modules outside the package load as Node loads them', (t) => {
  const code = `require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
const { codeCacheCounts } = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'code-cache.js'))});
const before = codeCacheCounts.used + codeCacheCounts.refused;
const m = require(${JSON.stringify(path.join(ROOT, 'dist', 'test', 'rng.js'))});
console.log(JSON.stringify({ same: codeCacheCounts.used + codeCacheCounts.refused === before, ok: typeof m.rng === 'function', main: require.main === module }));`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.deepEqual(JSON.parse(r.stdout.trim()), { same: true, ok: true, main: false });
});
