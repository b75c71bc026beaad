// gx.reductionKernel (lib/rtc/reduction.ts). Without a GPU: argument errors,
// the coalescing of shapes, and that generated sources for several
// signatures parse (the launcher reads their parameter types) and compile
// with nvcc. On CUDA: results against a plain-JS reference on random inputs,
// through each code path (one kernel and partial + final, layouts A and B,
// one and several kept and reduced dims, strided and broadcast inputs).
import test, { type ExecutionContext } from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { backendInfo, compile } from '../lib/rtc/compiler';
import { reductionSource } from '../lib/rtc/reduction';
import type { ReductionGeometry } from '../lib/rtc/reduction-codegen';
import { coalesce } from '../lib/rtc/reduction-geometry';
import { parseKernelSignature } from '../lib/rtc/signature';
import { cudaTest, REQUIRE_CUDA, rng } from './helpers';

// ---------------------------------------------------------------- references

type Inputs = ({ values: ArrayLike<number>; shape: readonly number[] } | number)[];

function numel(shape: readonly number[]): number {
  return shape.reduce((p, s) => p * s, 1);
}

/**
 * A reduction in plain JS: `inputs` (C-order values and shapes, or numbers)
 * broadcast, map, reduce from `identity` over `axis`, then post.
 */
function reference(inputs: Inputs, axis: number | readonly number[] | undefined, keepdims: boolean,
  map: (...v: number[]) => number, reduce: (a: number, b: number) => number, identity: number,
  post: (a: number) => number = (a) => a): { shape: number[]; values: number[] } {
  const shapes = inputs.flatMap((x) => (typeof x === 'number' ? [] : [x.shape]));
  const nd = Math.max(...shapes.map((s) => s.length));
  const full = new Array<number>(nd).fill(1);
  for (const s of shapes) s.forEach((v, k) => { if (v !== 1) full[nd - s.length + k] = v; });
  const axes = axis === undefined ? full.map((_, d) => d) : (typeof axis === 'number' ? [axis] : [...axis]).map((a) => (a < 0 ? a + nd : a));
  const kept = full.map((_, d) => d).filter((d) => !axes.includes(d));
  const shape = keepdims ? full.map((s, d) => (axes.includes(d) ? 1 : s)) : kept.map((d) => full[d]);
  const acc = new Array<number>(numel(kept.map((d) => full[d]))).fill(identity);
  const idx = new Array<number>(nd).fill(0);
  for (let i = 0; i < numel(full); i++) {
    let o = 0;
    for (const d of kept) o = o * full[d] + idx[d];
    const args = inputs.map((x) => {
      if (typeof x === 'number') return x;
      let off = 0;
      x.shape.forEach((s, k) => { off = off * s + (s === 1 ? 0 : idx[nd - x.shape.length + k]); });
      return x.values[off];
    });
    acc[o] = reduce(acc[o], map(...args));
    for (let d = nd - 1; d >= 0; d--) {
      if (++idx[d] < full[d]) break;
      idx[d] = 0;
    }
  }
  return { shape, values: acc.map(post) };
}

/** Values of a strided view (shape, strides, offset) of C-order `data`, in C order. */
function viewValues(data: ArrayLike<number>, shape: readonly number[], strides: readonly number[], offset: number): number[] {
  const out: number[] = [];
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < numel(shape); i++) {
    let off = offset;
    shape.forEach((_, d) => { off += idx[d] * strides[d]; });
    out.push(data[off]);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/** |got - want| <= tol * (1 + |want|) everywhere, and the same shape. */
function close(t: ExecutionContext, got: gx.Tensor, want: { shape: number[]; values: number[] }, tol: number, what: string): void {
  t.deepEqual(got.shape, want.shape, `${what}: shape`);
  const g = Array.from(got.toArraySync() as ArrayLike<number | bigint>, Number);
  for (let i = 0; i < want.values.length; i++) {
    if (!(Math.abs(g[i] - want.values[i]) <= tol * (1 + Math.abs(want.values[i])))) {
      t.fail(`${what}: element ${i} is ${g[i]}, expected ${want.values[i]}`);
      return;
    }
  }
  t.pass();
}

/** n random integers in [lo, hi] (exact in every float type used here, so sums are exact). */
function randomInts(n: number, lo: number, hi: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => lo + Math.floor(r() * (hi - lo + 1)));
}

const add = (a: number, b: number): number => a + b;
const id = (a: number): number => a;

// ---------------------------------------------------------------- CPU: errors

test('reductionKernel rejects bad definitions, naming the kernel', (t) => {
  const def = (ins: string, outs: string, opts: gx.ReductionOptions = {}): unknown => gx.reductionKernel(ins, outs, 'x', 'a + b', 'y = a', '0', { name: 'rk', ...opts });
  t.throws(() => def('raw T x', 'T y'), { instanceOf: TypeError, message: /gx\.reductionKernel 'rk': raw parameters are not supported in reduction kernels \('raw T x'\)/ });
  t.throws(() => def('T x', 'raw T y'), { instanceOf: TypeError, message: /'rk': raw parameters are not supported in reduction kernels \('raw T y'\)/ });
  t.throws(() => def('T x', 'T y, T z'), { instanceOf: TypeError, message: /'rk': takes exactly one output parameter, got 2/ });
  t.throws(() => def('T x, T x', 'T y'), { instanceOf: TypeError, message: /'rk': parameter 'x' is declared twice/ });
  t.throws(() => def('T x', 'T y', { name: 'not a name' }), { instanceOf: TypeError, message: /name must be a C identifier/ });
  t.throws(() => def('T x', 'T y', { reduceType: 'float 32' }), { instanceOf: TypeError, message: /'rk': reduceType must be a dtype or a type placeholder/ });
  t.throws(() => gx.reductionKernel('T x', 'T y', 'x', 'a + b', ' ', '0'), { instanceOf: TypeError, message: /'reduction_kernel': postMapExpr must be a C expression/ });
  t.throws(() => gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', ''), { message: /identity must be a C expression/ });
});

test('reductionKernel checks its arguments before needing a GPU', (t) => {
  const k = gx.reductionKernel('T x, T w, float32 s', 'T y', 'x * w * s', 'a + b', 'y = a', '0', { name: 'wsum' });
  using a = gx.ones([2, 3]);
  using b = gx.ones([4, 3]);
  using d = gx.ones([3], { dtype: 'float64' });
  using i = gx.ones([3], { dtype: 'int32' });
  t.throws(() => k(a, a), { instanceOf: TypeError, message: /gx\.reductionKernel 'wsum': takes 3 inputs \(and an optional \{ axis, keepdims \}\), got 2/ });
  t.throws(() => k(a, a, 'x' as unknown as number), { instanceOf: TypeError, message: /'wsum': input 's' must be a Tensor or a number, got string/ });
  t.throws(() => k(a, d, 1), { instanceOf: TypeError, message: /'wsum': T is float32 but 'w' is float64/ });
  t.throws(() => k(a, a, i), { instanceOf: TypeError, message: /'wsum': input 's' is declared float32 but the tensor is int32/ });
  t.throws(() => k(a, b, 1), { message: /'wsum': shapes \[2, 3\] and \[4, 3\] do not broadcast/ });
  t.throws(() => k(a, a, 1, { axis: 2 }), { instanceOf: RangeError, message: /'wsum': axis 2 is out of range for a 2-d input/ });
  t.throws(() => k(a, a, 1, { axis: -3 }), { instanceOf: RangeError, message: /axis -3 is out of range/ });
  t.throws(() => k(a, a, 1, { axis: [1, -1] }), { instanceOf: RangeError, message: /'wsum': axis 1, -1 repeats an axis/ });
  t.throws(() => k(a, a, 1, { axis: 0.5 }), { instanceOf: RangeError, message: /axis 0\.5 is out of range/ });
  t.throws(() => k(a, a, 1), { instanceOf: TypeError, message: /'wsum': needs at least one CUDA tensor input to run on/ });
  t.throws(() => k(1, 2, 3), { instanceOf: TypeError, message: /needs at least one CUDA tensor input/ });
  const scalarOnly = gx.reductionKernel('T x, U s', 'T y', 'x * s', 'a + b', 'y = a', '0', { name: 'sk' });
  t.throws(() => scalarOnly(a, 2), { instanceOf: TypeError, message: /'sk': cannot tell the type U of 's' from the input tensors/ });
  const outOnly = gx.reductionKernel('T x', 'U y', 'x', 'a + b', 'y = a', '0', { name: 'ok' });
  t.throws(() => outOnly(a), { instanceOf: TypeError, message: /'ok': cannot tell the type U of 'y'/ });
});

test('coalesce merges contiguous dims, orders reduced ones by stride, drops size-1 dims', (t) => {
  // A contiguous [4, 5, 6] reduced over its last two dims: one kept dim, one reduced dim of 30.
  t.like(coalesce([4, 5, 6], [false, true, true], [[30, 6, 1]]), { kShape: [4], rShape: [30], kSt: [[30]], rSt: [[1]], nRed: 30 });
  // Its transpose [6, 5, 4] (strides [1, 6, 30]) reduced fully: one contiguous dim again.
  t.like(coalesce([6, 5, 4], [true, true, true], [[1, 6, 30]]), { kShape: [], rShape: [120], rSt: [[1]], nRed: 120 });
  // Axes 0 and 2 of [4, 5, 6]: kept 5 (stride 6), reduced 4 x 6 do not merge (stride 30 != 1 * 6).
  t.like(coalesce([4, 5, 6], [true, false, true], [[30, 6, 1]]), { kShape: [5], rShape: [4, 6], kSt: [[6]], rSt: [[30, 1]], nRed: 24 });
  // A broadcast second operand (stride 0 on dim 0) keeps dims apart that the first alone would merge.
  t.like(coalesce([3, 4], [true, true], [[4, 1], [0, 1]]), { rShape: [3, 4], rSt: [[4, 1], [0, 1]] });
  // Size-1 dims vanish; no reduced dim left is one of size 1; an empty one has size 0.
  t.like(coalesce([1, 7, 1], [true, false, true], [[7, 1, 1]]), { kShape: [7], rShape: [1], rSt: [[0]], nRed: 1 });
  t.like(coalesce([3, 0], [false, true], [[0, 1]]), { kShape: [3], rShape: [0], nRed: 0 });
});

// ---------------------------------------------------------------- CPU: generated sources compile

const NVCC = backendInfo({ backend: 'nvcc' });
const tmpdirs: string[] = [];
test.after.always(() => {
  for (const d of tmpdirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Signatures whose generated modules must parse and compile. */
const SOURCES: [string, () => gx.ReductionKernel, (gx.DType | 'number')[], ReductionGeometry][] = [
  ['float32 full sum', () => gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'sum' }), ['float32'], { nKept: 0, nRed: 1, layout: 'A', idx32: true }],
  ['float64, 2 kept and 2 reduced dims, 64-bit indices', () => gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'sum' }), ['float64'], { nKept: 2, nRed: 2, layout: 'A', idx32: false }],
  ['float16 in, float accumulation, layout B', () => gx.reductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', { name: 'l2' }), ['float16'], { nKept: 1, nRed: 1, layout: 'B', idx32: true }],
  ['float16 accumulated in half', () => gx.reductionKernel('T x', 'T y', 'x', 'a > b ? a : b', 'y = a', '-60000', { name: 'hmax', reduceType: 'T' }), ['float16'], { nKept: 1, nRed: 1, layout: 'A', idx32: true }],
  ['bfloat16 sum', () => gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'bsum' }), ['bfloat16'], { nKept: 0, nRed: 3, layout: 'A', idx32: true }],
  ['bool any, layout B', () => gx.reductionKernel('bool x', 'bool y', 'x', 'a || b', 'y = a', 'false', { name: 'any' }), ['bool'], { nKept: 1, nRed: 2, layout: 'B', idx32: true }],
  ['int8 and uint8 through int shuffles', () => gx.reductionKernel('int8 x, uint8 m', 'int16 y', 'm ? x : 0', 'a + b', 'y = a', '0', { name: 'msum' }), ['int8', 'uint8'], { nKept: 3, nRed: 1, layout: 'A', idx32: true }],
  ['int64 with a scalar, two inputs', () => gx.reductionKernel('T x, T y, float64 s', 'T z', 'x * y', 'a + b', 'z = a * s', '0', { name: 'dot' }), ['int64', 'int64', 'number'], { nKept: 1, nRed: 1, layout: 'A', idx32: false }],
];

for (const [what, make, inputs, geo] of SOURCES) {
  const title = `generated source parses and compiles with nvcc: ${what}`;
  if (NVCC.backend === null) {
    if (REQUIRE_CUDA) test(title, (t) => t.fail(`GPUEXT_REQUIRE_CUDA=1 but no nvcc: ${NVCC.nvccMissing ?? ''}`));
    else test.skip(`${title} (skipped: ${NVCC.nvccMissing ?? 'no nvcc'})`, () => undefined);
    continue;
  }
  test(title, (t) => {
    const k = make();
    const src = reductionSource(k, inputs, geo);
    for (const name of [k.kernelName, `${k.kernelName}_partial`, `${k.kernelName}_final`]) {
      const params = parseKernelSignature(src, name);
      t.truthy(params, `${name}: signature not found`);
      for (const p of params ?? []) t.not(p.kind, 'unknown', `${name}: parameter ${p.name} (${p.type})`);
    }
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-reduction-test-'));
    tmpdirs.push(cacheDir);
    const r = compile({ source: src, name: 'reduction.cu', arch: 'sm_90' }, { backend: 'nvcc', cacheDir });
    t.true(r.image.length > 0);
    t.notRegex(r.log, /warning/i, r.log);
  });
}

// ---------------------------------------------------------------- CUDA: against references

const sum = (): gx.ReductionKernel => gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', { name: 'rsum' });

cudaTest('reductionKernel: full sums of many sizes (one kernel and partial + final)', (t) => {
  const k = sum();
  for (const n of [1, 3, 255, 257, 2049, 5000, 100_003, (1 << 22) + 7]) {
    const v = randomInts(n, -100, 100, n);
    using x = gx.tensor(Float64Array.from(v), { device: 'cuda' });
    using y = k(x);
    close(t, y, reference([{ values: v, shape: [n] }], undefined, false, id, add, 0), 0, `float64 n=${n}`);
    using x32 = gx.tensor(Float32Array.from(v), { device: 'cuda' });
    using y32 = k(x32);
    // Integers summing below 2^24: exact in float32 too.
    close(t, y32, reference([{ values: v, shape: [n] }], undefined, false, id, add, 0), 0, `float32 n=${n}`);
  }
});

cudaTest('reductionKernel: each axis, several axes, keepdims of a 3-d tensor', (t) => {
  const k = sum();
  const shape = [7, 33, 70];
  const v = randomInts(numel(shape), -1000, 1000, 7);
  using x = gx.tensor(Float64Array.from(v), { device: 'cuda', shape });
  for (const axis of [0, 1, 2, -1, [0, 2], [1, 2], [0, 1], [2, -3], [], [0, 1, 2]]) {
    for (const keepdims of [false, true]) {
      using y = k(x, { axis, keepdims });
      close(t, y, reference([{ values: v, shape }], axis, keepdims, id, add, 0), 0, `axis ${JSON.stringify(axis)} keepdims ${keepdims}`);
    }
  }
});

cudaTest('reductionKernel: shapes that take each layout and path', (t) => {
  const k = sum();
  const cases: [number[], number | number[]][] = [
    [[4096, 512], 1], // many rows: one kernel, a block per row
    [[100_000, 20], 1], // short rows: several outputs per warp (layout A, R < 32)
    [[3000, 400], 1], // R = 64: outputs across warps
    [[64, 100_000], 0], // columns, many outputs: layout B, one kernel
    [[1000, 4096], 0], // columns, few outputs, long: layout B split
    [[5, 200_000], 1], // few long rows: layout A split
    [[3, 5, 4000], [0, 2]], // two reduced dims that do not merge
    [[4000, 3, 5], [0, 2]],
    [[4, 5, 6, 7], [0, 2]], // two kept and two reduced dims, none merging
    [[40, 5, 60, 7], [1, 3]],
    [[2, 3], 1],
  ];
  for (const [shape, axis] of cases) {
    const v = randomInts(numel(shape), -50, 50, numel(shape));
    using x = gx.tensor(Float32Array.from(v), { device: 'cuda', shape });
    using y = k(x, { axis });
    close(t, y, reference([{ values: v, shape }], axis, false, id, add, 0), 0, `shape [${shape.join(', ')}] axis ${JSON.stringify(axis)}`);
  }
});

cudaTest('reductionKernel: non-contiguous inputs (transposed, stepped with an offset)', (t) => {
  const k = sum();
  const r = 37, c = 300;
  const v = randomInts(r * c, -100, 100, 3);
  using base = gx.tensor(Float64Array.from(v), { device: 'cuda', shape: [r, c] });
  const views: [string, number[], number[], number][] = [['transposed', [c, r], [1, c], 0], ['stepped', [r - 1, c / 2 - 1], [c, 2], 3]];
  for (const [what, shape, strides, offset] of views) {
    using view = base.asStrided(shape, strides, offset);
    const vv = viewValues(v, shape, strides, offset);
    for (const axis of [undefined, 0, 1]) {
      using y = k(view, axis === undefined ? {} : { axis });
      close(t, y, reference([{ values: vv, shape }], axis, false, id, add, 0), 0, `${what} axis ${String(axis)}`);
    }
  }
});

cudaTest('reductionKernel: two broadcast inputs and a scalar (also in postMapExpr)', (t) => {
  const dot = gx.reductionKernel('T x, T y, float64 w', 'T z', 'x * y * w', 'a + b', 'z = a + w', '0', { name: 'wdot' });
  const xs = [5, 1, 40], ys = [7, 40];
  const xv = randomInts(numel(xs), -20, 20, 1), yv = randomInts(numel(ys), -20, 20, 2);
  using x = gx.tensor(Float64Array.from(xv), { device: 'cuda', shape: xs });
  using y = gx.tensor(Float64Array.from(yv), { device: 'cuda', shape: ys });
  for (const axis of [undefined, 2, 0, [0, 1]]) {
    using z = dot(x, y, 0.5, axis === undefined ? {} : { axis });
    close(t, z, reference([{ values: xv, shape: xs }, { values: yv, shape: ys }, 0.5], axis, false, (a, b, w) => a * b * w, add, 0, (a) => a + 0.5),
      1e-12, `axis ${JSON.stringify(axis)}`);
  }
});

cudaTest('reductionKernel: int32, float64, float16 and bfloat16 inputs', (t) => {
  const k = sum();
  const shape = [6, 3000];
  const v = randomInts(numel(shape), -50, 50, 11);
  for (const dtype of ['int32', 'float64', 'int64', 'int16', 'int8'] as const) {
    using x = gx.tensor(Float64Array.from(v), { device: 'cuda', shape, dtype });
    // Integer sums wrap like C's (int8 and int16 accumulate in their own type).
    const bits = dtype === 'int8' ? 8 : dtype === 'int16' ? 16 : 0;
    const wrap = (s: number): number => (bits === 0 ? s : ((((s + 2 ** (bits - 1)) % 2 ** bits) + 2 ** bits) % 2 ** bits) - 2 ** (bits - 1));
    for (const axis of [1, 0]) {
      using y = k(x, { axis });
      t.is(y.dtype, dtype);
      close(t, y, reference([{ values: v, shape }], axis, false, id, add, 0, wrap), 0, `${dtype} axis ${axis}`);
    }
  }
  // Halves: a float accumulator, so only the final rounding to half is off the exact sum.
  const small = randomInts(numel(shape), -8, 8, 12).map((x) => x / 4);
  for (const [dtype, eps] of [['float16', 2 ** -10], ['bfloat16', 2 ** -7]] as const) {
    using x = gx.tensor(Float64Array.from(small), { device: 'cuda', shape, dtype });
    for (const axis of [1, 0, undefined]) {
      using y = k(x, axis === undefined ? {} : { axis });
      t.is(y.dtype, dtype);
      close(t, y, reference([{ values: small, shape }], axis, false, id, add, 0), eps, `${dtype} axis ${String(axis)}`);
    }
  }
  const count = gx.reductionKernel('bool x', 'int64 y', 'x ? 1 : 0', 'a + b', 'y = a', '0', { name: 'count' });
  const bits = randomInts(70_000, 0, 1, 13);
  using b = gx.tensor(Uint8Array.from(bits), { device: 'cuda', dtype: 'bool' });
  using n = count(b);
  t.is(Number(n.item()), bits.reduce(add, 0));
});

cudaTest('reductionKernel: max and min with identities that are not 0', (t) => {
  const maxk = gx.reductionKernel('T x', 'T y', 'x', 'a > b ? a : b', 'y = a', '-1e30', { name: 'rmax' });
  const shape = [12, 999];
  const v = randomInts(numel(shape), -300, -1, 5); // all negative: an identity of 0 would win
  using x = gx.tensor(Float32Array.from(v), { device: 'cuda', shape });
  for (const axis of [undefined, 0, 1]) {
    using y = maxk(x, axis === undefined ? {} : { axis });
    close(t, y, reference([{ values: v, shape }], axis, false, id, Math.max, -1e30), 0, `max axis ${String(axis)}`);
  }
  const mink = gx.reductionKernel('int32 x', 'int32 y', 'x', 'min(a, b)', 'y = a', '2147483647', { name: 'rmin' });
  const w = randomInts(300_000, 5, 1_000_000, 6);
  using xi = gx.tensor(Int32Array.from(w), { device: 'cuda' });
  using m = mink(xi);
  t.is(m.item(), w.reduce((p, x) => Math.min(p, x), Infinity));
});

cudaTest('reductionKernel: an empty reduced extent gives postMap(identity); zero-size outputs', (t) => {
  const k = gx.reductionKernel('T x', 'T y', 'x', 'a + b', 'y = a + 5', '0', { name: 'rsum5' });
  using e = gx.empty([3, 0, 4], { device: 'cuda' });
  using byAxis = k(e, { axis: 1 });
  close(t, byAxis, { shape: [3, 4], values: new Array<number>(12).fill(5) }, 0, 'axis 1');
  using all = k(e);
  close(t, all, { shape: [], values: [5] }, 0, 'all axes');
  using none = k(e, { axis: 2, keepdims: true });
  t.deepEqual(none.shape, [3, 0, 1]);
});

cudaTest('reductionKernel: repeated calls reuse plans across sizes and stay correct', (t) => {
  const k = sum();
  for (let rep = 0; rep < 3; rep++) {
    for (const n of [10, 100_000, 10]) {
      const v = randomInts(n, -9, 9, n + rep);
      using x = gx.tensor(Float32Array.from(v), { device: 'cuda', shape: [2, n / 2] });
      using y = k(x, { axis: 1 });
      close(t, y, reference([{ values: v, shape: [2, n / 2] }], 1, false, id, add, 0), 0, `rep ${rep} n ${n}`);
    }
  }
});
