// V8's code cache of gpuext's modules (NOTE [ Code cache ] in
// lib/platform/code-cache.ts): written by scripts/code-cache.js, used by a
// fresh process (acorn's entry too), refused for a module whose file changed
// since, off with GPUEXT_CODE_CACHE=0, and never applied to other modules;
// its resolution table loads the modules Node's resolution does.
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { tableAnswer } from '../lib/platform/code-cache';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * A fresh process (with `flags`) that requires gpuext, runs an op and a jit translation, and prints the cache's counts.
 * Without a GPUEXT_CACHE_DIR of the caller's, an empty one: the kernel is translated (the translator's modules load)
 * whatever an earlier run left in the translation cache.
 */
function child(env: Record<string, string> = {}, flags: string[] = []): { used: number; refused: number; sum: number; source: boolean } {
  const own = env.GPUEXT_CACHE_DIR === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'gx-code-cache-child-')) : undefined;
  try {
    return childIn({ ...env, GPUEXT_CACHE_DIR: own ?? env.GPUEXT_CACHE_DIR }, flags);
  } finally {
    if (own !== undefined) fs.rmSync(own, { recursive: true, force: true });
  }
}

function childIn(env: Record<string, string | undefined>, flags: string[]): { used: number; refused: number; sum: number; source: boolean } {
  const code = `const gx = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
const { codeCacheCounts } = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'code-cache.js'))});
const sum = gx.add(gx.tensor([1, 2]), gx.tensor([3, 4])).sum().item();
const k = gx.jit.rawkernel((x, y) => { y[gx.jit.grid(1)] = x[gx.jit.grid(1)] * 2; });
const source = k.source(gx.ones([2]), gx.zeros([2])).includes('__global__');
console.log(JSON.stringify({ ...codeCacheCounts, sum, source }));`;
  const r = spawnSync(process.execPath, [...flags, '-e', code], { encoding: 'utf8', env: { ...process.env, GPUEXT_CODE_CACHE: '', NODE_OPTIONS: '', ...env } });
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
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-code-cache-touched-'));
    try {
      const touched = child({ GPUEXT_CACHE_DIR: dir });
      t.is(touched.refused, 1, 'the changed module\'s entry is refused');
      t.is(touched.used, fresh.used - 1);
      t.true(touched.source, 'and the module still works, compiled from source');
      // That process kept the module's data in a cache of its own (NOTE [ Code cache under V8 flags ]): the next one compiles from it.
      fs.rmSync(path.join(dir, 'jit'), { recursive: true, force: true });
      const healed = child({ GPUEXT_CACHE_DIR: dir });
      t.is(healed.refused, 1, 'the build\'s entry is still refused');
      t.is(healed.used, fresh.used, 'and the module came from the cache the process before wrote');
      t.true(healed.source);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    // Restoring the mtime would not give back its sub-millisecond digits: the cache is written again instead.
    fs.utimesSync(file, st.atime, st.mtime);
    spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'code-cache.js')], { encoding: 'utf8' });
  }
  // acorn compiles from it too, from the file the translator finds it at (NOTE [ acorn by path ]).
  const acorn = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
const { codeCacheCounts } = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'code-cache.js'))});
const { loadAcorn } = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'acorn.js'))});
const before = codeCacheCounts.used;
const parser = loadAcorn();
console.log(JSON.stringify({ fromCache: codeCacheCounts.used - before, parses: parser.parse('x => x', { ecmaVersion: 'latest' }).body.length }));`],
  { encoding: 'utf8', env: { ...process.env, GPUEXT_CODE_CACHE: '' } });
  t.is(acorn.status, 0, acorn.stderr);
  t.deepEqual(JSON.parse(acorn.stdout.trim()), { fromCache: 1, parses: 1 }, 'acorn came from the code cache and parses');
  const off = child({ GPUEXT_CODE_CACHE: '0' });
  t.is(off.used, 0, 'GPUEXT_CODE_CACHE=0 turns it off');
  t.is(off.sum, 10);
  underFlags(t, fresh.used);
});

// A package whose modules changed since its build (a bare tsc) turns to a cache of its own at the first module through
// the hook; platform/paths.js, which that turn loads, is stale too and must not turn again (it would be required half
// loaded: Node's warnings of a circular dependency, and no cache of its own).
test.serial('a package whose modules changed since the build turns to its own cache once, with nothing half loaded', (t) => {
  const files = ['core/tensor.js', 'platform/paths.js'].map((f) => path.join(ROOT, 'dist', 'lib', f));
  const stats = files.map((f) => fs.statSync(f));
  files.forEach((f, i) => fs.utimesSync(f, stats[i].atime, new Date(stats[i].mtimeMs + 5000)));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-code-cache-stale-'));
  try {
    const code = `const gx = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
const { codeCacheCounts } = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'code-cache.js'))});
console.log(JSON.stringify({ ...codeCacheCounts, sum: gx.add(gx.tensor([1, 2]), 1).sum().item() }));`;
    const run = (): { used: number; refused: number; sum: number } => {
      const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { ...process.env, GPUEXT_CODE_CACHE: '', NODE_OPTIONS: '', GPUEXT_CACHE_DIR: dir } });
      t.is(r.status, 0, r.stderr);
      t.notRegex(r.stderr, /circular dependency/);
      return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { used: number; refused: number; sum: number };
    };
    const first = run();
    t.is(first.refused, 2, 'the two changed modules\' entries');
    t.is(first.sum, 5);
    const second = run();
    t.is(second.sum, 5);
    t.true(second.used >= first.used + 1, `core/tensor.js from the cache the first process wrote (${second.used} against ${first.used})`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    files.forEach((f, i) => fs.utimesSync(f, stats[i].atime, stats[i].mtime));
    spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'code-cache.js')], { encoding: 'utf8' });
  }
});

// lib/index.ts loads the cache before any other module of the package: only the modules loaded before its hook is in
// place (index.js, the cache's own module and the two it imports) compile from source.
test.serial('require(\'gpuext\') compiles from the code cache every module but the cache\'s own', (t) => {
  const code = `const gx = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
const { codeCacheCounts } = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib', 'platform', 'code-cache.js'))});
const lib = Object.keys(require.cache).filter((k) => k.startsWith(${JSON.stringify(path.join(ROOT, 'dist', 'lib') + path.sep)}));
console.log(JSON.stringify({ used: codeCacheCounts.used, refused: codeCacheCounts.refused, loaded: lib.length }));`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { ...process.env, GPUEXT_CODE_CACHE: '', NODE_OPTIONS: '' } });
  t.is(r.status, 0, r.stderr);
  const o = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { used: number; refused: number; loaded: number };
  t.is(o.refused, 0);
  t.true(o.loaded > 100, `${o.loaded} modules`);
  t.is(o.used, o.loaded - 4, 'all but index.js, platform/code-cache.js, platform/fs.js and platform/lazy.js');
});

// NOTE [ Resolution table ]: the build's answers to requests between gpuext's modules load the modules Node's own
// resolution loads, and answer only while the file they name is there.
test.serial('the build\'s resolution table loads the modules Node\'s resolution loads, and answers only for a file still there', (t) => {
  const cacheFile = path.join(ROOT, 'dist', '.code-cache', `${process.version}-${process.arch}.bin`);
  const all = fs.readFileSync(cacheFile);
  const n = all.readUInt32LE(0);
  const table = (JSON.parse(all.toString('utf8', 4, 4 + n)) as { resolved?: Record<string, string> }).resolved ?? {};
  const entries = Object.entries(table);
  t.true(entries.length > 100, `${entries.length} entries`);
  t.true(entries.every(([k, file]) => k.startsWith('dist/lib/') && file.startsWith('dist/lib/') && fs.statSync(path.join(ROOT, file)).isFile()));
  const modules = (env: Record<string, string>): string[] => {
    const code = `const gx = require(${JSON.stringify(path.join(ROOT, 'dist', 'lib'))});
gx.jit.rawkernel((x, y) => { y[gx.jit.grid(1)] = x[gx.jit.grid(1)] * 2; }).source(gx.ones([2]), gx.zeros([2]));
console.log(JSON.stringify(Object.keys(require.cache).sort()));`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-code-cache-resolve-'));
    try {
      const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', GPUEXT_CACHE_DIR: dir, ...env } });
      if (r.status !== 0) throw new Error(r.stderr);
      return JSON.parse(r.stdout.trim().split('\n').pop() ?? '[]') as string[];
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  const fromTable = modules({ GPUEXT_CODE_CACHE: '' });
  t.true(fromTable.length > 100, `${fromTable.length} modules`);
  t.deepEqual(fromTable, modules({ GPUEXT_CODE_CACHE: '0' }), 'the same files as with Node\'s resolution alone');
  const from = path.join(ROOT, 'dist', 'lib', 'index.js');
  const key = 'dist/lib/index.js\0./register';
  t.is(tableAnswer({ [key]: 'dist/lib/register.js' }, './register', from), path.join(ROOT, 'dist', 'lib', 'register.js'));
  t.is(tableAnswer({ [key]: 'dist/lib/no-such-module.js' }, './register', from), undefined, 'a file no longer there: Node resolves it');
  t.is(tableAnswer({ [key]: 'dist/lib/register.js' }, './other', from), undefined, 'a request the table lacks');
  t.is(tableAnswer({ 'dist/test/rng.js\0./register': 'dist/lib/register.js' }, './register', path.join(ROOT, 'dist', 'test', 'rng.js')), undefined,
    'a parent outside dist/lib');
});

/**
 * NOTE [ Code cache under V8 flags ]: V8 refuses the build's data in a process with V8 flags; the first such process
 * writes a cache of its flags into the cache directory at exit, the next one compiles from it, other flags get their own.
 */
function underFlags(t: ExecutionContext, modules: number): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-code-cache-flags-'));
  try {
    const env = { GPUEXT_CACHE_DIR: dir };
    const files = (): string[] => (fs.existsSync(path.join(dir, 'code-cache')) ? fs.readdirSync(path.join(dir, 'code-cache')).sort() : []);
    const first = child(env, ['--max-old-space-size=3000']);
    t.is(first.used, 0, 'V8 refused the build\'s data under another flag');
    t.is(first.refused, 1, 'at the first module: the rest compile from source');
    t.true(first.source && first.sum === 10);
    t.is(files().length, 1, 'the flags\' cache was written at exit');
    const file = path.join(dir, 'code-cache', files()[0]);
    const written = fs.statSync(file).mtimeMs;
    // The kernel translated again (not found in the translation cache), so the translator's modules load too.
    fs.rmSync(path.join(dir, 'jit'), { recursive: true, force: true });
    const second = child(env, ['--max-old-space-size=3000']);
    // All but two: the module whose build entry V8 refuses (it compiles from source, the turn to the flags' cache
    // comes after), and platform/paths.js, which the turn loads to find that cache.
    t.true(second.used >= modules - 2, `${second.used} of ${modules} modules from the flags' cache`);
    t.true(second.source && second.sum === 10);
    t.is(fs.statSync(file).mtimeMs, written, 'a process that adds no module writes nothing');
    // The same flag through NODE_OPTIONS is another file (the hash is of what was given), and so is another value.
    child({ ...env, NODE_OPTIONS: '--max-old-space-size=3000' });
    child(env, ['--max-old-space-size=3001']);
    t.is(files().length, 3);
    // Node's own options leave V8's flags as they are: the build's cache serves.
    fs.rmSync(path.join(dir, 'jit'), { recursive: true, force: true });
    const nodeOnly = child(env, ['--enable-source-maps']);
    t.true(nodeOnly.used >= modules && nodeOnly.refused === 0, `${nodeOnly.used} modules from the build's cache, ${nodeOnly.refused} refused`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

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
