// A jit.rawkernel's cold first call on the host, part by part, in fresh
// processes with an empty GPUEXT_CACHE_DIR: from require('gpuext') to the
// kernel's PTX text, the part the driver's JIT then takes (what
// bench/jit-first-call.ts times whole on a GPU, where the cold H200 figure
// is construct + translation + the driver's JIT). No GPU is needed: the
// arguments are CPU tensors, whose types are all the translation reads.
//
//   node dist/bench/jit-cold-parts.js [runs] [--cpu-prof DIR]
//
// Two fresh processes per run:
// - whole: require, then jit.rawkernel(fn) and .ptx(x, y, n) as a user calls
//   them, nothing preloaded or wrapped: the figure the target is about;
// - parts: acorn and the translator's modules required one by one first, then
//   the same calls with the translator's steps timed in place (each wrapped
//   through its module's exports object, which the compiled callers read at
//   every call): parse (acorn), chains (the cache's description of the
//   function), closure (its values read and keyed), type, CUDA emit, PTX emit
//   and the cache's writes.
// Prints the median wall ms of each part over `runs` runs (CPU ms, user +
// system, beside the totals: robust to a loaded machine).
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import type * as GX from '../lib';

type Laps = Record<string, number>;

const LIB = path.join(__dirname, '..', 'lib');
const JIT = path.join(LIB, 'jit');

/** Wraps `exports[name]` so its calls add their wall ms to laps[part]. */
function timeExport(exports: object, name: string, part: string, laps: Laps): void {
  const inner: unknown = Reflect.get(exports, name);
  if (typeof inner !== 'function') throw new Error(`jit-cold-parts: ${name} is not a function`);
  Reflect.set(exports, name, (...args: unknown[]): unknown => {
    const t = process.hrtime.bigint();
    try {
      return Reflect.apply(inner, undefined, args);
    } finally {
      laps[part] = (laps[part] ?? 0) + Number(process.hrtime.bigint() - t) / 1e6;
    }
  });
}

/* eslint-disable @typescript-eslint/no-require-imports */
function child(mode: string): void {
  const laps: Laps = {};
  let t = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const lap = (name: string): void => {
    const n = process.hrtime.bigint();
    laps[name] = Number(n - t) / 1e6;
    t = n;
  };
  const gx = require(LIB) as typeof GX;
  lap('require');
  const cpuRequire = process.cpuUsage(c0);
  const x = gx.empty([1]);
  const y = gx.empty([1]);
  lap('args');
  const c1 = process.cpuUsage();
  if (mode === 'parts') {
    // acorn as the translator finds it (source.ts), then the rest of the translator.
    (require(path.join(LIB, 'platform', 'acorn')) as typeof import('../lib/platform/acorn')).loadAcorn();
    lap('acornLoad');
    require(path.join(JIT, 'kernel-gen'));
    lap('translatorLoad');
    const wrap = (mod: string, names: Record<string, string>): void => {
      const exports = require(path.join(JIT, mod)) as object;
      for (const [name, part] of Object.entries(names)) timeExport(exports, name, part, laps);
    };
    wrap('source', { parseFunction: 'parse' });
    wrap('parse', { parse: 'parse+chains' });
    wrap('translation-cache', { closureKey: 'closure', closureLookup: 'closure', infoPut: 'cacheWrite', translationPut: 'cacheWrite' });
    wrap('typer-function', { typeFunction: 'type' });
    wrap('emit-cuda', { emitKernelBody: 'cudaEmit' });
    wrap('emit-ptx', { emitPtxKernel: 'ptxEmit' });
    t = process.hrtime.bigint();
  }
  const { jit } = gx;
  const square = jit.rawkernel(function elementwise_square(x: GX.jit.Array, y: GX.jit.Array, size: number) {
    const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
    const ntid = jit.gridDim.x * jit.blockDim.x;
    for (let i = tid; i < size; i += ntid) y[i] = x[i] * x[i];
  });
  lap('construct');
  const ptx = square.ptx(x, y, 1);
  if (ptx === undefined || !ptx.includes('.entry gx_jit_elementwise_square')) throw new Error('jit-cold-parts: no PTX came');
  lap('translation');
  const cpu = process.cpuUsage(c1);
  laps.cpuRequire = (cpuRequire.user + cpuRequire.system) / 1e3;
  laps.cpuFirst = (cpu.user + cpu.system) / 1e3;
  if (mode === 'parts') {
    laps.chains = laps['parse+chains'] - laps.parse;
    delete laps['parse+chains'];
  }
  console.log(JSON.stringify(laps));
}
/* eslint-enable @typescript-eslint/no-require-imports */

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function main(): void {
  if (process.argv[2] === '--child') return child(process.argv[3]);
  const runs = Number(process.argv[2] ?? 10);
  const profAt = process.argv.indexOf('--cpu-prof');
  const profDir = profAt > 0 ? path.resolve(process.argv[profAt + 1] ?? 'prof') : undefined;
  const all: Record<string, Laps[]> = { whole: [], parts: [] };
  for (let i = 0; i < runs; i++) {
    for (const mode of ['whole', 'parts']) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-jit-cold-'));
      const flags = profDir !== undefined && mode === 'whole' ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-interval', '100'] : [];
      const r = spawnSync(process.execPath, [...flags, __filename, '--child', mode], { env: { ...process.env, GPUEXT_CACHE_DIR: dir }, encoding: 'utf8' });
      fs.rmSync(dir, { recursive: true, force: true });
      if (r.status !== 0) throw new Error(`jit-cold-parts: the ${mode} child failed: ${r.stderr}`);
      all[mode].push(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Laps);
    }
  }
  for (const [mode, laps] of Object.entries(all)) {
    const keys = Object.keys(laps[0]);
    const m = Object.fromEntries(keys.map((k) => [k, median(laps.map((l) => l[k]))]));
    const parts = keys.filter((k) => !k.startsWith('cpu')).map((k) => `${k} ${m[k].toFixed(2)}`);
    const first = median(laps.map((l) => l.construct + l.translation));
    console.log(`${mode} (wall ms, median of ${runs}): ${parts.join(', ')}; construct + translation ${first.toFixed(2)}; ` +
      `CPU ms: require ${m.cpuRequire.toFixed(1)}, after it ${m.cpuFirst.toFixed(1)}`);
  }
}

main();
