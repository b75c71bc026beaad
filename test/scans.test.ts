// cumprod, cummax and cummin (the native scans of ops/scan/) against running
// JS references on random inputs, on every device: every dtype, every axis,
// views, 0-d and empty inputs, the CUDA kernels' shapes (short lines, many
// strided lines, long lines split into chunks), ties, NaN and -0.0, int64
// wraparound; figures from torch 2.13 (CPU wheel) for the tie and NaN rules
// and the gradients (with zeros, and the second derivative); CUDA against the
// CPU (bit for bit but for float products: NOTE [ One scan, three operations ]).
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { cudaTest, deviceTest, poisonOf, rng } from './helpers';
import { ALL_DTYPES, cast, close, closeEach, isFloat, make, numel, randomIn, values, type V } from './ops-reference';

const F = gx.autograd.functional;

/** The C-order flat indices of every line along `axis`; [[0]] for 0-d. */
function lines(shape: readonly number[], axis: number): number[][] {
  if (shape.length === 0) return [[0]];
  const strides = shape.map((_, d) => numel(shape.slice(d + 1)));
  const kept = shape.map((_, d) => d).filter((d) => d !== axis);
  const out: number[][] = [];
  for (let l = 0; l < numel(kept.map((d) => shape[d])); l++) {
    let rest = l, base = 0;
    for (let k = kept.length - 1; k >= 0; k--) {
      base += (rest % shape[kept[k]]) * strides[kept[k]];
      rest = Math.floor(rest / shape[kept[k]]);
    }
    out.push(Array.from({ length: shape[axis] }, (_, i) => base + i * strides[axis]));
  }
  return out;
}

const isNaNV = (v: V): boolean => typeof v === 'number' && Number.isNaN(v);

/** torch's running rule (its CPU kernel, cummax_cummin_helper): the later element takes over when NaN, or >= / <= a non-NaN. */
function takesOver(x: V, best: V, largest: boolean): boolean {
  return isNaNV(x) || (!isNaNV(best) && (largest ? x >= best : x <= best));
}

/** cummax / cummin of x along axis by the rule above: values and indices in C order. */
function runningRef(xv: readonly V[], shape: readonly number[], axis: number, largest: boolean): { v: V[]; i: number[] } {
  const v: V[] = new Array<V>(xv.length), idx: number[] = new Array<number>(xv.length);
  for (const line of lines(shape, axis)) {
    let k = 0;
    line.forEach((p, j) => {
      if (j > 0 && takesOver(xv[p], xv[line[k]], largest)) k = j;
      v[p] = xv[line[k]];
      idx[p] = k;
    });
  }
  return { v, i: idx };
}

/** Values from a few levels (so that ties happen), -0.0 among them, NaN at `nanRate` for floats. */
function tiedValues(d: gx.DType, n: number, seed: number, nanRate = 0.08): V[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    if (d === 'bool') return r() < 0.5 ? 1 : 0;
    if (isFloat(d) && r() < nanRate) return NaN;
    const level = Math.floor(r() * 7) - 3;
    if (!isFloat(d)) return cast(d === 'uint8' ? level + 3 : level, d);
    return level === 0 && r() < 0.5 ? -0 : level / 2;
  });
}

function checkRunning(t: ExecutionContext, x: gx.Tensor, axis: number, what: string): void {
  const xv = values(x);
  const ax = x.ndim === 0 ? 0 : axis < 0 ? axis + x.ndim : axis;
  for (const largest of [true, false]) {
    const [v, i] = largest ? gx.cummax(x, axis) : x.cummin({ axis });
    const want = runningRef(xv, x.shape, ax, largest);
    t.is(v.dtype, x.dtype, `${what}: values dtype`);
    t.is(i.dtype, 'int64', `${what}: indices dtype`);
    t.deepEqual(v.shape, x.shape, `${what}: shape`);
    // Exact, -0.0 told from 0.0 (Object.is): the values are the elements the indices name.
    const got = values(v);
    const bad = got.findIndex((g, k) => !(typeof g === 'bigint' ? g === want.v[k] : Object.is(g, want.v[k])));
    t.is(bad, -1, `${what} ${largest ? 'cummax' : 'cummin'}: values at ${bad}: ${String(got[bad])} vs ${String(want.v[bad])}`);
    t.deepEqual(i.toNested() as unknown, x.ndim === 0 ? 0 : reshapeLike(want.i, x.shape), `${what} ${largest ? 'cummax' : 'cummin'}: indices`);
    v.dispose();
    i.dispose();
  }
}

/** A flat list nested as toNested() gives it. */
function reshapeLike(flat: readonly number[], shape: readonly number[]): unknown {
  if (shape.length <= 1) return [...flat];
  const step = numel(shape.slice(1));
  return Array.from({ length: shape[0] }, (_, k) => reshapeLike(flat.slice(k * step, (k + 1) * step), shape.slice(1)));
}

deviceTest('cummax and cummin: every dtype, every axis, views, 0-d and empty; ties and NaNs to the last index', (t, device) => {
  let seed = 100;
  for (const d of ALL_DTYPES) {
    gx.tidy(() => {
      const x = make(tiedValues(d, 60, seed++), d, [3, 4, 5], device);
      for (const axis of [0, 1, 2, -1]) checkRunning(t, x, axis, `${d} [3, 4, 5] axis ${axis} on ${device}`);
      checkRunning(t, x.asStrided([5, 3, 4], [1, 20, 5], 0), 0, `permuted ${d} on ${device}`);
      checkRunning(t, x.asStrided([3, 2, 5], [20, 10, 1], 0), 1, `stepped ${d} on ${device}`);
      checkRunning(t, make(tiedValues(d, 1, seed++), d, [], device), 0, `0-d ${d} on ${device}`);
      const e = gx.cummax(gx.zeros([0, 4], { dtype: d, device }), 1);
      t.deepEqual([e.values.shape, e.indices.shape, e.values.dtype], [[0, 4], [0, 4], d]);
    });
  }
});

deviceTest('cummax and cummin: long lines (chunks on CUDA), many strided lines, short lines', (t, device) => {
  let seed = 200;
  const cases: [gx.DType, number[], number][] = [
    ['float32', [2, 100003], 1], ['int32', [3, 50000], 1], ['float64', [50000, 3], 0], ['float16', [2000, 40], 0],
    ['uint8', [600, 300], 1], ['int64', [1, 70001], 0], ['bfloat16', [40, 33], 1], ['bool', [5, 9000], 1], ['float32', [40, 2000], 0],
  ];
  for (const [d, shape, axis] of cases) {
    gx.tidy(() => checkRunning(t, make(tiedValues(d, numel(shape), seed++, 2e-5), d, shape, device), axis, `${d} ${JSON.stringify(shape)} on ${device}`));
  }
});

deviceTest('cummax and cummin match torch 2.13: ties, -0.0, runs of NaN, integers, errors', (t, device) => {
  gx.tidy(() => {
    // torch.cummax / cummin(torch.tensor([0., -0., 2., nan, 2., nan, -1., 3.]), 0) on torch 2.13.0+cpu.
    const z = gx.tensor([0, -0, 2, NaN, 2, NaN, -1, 3], { device });
    t.deepEqual(gx.cummax(z, 0).indices.toNested(), [0, 1, 2, 3, 3, 5, 5, 5]);
    t.deepEqual(gx.cummin(z, 0).indices.toNested(), [0, 1, 1, 3, 3, 5, 5, 5]);
    t.true(Object.is((gx.cummax(z, 0).values.toNested() as number[])[1], -0), 'the tie at -0.0 takes the later element');
    // torch.cummax(torch.tensor([2, 1, 2, 2, 0]), 0).indices
    t.deepEqual(gx.cummax(gx.tensor([2, 1, 2, 2, 0], { dtype: 'int32', device }), 0).indices.toNested(), [0, 0, 2, 3, 3]);
    // torch.cummax(torch.tensor([True, False]), 0): values [True, True], indices [0, 0]
    const b = gx.cummax(gx.tensor([true, false], { device }), 0);
    t.deepEqual([b.values.toNested(), b.indices.toNested()], [[true, true], [0, 0]]);
    const ints = gx.tensor([3, 1, 4, 1, 5, 9, 2, 6], { dtype: 'int32', device });
    t.throws(() => gx.cummax(ints as gx.Tensor, undefined as never), { instanceOf: TypeError, message: /^gx\.cummax: the axis is required/ });
    t.throws(() => gx.cummin(ints, 1), { message: /^gx\.cummin: .*axis/ });
  });
});

// --- cumprod ---------------------------------------------------------------------

/** 2^-24 (float), 2^-53 (double): one rounding of the compute type. */
const unitOf = (d: gx.DType): number => (d === 'float64' ? 2 ** -53 : 2 ** -24);
/** One rounding of the stored dtype. */
const storeUnit = (d: gx.DType): number => ({ float64: 2 ** -53, float32: 2 ** -24, float16: 2 ** -11, bfloat16: 2 ** -8 } as Record<string, number>)[d] ?? 0;

/**
 * The running product of x along axis in float64 (floats) or wrapping int64 (the rest), cast to `res`; and the
 * bound on each error when the kernel computes in `compute`'s compute type.
 */
function cumprodRef(xv: readonly V[], shape: readonly number[], axis: number, compute: gx.DType, res = compute): { want: V[]; atol: number[] } {
  const want: V[] = new Array<V>(xv.length), atol: number[] = new Array<number>(xv.length).fill(0);
  for (const line of lines(shape, axis)) {
    let p = 1, q = 1n;
    line.forEach((k, j) => {
      if (isFloat(res)) {
        p *= Number(xv[k]);
        want[k] = cast(p, res);
        // A product of j + 1 exact factors rounded at most j times in the compute type, then once into res.
        atol[k] = Math.abs(p) * ((j + 1) * unitOf(compute) + storeUnit(res)) * 1.01;
      } else {
        q = BigInt.asIntN(64, q * BigInt(xv[k]));
        want[k] = cast(q, res);
      }
    });
  }
  return { want, atol };
}

function checkCumprod(t: ExecutionContext, x: gx.Tensor, axis: number, what: string, opts?: gx.CumprodOptions): void {
  const r = gx.cumprod(x, axis, opts);
  const compute = opts?.dtype ?? (isFloat(x.dtype) ? x.dtype : 'int64');
  const res = opts?.out?.dtype ?? compute;
  t.is(r.dtype as gx.DType, res, `${what}: dtype`);
  t.deepEqual(r.shape, x.shape, `${what}: shape`);
  const xv = values(x).map((v) => (opts?.dtype !== undefined ? cast(v, opts.dtype) : v));
  const { want, atol } = cumprodRef(xv, x.shape, x.ndim === 0 ? 0 : axis < 0 ? axis + x.ndim : axis, compute, res);
  closeEach(t, values(r), want, atol, what);
  if (r !== opts?.out) r.dispose();
}

/** Factors that keep long products in range: magnitudes near 1, either sign, some exactly 0 (`zeroRate`). */
function factors(d: gx.DType, n: number, seed: number, zeroRate = 0): V[] {
  if (!isFloat(d)) return randomIn(d, n, seed, { lo: d === 'uint8' ? 0 : -3, hi: 3 });
  const r = rng(seed);
  return Array.from({ length: n }, () => (r() < zeroRate ? 0 : cast((r() < 0.5 ? -1 : 1) * Math.exp((r() - 0.5) * 0.02), d)));
}

deviceTest('cumprod: every dtype (integers exact in wrapping int64), every axis, views, 0-d, empty', (t, device) => {
  let seed = 300;
  for (const d of ALL_DTYPES) {
    gx.tidy(() => {
      const x = make(factors(d, 60, seed++, 0.05), d, [3, 4, 5], device);
      for (const axis of [0, 1, 2, -1]) checkCumprod(t, x, axis, `cumprod(${d} [3, 4, 5], ${axis}) on ${device}`);
      checkCumprod(t, x.asStrided([5, 3, 4], [1, 20, 5], 0), 0, `cumprod(permuted ${d}) on ${device}`);
      checkCumprod(t, x.asStrided([3, 2, 5], [20, 10, 1], 0), 1, `cumprod(stepped ${d}) on ${device}`);
      checkCumprod(t, make(factors(d, 1, seed++), d, [], device), -1, `cumprod(0-d ${d}) on ${device}`);
      t.deepEqual(gx.cumprod(gx.zeros([0, 4], { dtype: d, device }), 1).shape, [0, 4]);
    });
  }
});

deviceTest('cumprod: long lines (chunks on CUDA), strided lines, int64 wraparound as torch', (t, device) => {
  let seed = 400;
  const cases: [gx.DType, number[], number][] = [
    ['float32', [2, 100003], 1], ['float64', [3, 50000], 1], ['float32', [50000, 3], 0], ['float32', [2000, 40], 0],
    ['int64', [1, 70001], 0], ['int16', [3, 5000], 1], ['float16', [4, 600], 1], ['float64', [40, 2000], 0],
  ];
  for (const [d, shape, axis] of cases) {
    gx.tidy(() => checkCumprod(t, make(factors(d, numel(shape), seed++), d, shape, device), axis, `cumprod(${d} ${JSON.stringify(shape)}, ${axis}) on ${device}`));
  }
  gx.tidy(() => {
    // torch.cumprod(torch.tensor([3, -7, 11, 13, 2**20, 2**25, 5], dtype=torch.int32), 0) on torch 2.13.0+cpu.
    const i32 = gx.tensor([3, -7, 11, 13, 2 ** 20, 2 ** 25, 5], { dtype: 'int32', device });
    t.deepEqual(Array.from(gx.cumprod(i32, 0).toArraySync() as BigInt64Array),
      [3n, -21n, -231n, -3003n, -3148873728n, -105658669382762496n, -528293346913812480n]);
    // torch.cumprod(torch.tensor([2**40, 2**30, 3]), 0): [1099511627776, 0, 0]
    const big = gx.tensor([2n ** 40n, 2n ** 30n, 3n], { dtype: 'int64', device });
    t.deepEqual(Array.from(gx.cumprod(big, 0).toArraySync() as BigInt64Array), [2n ** 40n, 0n, 0n]);
    // torch.cumprod(torch.tensor([127, 3, -5], dtype=torch.int8), 0, dtype=torch.int8): [127, 125, -113]
    t.deepEqual(gx.cumprod(gx.tensor([127, 3, -5], { dtype: 'int8', device }), 0, { dtype: 'int8' }).toNested(), [127, 125, -113]);
  });
});

deviceTest('cumprod: { dtype } converts first, out, methods, errors', (t, device) => {
  gx.tidy(() => {
    const i = make(factors('int8', 30, 500), 'int8', [5, 6], device);
    checkCumprod(t, i, 1, `cumprod(int8, { dtype: float64 }) on ${device}`, { dtype: 'float64' });
    checkCumprod(t, i, 0, `cumprod(int8, { dtype: int32 }) on ${device}`, { dtype: 'int32' });
    const f = make(factors('float32', 30, 501), 'float32', [5, 6], device);
    const out = gx.full([5, 6], poisonOf('float64') as number, { dtype: 'float64', device });
    checkCumprod(t, f, 1, `cumprod(float32, { out: float64 }) on ${device}`, { out });
    close(t, values(i.cumprod(0)), values(gx.cumprod(i, { axis: 0 })), `Tensor.cumprod on ${device}`);
    t.is(gx.cumprod(gx.tensor([true, true, false], { device }), 0).dtype, 'int64');
    t.throws(() => gx.cumprod(f, 0, { dtype: 'bool' as never }), { instanceOf: TypeError, message: /^gx\.cumprod: dtype bool is not supported/ });
    t.throws(() => gx.cumprod(f, 2), { message: /^gx\.cumprod: .*axis/ });
  });
});

// --- gradients -------------------------------------------------------------------

const nums = (r: gx.Tensor): number[] => Array.from(r.toArraySync() as Float64Array);

deviceTest('cumprod gradients match torch 2.13 with zeros (one, two, at the ends), and its second derivative', (t, device) => {
  gx.tidy(() => {
    const o = { dtype: 'float64' as const, device };
    // x = [2, .5, 0, 3, 0, 4], g = [1..6], v = [1, -1, 2, -2, .5, 1]: torch.autograd.grad(cumprod(x, 0), x, g,
    // create_graph=True) then grad(that, x, v), on torch 2.13.0+cpu.
    const x = gx.tensor([2, 0.5, 0, 3, 0, 4], o).requiresGrad_();
    const g = gx.tensor([1, 2, 3, 4, 5, 6], o), v = gx.tensor([1, -1, 2, -2, 0.5, 1], o);
    const [, dx] = F.vjp((a: gx.Tensor) => gx.cumprod(a, 0), x, g, { createGraph: true });
    t.deepEqual(nums(dx), [2, 4, 15, 0, 0, 0]);
    gx.sum(gx.mul(dx, v)).backward();
    t.deepEqual(nums(x.grad as gx.Tensor), [13, 62, 13, 8, 174, 0]);
    // Zeros at the start and end of lines, along each axis of a matrix: torch's figures for the same g.
    const m = gx.tensor([[0, 1.5, -2, 0.5], [3, 0, 2, -1], [1.5, 2, 0, 0]], o);
    const gm = gx.tensor([[1, -2, 0.5, 3], [2, 1, -1, 0.25], [-1.5, 2, 1, 1]], o);
    const want: Record<number, number[]> = {
      0: [0.25, -2, -1.5, 2.75, 0, 7.5, 2, 0.125, 0, 0, -4, -0.5],
      1: [-8, 0, 0, 0, 2, -4.5, 0, 0, 2.5, 3, 3, 0],
    };
    for (const axis of [0, 1]) t.deepEqual(nums(F.vjp((a: gx.Tensor) => gx.cumprod(a, axis), m, gm)[1]), want[axis], `axis ${axis}`);
  });
});

deviceTest('cumprod, cummax and cummin gradients by gradcheck, with and without zeros', (t, device) => {
  gx.tidy(() => {
    const r = rng(7);
    const distinct = Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? 1 : -1) * (0.5 + i * 0.07 + r() * 0.03));
    const x = gx.tensor(distinct, { dtype: 'float64', device }).reshape([4, 6]).requiresGrad_();
    const withZeros = distinct.map((v, i) => ([0, 8, 10, 17, 23].includes(i) ? 0 : v));  // line starts, ends, two in a line
    const xz = gx.tensor(withZeros, { dtype: 'float64', device }).reshape([4, 6]).requiresGrad_();
    for (const axis of [0, 1]) {
      t.true(gx.autograd.gradcheck((a) => gx.cumprod(a, axis), [x], { raiseException: false }).ok, `cumprod axis ${axis}`);
      t.true(gx.autograd.gradcheck((a) => gx.cumprod(a, axis), [xz], { raiseException: false }).ok, `cumprod with zeros, axis ${axis}`);
      t.true(gx.autograd.gradcheck((a) => gx.cummax(a, axis).values, [x], { raiseException: false }).ok, `cummax axis ${axis}`);
      t.true(gx.autograd.gradcheck((a) => gx.cummin(a, axis).values, [x], { raiseException: false }).ok, `cummin axis ${axis}`);
    }
  });
});

deviceTest('cummax and cummin gradients with ties match torch 2.13 (summed where one element leads several places)', (t, device) => {
  gx.tidy(() => {
    const o = { dtype: 'float64' as const, device };
    const b = gx.tensor([[1, 5, 2], [4, 5, -1], [4, 3, -1], [0, 5, 7]], o);
    const w = gx.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]], o);
    // torch.autograd.grad(torch.cummax(b, 0).values, b, w) and cummin(b, 1), torch 2.13.0+cpu.
    t.deepEqual(nums(F.vjp((a: gx.Tensor): gx.Tensor => gx.cummax(a, 0).values, b, w)[1]), [1, 2, 18, 4, 13, 0, 17, 0, 0, 0, 11, 12]);
    t.deepEqual(gx.cummax(b, 0).indices.toNested(), [[0, 0, 0], [1, 1, 0], [2, 1, 0], [2, 3, 3]]);
    t.deepEqual(nums(F.vjp((a: gx.Tensor): gx.Tensor => gx.cummin(a, 1).values, b, w)[1]), [6, 0, 0, 9, 0, 6, 7, 8, 9, 33, 0, 0]);
  });
});

// --- the devices agree ------------------------------------------------------------

cudaTest('CUDA scans match the CPU: bit for bit for integers and cummax / cummin, within rounding for float products', (t) => {
  let seed = 600;
  const shapes: [number[], number][] = [[[2, 100003], 1], [[50000, 3], 0], [[300, 77], 1], [[8, 40], 1], [[40, 2000], 0]];
  for (const d of ALL_DTYPES) {
    for (const [shape, axis] of shapes) {
      gx.tidy(() => {
        const c = make(tiedValues(d, numel(shape), seed++, 1e-4), d, shape, 'cpu'), g = c.cuda();
        for (const largest of [true, false]) {
          const [cv, ci] = largest ? gx.cummax(c, axis) : gx.cummin(c, axis);
          const [gv, gi] = largest ? gx.cummax(g, axis) : gx.cummin(g, axis);
          close(t, values(gv), values(cv), `${largest ? 'cummax' : 'cummin'} ${d} ${JSON.stringify(shape)} values`);
          close(t, values(gi), values(ci), `${largest ? 'cummax' : 'cummin'} ${d} ${JSON.stringify(shape)} indices`);
        }
        const p = make(factors(d, numel(shape), seed++, 1e-4), d, shape, 'cpu');
        const cp = values(gx.cumprod(p, axis)), gp = values(gx.cumprod(p.cuda(), axis));
        if (!isFloat(d)) close(t, gp, cp, `cumprod ${d} ${JSON.stringify(shape)}`);
        else closeEach(t, gp, cp, cumprodRef(values(p), shape, axis, d).atol.map((a) => 2 * a), `cumprod ${d} ${JSON.stringify(shape)}`);
      });
    }
  }
});
