// The kernel language's meaning (lib/jit/LANGUAGE.md) on the simulator and
// in the generated CUDA: directed kernels whose values are worked out here
// (float32 accumulation, int32 wraparound, remainders of negatives, each
// semantic rule), run on the simulator and, compiled for the host with g++,
// as C, both compared bit for bit; the simulator refusing what the
// translator refuses; 64-bit loops; the simulator's bounds and race check.
import test from 'ava';

import * as gx from '../lib';
import { GXX, runOnHost, sameElement, type HostCase } from './jit-host';
import { cudaTest, REQUIRE_CUDA } from './helpers';
import { backendInfo, compile } from '../lib/rtc/compiler';
import { rng } from './rng';

const { jit } = gx;
const F = Math.fround;
const gxxTest = GXX.ok ? test : test.skip;

/** Runs `c` on the simulator (on copies of its tensors) and returns the tensors' values afterwards. */
function simulate(c: HostCase): ArrayBufferView[] {
  const args = c.args.map((a) => (a instanceof gx.Tensor ? a.clone() : a));
  c.kernel(1, c.threads, args);
  return args.filter((a): a is gx.Tensor => a instanceof gx.Tensor).map((t) => t.toArraySync() as ArrayBufferView);
}

const values = (v: ArrayBufferView): (number | bigint)[] => Array.from(v as unknown as ArrayLike<number | bigint>);

/** The directed cases, each with the output values the language says (the last tensor argument is the output). */
function directed(): { what: string; c: HostCase; want: (number | bigint | boolean)[] }[] {
  const f32 = (xs: number[]): gx.Tensor => gx.tensor(Float32Array.from(xs));
  const i32 = (xs: number[]): gx.Tensor => gx.tensor(Int32Array.from(xs));
  const out = (n: number, dtype: gx.DType = 'float32'): gx.Tensor => gx.full([n], -7, { dtype });
  const acc = jit.rawkernel(function acc(x: gx.jit.Array, y: gx.jit.Array) {
    let s = x[0];
    for (let k = 0; k < 16; k++) s += 1;
    y[0] = s;
    y[1] = x[1] * 1.1 - 3.3;
  });
  const overflow = jit.rawkernel(function overflow(x: gx.jit.Array, y: gx.jit.Array) {
    const i = jit.threadIdx.x;
    y[i] = x[i] * x[i] + 2147483647;
  });
  const rem = jit.rawkernel(function rem(a: gx.jit.Array, b: gx.jit.Array, y: gx.jit.Array) {
    const i = jit.threadIdx.x;
    y[i] = a[i] % b[i] + 100 * Math.trunc(a[i] / b[i]);
  });
  const ab = [-7, 7, -7, 7, -2147483648, 5];
  const bb = [2, -2, -2, 0, -1, 0];
  return [
    // 1e8 + 1 is 1e8 in float32: the accumulator stays (float64 would give 100000016).
    { what: 'float32 accumulator', c: { kernel: acc, args: [f32([1e8, 3]), out(2)], threads: 1 }, want: [1e8, F(F(3 * F(1.1)) - F(3.3))] },
    {
      what: 'int32 overflow wraps', c: { kernel: overflow, args: [i32([46341, -3, 65536, 7]), out(4, 'int32')], threads: 4 },
      want: [46341, -3, 65536, 7].map((v) => (Math.imul(v, v) + 2147483647) | 0),
    },
    {
      what: 'remainder of negatives (dividend\'s sign; by 0 and by -1 it is 0) and truncated division',
      c: { kernel: rem, args: [i32(ab), i32(bb), out(6, 'int32')], threads: 6 },
      // a / b is float32 true division; Math.trunc keeps it float32; the sum is stored as int32 (toward zero, saturating).
      want: ab.map((a, k) => {
        const b = bb[k];
        const r = b === 0 || b === -1 ? 0 : a % b;
        const q = Math.trunc(F(F(a) / F(b)));
        const v = F(r + F(100 * q));
        return v !== v ? 0 : v >= 2147483647 ? 2147483647 : v <= -2147483648 ? -2147483648 : Math.trunc(v);
      }),
    },
  ];
}

test('float32 accumulation, int32 wraparound and remainders of negatives: the simulator gives the language\'s values', (t) => {
  for (const { what, c, want } of directed()) {
    const got = values(simulate(c).at(-1) as ArrayBufferView);
    t.deepEqual(got, want, what);
  }
});

gxxTest(`the same kernels compiled as C on the host give the simulator's bits${GXX.ok ? '' : ` (${GXX.why})`}`, (t) => {
  const cases = directed();
  const host = runOnHost(cases.map((d) => d.c));
  cases.forEach(({ what, c }, k) => {
    const sim = simulate(c);
    sim.forEach((v, j) => {
      const a = values(v), b = values(host[k][j]);
      t.true(a.every((x, i) => sameElement(x, b[i])), `${what}, tensor ${j}: simulator ${a} vs C ${b}`);
    });
  });
});

/** The rules of LANGUAGE.md, each a kernel writing float64 results (the cases of the bugs the rules settle). */
function rules(): { what: string; c: HostCase; want: number[] }[] {
  const out = (n: number): gx.Tensor => gx.full([n], -7, { dtype: 'float64' });
  const x = gx.tensor(Float64Array.from([NaN, 0, 2.5, -1]));
  const BIG = Infinity, NAN = NaN, NZ = -0, B = 2n ** 60n + 1n, π = 3.5, K = -5;
  const logic = jit.rawkernel(function logic(x: gx.jit.Array, y: gx.jit.Array) {
    const i = jit.threadIdx.x;
    const v = x[i];
    y[4 * i] = (v || 7) ? 1 : 0;
    y[4 * i + 1] = !v ? 1 : 0;
    y[4 * i + 2] = v ? 1 : 2;
    let r = 0;
    if (v) r = 1;
    y[4 * i + 3] = r + (v && 7 ? 10 : 20);
  });
  const powers = jit.rawkernel(function powers(y: gx.jit.Array, n: number) {
    const three = n + 2;
    y[0] = three ** -1;
    y[1] = (n - 1) ** -7;
    y[2] = (n - 2) ** -3;
    y[3] = (n - 2) ** -4;
    y[4] = three ** 3;
    y[5] = 3.0 ** -1;
  });
  const shifts = jit.rawkernel(function shifts(y: gx.jit.Array, n: number) {
    const m = jit.threadIdx.x - 8;
    y[0] = m >>> 1;
    y[1] = 1 << (n - 2);
    y[2] = m >> (n + 32);
    y[3] = m % (n - 1);
    y[4] = (n << 62) >>> 62;
  });
  const closure = jit.rawkernel(function closure(y: gx.jit.Array) {
    y[0] = BIG;
    y[1] = NAN;
    y[2] = 1 / NZ;
    y[3] = (B - 2n ** 60n) as never;
    const é = -K;
    y[4] = π + é - -K;
  });
  const names = jit.rawkernel(function names(y: gx.jit.Array) {
    const a = 1;
    const a_1 = 10;
    {
      const a = 2;
      y[0] = a_1 + 0 * a;
    }
    y[1] = a;
  });
  const square = jit.rawkernel(function square(y: gx.jit.Array, n: number) {
    let v = n + 0.5;
    y[0] = (v += 1) ** 2;
    y[1] = v;
    const w = n * 1.5;
    y[2] = (w - 1) ** 2;
  });
  return [
    // NaN is falsy; && and || give bools.
    { what: '&& / || / ! / truthiness / NaN', c: { kernel: logic, args: [x, out(16)], threads: 4 }, want: [1, 1, 2, 20, 1, 1, 2, 20, 1, 0, 1, 11, 1, 0, 1, 11] },
    { what: '** of integers, negative exponents', c: { kernel: powers, args: [out(6), 1], threads: 1 }, want: [0, 0, -1, 1, 27, 1 / 3] },
    { what: 'shifts and % 0', c: { kernel: shifts, args: [out(5), 1], threads: 1 }, want: [0x7ffffffc, -(2 ** 63), -1, 0, 1] },
    { what: 'closure constants', c: { kernel: closure, args: [out(5)], threads: 1 }, want: [Infinity, NaN, -Infinity, 1, 3.5] },
    { what: 'shadowed and renamed names', c: { kernel: names, args: [out(2)], threads: 1 }, want: [10, 1] },
    // x ** 2 is x * x, its operand evaluated once: an assignment in it happens once.
    { what: 'a square evaluates its operand once', c: { kernel: square, args: [out(3), 1], threads: 1 }, want: [6.25, 2.5, 0.25] },
  ];
}

test('the language\'s rules on the simulator: truthiness, && / ||, integer **, shifts, % 0, closure constants, names', (t) => {
  for (const { what, c, want } of rules()) {
    const got = values(simulate(c).at(-1) as ArrayBufferView) as number[];
    t.true(got.every((v, i) => sameElement(v, want[i])), `${what}: got ${got}, want ${want}`);
  }
});

gxxTest(`the rules hold in the generated C too, bit for bit${GXX.ok ? '' : ` (${GXX.why})`}`, (t) => {
  const cases = rules();
  const host = runOnHost(cases.map((r) => r.c));
  cases.forEach(({ what, want }, k) => {
    const got = values(host[k].at(-1) as ArrayBufferView) as number[];
    t.true(got.every((v, i) => sameElement(v, want[i])), `${what}: C gives ${got}, want ${want}`);
  });
});

test('vectorize on the CPU computes in the signature\'s dtypes: float32 at every step, int32 wrapping', (t) => {
  const r = rng(5);
  const xs = Float32Array.from({ length: 64 }, () => (r() - 0.5) * 1e4);
  const f = gx.vectorize('float32(float32)', (x) => x * 1.1 - 3.3);
  t.deepEqual(Array.from(f(gx.tensor(xs)).toArraySync() as Float32Array), Array.from(xs, (x) => F(F(x * F(1.1)) - F(3.3))));
  const ns = Int32Array.from({ length: 64 }, () => Math.floor((r() - 0.5) * 2 ** 32));
  const g = gx.vectorize('int32(int32)', (n) => n * n + 7);
  t.deepEqual(Array.from(g(gx.tensor(ns)).toArraySync() as Int32Array), Array.from(ns, (n) => (Math.imul(n, n) + 7) | 0));
});

test('every helper a kernel uses is emitted; user names never meet generated ones; the same kernel gives the same source', (t) => {
  const tiled = (): gx.jit.JitKernel => jit.rawkernel((x: gx.jit.Array) => {
    const s = jit.sharedArray(4, 'float32');
    s[jit.threadIdx.x] = x[jit.threadIdx.x];
    jit.syncthreads();
    x[jit.threadIdx.x] = s[3 - jit.threadIdx.x];
  });
  const first = tiled().source(gx.zeros([4]));
  tiled().source(gx.zeros([4]));
  t.is(tiled().source(gx.zeros([4])), first, 'no process-wide counter in the source (it keys the compile cache)');
  const k = jit.rawkernel((x: gx.jit.Array, y: gx.jit.Array, n: number) => {
    const i = jit.threadIdx.x;
    y[i] = x[Math.min(i + 1, n - 1)] + Math.max(i, 0);
  });
  const src = k.source(gx.zeros([4]), gx.zeros([4]), 4);
  t.regex(src, /T gx_jit_imin\(T a, T b\)/, 'gx_jit_imin is defined');
  t.regex(src, /T gx_jit_imax\(T a, T b\)/, 'gx_jit_imax is defined');
  const names = jit.rawkernel((y: gx.jit.Array) => {
    const a = 1;
    const a_1 = 10;
    { const a = 2; y[0] = a_1 + 0 * a; }
    y[1] = a;
  });
  const s = names.source(gx.zeros([2]));
  t.regex(s, /v_a = 1LL/);
  t.regex(s, /v_a__1 = 10LL/, 'the user\'s a_1');
  t.regex(s, /v_a_1 = 2LL/, 'the inner a, renamed apart from a_1');
});

test('int64 past 2^53 is exact; the same tensor passed twice is one array; float16 stores round', (t) => {
  const inc = jit.rawkernel((x: gx.jit.Array, y: gx.jit.Array) => { y[0] = x[0] + 1; y[1] = x[0] * 3; });
  const big = gx.tensor(BigInt64Array.from([2n ** 60n + 1n]));
  const y = gx.zeros([2], { dtype: 'int64' });
  inc(1, 1, [big, y]);
  t.deepEqual(Array.from(y.toArraySync() as BigInt64Array), [2n ** 60n + 2n, BigInt.asIntN(64, (2n ** 60n + 1n) * 3n)]);
  const alias = jit.rawkernel((a: gx.jit.Array, b: gx.jit.Array) => { b[0] = 5; a[1] = b[0] + 1; });
  const z = gx.zeros([2], { dtype: 'int32' });
  alias(1, 1, [z, z]);
  t.deepEqual(Array.from(z.toArraySync() as Int32Array), [5, 6], 'a write through b is read through a');
  const half = jit.rawkernel((h: gx.jit.Array, out: gx.jit.Array) => { h[0] = 1 + 1e-4; out[0] = h[0]; });
  const h = gx.zeros([1], { dtype: 'float16' });
  const o = gx.zeros([1]);
  half(1, 1, [h, o]);
  t.is((o.toArraySync() as Float32Array)[0], 1, '1.0001 is 1 in float16, and the kernel reads back the stored value');
});

test('the simulator refuses what the translator refuses, before running anything', (t) => {
  const obj = { n: 3 };
  const helper = (v: number): number => v + 1;
  const cases: [string, (...args: never[]) => void, RegExp][] = [
    ['an object', (x: gx.jit.Array) => { x[0] = (obj as unknown as number); }, /obj is an object, not a number/],
    ['an object literal', (x: gx.jit.Array) => { x[0] = ({ a: 1 } as unknown as number); }, /object expression is not supported/],
    ['Math.random', (x: gx.jit.Array) => { x[0] = Math.random(); }, /Math\.random has no meaning in a kernel/],
    ['a plain JS helper', (x: gx.jit.Array) => { x[0] = helper(1); }, /helper is not Math\.\*, a gx\.jit intrinsic or a gx\.jit\.device function/],
    ['a float index (Numba-style blockDim.x / 2)', (x: gx.jit.Array) => { const s = jit.blockDim.x / 2; x[s] = 1; }, /an index must be an integer/],
    ['a call of a JS function', (x: gx.jit.Array) => { x[0] = Number(1); }, /Number is not Math\.\*/],
    ['try', (x: gx.jit.Array) => { try { x[0] = 1; } catch { x[0] = 2; } }, /try statement is not supported in a kernel/],
    ['var', (x: gx.jit.Array) => { var i = 0; x[i] = 1; }, /use const or let, not var/],
    ['assigning a parameter', (x: gx.jit.Array, n: number) => { n = 2; x[0] = n; }, /n is a parameter; copy it into a local/],
    ['a shared array of unknown size', (x: gx.jit.Array, n: number) => { const s = jit.sharedArray(n, 'float32'); s[0] = x[0]; }, /must be a number known when the kernel is compiled/],
  ];
  const recursive = jit.device((v: number): number => (v > 0 ? (recursive as (v: number) => number)(v - 1) : 0));
  cases.push(['recursion', (x: gx.jit.Array) => { x[0] = recursive(3); }, /calls itself; recursion is not supported/]);
  for (const [what, fn, re] of cases) {
    const k = jit.rawkernel(fn as (...args: unknown[]) => void);
    const x = gx.full([4], -1);
    const args = [x, 1].slice(0, fn.length) as gx.jit.KernelArg[];
    const onGpu = t.throws(() => k.source(...args), { name: 'JitError' }, `${what}: translator`);
    const onCpu = t.throws(() => k(1, 4, args), { name: 'JitError' }, `${what}: simulator`);
    t.regex(onCpu?.message ?? '', re, what);
    t.is(onCpu?.message, onGpu?.message, `${what}: the same error`);
    t.deepEqual(Array.from(x.toArraySync() as Float32Array), [-1, -1, -1, -1], `${what}: nothing ran`);
  }
  const v = gx.vectorize('float32(float32)', (a) => a + helper(a));
  t.throws(() => v(gx.tensor([1])), { name: 'JitError', message: /helper is not Math/ }, 'vectorize on the CPU refuses too');
});

test('deep nesting is a clear error, not a stack overflow', (t) => {
  const nest = (n: number): string => `${'(x + '.repeat(n)}x${')'.repeat(n)}`;
  // eslint-disable-next-line no-new-func
  const deep = new Function('x', `return ${nest(300)};`) as (x: number) => number;
  t.throws(() => gx.vectorize('float32(float32)', deep).source(), { name: 'JitError', message: /nests more than 256 levels deep/ });
  // eslint-disable-next-line no-new-func
  const deeper = new Function('x', `return ${nest(1000)};`) as (x: number) => number;
  t.throws(() => gx.vectorize('float32(float32)', deeper), { message: /nests too deeply to be parsed/ });
});

test('the simulator bounds its work: an endless loop and a huge grid are errors naming the kernel', (t) => {
  const spin = jit.rawkernel(function spin(x: gx.jit.Array) {
    for (;;) x[0] = 1;
  });
  t.throws(() => spin(1, 1, [gx.zeros([1])]), { message: /gx\.jit\.rawkernel\(spin\): thread \(0, 0, 0\) of block \(0, 0, 0\): the simulator stopped after 134217728 loop iterations/ });
  const wide = jit.rawkernel(function wide(x: gx.jit.Array) { x[0] = 1; });
  t.throws(() => wide([2 ** 31 - 1, 65535, 65535], [1024], [gx.zeros([1])]), { message: /gx\.jit\.rawkernel\(wide\): the CPU simulator runs at most 16777216 threads/ });
});

test('64-bit indexing: grid(), blockIdx products and a grid-stride loop over a bound past 2^31 are 64-bit in the source', (t) => {
  const k = jit.rawkernel(function fill(x: gx.jit.Array, size: number) {
    for (let i = jit.grid(1); i < size; i += jit.gridsize(1)) x[i] = 1;
  });
  const src = k.source(gx.zeros([4], { dtype: 'uint8' }), 3e9);
  t.regex(src, /for \(long long v_i = /, 'the counter is long long');
  t.regex(src, /\(v_i < v_size\)/, 'compared with the bound as it is');
  t.regex(src, /long long v_size/, 'the bound is long long');
  t.notRegex(src, /\(int\)\(v_size\)|\(\(int\)\(\(\(long long\)blockIdx/, 'nothing cut to int');
  const k2 = jit.rawkernel(function fill2(x: gx.jit.Array) {
    const tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
    for (let i = jit.threadIdx.x; i < x.length; i += jit.blockDim.x) x[i] = tid;
  });
  const s2 = k2.source(gx.zeros([4]));
  t.regex(s2, /const long long v_tid = /, 'blockIdx.x * blockDim.x + threadIdx.x is int64');
  t.regex(s2, /for \(long long v_i = /, 'a counter compared with x.length becomes int64');
});

cudaTest('a kernel over 2^31 + 5 elements writes the last ones', (t) => {
  const n = 2 ** 31 + 5;
  const x = gx.zeros([n], { dtype: 'uint8', device: 'cuda' });
  const k = jit.rawkernel(function mark(x: gx.jit.Array, size: number) {
    for (let i = jit.grid(1); i < size; i += jit.gridsize(1)) x[i] = (i % 7) + 1;
  });
  k(1024, 256, [x, n]);
  const tail = gx.narrow(x, 0, n - 8, 8).toArraySync() as Uint8Array;
  t.deepEqual(Array.from(tail), Array.from({ length: 8 }, (_, j) => ((n - 8 + j) % 7) + 1));
  x.dispose();
});

test('{ debug: true }: a shared-memory race is reported with both threads and lines; with the barrier it passes', (t) => {
  const make = (sync: boolean): gx.jit.JitKernel => jit.rawkernel(function shift(x: gx.jit.Array) {
    const s = jit.sharedArray(8, 'float32');
    const i = jit.threadIdx.x;
    s[i] = x[i];
    if (sync) jit.syncthreads();
    x[i] = s[(i + 1) % 8];
  }, { debug: true });
  const e = t.throws(() => make(false)(1, 8, [gx.arange(8, { dtype: 'float32' })]));
  // Thread 0 runs first and reads s[1] before thread 1 writes it: the write is the second access of the pair.
  t.regex(e?.message ?? '', /a race on shared array s: thread \(1, 0, 0\) writes s element 1 at line \d+, which thread \(0, 0, 0\) read at line \d+ with no syncthreads\(\) between/);
  const x = gx.arange(8, { dtype: 'float32' });
  make(true)(1, 8, [x]);
  t.deepEqual(Array.from(x.toArraySync() as Float32Array), [1, 2, 3, 4, 5, 6, 7, 0]);
});

const compilerTest = backendInfo().backend !== null ? test : REQUIRE_CUDA ? test : test.skip;
compilerTest('{ debug: true } with a device function indexing its own local array compiles (no GPU needed)', (t) => {
  const sumSquares = jit.device((v: number) => {
    const a = jit.localArray(4, 'float32');
    for (let k = 0; k < 4; k++) a[k] = v * k;
    return a[0] + a[1] + a[2] + a[3];
  });
  const k = jit.rawkernel((x: gx.jit.Array) => { x[jit.threadIdx.x] = sumSquares(x[jit.threadIdx.x]); }, { debug: true });
  const src = k.source(gx.zeros([4]));
  t.true(compile({ source: src, name: 'debug-device.cu', arch: 'sm_90' }, { disk: false }).image.byteLength > 0);
  const x = gx.tensor([1, 2, 3, 4]);
  k(1, 4, [x]);
  t.deepEqual(Array.from(x.toArraySync() as Float32Array), [6, 12, 18, 24]);
});

const remByZero = (): gx.jit.JitKernel => jit.rawkernel(function remz(x: gx.jit.Array, n: number) {
  const i = jit.threadIdx.x;
  x[i] = x[i] % (n - i);
}, { debug: true });

test('{ debug: true }: an integer remainder by zero is an error naming the line and the thread (else it is 0)', (t) => {
  const x = gx.tensor(Int32Array.from([7, 8, 9, 10]));
  t.throws(() => remByZero()(1, 4, [x, 2]), { message: /gx\.jit\.rawkernel\(remz\): thread \(2, 0, 0\) of block \(0, 0, 0\): integer remainder by zero, line 3/ });
  const quiet = jit.rawkernel(function remq(x: gx.jit.Array, n: number) {
    const i = jit.threadIdx.x;
    x[i] = x[i] % (n - i);
  });
  const y = gx.tensor(Int32Array.from([7, 8, 9, 10]));
  quiet(1, 4, [y, 2]);
  t.deepEqual(Array.from(y.toArraySync() as Int32Array), [1, 0, 0, 0], '7 % 2, 8 % 1, 9 % 0 = 0, 10 % -1 = 0');
  if (compilerTest !== test.skip) {
    const src = remByZero().source(x, 2);
    t.regex(src, /gx_jit_rem_checked\(gx_err, \d+, /);
    t.true(compile({ source: src, name: 'remz.cu', arch: 'sm_90' }, { disk: false }).image.byteLength > 0);
  }
});

cudaTest('{ debug: true } on CUDA: an integer remainder by zero throws naming the line and the thread', (t) => {
  const x = gx.tensor(Int32Array.from([7, 8, 9, 10])).cuda();
  t.throws(() => remByZero()(1, 4, [x, 2]), { message: /gx\.jit\.rawkernel\(remz\): integer remainder by zero \(9 % 0\), line 3, thread \(2, 0, 0\) of block \(0, 0, 0\)/ });
});

cudaTest('the directed kernels and the rules on CUDA give the simulator\'s bits', (t) => {
  for (const { what, c } of [...directed(), ...rules()]) {
    const sim = simulate(c);
    const args = c.args.map((a) => (a instanceof gx.Tensor ? a.cuda() : a));
    c.kernel(1, c.threads, args);
    const gpu = args.filter((a): a is gx.Tensor => a instanceof gx.Tensor).map((x) => values(x.toArraySync() as ArrayBufferView));
    sim.forEach((v, j) => {
      const a = values(v);
      t.true(a.every((x, i) => sameElement(x, gpu[j][i])), `${what}, tensor ${j}: simulator ${a} vs CUDA ${gpu[j]}`);
    });
  }
});
