// A jit kernel's cold first call (bench/jit-cold-parts.ts): acorn comes from
// its file, not through its package exports (NOTE [ acorn by path ]), in the
// folder Node's own resolution would take it from; a new kernel text is
// looked up and described in the translation cache once; a kernel meant for
// the PTX path reads no NVRTC files ahead (NOTE [ NVRTC prefetch ]); and a
// process's later translation writes do not scan the cache directory again.
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { clearTranslationCache, translationDir } from '../lib/jit/translation-cache';
import { setPtxEnabled } from '../lib/jit/rawkernel';
import { ledgerCounts, scan, SIZE_FILE } from '../lib/rtc/cache-evict';
import { acornFile, findAcorn } from '../lib/platform/acorn';
import { cudaTest } from './helpers';
import { rng } from './rng';

const { jit } = gx;

const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-cold-test-'));
process.env.GPUEXT_CACHE_DIR = CACHE;
test.after.always(() => fs.rmSync(CACHE, { recursive: true, force: true }));

const LIB = path.join(__dirname, '..', 'lib');

/** Replaces `exports[name]` by a counting wrapper for the length of `body`; returns the calls' first arguments. */
function spy(exports: object, name: string, body: () => void): unknown[] {
  const inner: unknown = Reflect.get(exports, name);
  if (typeof inner !== 'function') throw new Error(`${name} is not a function`);
  const calls: unknown[] = [];
  Reflect.set(exports, name, (...args: unknown[]): unknown => {
    calls.push(args[0]);
    return Reflect.apply(inner, undefined, args);
  });
  try {
    body();
  } finally {
    Reflect.set(exports, name, inner);
  }
  return calls;
}

const draw = rng(Date.now() >>> 0);
/** A kernel function of a text no other kernel has had: a constant drawn at random, written into it. */
function freshText(): { c: number; fn: (x: gx.jit.Array, y: gx.jit.Array, n: number) => void } {
  const c = Math.round(draw() * 1e6) + 0.5;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const fn = new Function('x', 'y', 'n', `for (let i = 0; i < n; i++) y[i] = x[i] * ${c};`) as (x: gx.jit.Array, y: gx.jit.Array, n: number) => void;
  return { c, fn };
}

cudaTest('a first call loaded as PTX, cold or warm, loads no node:perf_hooks (its first touch costs 1-2 ms)', (t) => {
  const dir = fs.mkdtempSync(path.join(CACHE, 'perf-'));
  const code = `const gx = require(${JSON.stringify(LIB)});
const SQRT_2PI = Math.sqrt(2 * Math.PI);
const g = gx.vectorize(['float32(float32, float32, float32)'], (x, m, s) => Math.exp(-0.5 * ((x - m) / s) ** 2) / (s * SQRT_2PI));
const y = g(gx.ones([5], { device: 'cuda' }), 0, 1).toArraySync();
const { ptxCounts } = require(${JSON.stringify(path.join(LIB, 'rtc', 'raw'))});
console.log(JSON.stringify({ y: y[0], loaded: ptxCounts.loaded, perf: process.moduleLoadList.filter((m) => /perf_hooks/.test(m)) }));`;
  for (const state of ['cold', 'warm']) {
    const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_DIR: dir } });
    t.is(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { y: number; loaded: number; perf: string[] };
    t.true(Math.abs(out.y - Math.exp(-0.5) / Math.sqrt(2 * Math.PI)) < 1e-6, `${state}: the value`);
    t.is(out.loaded, 1, `${state}: loaded as PTX`);
    t.deepEqual(out.perf, [], `${state}: node:perf_hooks was not loaded`);
  }
});

test('acorn is the file Node resolves, found without its package exports', (t) => {
  const file = acornFile();
  t.is(file, require.resolve('acorn'), 'the entry Node\'s exports resolution gives');
  t.true(file !== null && file.endsWith(path.join('acorn', 'dist', 'acorn.js')));
  // A fresh process translating a kernel loads acorn from that file and never Node's ES module resolver.
  const code = `const gx = require(${JSON.stringify(LIB)});
const x = gx.ones([4]);
const src = gx.jit.rawkernel((x, y) => { y[gx.jit.grid(1)] = x[gx.jit.grid(1)] * 3; }).source(x, x);
console.log(JSON.stringify({ src: src.includes('__global__'), acorn: Object.keys(require.cache).filter((k) => /[\\\\/]acorn[\\\\/]/.test(k)),
  esm: process.moduleLoadList.filter((m) => /esm[\\\\/]resolve/.test(m)) }));`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_DIR: fs.mkdtempSync(path.join(CACHE, 'esm-')) } });
  t.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { src: boolean; acorn: string[]; esm: string[] };
  t.true(out.src);
  t.deepEqual(out.acorn, [file]);
  t.deepEqual(out.esm, [], 'Node\'s ES module resolver was not loaded');
});

test('acorn is taken from the first node_modules folder holding the package, as Node takes it', (t) => {
  const root = fs.mkdtempSync(path.join(CACHE, 'layout-'));
  const nm = (name: string): string => path.join(root, name, 'node_modules');
  const ENTRY = path.join('lib', 'entry.js');
  const pkg = (dir: string, json: string, entry: boolean): void => {
    fs.mkdirSync(path.join(dir, 'acorn', 'lib'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'acorn', 'package.json'), json);
    if (entry) fs.writeFileSync(path.join(dir, 'acorn', ENTRY), 'module.exports = {};');
  };
  pkg(nm('hoisted'), '{"name":"acorn","main":"lib/entry.js"}', true);
  fs.mkdirSync(nm('empty'), { recursive: true });
  // gpuext's own folder without acorn: the hoisted one above it, its package's main.
  t.is(findAcorn([nm('missing'), nm('empty'), nm('hoisted')]), path.join(nm('hoisted'), 'acorn', ENTRY));
  // An acorn package whose main is missing, or names no file, comes first: Node's resolution decides, not a later folder.
  pkg(nm('other'), '{"name":"acorn"}', true);
  t.is(findAcorn([nm('empty'), nm('other'), nm('hoisted')]), null);
  pkg(nm('broken'), '{"name":"acorn","main":"lib/entry.js"}', false);
  t.is(findAcorn([nm('broken'), nm('hoisted')]), null);
  t.is(findAcorn([nm('empty')]), null);
  t.is(findAcorn([]), null);
});

test.serial('a new kernel text is read from the cache once and described once, then translated', (t) => {
  const { c, fn } = freshText();
  const reads: string[] = [];
  const writes: string[] = [];
  const dir = translationDir();
  // The entries' files; the size ledger beside them is the bound's bookkeeping (NOTE [ Size ledger ]).
  const within = (calls: unknown[]): string[] => calls.filter((f): f is string => typeof f === 'string' && f.startsWith(dir) && !f.includes(SIZE_FILE));
  let k: gx.jit.JitKernel | undefined;
  const x = gx.tensor([1, 2, 3]);
  // Node's fs itself (this module's `fs` is a copy of its bindings, which a spy cannot replace).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const nodeFs = require('fs') as object;
  writes.push(...within(spy(nodeFs, 'renameSync', () => {
    reads.push(...within(spy(nodeFs, 'readFileSync', () => {
      k = jit.rawkernel(fn, { name: 'cold_scale' });
    })));
  })).map((f) => f.slice(dir.length)));
  t.is(reads.length, 1, `the description was looked for once: ${reads.join(', ')}`);
  t.is(writes.length, 1, 'and written once');
  const src = (k as gx.jit.JitKernel).source(x, x, 3);
  t.true(src.includes(String(c)), 'the constant is in the source');
  t.true(fs.readdirSync(dir).filter((f) => f.endsWith('.json')).length >= 2, 'the description and the translation are on disk');
});

test.serial('a new kernel meant for the PTX path reads no NVRTC files ahead; a kernel compiled by NVRTC does', (t) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const prefetch = require('../lib/rtc/nvrtc-prefetch') as object;
  const starts = (make: () => void): number => spy(prefetch, 'prefetchNvrtc', make).length;
  t.is(starts(() => jit.rawkernel(freshText().fn)), 0, 'PTX path: no prefetch');
  t.is(starts(() => jit.rawkernel(freshText().fn, { debug: true })), 1, '{ debug: true } compiles from CUDA source');
  t.is(starts(() => jit.rawkernel(freshText().fn, { options: ['--use_fast_math'] })), 1, 'NVRTC options of the user\'s');
  setPtxEnabled(false);
  try {
    t.is(starts(() => jit.rawkernel(freshText().fn)), 1, 'GPUEXT_JIT_PTX=0');
  } finally {
    setPtxEnabled(true);
  }
  const k = 1 + draw();
  const scalar = (c: number): ((v: number) => number) => new Function('v', `return v * ${c};`) as (v: number) => number;
  t.is(starts(() => gx.vectorize(['float32(float32)'], scalar(k))), 0, 'vectorize is loaded as PTX');
  t.is(starts(() => gx.vectorize(['float32(float32)'], scalar(k + 1), { options: ['--fmad=true'] })), 1, 'vectorize under NVRTC options');
  t.is(starts(() => jit.device(new Function('v', `return v + ${k};`) as (v: number) => number)), 0, 'a device function: its callers decide');
});

test.serial('the translation directory is scanned when its size ledger is missing, not at each write (NOTE [ Size ledger ])', (t) => {
  clearTranslationCache({ disk: true });
  const x = gx.ones([2]);
  const counted = (f: () => void): { writes: number; scans: number } => {
    const before = { ...ledgerCounts };
    f();
    return { writes: ledgerCounts.writes - before.writes, scans: ledgerCounts.scans - before.scans };
  };
  const three = counted(() => {
    for (let i = 0; i < 3; i++) jit.rawkernel(freshText().fn).source(x, x, 2);
  });
  // The directory as the bound sees it (its entries, not the ledger beside them).
  const onDisk = scan(translationDir());
  t.is(onDisk.entries.size, 6, 'three descriptions and three translations written');
  t.deepEqual(three, { writes: 6, scans: 1 }, 'one scan (no ledger yet) for six writes');
  const ledger = JSON.parse(fs.readFileSync(path.join(translationDir(), SIZE_FILE), 'utf8')) as { bytes: number };
  t.is(ledger.bytes, onDisk.bytes, 'the ledger holds the bytes of the entries written');
  clearTranslationCache();
  t.deepEqual(counted(() => jit.rawkernel(freshText().fn).source(x, x, 2)), { writes: 2, scans: 0 }, 'a new process (memory cleared) goes on from the ledger');
  fs.rmSync(path.join(translationDir(), SIZE_FILE));
  t.deepEqual(counted(() => jit.rawkernel(freshText().fn).source(x, x, 2)), { writes: 2, scans: 1 }, 'without the ledger the next write scans');
});
