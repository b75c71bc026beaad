// The jit's PTX path (NOTE [ PTX path ] in lib/jit/emit-ptx.ts): kernels whose
// every node has a PTX face are printed as PTX beside their CUDA source, and
// loaded as PTX on CUDA (no NVRTC). Here without a GPU: each kernel of a
// corpus that reaches every face, and each random kernel of the language's
// fuzz, prints PTX that ptxas assembles for sm_90; what the path leaves to
// NVRTC says so. On a GPU: each runs from its PTX, bit for bit as the
// simulator and as its NVRTC twin, and the driver takes every module.
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import * as gx from '../lib';
import { hasLibrary } from '../lib/jit/ptx-library';
import { setPtxEnabled } from '../lib/jit/rawkernel';
import { ptxCounts } from '../lib/rtc/raw';
import { fuzzCases, THREADS } from './jit-fuzz-cases';
import { sameElement } from './jit-host';
import { ptxCases, type PtxCase } from './jit-ptx-corpus';
import { cudaTest } from './helpers';
import { tmpDir } from './host-cuda';

const { jit } = gx;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { cudaHome } = require('../../scripts/find-cuda.js') as { cudaHome(): string | null };

/** ptxas of the toolkit, or why it cannot be used. */
const PTXAS: { path: string; why: string } = (() => {
  const home = cudaHome();
  const p = home === null ? '' : path.join(home, 'bin', 'ptxas');
  return p !== '' && fs.existsSync(p) ? { path: p, why: '' } : { path: '', why: 'no CUDA toolkit with ptxas was found' };
})();

/** ptxas -arch=sm_90 of `ptx`: undefined when it assembles, else its log. */
function assemble(ptx: string, dir: string, name: string): string | undefined {
  const file = path.join(dir, `${name}.ptx`);
  fs.writeFileSync(file, ptx);
  const r = spawnSync(PTXAS.path, ['-arch=sm_90', file, '-o', path.join(dir, `${name}.cubin`)], { encoding: 'utf8' });
  return r.status === 0 ? undefined : `${r.stdout}${r.stderr}`;
}

const ptxasTest = PTXAS.path !== '' ? test : test.skip;

ptxasTest(`every corpus kernel prints PTX, and ptxas assembles it for sm_90${PTXAS.why === '' ? '' : ` (${PTXAS.why})`}`, (t) => {
  const dir = tmpDir('jit-ptx');
  for (const c of ptxCases()) {
    const ptx = c.kernel.ptx(...c.args('cpu'));
    if (ptx === undefined && c.name.startsWith('library math') && !hasLibrary()) continue; // no jit-math.ptx in this build
    if (ptx === undefined) {
      t.fail(`${c.name}: no PTX (it would go through NVRTC)`);
      continue;
    }
    const log = assemble(ptx, dir, c.kernel.name);
    t.is(log, undefined, `${c.name}:\n${log ?? ''}\n${ptx}`);
  }
});

test('what the PTX path leaves to NVRTC has no PTX: { debug: true }, NVRTC options of the user; library math without the build\'s jit-math.ptx', (t) => {
  const x = gx.ones([4]), y = gx.zeros([4]);
  const body = (a: gx.jit.Array, b: gx.jit.Array) => { b[jit.grid(1)] = a[jit.grid(1)] * 2; };
  t.truthy(jit.rawkernel(body).ptx(x, y), 'the plain kernel has PTX');
  t.is(jit.rawkernel(body, { debug: true }).ptx(x, y), undefined);
  t.is(jit.rawkernel(body, { options: ['--use_fast_math'] }).ptx(x, y), undefined);
  const library = [
    (a: gx.jit.Array, b: gx.jit.Array) => { b[0] = Math.exp(a[0]); },
    (a: gx.jit.Array, b: gx.jit.Array) => { b[0] = a[0] % 1.5; },
    (a: gx.jit.Array, b: gx.jit.Array) => { b[0] = a[0] ** a[1]; },
  ];
  // Library math is PTX when the build made jit-math.ptx (it needs nvcc, not a GPU), else NVRTC's.
  for (const fn of library) t.is(jit.rawkernel(fn).ptx(x, y) !== undefined, hasLibrary(), String(fn));
});

ptxasTest('the language fuzz\'s random kernels print PTX that ptxas assembles (most of them; the rest use library math)', (t) => {
  const dir = tmpDir('jit-ptx-fuzz');
  const { cases } = fuzzCases(t);
  let printed = 0;
  cases.forEach(({ text, c }, k) => {
    const ptx = c.kernel.ptx(...c.args);
    if (ptx === undefined) return;
    printed++;
    const log = assemble(ptx, dir, `fz${k}`);
    t.is(log, undefined, `kernel ${k}:\n${log ?? ''}\n${text}`);
  });
  t.log(`${printed} of ${cases.length} random kernels printed as PTX`);
  t.true(printed >= cases.length / 2, `${printed} of ${cases.length}`);
});

/** Every tensor argument after `c` ran on `device` (the PTX path on or off), as values. */
function run(c: PtxCase, kernel: gx.jit.JitKernel, device: 'cpu' | 'cuda'): unknown[][] {
  const args = c.args(device);
  kernel(c.grid, c.block, args);
  return args.filter((a): a is gx.Tensor => a instanceof gx.Tensor).map((a) => {
    const v = a.dtype === 'int64' ? a : a.astype('float64');
    return Array.from(v.toArraySync() as ArrayLike<unknown>);
  });
}

/** The first element that differs (bit for bit, any NaN equal to any NaN; or within a relative `tol`). */
function firstDifference(got: unknown[][], want: unknown[][], tol = 0): string | undefined {
  const close = (a: number, b: number): boolean => sameElement(a, b) || Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));
  for (let k = 0; k < want.length; k++) {
    for (let i = 0; i < want[k].length; i++) {
      if (!close(got[k][i] as number, want[k][i] as number)) return `argument ${k}, element ${i}: ${String(got[k][i])} vs ${String(want[k][i])}`;
    }
  }
  return undefined;
}

/** How far library math may be from the simulator's JS Math: a few float32 ulps over a sum of terms (float64's far less). */
const libraryTolerance = (c: PtxCase): number => (!c.library ? 0 : c.name.endsWith('float32') ? 2e-5 : 1e-13);

cudaTest('every corpus kernel runs from its PTX on CUDA, bit for bit as the simulator and as its NVRTC twin', (t) => {
  const before = { ...ptxCounts };
  const cases = ptxCases();
  const ptxOut = new Map<string, unknown[][]>();
  for (const c of cases) {
    const sim = run(c, c.kernel, 'cpu');
    const ptx = run(c, c.kernel, 'cuda');
    t.is(firstDifference(ptx, sim, libraryTolerance(c)), undefined, `${c.name}: PTX against the simulator`);
    ptxOut.set(c.name, ptx);
  }
  t.is(ptxCounts.refused, before.refused, 'the driver took every PTX module');
  t.true(ptxCounts.loaded - before.loaded >= cases.length, `${ptxCounts.loaded - before.loaded} PTX modules loaded for ${cases.length} kernels`);
  setPtxEnabled(false);
  try {
    for (const c of ptxCases()) {
      const loaded = ptxCounts.loaded;
      const nvrtc = run(c, c.kernel, 'cuda');
      t.is(ptxCounts.loaded, loaded, `${c.name}: compiled by NVRTC when the path is off`);
      t.is(firstDifference(nvrtc, ptxOut.get(c.name) ?? []), undefined, `${c.name}: NVRTC against PTX, bit for bit`);
    }
  } finally {
    setPtxEnabled(true);
  }
});

cudaTest('the language fuzz\'s random kernels: PTX equals NVRTC bit for bit on CUDA', (t) => {
  const { cases } = fuzzCases(t);
  const outputs = (on: boolean): unknown[][] => {
    setPtxEnabled(on);
    try {
      return fuzzCases(t).cases.map(({ c }) => {
        const args = c.args.map((a) => (a instanceof gx.Tensor ? a.to('cuda') : a));
        c.kernel(1, THREADS, args);
        const out = args[2] as gx.Tensor;
        return Array.from((out.dtype === 'int64' ? out : out.astype('float64')).toArraySync() as ArrayLike<unknown>);
      });
    } finally {
      setPtxEnabled(true);
    }
  };
  const ptx = outputs(true), nvrtc = outputs(false);
  cases.forEach(({ text }, k) => t.is(firstDifference([ptx[k]], [nvrtc[k]]), undefined, `kernel ${k}\n${text}`));
});
