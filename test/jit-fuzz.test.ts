// A differential fuzz of the kernel language: random small kernels (seeded;
// random expressions over every dtype: operators, casts, && / ||, ternaries,
// shifts, **, Math.*, shadowed names, loops) run on the simulator and as
// their generated source compiled for the host by g++, compared bit for bit
// (any NaN equals any NaN), and (float64 kernels in the part of the language
// where JS and C agree) as plain JS. A kernel both refuse is counted, never run.
// GPUEXT_JIT_FUZZ_KERNELS and GPUEXT_JIT_FUZZ_SEED change the run.
import test from 'ava';

import * as gx from '../lib';
import { GXX, runOnHost, sameElement, type HostCase } from './jit-host';
import { rng } from './rng';
import { backendInfo, compile } from '../lib/rtc/compiler';
import { cudaTest, REQUIRE_CUDA } from './helpers';

const KERNELS = Number(process.env.GPUEXT_JIT_FUZZ_KERNELS ?? 60);
const SEED = Number(process.env.GPUEXT_JIT_FUZZ_SEED ?? 20261128);
const THREADS = 8;
const DTYPES = ['bool', 'int32', 'int64', 'float32', 'float64'] as const;
type D = (typeof DTYPES)[number];

/** Inputs with the edge cases of each dtype among random values. */
function inputs(d: D, r: () => number): gx.Tensor {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const n = THREADS;
  switch (d) {
    case 'bool': return gx.tensor(Uint8Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0)), { dtype: 'bool' });
    case 'int32': {
      const sp = [0, 1, -1, 2, -2, 7, -7, 31, 32, 33, 2147483647, -2147483648, 65536, -1000];
      return gx.tensor(Int32Array.from({ length: n }, () => (r() < 0.5 ? pick(sp) : Math.floor((r() - 0.5) * 200))));
    }
    case 'int64': {
      const sp = [0n, 1n, -1n, 3n, -3n, 63n, 64n, 2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n, 2n ** 31n];
      return gx.tensor(BigInt64Array.from({ length: n }, () => (r() < 0.5 ? pick(sp) : BigInt(Math.floor((r() - 0.5) * 200)))));
    }
    default: {
      const sp = [0, -0, 1.5, -2.5, 0.1, 1e8, -1e-30, NaN, Infinity, -Infinity, 3e38, 0.49999997, 2 ** 31, -(2 ** 40)];
      const xs = Array.from({ length: n }, () => (r() < 0.4 ? pick(sp) : (r() - 0.5) * 20));
      return d === 'float32' ? gx.tensor(Float32Array.from(xs)) : gx.tensor(Float64Array.from(xs), { dtype: 'float64' });
    }
  }
}

/** The source of a random kernel `(a, b, out, n)`, one element per thread. */
function kernelText(r: () => number, k: number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const locals: string[] = [];
  const leaf = (): string => pick([
    'a[i]', 'b[i]', 'i', 'n', ...locals, ...locals,
    String(Math.floor(r() * 10)), `${Math.floor(r() * 5)}.0`, `(-${Math.floor(r() * 40)})`, String(Math.round(r() * 1000) / 100),
    'true', 'false', '2147483647', '0.1', '(-0.0)',
  ]);
  const expr = (depth: number): string => {
    if (depth <= 0 || r() < 0.25) return leaf();
    const x = (): string => expr(depth - 1);
    switch (Math.floor(r() * 11)) {
      case 0: case 1: case 2:
        return `(${x()} ${pick(['+', '-', '*', '/', '%', '+', '-', '*'])} ${x()})`;
      case 3: return `(${x()} ${pick(['&', '|', '^', '<<', '>>', '>>>'])} ${x()})`;
      case 4: return `(${x()} ${pick(['<', '<=', '>', '>=', '===', '!=='])} ${x()})`;
      case 5: return `(${x()} ${pick(['&&', '||'])} ${x()})`;
      case 6: return `(${x()} ? ${x()} : ${x()})`;
      case 7: return pick([`(-${x()})`, `(!${x()})`, `(~(${x()} | 0))`]);
      case 8: return `Math.${pick(['min', 'max'])}(${x()}, ${x()})`;
      case 9: return `Math.${pick(['abs', 'floor', 'ceil', 'trunc', 'round', 'sign', 'sqrt', 'fround'])}(${x()})`;
      default: return pick([`(${x()} ** 2)`, `(${x()} ** 0.5)`, `((${x()} | 0) ** (${x()} | 0))`, `((${x()} | 0) ** ${Math.floor(r() * 5) - 2})`]);
    }
  };
  const body: string[] = ['const i = jit.threadIdx.x;'];
  const lets = 1 + Math.floor(r() * 3);
  for (let j = 0; j < lets; j++) {
    body.push(`let t${j} = ${expr(3)};`);
    locals.push(`t${j}`);
  }
  for (let j = 0; j < 3; j++) {
    const t = pick(locals);
    switch (Math.floor(r() * 5)) {
      case 0: body.push(`${t} = ${expr(3)};`); break;
      case 1: body.push(`${t} ${pick(['+=', '-=', '*=', '|=', '%='])} ${expr(2)};`); break;
      case 2: body.push(`if (${expr(2)}) { ${t} = ${expr(2)}; } else { ${t}++; }`); break;
      case 3: body.push(`for (let k = 0; k < 3; k++) { ${t} = ${t} * ${expr(1)} + k; }`); break;
      default: body.push(`{ let ${t} = ${expr(2)}; out[i] = ${t}; }`); break;
    }
  }
  body.push(`out[i] = ${expr(3)} + ${pick(locals)};`);
  return `return function fz${k}(a, b, out, n) {\n  ${body.join('\n  ')}\n}`;
}

/** The seeded kernels: those that type, with their arguments, and how many the typer refused (checked to be refused on the CPU too). */
function fuzzCases(t: import('ava').ExecutionContext): { cases: { text: string; c: HostCase }[]; refused: number } {
  const r = rng(SEED);
  const cases: { text: string; c: HostCase }[] = [];
  let refused = 0;
  for (let k = 0; k < KERNELS; k++) {
    const text = kernelText(r, k);
    // eslint-disable-next-line no-new-func
    const fn = new Function('jit', text)(gx.jit) as (...args: unknown[]) => void;
    const [da, db, dout] = [0, 1, 2].map(() => DTYPES[Math.floor(r() * DTYPES.length)]);
    const args = [inputs(da, r), inputs(db, r), gx.full([THREADS], 0, { dtype: dout }), THREADS];
    const kernel = gx.jit.rawkernel(fn, { name: `fz${k}` });
    try {
      kernel.source(...args);
    } catch (e) {
      // The typer refuses some random kernels (~ of a float, a bool ++): then the simulator must refuse the same.
      t.is((e as Error).name, 'JitError', text);
      t.throws(() => kernel(1, THREADS, args.map((a) => (a instanceof gx.Tensor ? a.clone() : a))), { name: 'JitError' }, text);
      refused++;
      continue;
    }
    cases.push({ text, c: { kernel, args, threads: THREADS } });
  }
  t.true(cases.length >= KERNELS / 2, `most random kernels type (${cases.length} of ${KERNELS}; ${refused} refused on both sides)`);
  return { cases, refused };
}

(GXX.ok ? test : test.skip)(`random kernels: the simulator equals the generated source built by g++, bit for bit${GXX.ok ? '' : ` (${GXX.why})`}`, (t) => {
  const started = Date.now();
  const { cases, refused } = fuzzCases(t);
  const host = runOnHost(cases.map((x) => x.c));
  let compared = 0;
  cases.forEach(({ text, c }, k) => {
    const args = c.args.map((a) => (a instanceof gx.Tensor ? a.clone() : a));
    c.kernel(1, THREADS, args);
    const got = (args[2] as gx.Tensor).toArraySync() as unknown as ArrayLike<number | bigint>;
    const want = host[k][2] as unknown as ArrayLike<number | bigint>;
    for (let i = 0; i < THREADS; i++) {
      if (!sameElement(got[i], want[i])) {
        t.fail(`kernel ${k}, thread ${i}: simulator ${got[i]}, C ${want[i]} (${c.args.slice(0, 2).map((a) => (a as gx.Tensor).dtype)} -> ${(c.args[2] as gx.Tensor).dtype})\n` +
          `a = ${Array.from((c.args[0] as gx.Tensor).toArraySync() as ArrayLike<unknown>).map(String)}\nb = ${Array.from((c.args[1] as gx.Tensor).toArraySync() as ArrayLike<unknown>).map(String)}\n${text}\n${c.kernel.source(...c.args)}`);
        return;
      }
      compared++;
    }
  });
  t.log(`${cases.length} kernels (${compared} elements) equal bit for bit; ${refused} refused on both sides; ${Date.now() - started} ms`);
});

const compilerTest = backendInfo().backend !== null ? test : REQUIRE_CUDA ? test : test.skip;
compilerTest('the same random kernels\' CUDA compiles for sm_90 with NVRTC (no GPU needed)', (t) => {
  const { cases } = fuzzCases(t);
  const source = cases.map(({ c }) => c.kernel.source(...c.args)).join('\n');
  t.true(compile({ source, name: 'jit-fuzz.cu', arch: 'sm_90', options: ['--fmad=false'] }, { disk: false }).image.byteLength > 0);
});

cudaTest('the same random kernels on CUDA equal the simulator bit for bit', (t) => {
  const { cases } = fuzzCases(t);
  cases.forEach(({ text, c }, k) => {
    const cpu = c.args.map((a) => (a instanceof gx.Tensor ? a.clone() : a));
    const gpu = c.args.map((a) => (a instanceof gx.Tensor ? a.to('cuda') : a));
    c.kernel(1, THREADS, cpu);
    c.kernel(1, THREADS, gpu);
    const want = (cpu[2] as gx.Tensor).toArraySync() as unknown as ArrayLike<number | bigint>;
    const got = (gpu[2] as gx.Tensor).toArraySync() as unknown as ArrayLike<number | bigint>;
    for (let i = 0; i < THREADS; i++) {
      if (!sameElement(got[i], want[i])) {
        t.fail(`kernel ${k}, thread ${i}: CUDA ${got[i]}, simulator ${want[i]}\n${text}`);
        return;
      }
    }
  });
  t.pass();
});

/** A random float64 kernel in the part of the language where JS and C agree (LANGUAGE.md): + - * /, comparisons, ?:, exact Math. */
function agreeingText(r: () => number, k: number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  // No int32 (threadIdx): its quotients are float32 by the language, not JS's doubles.
  let leaves = ['a[i]', 'b[i]', `${Math.floor(r() * 9)}.5`, '2', '(-3)'];
  const expr = (depth: number): string => {
    if (depth <= 0 || r() < 0.2) return pick(leaves);
    const x = (): string => expr(depth - 1);
    switch (Math.floor(r() * 4)) {
      case 0: case 1: return `(${x()} ${pick(['+', '-', '*', '/'])} ${x()})`;
      case 2: return `(${x()} ${pick(['<', '>=', '==='])} ${x()} ? ${x()} : ${x()})`;
      default: return `Math.${pick(['min', 'max'])}(${x()}, Math.${pick(['abs', 'sqrt', 'floor', 'ceil', 'trunc'])}(${x()}))`;
    }
  };
  const init = expr(2);
  leaves = [...leaves, 't', 't'];
  return `return function ag${k}(a, b, out) {\n  const i = jit.threadIdx.x;\n  let t = ${init};\n  for (let k = 0; k < 2; k++) t = ${expr(3)};\n  out[i] = ${expr(3)};\n}`;
}

test('random float64 kernels where JS and C agree: the simulator equals the function run as plain JS, bit for bit', (t) => {
  const r = rng(SEED + 1);
  for (let k = 0; k < KERNELS; k++) {
    const text = agreeingText(r, k);
    const a = inputs('float64', r), b = inputs('float64', r);
    const out = gx.zeros([THREADS], { dtype: 'float64' });
    // eslint-disable-next-line no-new-func
    gx.jit.rawkernel(new Function('jit', text)(gx.jit) as (...args: unknown[]) => void)(1, THREADS, [a, b, out]);
    // The same function with a stand-in jit whose threadIdx.x is each thread in turn, on plain arrays.
    const thread = { x: 0 };
    // eslint-disable-next-line no-new-func
    const plain = new Function('jit', text)({ threadIdx: thread }) as (a: Float64Array, b: Float64Array, o: Float64Array) => void;
    const av = a.toArraySync() as Float64Array, bv = b.toArraySync() as Float64Array, want = new Float64Array(THREADS);
    for (thread.x = 0; thread.x < THREADS; thread.x++) plain(av, bv, want);
    const got = out.toArraySync() as Float64Array;
    const bad = Array.from(got).findIndex((v, i) => !sameElement(v, want[i]));
    if (bad >= 0) {
      t.fail(`kernel ${k}, thread ${bad}: simulator ${got[bad]}, JS ${want[bad]}\n${text}`);
      return;
    }
  }
  t.pass();
});
