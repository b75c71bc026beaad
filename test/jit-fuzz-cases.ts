// The seeded random kernels of the kernel language's differential fuzz
// (jit-fuzz.test.ts, jit-ptx.test.ts): random expressions over every dtype
// (operators, casts, && / ||, ternaries, shifts, **, Math.*, shadowed names,
// loops), one element per thread. GPUEXT_JIT_FUZZ_KERNELS and
// GPUEXT_JIT_FUZZ_SEED change the run.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import type { HostCase } from './jit-host';
import { rng } from './rng';

export const KERNELS = Number(process.env.GPUEXT_JIT_FUZZ_KERNELS ?? 60);
export const SEED = Number(process.env.GPUEXT_JIT_FUZZ_SEED ?? 20261128);
export const THREADS = 8;
const DTYPES = ['bool', 'int32', 'int64', 'float32', 'float64'] as const;
type D = (typeof DTYPES)[number];

/** Inputs with the edge cases of each dtype among random values. */
export function inputs(d: D, r: () => number): gx.Tensor {
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
export function fuzzCases(t: ExecutionContext): { cases: { text: string; c: HostCase }[]; refused: number } {
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

