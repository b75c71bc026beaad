// The jit translation cache (NOTE [ Translation cache ]): a second process
// finds gx.jit.rawkernel's and gx.vectorize's translations on disk without
// loading acorn or the translator and gets the same source; a changed
// closed-over value (a number, -0, a device function's constant) or argument
// dtype misses; corrupt entries are ignored and written again; a kernel whose
// closure cannot be keyed still translates (and still fails as it did).
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { clearTranslationCache, translationCounts, translationDir } from '../lib/jit/translation-cache';
import { scan } from '../lib/rtc/cache-evict';

const { jit } = gx;

// Every test of this file keeps its entries in a fresh directory.
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-cache-test-'));
process.env.GPUEXT_CACHE_DIR = CACHE;
test.after.always(() => fs.rmSync(CACHE, { recursive: true, force: true }));

const LIB = path.join(__dirname, '..', 'lib');

/** A fresh process translating a rawkernel (closing over K, jit and Math) and a vectorize (closing over a device function) on CPU tensors. */
const CHILD = `
const gx = require(${JSON.stringify(LIB)});
const { jit } = gx;
const K = Number(process.env.GX_K);
const half = jit.device((v) => v * 0.5 + K);
const k = jit.rawkernel(function cache_probe(x, y, n) {
  const i = jit.grid(1);
  if (i < n) y[i] = Math.sqrt(x[i]) * K;
});
const v = gx.vectorize(['float32(float32)', 'float64(float64)'], (a) => half(a) * K);
const x = gx.ones([4]);
const out = { raw: k.source(x, x, 4), vec: v.source(0) + v.source(1) };
const tc = require(${JSON.stringify(path.join(LIB, 'jit', 'translation-cache'))});
const loaded = (re) => Object.keys(require.cache).some((f) => re.test(f));
console.log(JSON.stringify({ ...out, counts: tc.translationCounts,
  acorn: loaded(/[\\\\/]acorn[\\\\/]/), translator: loaded(/[\\\\/]jit[\\\\/](kernel-gen|typer|vectorize-gen|source)\\.js$/),
  kernelCache: loaded(/[\\\\/]rtc[\\\\/](cache|compiler)\\.js$/) }));
`;

interface ChildResult {
  raw: string;
  vec: string;
  counts: { translations: number; memoryHits: number; diskHits: number };
  acorn: boolean;
  translator: boolean;
  /** Whether the kernel cache's writer or the compiler was loaded (a hit needs neither). */
  kernelCache: boolean;
}

function child(dir: string, k: number): ChildResult {
  const r = spawnSync(process.execPath, ['-e', CHILD], { encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_DIR: dir, GX_K: String(k) }, timeout: 120_000 });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as ChildResult;
}

test('a second process finds the translations on disk: no parse, no typing, the same sources', (t) => {
  const dir = fs.mkdtempSync(path.join(CACHE, 'proc-'));
  const first = child(dir, 2.5);
  t.is(first.counts.translations, 3, 'one rawkernel and two vectorize signatures translated');
  t.true(first.acorn && first.translator);
  t.true(first.raw.includes('2.5'), 'the closed-over K is inlined');
  const second = child(dir, 2.5);
  t.is(second.counts.translations, 0);
  t.true(second.counts.diskHits >= 4, `disk hits: ${second.counts.diskHits}`);
  t.false(second.acorn, 'acorn was not loaded');
  t.false(second.translator, 'the translator was not loaded');
  t.false(second.kernelCache, 'the kernel cache\'s writer and the compiler were not loaded');
  t.is(second.raw, first.raw);
  t.is(second.vec, first.vec);
  // Another K: every translation misses (K reaches the vectorized function through the device function too).
  const third = child(dir, 3.75);
  t.is(third.counts.translations, 3);
  t.true(third.raw.includes('3.75') && !third.raw.includes('2.5'));
  t.not(third.vec, first.vec);
});

test('a corrupt entry on disk is ignored and written again', (t) => {
  const dir = fs.mkdtempSync(path.join(CACHE, 'corrupt-'));
  const good = child(dir, 1.5);
  const jitDir = path.join(dir, 'jit');
  const files = fs.readdirSync(jitDir).filter((f) => f.endsWith('.json'));
  t.true(files.length >= 5, `entries: ${files.length}`);
  const breakages = [
    (s: string) => s.slice(0, s.length >> 1),                                  // truncated
    () => 'not json at all',
    (s: string) => JSON.stringify({ ...JSON.parse(s), key: '0'.repeat(64) }),   // another key
    (s: string) => JSON.stringify({ ...JSON.parse(s), format: 99 }),           // another format
    (s: string) => JSON.stringify({ ...JSON.parse(s), plan: [[0, 'bogus', 0]], chains: 7, source: 12 }), // wrong shape
  ];
  files.forEach((f, i) => {
    const p = path.join(jitDir, f);
    fs.writeFileSync(p, breakages[i % breakages.length](fs.readFileSync(p, 'utf8')));
  });
  const again = child(dir, 1.5);
  t.is(again.counts.translations, 3, 'every corrupt entry missed');
  t.is(again.raw, good.raw);
  t.is(again.vec, good.vec);
  const healed = child(dir, 1.5);
  t.is(healed.counts.translations, 0, 'the entries were written again');
  t.is(healed.raw, good.raw);
});

/** Kernels of one text closing over different values (each its own closure). */
function scaleKernel(c: number) {
  return jit.rawkernel(function scale(x: gx.jit.Array, y: gx.jit.Array) {
    const i = jit.grid(1);
    y[i] = x[i] * c;
  });
}

test.serial('in one process: the same text and closure hits memory; another value, -0 or another dtype misses', (t) => {
  clearTranslationCache({ disk: true });
  const x32 = gx.ones([3]);
  const x64 = gx.ones([3], { dtype: 'float64' });
  const before = translationCounts.translations;
  const a = scaleKernel(1.25).source(x32, x32);
  t.is(translationCounts.translations, before + 1);
  const hits = translationCounts.memoryHits;
  t.is(scaleKernel(1.25).source(x32, x32), a, 'a new kernel object of the same text and value');
  t.is(translationCounts.translations, before + 1);
  t.true(translationCounts.memoryHits > hits);
  const b = scaleKernel(-1.25).source(x32, x32);
  t.is(translationCounts.translations, before + 2);
  t.not(b, a);
  t.true(b.includes('-1.25'));
  const zero = scaleKernel(0).source(x32, x32);
  const negZero = scaleKernel(-0).source(x32, x32);
  t.is(translationCounts.translations, before + 4, '0 and -0 are two keys');
  t.not(zero, negZero);
  const c = scaleKernel(1.25).source(x64, x64);
  t.is(translationCounts.translations, before + 5, 'float64 arguments miss');
  t.true(c.includes('double'));
  // The simulator runs what the cache's key describes: the values are K's.
  const y = gx.zeros([3]);
  const xs = gx.tensor([1, 2, 4]);
  scaleKernel(-1.25)([1], [3], [xs, y]);
  t.deepEqual([...(y.toArraySync() as Float32Array)], [-1.25, -2.5, -5]);
  for (const u of [x32, x64, y, xs]) u.dispose();
});

test.serial('a closure no key can stand for still translates, every time, with the same error when it is refused', (t) => {
  clearTranslationCache({ disk: true });
  const cfg = { n: 3 };
  const helper = (v: number): number => v + 1;
  const x = gx.ones([3]);
  const before = translationCounts.translations;
  // Math.PI resolves to a number through Math: keyed.
  const k1 = () => jit.rawkernel(function fill_n(y: gx.jit.Array) {
    y[0] = Math.PI;
  });
  k1().source(x);
  k1().source(x);
  t.is(translationCounts.translations, before + 1, 'a chain to a number is keyed');
  // A plain JS helper cannot be keyed: translated each time, refused each time.
  const k2 = () => jit.rawkernel(function calls_helper(y: gx.jit.Array) {
    y[0] = helper(1);
  });
  for (let i = 0; i < 2; i++) t.throws(() => k2().source(x), { instanceOf: gx.JitError, message: /helper/ });
  t.is(translationCounts.translations, before + 3, 'calls_helper was translated twice');
  // An object's member is refused by the typer: nothing cached, the same error each time.
  for (let i = 0; i < 2; i++) {
    t.throws(() => jit.rawkernel(function reads_cfg(y: gx.jit.Array) {
      y[0] = cfg.n;
    }).source(x), { instanceOf: gx.JitError, message: /property of an object/ });
  }
  // The entries, as the directory's bound counts them (not its size ledger, NOTE [ Size ledger ]).
  t.is(scan(translationDir()).entries.size, 4, 'fill_n\'s description and translation, the descriptions of calls_helper and reads_cfg');
  x.dispose();
});

test.serial('one function object whose closed-over let changes: each new kernel reads the value of its time, through the kept inspector session', (t) => {
  clearTranslationCache({ disk: true });
  let scale = 1.5;
  const body = function scale_by_let(x: gx.jit.Array, y: gx.jit.Array) {
    const i = jit.grid(1);
    y[i] = x[i] * scale;
  };
  const x = gx.ones([2]);
  const first = jit.rawkernel(body).source(x, x);
  scale = -2.75;
  const second = jit.rawkernel(body).source(x, x);
  t.true(first.includes('1.5') && !first.includes('2.75'));
  t.true(second.includes('-2.75'), 'the new value, not one remembered for the function');
  const y = gx.zeros([2]);
  jit.rawkernel(body)([1], [2], [gx.tensor([1, 2]), y]);
  t.deepEqual([...(y.toArraySync() as Float32Array)], [-2.75, -5.5]);
});

test('the kept inspector session holds no closed-over value alive after a read', (t) => {
  const script = `
const { closureValues } = require(${JSON.stringify(path.join(LIB, 'jit', 'closure'))});
let ref;
(function () {
  const big = { data: new Float64Array(1 << 20) };
  ref = new WeakRef(big);
  const f = () => big.data;
  if (closureValues(f, ['big'])('big').value !== big) throw new Error('the closure read the wrong value');
})();
(async () => {
  for (let i = 0; i < 3; i++) { global.gc(); await new Promise((r) => setTimeout(r, 10)); }
  console.log(JSON.stringify({ collected: ref.deref() === undefined }));
})();`;
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.true((JSON.parse(r.stdout.trim()) as { collected: boolean }).collected, 'the value read through the inspector was collected');
});
