// The lazy entry (NOTE [ Lazy entry ] in lib/README.md): require('gpuext') in a
// fresh process loads no compiler, kernel cache, translator, tensor file
// format, build tool, store transport, NCCL backend or chunked SVD, and none of
// crypto, child_process or inspector; each of those subsystems then works on
// first use, in that same process, against a reference.
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const LIB = path.join(__dirname, '..', 'lib');
const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-lazy-entry-'));
test.after.always(() => fs.rmSync(DIR, { recursive: true, force: true }));

/** Modules of dist/lib (relative, without .js) and builtins that require('gpuext') must not load. */
const HEAVY = [
  'rtc/compiler', 'rtc/cache', 'rtc/cache-evict', 'rtc/cache-io', 'rtc/cache-lookup', 'rtc/compile-options', 'rtc/nvrtc-prefetch', 'rtc/nvcc-backend', 'rtc/nvrtc-backend',
  'jit/kernel-gen', 'jit/parse', 'jit/typer', 'jit/emit-cuda', 'jit/source', 'jit/vectorize-gen', 'jit/vectorize-cpu',
  'io/npy', 'io/npz', 'io/safetensors', 'io/atomic',
  'toolkit/build', 'toolkit/compile', 'toolkit/config', 'toolkit/lock',
  'distributed/store', 'distributed/store-client', 'distributed/nccl-backend', 'distributed/chunked-svd',
];
const HEAVY_BUILTINS = ['crypto', 'child_process', 'inspector'];

/**
 * A fresh process: what require('gpuext') loaded, then each lazily loaded subsystem used on random
 * data, with the largest difference from a reference, and what was loaded by then.
 */
const CHILD = `
const path = require('path');
const lib = ${JSON.stringify(LIB)};
const loadedNow = () => ({
  modules: Object.keys(require.cache).filter((k) => k.startsWith(lib + path.sep)).map((k) => path.relative(lib, k).replace(/\\\\/g, '/').replace(/\\.js$/, '')),
  acorn: Object.keys(require.cache).some((k) => /[\\\\/]acorn[\\\\/]/.test(k)),
  builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length)),
});
const gx = require(lib);
const atRequire = loadedNow();
const out = { atRequire, diffs: {} };
const maxDiff = (a, b) => Math.max(...Array.from(a, (v, i) => Math.abs(v - b[i])));
(async () => {
  // jit: a rawkernel on the simulator (the translator and acorn load here).
  const x = gx.randn([37]);
  const y = gx.empty([37]);
  const { jit } = gx;
  const cube = jit.rawkernel(function cube(x, y, n) {
    const i = jit.grid(1);
    if (i < n) y[i] = x[i] * x[i] * x[i];
  });
  cube([2], [32], [x, y, 37]);
  out.diffs.jit = maxDiff([...y.toArraySync()], [...x.toArraySync()].map((v) => Math.fround(Math.fround(v * v) * v)));
  // io: a safetensors and an npy round trip (the formats and the atomic write load here).
  const dir = ${JSON.stringify(DIR)};
  const a = gx.randn([3, 5], { dtype: 'float64' });
  await gx.save(path.join(dir, 'a.safetensors'), { a });
  out.diffs.safetensors = maxDiff((await gx.loadTensors(path.join(dir, 'a.safetensors'))).a.toArraySync(), a.toArraySync());
  await gx.save(path.join(dir, 'a.npy'), a);
  out.diffs.npy = maxDiff((await gx.loadTensor(path.join(dir, 'a.npy'))).toArraySync(), a.toArraySync());
  // distributed: a chunked SVD (chunked-svd loads here) reassembles the matrix.
  const m = gx.randn([29, 6], { dtype: 'float64' });
  const c = gx.chunked(m, { chunks: [10, 6] });
  const { U, S, Vh } = c.svd();
  out.diffs.chunkedSvd = maxDiff(gx.matmul(U.compute().mul(S.reshape(1, -1)), Vh).toArraySync(), m.toArraySync());
  // toolkit: gx.load's config check (the build's config reader loads here) refuses a missing source.
  try { await gx.load({ name: 'lazy_missing', sources: [path.join(dir, 'missing.cu')] }); out.loadError = 'none'; }
  catch (e) { out.loadError = String(e.message); }
  // rtc: the compiler front loads with a module's first compile (here through the nvcc-less check of its request).
  out.compilerLoads = typeof require(path.join(lib, 'rtc', 'compiler')).compile === 'function';
  out.afterUse = loadedNow();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`;

interface Loaded { modules: string[]; acorn: boolean; builtins: string[] }
interface ChildOut { atRequire: Loaded; afterUse: Loaded; diffs: Record<string, number>; loadError: string; compilerLoads: boolean }

let result: ChildOut | undefined;
function child(): ChildOut {
  if (result !== undefined) return result;
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-lazy-entry-cache-'));
  try {
    const r = spawnSync(process.execPath, ['-e', CHILD], { encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_DIR: cache } });
    if (r.status !== 0) throw new Error(`the child failed (${r.status}): ${r.stderr}`);
    result = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as ChildOut;
    return result;
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
}

test('require(gpuext) loads none of the heavy modules and builtins', (t) => {
  const { atRequire } = child();
  t.true(atRequire.modules.includes('index') && atRequire.modules.includes('core/tensor'), 'the entry and the core are loaded');
  t.deepEqual(HEAVY.filter((m) => atRequire.modules.includes(m)), [], 'heavy modules loaded at require');
  t.false(atRequire.acorn, 'acorn loaded at require');
  t.deepEqual(HEAVY_BUILTINS.filter((m) => atRequire.builtins.includes(m)), [], 'heavy builtins loaded at require');
});

test('each lazily loaded subsystem works on first use, and loads its parts then', (t) => {
  const out = child();
  for (const [what, d] of Object.entries(out.diffs)) t.true(d <= 1e-9, `${what}: max difference ${d}`);
  t.is(Object.keys(out.diffs).length, 4);
  t.regex(out.loadError, /missing\.cu/, 'gx.load names the missing source');
  t.true(out.compilerLoads);
  for (const m of ['jit/kernel-gen', 'io/safetensors', 'io/npy', 'io/atomic', 'distributed/chunked-svd']) {
    t.true(out.afterUse.modules.includes(m), `${m} loaded on use`);
  }
  t.true(out.afterUse.acorn, 'acorn loaded by the first translation');
});
