// The jit compiles the sources it generates with NVRTC's -minimal (NOTE
// [ Minimal NVRTC ] in lib/rtc/nvrtc-backend.ts), which leaves out the
// texture and surface functions, the device runtime's functions and types
// (cudaMalloc, cudaError_t ...) and launches from device code. No NVRTC here:
// this checks the generated sources, over every Math function, intrinsic and
// helper, use none of those, and that -minimal is asked for only where no
// header comes in. The GPU suite compiles them all with it.
import test from 'ava';

import * as gx from '../lib';
import { ATOMIC_HELPERS, DEBUG_HELPERS, HELPERS } from '../lib/jit/cuda-helpers';
import { MATH_TABLE } from '../lib/jit/math-table';
import { compileOptions } from '../lib/jit/rawkernel';

const { jit } = gx;

/** What -minimal omits, as a generated source would spell it: runtime API names and types, texture and surface calls, device launches. */
const OMITTED = /\b(cuda[A-Z]\w*|CUDART_\w+|CU_\w+|tex[1-3]D\w*|tex1Dfetch|texCubemap\w*|surf[1-3]D\w*|surfCubemap\w*)\b|<<<|#\s*include/;

/** A rawkernel closing over jit, built from its body's text (so the Math table can be walked). */
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const kernelOf = (name: string, body: string): KernelFn => new Function('jit', `return function ${name}(x, y, n) {\n${body}\n};`)(jit) as KernelFn;
type KernelFn = (x: gx.jit.Array, y: gx.jit.Array, n: number) => void;

test('-minimal is added where no header comes in, and only once', (t) => {
  t.deepEqual(compileOptions('extern "C" __global__ void f() {}', ['--fmad=false']), ['--fmad=false', '-minimal']);
  t.deepEqual(compileOptions('#include <cuda_fp16.h>\n', ['--fmad=false']), ['--fmad=false']);
  t.deepEqual(compileOptions('# include "x.h"\n', []), []);
  t.deepEqual(compileOptions('#ifndef A\n#define A\n#endif\n', []), ['-minimal'], 'other directives are no header');
  t.deepEqual(compileOptions('', ['-include', 'x.h']), ['-include', 'x.h']);
  t.deepEqual(compileOptions('', ['--pre-include=x.h']), ['--pre-include=x.h']);
  t.deepEqual(compileOptions('', ['-minimal']), ['-minimal']);
  t.deepEqual(compileOptions('', ['--minimal']), ['--minimal']);
});

test('the helpers the generated kernels call use nothing -minimal leaves out', (t) => {
  for (const [name, text] of [...Object.entries(HELPERS), ['atomic', ATOMIC_HELPERS], ['debug', DEBUG_HELPERS]]) {
    t.is(OMITTED.exec(text)?.[0], undefined, name);
  }
});

test('generated rawkernel sources over every Math function, intrinsic and dtype use nothing -minimal leaves out', (t) => {
  const unary = Object.entries(MATH_TABLE).filter(([, e]) => e.arity === 1).map(([f]) => `Math.${f}(x[i])`);
  const binary = Object.entries(MATH_TABLE).filter(([, e]) => e.arity === 2).map(([f]) => `Math.${f}(x[i], y[i])`);
  const bodies: Record<string, string> = {
    math: `const i = jit.grid(1); if (i < n) y[i] = ${[...unary, ...binary].join(' + ')};`,
    ints: 'const i = jit.grid(1); if (i < n) { y[i] = Math.min(i + 1, n - 1) + Math.max(i, 2) + Math.abs(i - n) + (i % 7) + (i >> 2) + (i << 1) + 3 ** 2; }',
    threads: `const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
      for (let i = tid; i < n; i += jit.gridDim.x * jit.blockDim.x) y[i] = x[i] * x[i] + jit.gridsize(1);`,
    shared: `const s = jit.sharedArray(32, 'float32'); const l = jit.localArray(2, 'float32');
      const t = jit.threadIdx.x; s[t] = x[t]; l[0] = s[t]; jit.syncthreads(); y[t] = s[31 - t] + l[0]; jit.threadfence();`,
    warp: `const i = jit.grid(1); let v = x[i]; for (let o = 16; o > 0; o >>= 1) v += jit.shfl.down(v, o);
      y[i] = v + jit.shfl.up(v, 1) + jit.shfl.xor(v, 2) + jit.shfl.sync(v, 0) + jit.ballot(v > 0) + jit.activemask() + jit.laneId();`,
    atomics: `const i = jit.grid(1); jit.atomic.add(y, 0, x[i]); jit.atomic.max(y, 1, x[i]); jit.atomic.min(y, 2, x[i]);
      jit.atomic.exch(y, 3, x[i]); jit.atomic.sub(y, 4, x[i]);`,
    logic: 'const i = jit.grid(1); if (i < n && !(x[i] > 2) || x[i] !== x[i]) y[i] = x[i] ? 1 : 2;',
  };
  let checked = 0;
  for (const [name, body] of Object.entries(bodies)) {
    const k = kernelOf(name, body);
    for (const dtype of ['float32', 'float64', 'int32', 'int64'] as const) {
      for (const debug of [false, true]) {
        const kd = debug ? jit.rawkernel(kernelOf(name, body), { debug: true }) : jit.rawkernel(k);
        const x = gx.ones([32], { dtype });
        let source: string;
        try {
          source = kd.source(x, gx.ones([32], { dtype }), 32);
        } catch (e) {
          // Some bodies do not type for every dtype (atomics on integers, shifts of floats): those are refused, not generated.
          t.true(e instanceof gx.JitError, `${name} ${dtype}: ${String(e)}`);
          continue;
        }
        t.is(OMITTED.exec(source)?.[0], undefined, `${name} ${dtype}${debug ? ' debug' : ''}`);
        t.deepEqual(compileOptions(source, []), ['-minimal'], 'no header: -minimal is asked for');
        checked++;
      }
    }
  }
  t.true(checked >= 30, `${checked} sources checked`);
});

test('a float16 kernel includes cuda_fp16.h and is compiled without -minimal; vectorize\'s sources with it', (t) => {
  const k = kernelOf('half', 'const i = jit.grid(1); if (i < n) y[i] = x[i] * 2;');
  const src = jit.rawkernel(k).source(gx.ones([4], { dtype: 'float16' }), gx.ones([4], { dtype: 'float16' }), 4);
  t.regex(src, /#include <cuda_fp16\.h>/);
  t.false(compileOptions(src, ['--fmad=false']).includes('-minimal'));
  const SQRT_2PI = Math.sqrt(2 * Math.PI);
  const v = gx.vectorize(['float32(float32, float32, float32)', 'float64(float64, float64, float64)', 'int64(int64, int64, int64)'],
    (a, m, s) => Math.exp(-0.5 * ((a - m) / s) ** 2) / (s * SQRT_2PI) + Math.min(a, m));
  for (const i of [0, 1, 2]) {
    const s = v.source(i);
    t.is(OMITTED.exec(s)?.[0], undefined);
    t.deepEqual(compileOptions(s, []), ['-minimal']);
  }
});
