// gx.vectorize's kernels as PTX (NOTE [ Elementwise PTX ] in
// lib/jit/ptx-elementwise.ts). Without a GPU: for every signature of a
// corpus (every scalar dtype in and out, numbers, library math, device
// functions, early returns) and every kernel shape (tiled, strided at
// several ranks), the PTX assembles with ptxas for sm_90. On a GPU: each
// runs from its PTX (the driver takes every module), bit for bit as its
// NVRTC twin, over sizes with a partial last tile, views at odd offsets
// (the element path), broadcast and transposed operands, and within ulps
// of the CPU simulator.
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import * as gx from '../lib';
import { parse, scalarPtx, type Signature } from '../lib/jit/vectorize-gen';
import { hasLibrary } from '../lib/jit/ptx-library';
import { setPtxEnabled } from '../lib/jit/rawkernel';
import type { ScalarDType } from '../lib/jit/types';
import type { Layout } from '../lib/rtc/elementwise-codegen';
import { signatureSourceIn } from '../lib/jit/vectorize';
import { ptxCounts } from '../lib/rtc/raw';
import { translationCounts } from '../lib/jit/translation-cache';
import { cudaTest, randomValues } from './helpers';
import { sameElement } from './jit-host';
import { tmpDir } from './host-cuda';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { cudaHome } = require('../../scripts/find-cuda.js') as { cudaHome(): string | null };
const PTXAS = (() => {
  const home = cudaHome();
  const p = home === null ? '' : path.join(home, 'bin', 'ptxas');
  return p !== '' && fs.existsSync(p) ? p : '';
})();

const SQRT_2PI = Math.sqrt(2 * Math.PI);
const halve = gx.jit.device((v: number) => v / 2);

interface Case {
  name: string;
  sig: string;
  f: (...xs: number[]) => number | boolean;
  /** Uses library math: within ulps of the simulator, not bit for bit. */
  library?: boolean;
}

const CASES: Case[] = [
  { name: 'gaussian', sig: 'float32(float32, float32, float32)', f: (x, m, s) => Math.exp(-0.5 * ((x - m) / s) ** 2) / (s * SQRT_2PI), library: true },
  { name: 'gaussian64', sig: 'float64(float64, float64, float64)', f: (x, m, s) => Math.exp(-0.5 * ((x - m) / s) ** 2) / (s * SQRT_2PI), library: true },
  {
    name: 'early', sig: 'float64(float64, float64)', f: (a, b) => {
      if (a > b) return a - b;
      let s = 0;
      for (let k = 0; k < 3; k++) s += b * k;
      return s;
    },
  },
  { name: 'ints', sig: 'int32(int32, int32)', f: (a, b) => ((a * 3 + b) ^ (a >> 2)) % 7 },
  { name: 'wide', sig: 'int64(int32)', f: (a) => a * 1000003 },
  { name: 'mixed', sig: 'int64(int64, float64)', f: (a, x) => a + Math.trunc(x * 10) },
  { name: 'less', sig: 'bool(float32, float32)', f: (a, b) => a < b || a !== a },
  { name: 'pick', sig: 'float64(bool, float64)', f: (c, x) => (c ? x : -x) },
  { name: 'narrow', sig: 'float32(float64)', f: (x) => halve(x) + 1 },
];

/** The elementwise kernel gx.vectorize asks for: inputs a0.., output out, the signature's dtypes, these layouts. */

const signatureOf = (text: string): Signature => {
  const m = /^(\w+)\((.*)\)$/.exec(text.replace(/\s/g, ''));
  if (m === null) throw new Error(text);
  return { text, out: m[1] as ScalarDType, ins: m[2].split(',') as ScalarDType[] };
};

(PTXAS === '' ? test.skip : test)('every corpus signature prints PTX for each kernel shape, and ptxas assembles it for sm_90', (t) => {
  const dir = tmpDir('vectorize-ptx');
  let printed = 0;
  for (const c of CASES) {
    const s = signatureOf(c.sig);
    const p = parse(c.f, 'gx.vectorize').p;
    const n = s.ins.length;
    const shapes: [string, Layout[], number][] = [
      ['tiled', [...s.ins.map((): Layout => 'c'), 'c'], 1],
      ['tiled with numbers', [...s.ins.map((_, i): Layout => (i === 0 ? 'c' : 'v')), 'c'], 1],
      ['strided', [...s.ins.map((_, i): Layout => (i === n - 1 ? 's' : 'c')), 'c'], 2],
      ['strided output', [...s.ins.map((): Layout => 'c'), 's'], 3],
    ];
    for (const [what, layouts, ndim] of shapes) {
      const ptx = scalarPtx(p, c.name, s, signatureSourceIn(s, c.name, 0, layouts, ndim), 'test');
      if (ptx === undefined && c.library === true && !hasLibrary()) continue;
      if (ptx === undefined) {
        t.fail(`${c.name} ${what}: no PTX`);
        continue;
      }
      printed++;
      const file = path.join(dir, `${c.name}-${printed}.ptx`);
      fs.writeFileSync(file, ptx.text);
      const r = spawnSync(PTXAS, ['-arch=sm_90', file, '-o', `${file}.cubin`], { encoding: 'utf8' });
      t.is(r.status, 0, `${c.name} ${what}:\n${r.stdout}${r.stderr}\n${ptx.text}`);
    }
  }
  t.true(printed >= 20, `${printed} kernels printed`);
});

test('a kernel of bool operands only (16-element vectors) has no PTX face: it goes through NVRTC', (t) => {
  const s = signatureOf('bool(bool, bool)');
  const p = parse((a: number, b: number) => a !== b, 'gx.vectorize').p;
  t.is(scalarPtx(p, 'xor', s, signatureSourceIn(s, 'xor', 0, ['c', 'c', 'c'], 1), 'test'), undefined);
  t.truthy(scalarPtx(p, 'xor', s, signatureSourceIn(s, 'xor', 0, ['c', 's', 'c'], 2), 'test'), 'its strided kernel has one');
});

test('.ptx() shows the kernel for contiguous tensors; undefined under NVRTC options; a bad signature is a RangeError naming the method', (t) => {
  const pdf = gx.vectorize(['float32(float32, float32, float32)', 'float64(float64, float64, float64)'], CASES[0].f, { name: 'pdf' });
  const text = pdf.ptx();
  if (hasLibrary()) {
    t.regex(text ?? '', /\.visible \.entry vec_pdf_0\(/);
    t.regex(pdf.ptx('float64(float64, float64, float64)') ?? '', /\.visible \.entry vec_pdf_1\(/);
    t.regex(text ?? '', /ld\.global\.nc\.v4\.f32/, 'contiguous float32 operands load 16-byte vectors');
  } else {
    t.is(text, undefined, 'library math without jit-math.ptx goes through NVRTC');
  }
  const plain = gx.vectorize('float32(float32)', (x) => x * 2);
  t.regex(plain.ptx() ?? '', /mul\.rn\.f32/);
  t.is(gx.vectorize('float32(float32)', (x) => x * 2, { options: ['--fmad=true'] }).ptx(), undefined);
  t.throws(() => plain.ptx(3), { instanceOf: RangeError, message: /\.ptx: no signature 3/ });
  t.throws(() => plain.ptx('int32(int32)'), { instanceOf: RangeError, message: /\.ptx: no signature/ });
});

/** Random values of `d` (bools as 0 / 1; ints small enough that the corpus does not overflow int32). */
function values(d: ScalarDType, n: number, seed: number): number[] {
  const v = Array.from(randomValues(d === 'bool' ? 'float32' : d, n, seed) as ArrayLike<number | bigint>, Number);
  if (d === 'bool') return v.map((x) => (x > 0 ? 1 : 0));
  if (d === 'int32' || d === 'int64') return v.map((x) => x % 100000);
  return v.map((x) => x * 3);
}

/** The corpus's calls on `device`: each signature on contiguous tensors of `n` elements, a view at an odd offset, a broadcast row, a transposed matrix and a number. */
function runAll(device: 'cpu' | 'cuda', ptx: boolean): { name: string; library: boolean; out: number[] }[] {
  setPtxEnabled(ptx);
  try {
    const results: { name: string; library: boolean; out: number[] }[] = [];
    CASES.forEach((c, k) => {
      const s = signatureOf(c.sig);
      const fn = gx.vectorize([c.sig], c.f, { name: c.name });
      const n = 4 * 2048 * 3 + 777;  // several tiles and a partial one
      const full = s.ins.map((d, i) => gx.tensor(values(d, n + 1, 10 * k + i), { dtype: d, device }));
      const calls: [string, (gx.Tensor | number)[]][] = [
        ['contiguous', full.map((x) => x.narrow(0, 0, n))],
        ['odd offset', full.map((x) => x.narrow(0, 1, n))],
        ['numbers', full.map((x, i) => (i === 0 ? x.narrow(0, 0, n) : s.ins[i] === 'bool' ? 1 : 3))],
        ['broadcast and transposed', full.map((x, i) => (i === 0 ? x.narrow(0, 0, 96 * 64).reshape([96, 64]).transpose(0, 1) : x.narrow(0, 0, 96)))],
      ];
      for (const [what, args] of calls) {
        const y = fn(...args);
        const v = (y.dtype === 'int64' ? y : y.astype('float64')).toArraySync() as ArrayLike<number | bigint>;
        results.push({ name: `${c.name} ${what}`, library: c.library === true, out: Array.from(v, Number) });
        y.dispose();
        for (const a of args) if (a instanceof gx.Tensor) a.dispose();
      }
      for (const x of full) x.dispose();
    });
    return results;
  } finally {
    setPtxEnabled(true);
  }
}

cudaTest('every corpus signature runs from its PTX on CUDA, bit for bit as its NVRTC twin and within ulps of the simulator', (t) => {
  const before = { ...ptxCounts };
  const fromPtx = runAll('cuda', true);
  t.is(ptxCounts.refused, before.refused, 'the driver took every PTX module');
  t.true(ptxCounts.loaded - before.loaded >= CASES.length * 2, `${ptxCounts.loaded - before.loaded} PTX modules loaded`);
  const loaded = ptxCounts.loaded;
  const fromNvrtc = runAll('cuda', false);
  t.is(ptxCounts.loaded, loaded, 'with the path off, NVRTC compiles them');
  const simulated = runAll('cpu', true);
  fromPtx.forEach((r, k) => {
    const twin = fromNvrtc[k].out, sim = simulated[k].out;
    t.is(r.out.length, twin.length, r.name);
    const tol = r.library ? (r.name.startsWith('gaussian64') ? 1e-14 : 4e-7) : 0;
    let bad: string | undefined;
    for (let i = 0; i < r.out.length && bad === undefined; i++) {
      if (!sameElement(r.out[i], twin[i])) bad = `element ${i}: PTX ${r.out[i]}, NVRTC ${twin[i]}`;
      else if (!sameElement(r.out[i], sim[i]) && !(Math.abs(r.out[i] - sim[i]) <= tol * Math.max(1e-30, Math.abs(sim[i])))) bad = `element ${i}: PTX ${r.out[i]}, simulator ${sim[i]}`;
    }
    t.is(bad, undefined, r.name);
  });
});

cudaTest('a call loaded as PTX translates the function to PTX alone: its CUDA source is made when asked for, or when the driver refuses the PTX', (t) => {
  // A text no earlier run has cached: a constant drawn at random.
  const c = Math.round(Math.random() * 1e6) + 0.25;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const f = new Function('x', `return x * ${c} + 1;`) as (x: number) => number;
  const v = gx.vectorize(['float32(float32)'], f, { name: 'lazy_source' });
  const xs = randomValues('float32', 1000, 7) as Float32Array;
  const before = { translations: translationCounts.translations, loaded: ptxCounts.loaded };
  const x = gx.tensor(xs, { device: 'cuda' });
  const y = v(x).toArraySync() as Float32Array;
  x.dispose();
  t.is(ptxCounts.loaded - before.loaded, 1, 'loaded as PTX');
  t.is(translationCounts.translations - before.translations, 1, 'the PTX alone was emitted');
  t.true(v.source().includes('gx_vec_lazy_source'));
  t.is(translationCounts.translations - before.translations, 2, '.source() translates the CUDA source');
  // The simulator's values, bit for bit (a multiply and an add in float32).
  t.deepEqual(y, v(gx.tensor(xs)).toArraySync() as Float32Array);
});
