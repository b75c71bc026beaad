// A differential fuzz of the kernel language: random small kernels (seeded;
// random expressions over every dtype: operators, casts, && / ||, ternaries,
// shifts, **, Math.*, shadowed names, loops) run on the simulator and as
// their generated source compiled for the host by g++, compared bit for bit
// (any NaN equals any NaN), and (float64 kernels in the part of the language
// where JS and C agree) as plain JS. A kernel both refuse is counted, never run.
// GPUEXT_JIT_FUZZ_KERNELS and GPUEXT_JIT_FUZZ_SEED change the run.
import test from 'ava';

import * as gx from '../lib';
import { fuzzCases, inputs, KERNELS, SEED, THREADS } from './jit-fuzz-cases';
import { GXX, runOnHost, sameElement } from './jit-host';
import { rng } from './rng';
import { backendInfo, compile } from '../lib/rtc/compiler';
import { cudaTest, REQUIRE_CUDA } from './helpers';

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
