// gx.vectorize: scalar JS functions as elementwise ops (Numba's @vectorize),
// against plain-JS references on random inputs on every device, outputs
// poisoned first; the CUDA they translate to, compiled for sm_90 without a
// GPU; closure constants inlined (a changed one changes the source); every
// unsupported construct an error quoting the line with a caret.
import test from 'ava';

import * as gx from '../lib';
import { backendInfo, compile } from '../lib/rtc/compiler';
import { cudaTest, deviceTest, poisonOf, REQUIRE_CUDA, randomValues } from './helpers';

const SQRT_2PI = Math.sqrt(2 * Math.PI);
// The notebook's example: the constant is read from the closure and inlined.
const gaussianPdf = gx.vectorize(['float32(float32, float32, float32)', 'float64(float64, float64, float64)'],
  (x, mean, sigma) => Math.exp(-0.5 * ((x - mean) / sigma) ** 2) / (sigma * SQRT_2PI));
const gaussianRef = (x: number, m: number, s: number): number => Math.exp(-0.5 * ((x - m) / s) ** 2) / (s * SQRT_2PI);

function close(t: import('ava').ExecutionContext, got: ArrayLike<number>, want: ArrayLike<number>, rtol: number, what: string): void {
  t.is(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= rtol * Math.abs(want[i]) + 1e-30)) {
      t.fail(`${what}: element ${i} is ${got[i]}, expected ${want[i]}`);
      return;
    }
  }
  t.pass();
}

deviceTest('gaussianPdf (the notebook\'s example) matches its JS reference, float32 and float64, a JS number broadcast', (t, device) => {
  for (const dtype of ['float32', 'float64'] as const) {
    const n = 1000;
    const xs = Float64Array.from(randomValues('float64', n, 7) as Float64Array, (v) => v * 3);
    using x = gx.tensor(xs, { dtype, device });
    using mean = gx.tensor([0.5], { dtype, device });
    using y = gaussianPdf(x, mean, 1.5);
    t.is(y.dtype, dtype);
    t.deepEqual(y.shape, [n]);
    const xv = x.toArraySync();
    close(t, y.toArraySync() as Float32Array, Float64Array.from(xv, (v) => gaussianRef(Number(v), 0.5, 1.5)), dtype === 'float32' ? 2e-6 : 1e-14, dtype);
  }
});

deviceTest('broadcasting, { out } (poisoned first), integer and bool signatures, locals, if/else and ternaries', (t, device) => {
  const clipAbs = gx.vectorize(['int32(int32, int32)'], function clipAbs(a, b) {
    let m = a < 0 ? -a : a;
    if (m > b) {
      m = b;
    } else if (m === 0) {
      return -1;
    }
    return m + 0;
  });
  using a = gx.tensor(Int32Array.from([-5, 3, 0, 12, -1, 7]), { device, shape: [2, 3] });
  using b = gx.tensor(Int32Array.from([4, 6, 9]), { device });
  using out = gx.full([2, 3], poisonOf('int32') as number, { dtype: 'int32', device });
  const r = clipAbs(a, b, { out });
  t.is(r, out);
  t.deepEqual(Array.from(out.toArraySync() as Int32Array), [4, 3, -1, 4, 1, 7]);
  const positive = gx.vectorize('bool(float32)', (v) => v > 0 && !(v > 100));
  using p = positive(gx.tensor([-1, 2, 200, 0.5], { device }));
  t.is(p.dtype, 'bool');
  t.deepEqual(Array.from(p.toArraySync() as Uint8Array), [0, 1, 0, 1]);
  const halve = gx.vectorize('float32(int64)', (i) => i / 2);  // true division: an integer gives a float
  using h = halve(gx.tensor(BigInt64Array.from([3n, -7n]), { device }));
  t.deepEqual(Array.from(h.toArraySync() as Float32Array), [1.5, -3.5]);
});

test('the signature is picked by the tensors\' dtypes; no match names the signatures', (t) => {
  using f32 = gaussianPdf(gx.tensor([0], { dtype: 'float32' }), 0, 1);
  using f64 = gaussianPdf(gx.tensor([0], { dtype: 'float64' }), 0, 1);
  t.is(f32.dtype, 'float32');
  t.is(f64.dtype, 'float64');
  const e = t.throws(() => gaussianPdf(gx.tensor([1], { dtype: 'int32' }), 0, 1));
  t.regex(e?.message ?? '', /no signature takes \(int32, number, number\); the signatures are 'float32\(float32, float32, float32\)', 'float64/);
  t.throws(() => gaussianPdf(gx.tensor([1]), 0), { message: /takes 3 arguments, got 2/ });
  t.throws(() => gx.vectorize(['float32(float32)'], (a: number, b: number) => a + b), { message: /has 1 input but the function takes 2/ });
  t.throws(() => gx.vectorize(['float32(float16)'], (a: number) => a), { message: /'float16' is not one of bool, int32, int64, float32, float64/ });
});

test('the CUDA source inlines closure constants and types literals weakly; a changed constant changes the source', (t) => {
  const src = gaussianPdf.source();
  t.regex(src, /__device__ __forceinline__ float gx_vec_\w+\(float v_x, float v_mean, float v_sigma\)/);
  t.true(src.includes(String(SQRT_2PI)), 'SQRT_2PI inlined');
  t.regex(src, /expf\(/, 'float32 math uses the float functions');
  t.regex(gaussianPdf.source(1), /\bexp\(/, 'float64 math uses the double ones');
  const make = (k: number): gx.VectorizedFunction => gx.vectorize('float32(float32)', (v) => v * k);
  t.is(make(2).source(), make(2).source());
  t.not(make(2).source(), make(3).source());
});

const INFO = backendInfo();
const compilerTest = INFO.backend !== null ? test : REQUIRE_CUDA ? test : test.skip;
compilerTest('the generated CUDA compiles for sm_90 (no GPU needed)', (t) => {
  const fns = [gaussianPdf.source(0), gaussianPdf.source(1),
    gx.vectorize('int64(int64, int32)', (a, b) => (a % b) ** 2 + Math.round(a / 3)).source()];
  for (const [i, fn] of fns.entries()) {
    const name = /__device__ __forceinline__ \w+ (\w+)\(/.exec(fn.slice(fn.lastIndexOf('__device__')))?.[1] ?? '';
    const source = `${fn}\nextern "C" __global__ void probe_${i}(double* o) { o[0] = (double)${name}(${fn.includes('(float v_x') ? '1.f, 0.f, 1.f' : fn.includes('double v_x') ? '1., 0., 1.' : '7, 2'}); }\n`;
    const r = compile({ source, name: `vec_${i}.cu`, arch: 'sm_90' }, { disk: false });
    t.true(r.image.byteLength > 0, `signature ${i} compiled`);
  }
});

test('unsupported constructs are errors quoting the line with a caret, before any CUDA', (t) => {
  const obj = { k: 2 };
  const STR = 'two';
  const cases: [string, (...a: number[]) => number, RegExp][] = [
    ['a string', (v) => (('a' as unknown) as number) + v, /only number and boolean literals/],
    ['an object', (v) => obj.k * v, /obj\.k is a property of an object; copy it into a const/],
    ['a call', (v) => Number(v), /Number is not Math\.\*, a gx\.jit intrinsic or a gx\.jit\.device function/],
    ['a closure over an object', (v) => (obj as unknown as number) * v, /obj is an object, not a number/],
    ['an unknown name', (v) => (globalThis as unknown as { nope: number }).nope * v, /nope is undefined/],
    // eslint-like `var` and a loop
    ['var', function (v) { var w = v; return w; }, /use const or let, not var/],
    ['try', function (v) { try { return v; } catch { return 0; } }, /try statement is not supported/],
    ['a string closed over', (v) => (STR as unknown as number) * v, /STR is a string/],
  ];
  for (const [what, fn, re] of cases) {
    const v = gx.vectorize('float32(float32)', fn);
    const e = t.throws(() => v.source(), { name: 'JitError' }, what);
    t.regex(e?.message ?? '', re, what);
    t.regex(e?.message ?? '', /line \d+: .*\n\s+\^/, `${what}: quotes the line with a caret`);
  }
});

test('{ options } must be an array of strings, naming gx.vectorize', (t) => {
  const bad: unknown = '--fmad=true';
  t.throws(() => gx.vectorize(['float32(float32)'], (v) => v, { options: bad as string[] }),
    { instanceOf: TypeError, message: /gx\.vectorize: options must be an array/ });
});

// LANGUAGE.md (No contraction): by default x * y + z rounds twice on CUDA, bit-equal to the simulator;
// with --fmad=true NVRTC fuses it into one fma (rounding once), which differs in the last bit for some inputs.
cudaTest('x * y + z: bit-equal to the simulator by default; --fmad=true fuses it (some last bits differ, by no more than the rounding of x * y it skips)', (t) => {
  const f = (x: number, y: number, z: number): number => x * y + z;
  const exact = gx.vectorize(['float32(float32, float32, float32)'], f);
  const fused = gx.vectorize(['float32(float32, float32, float32)'], f, { options: ['--fmad=true'] });
  const n = 100_000;
  const host = [11, 12, 13].map((seed) => randomValues('float32', n, seed) as Float32Array);
  const cols = host.map((v) => gx.tensor(v));
  const want = exact(cols[0], cols[1], cols[2]).toArraySync() as Float32Array;   // the simulator
  const on = cols.map((c) => c.to('cuda'));
  const got = exact(on[0], on[1], on[2]).toArraySync() as Float32Array;
  const fma = fused(on[0], on[1], on[2]).toArraySync() as Float32Array;
  let same = 0;
  let differ = 0;
  for (let i = 0; i < n; i++) {
    if (Object.is(got[i], want[i])) same++;
    // An fma skips the rounding of x * y (at most half its ulp) and rounds the sum once (half the result's):
    // it may differ from the two-rounding result by up to one ulp of each, more than one of the result's
    // alone when x * y and z nearly cancel.
    const ulpOf = (v: number): number => Math.abs(Math.fround(Math.abs(v) * (1 + 2 ** -23)) - Math.abs(v)) || 2 ** -149;
    const bound = ulpOf(Math.fround(host[0][i] * host[1][i])) + ulpOf(want[i]);
    if (fma[i] !== want[i]) differ++;
    if (!(Math.abs(fma[i] - want[i]) <= bound)) t.fail(`element ${i}: fma ${fma[i]} vs ${want[i]} (bound ${bound})`);
  }
  t.is(same, n);
  t.true(differ > 0, 'the fused kernel contracted x * y + z');
  for (const c of [...cols, ...on]) c.dispose();
});

// A number argument out of an integer type's range: CUDA converts it as cvt.rzi does (toward zero, saturating,
// NaN to 0); the CPU's typed-array store wrapped it (3e9 became -1294967296) and gave 0 for Infinity. And a
// jit.rawkernel integer argument beyond int64, which CUDA's launch refuses, wrapped on the CPU.
deviceTest('vectorize saturates out-of-range number arguments as CUDA does; rawkernel refuses integers beyond int64', (t, device) => {
  gx.tidy(() => {
    const pick = gx.vectorize('int32(int32, int32)', function pick(a: number, b: number) { return b; });
    const z = gx.zeros([1], { dtype: 'int32', device });
    const cases: [number, number][] = [[3e9, 2147483647], [-3e9, -2147483648], [Infinity, 2147483647], [-Infinity, -2147483648], [NaN, 0], [7.9, 7], [-7.9, -7]];
    for (const [v, want] of cases) t.is((pick(z, v) as gx.Tensor).toArraySync()[0], want, `int32 ${v}`);
    const pick64 = gx.vectorize('int64(int64, int64)', function pick64(a: number, b: number) { return b; });
    const z64 = gx.zeros([1], { dtype: 'int64', device });
    for (const [v, want] of [[-1e19, -(2n ** 63n)], [1e19, 2n ** 63n - 1n], [5.5, 5n], [NaN, 0n], [-Infinity, -(2n ** 63n)]] as const) {
      t.is((pick64(z64, v) as gx.Tensor).toArraySync()[0], want, `int64 ${v}`);
    }
    if (device !== 'cpu') return;  // the simulator's argument check (CUDA's launch has its own, tested with RawKernel)
    const put = gx.jit.rawkernel(function put(y: gx.jit.Array, v: number) { y[0] = v; });
    const y = gx.zeros([1], { dtype: 'int64' });
    t.throws(() => put([1], [1], [y, 2n ** 64n + 5n]), { instanceOf: RangeError, message: /^gx\.jit\.rawkernel\(put\): argument 'v' is int64 but 18446744073709551621 is out of its range/ });
    t.throws(() => put([1], [1], [y, 2 ** 63]), { instanceOf: RangeError });
    put([1], [1], [y, 2n ** 63n - 1n]);
    t.is(y.toArraySync()[0], 2n ** 63n - 1n);
  });
});

// A function with a path that falls off its end: NaN on the CPU, 0 from the CUDA source, an unset register from the
// PTX. Every implementation refuses it now, when it is typed.
test('a scalar or device function with a path that reaches its end without a return is refused, naming it', (t) => {
  gx.tidy(() => {
    const x = gx.tensor([2, -2]);
    // (TypeScript refuses these too; a JS caller gets no such help, so they are cast here.)
    const half = gx.vectorize('float32(float32)', function half(v: number) { if (v > 0) return 1; } as (v: number) => number);
    t.throws(() => half(x), { message: /^gx\.vectorize\(half\): half can reach its end without returning a value; every path must end in a return/ });
    const both = gx.vectorize('float32(float32)', function both(v: number) { if (v > 0) return 1; else return 2; });
    t.deepEqual(Array.from((both(x) as gx.Tensor).toArraySync() as Float32Array), [1, 2]);
    const after = gx.vectorize('float32(float32)', function after(v: number) { if (v > 0) { return 1; } return -1; });
    t.deepEqual(Array.from((after(x) as gx.Tensor).toArraySync() as Float32Array), [1, -1]);
    const loop = gx.vectorize('float32(float32)', function loop(v: number) { let y = v; while (true) { if (y > 10) return y; y = y * 2 + 1; } });
    t.deepEqual(Array.from((loop(gx.tensor([2, 3])) as gx.Tensor).toArraySync() as Float32Array), [11, 15], 'a loop only a return leaves');
    const dev = gx.jit.device(function sometimes(v: number) { if (v > 0) return v; } as (v: number) => number);
    const k = gx.jit.rawkernel((a: gx.jit.Array) => { a[0] = dev(a[0]); });
    t.throws(() => k([1], [1], [gx.tensor([1])]), { message: /sometimes can reach its end without returning a value/ });
  });
});
