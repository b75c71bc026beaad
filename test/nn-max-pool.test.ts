// maxPool1d / maxPool2d (the native max_pool2d_with_indices and its backward,
// ops/conv/max_pool.h) on every device against a plain-JS reference of
// torch's max pooling: values and indices for many geometries (padding,
// stride, dilation, ceil mode, 1-d, unbatched, strided input), ties (small
// integers as floats) and NaNs, in every floating dtype; the input gradient
// against the reference's accumulation of the output gradient, bit for bit;
// gradcheck of the first, second and third order; CUDA against the CPU bit
// for bit; and the native ops of a forward and backward.
import test from 'ava';

import * as gx from '../lib';
import { cudaTest, deviceTest, deviceTestSerial, rejects, rng, type TestDevice } from './helpers';

const F = gx.nn.functional;

interface Case {
  name: string;
  shape: number[];  // (N, C, *spatial) or (C, *spatial)
  spatial: 1 | 2;
  k: number | number[];
  opts: gx.nn.MaxPoolOptions;
  /** Pass the input as a transposed view of a contiguous tensor (strided reads). */
  transposed?: boolean;
}

const CASES: Case[] = [
  { name: 'k2', shape: [2, 3, 6, 8], spatial: 2, k: 2, opts: {} },
  { name: 'k3 s1 p1 (overlapping windows)', shape: [2, 2, 5, 6], spatial: 2, k: 3, opts: { stride: 1, padding: 1 } },
  { name: 'k3 s2 p1 ceil', shape: [2, 3, 7, 8], spatial: 2, k: 3, opts: { stride: 2, padding: 1, ceilMode: true } },
  { name: 'k[2,3] s[1,2] d[2,1] p[1,1]', shape: [2, 3, 7, 8], spatial: 2, k: [2, 3], opts: { stride: [1, 2], dilation: [2, 1], padding: [1, 1] } },
  { name: 'k[3,2] s[2,3] d2 p1 ceil', shape: [1, 2, 9, 10], spatial: 2, k: [3, 2], opts: { stride: [2, 3], dilation: 2, padding: 1, ceilMode: true } },
  { name: 'k4 s3 p2 ceil, odd sizes', shape: [1, 2, 11, 5], spatial: 2, k: 4, opts: { stride: 3, padding: 2, ceilMode: true } },
  { name: 'k3 s2 ceil, strided input', shape: [2, 3, 9, 7], spatial: 2, k: 3, opts: { stride: 2, ceilMode: true }, transposed: true },
  { name: 'unbatched', shape: [3, 5, 7], spatial: 2, k: [2, 3], opts: { stride: [2, 1], padding: [1, 1] } },
  { name: '1-d k3 s2 p1 ceil', shape: [2, 3, 10], spatial: 1, k: 3, opts: { stride: 2, padding: 1, ceilMode: true } },
  { name: '1-d k3 d2 p1', shape: [2, 2, 11], spatial: 1, k: 3, opts: { dilation: 2, padding: 1, stride: 1 } },
  { name: '1-d unbatched', shape: [3, 9], spatial: 1, k: [4], opts: { stride: 2, padding: 2 } },
];

/** Windows along one dim, torch's pooling_output_shape (written from torch's formula, apart from lib/'s). */
function outSize(n: number, k: number, s: number, p: number, d: number, ceil: boolean): number {
  const span = d * (k - 1) + 1;
  let o = (ceil ? Math.ceil((n + 2 * p - span) / s) : Math.floor((n + 2 * p - span) / s)) + 1;
  if (ceil && (o - 1) * s >= n + p) o--;
  return o;
}

/** [kernel, stride, padding, dilation] of the height and of the width (a 1-d case has a unit height). */
function geometry(c: Case): [number[], number[]] {
  const each = (v: number | number[] | null | undefined, dflt: number): number[] =>
    v === undefined || v === null ? Array<number>(c.spatial).fill(dflt) : typeof v === 'number' ? Array<number>(c.spatial).fill(v) : v;
  const k = each(c.k, 0);
  const s = c.opts.stride === undefined || c.opts.stride === null ? k : each(c.opts.stride, 0);
  const p = each(c.opts.padding, 0), d = each(c.opts.dilation, 1);
  const dim = (i: number): number[] => [k[i], s[i], p[i], d[i]];
  return c.spatial === 1 ? [[1, 1, 0, 1], dim(0)] : [dim(0), dim(1)];
}

interface Pooled { shape: number[]; values: number[]; indices: number[]; planeStart: number[] }

/**
 * Max pooling of x (C order, the case's shape) as torch defines it: among a
 * window's positions inside the input, a NaN if there is one (the last one's
 * index: torch's `v > max || isnan(v)` lets each later NaN take over), else
 * the largest value at its first position in row-major order.
 */
function reference(x: ArrayLike<number>, c: Case): Pooled {
  const [[kh, sh, ph, dh], [kw, sw, pw, dw]] = geometry(c);
  const sp = c.shape.slice(c.shape.length - c.spatial);
  const [h, w] = c.spatial === 1 ? [1, sp[0]] : sp;
  const ceil = c.opts.ceilMode === true;
  const oh = outSize(h, kh, sh, ph, dh, ceil), ow = outSize(w, kw, sw, pw, dw, ceil);
  const lead = c.shape.slice(0, c.shape.length - c.spatial);
  const out: Pooled = { shape: [...lead, ...(c.spatial === 1 ? [ow] : [oh, ow])], values: [], indices: [], planeStart: [] };
  for (let q = 0; q < x.length / (h * w); q++) {
    for (let y = 0; y < oh; y++) {
      for (let z = 0; z < ow; z++) {
        const at: number[] = [];
        for (let i = 0; i < kh; i++) {
          for (let j = 0; j < kw; j++) {
            const r = y * sh - ph + i * dh, col = z * sw - pw + j * dw;
            if (r >= 0 && r < h && col >= 0 && col < w) at.push(r * w + col);
          }
        }
        const v = at.map((e) => x[q * h * w + e]);
        const nans = at.filter((_, e) => Number.isNaN(v[e]));
        const best = nans.length > 0 ? nans[nans.length - 1] : at[v.indexOf(Math.max(...v))];
        out.values.push(x[q * h * w + best]);
        out.indices.push(best);
        out.planeStart.push(q * h * w);
      }
    }
  }
  return out;
}

/** The input gradient: each output's gradient added at its index, outputs in C order (torch's CPU backward), `round` after each add. */
function referenceGrad(ref: Pooled, gy: ArrayLike<number>, n: number, round: (v: number) => number): number[] {
  const dx = Array<number>(n).fill(0);
  ref.indices.forEach((ix, o) => {
    dx[ref.planeStart[o] + ix] = round(dx[ref.planeStart[o] + ix] + gy[o]);
  });
  return dx;
}

/** Small integers (many ties), with some NaNs and -infs where asked. */
function data(n: number, seed: number, nans: boolean): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const u = r();
    if (nans && u < 0.06) return NaN;
    if (nans && u < 0.09) return -Infinity;
    return Math.floor(r() * 7) - 3;
  });
}

/** n uniform values in [-1, 1), rounded to dtype where it is 16-bit (through a float32 tensor, on the CPU). */
function uniform(n: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => 2 * r() - 1);
}

const numbers = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number>, Number);
const numel = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
const FLOATS = ['float32', 'float64', 'float16', 'bfloat16'] as const;

/** The case's input on d in dtype, and the leaf that requires grad (for a transposed case, the input is its transposed view). */
function input(c: Case, xs: readonly number[], dtype: gx.DType, d: gx.DeviceLike): { x: gx.Tensor; leaf: gx.Tensor } {
  if (c.transposed !== true) {
    const x = gx.tensor(xs as number[], { dtype, device: d }).reshape(c.shape).requiresGrad_();
    return { x, leaf: x };
  }
  // xs are in C order of c.shape; the leaf holds them with the last two dims swapped.
  const [h, w] = c.shape.slice(-2), planes = numel(c.shape) / (h * w);
  const laid = Array<number>(xs.length);
  for (let q = 0; q < planes; q++) for (let y = 0; y < h; y++) for (let z = 0; z < w; z++) laid[q * h * w + z * h + y] = xs[q * h * w + y * w + z];
  const leaf = gx.tensor(laid, { dtype, device: d }).reshape([...c.shape.slice(0, -2), w, h]).requiresGrad_();
  return { x: leaf.transpose(-1, -2), leaf };
}

/** The leaf's gradient back in the C order of the case's shape. */
function gradOf(c: Case, leaf: gx.Tensor): number[] {
  const g = leaf.grad as gx.Tensor;
  return numbers(c.transposed === true ? g.transpose(-1, -2).contiguous() : g);
}

function pool(c: Case, x: gx.Tensor): gx.nn.MaxPoolResult {
  return c.spatial === 1 ? F.maxPool1d(x, c.k, { ...c.opts, returnIndices: true as const }) : F.maxPool2d(x, c.k, { ...c.opts, returnIndices: true as const });
}

/** The gradient's rounding after each add, as the kernels accumulate (float64 in double, the others in float). */
const accumulate = (dtype: gx.DType): ((v: number) => number) => (dtype === 'float64' ? (v) => v : Math.fround);

/** Rounds float32 values to dtype once (16-bit floats), as the kernels store their float sums. */
function storeAs(v: number[], dtype: gx.DType): number[] {
  if (dtype === 'float64' || dtype === 'float32') return v;
  return numbers(gx.tensor(v, { dtype: 'float32' }).astype(dtype));
}

deviceTest('max pooling matches the reference: values and indices (ties, NaN, -inf), the input gradient bit for bit, every floating dtype', (t, d) => {
  CASES.forEach((c, ci) => {
    for (const dtype of FLOATS) {
      for (const nans of [false, true]) {
        gx.tidy(() => {
          const what = `${c.name} ${dtype}${nans ? ' with NaNs' : ''}`;
          const xs = data(numel(c.shape), 100 * ci + (nans ? 1 : 0), nans);
          const ref = reference(xs, c);
          const { x, leaf } = input(c, xs, dtype, d);
          const r = pool(c, x);
          t.deepEqual([...r.values.shape], ref.shape, `${what}: shape`);
          t.is(r.values.dtype, dtype);
          t.is(r.indices.dtype, 'int64');
          t.deepEqual(numbers(r.values), ref.values, `${what}: values`);
          t.deepEqual(numbers(r.indices), ref.indices, `${what}: indices`);
          // Output gradients exactly representable in dtype, so the reference starts from the same numbers.
          const gyv = storeAs(uniform(ref.values.length, 7 + ci).map(Math.fround), dtype);
          r.values.backward(gx.tensor(gyv, { dtype, device: d }).reshape(ref.shape));
          const want = storeAs(referenceGrad(ref, gyv, xs.length, accumulate(dtype)), dtype);
          t.deepEqual(gradOf(c, leaf), want, `${what}: gradient`);
        });
      }
    }
  });
});

deviceTest('returnIndices false gives the same values; the modules and a strided output gradient go through the same op', (t, d) => {
  gx.tidy(() => {
    const xs = data(2 * 3 * 8 * 8, 5, true);
    const x = gx.tensor(xs, { device: d }).reshape([2, 3, 8, 8]);
    const r = F.maxPool2d(x, 3, { stride: 2, padding: 1, returnIndices: true as const });
    t.deepEqual(numbers(F.maxPool2d(x, 3, { stride: 2, padding: 1 })), numbers(r.values));
    t.deepEqual(numbers(new gx.nn.MaxPool2d(3, { stride: 2, padding: 1 }).call(x)), numbers(r.values));
    const x1 = x.reshape([2, 3, 64]);
    t.deepEqual(numbers(new gx.nn.MaxPool1d(4, { stride: 3, padding: 2 }).call(x1)), numbers(F.maxPool1d(x1, 4, { stride: 3, padding: 2 })));
    // Output gradients that may reach the backward strided: a transposed view, and sum's expanded ones.
    const gradFor = (seed: (y: gx.Tensor) => void): number[] => {
      const v = gx.tensor(uniform(2 * 3 * 8 * 8, 6), { device: d }).reshape([2, 3, 8, 8]).requiresGrad_();
      seed(F.maxPool2d(v, 2, { stride: 1 }));
      return numbers(v.grad as gx.Tensor);
    };
    const gyT = gx.tensor(uniform(2 * 3 * 7 * 7, 8), { device: d }).reshape([2, 3, 7, 7]).transpose(2, 3);
    t.deepEqual(gradFor((y) => y.backward(gyT)), gradFor((y) => y.backward(gyT.contiguous())));
    t.deepEqual(gradFor((y) => gx.sum(y).backward()), gradFor((y) => y.backward(gx.ones([2, 3, 7, 7], { device: d }))));
  });
});

deviceTest('gradcheck (float64): first, second and third order', (t, d) => {
  gx.tidy(() => {
    const R = (shape: number[], seed: number): gx.Tensor => gx.tensor(uniform(numel(shape), seed), { dtype: 'float64', device: d }).reshape(shape).requiresGrad_();
    const geoms: [string, (v: gx.Tensor) => gx.Tensor, number[]][] = [
      ['k3 s1 p1', (v) => F.maxPool2d(v, 3, { stride: 1, padding: 1 }), [2, 2, 5, 6]],
      ['k[2,3] s[1,2] d[2,1] p1 ceil', (v) => F.maxPool2d(v, [2, 3], { stride: [1, 2], dilation: [2, 1], padding: 1, ceilMode: true }), [1, 2, 6, 7]],
      ['1-d k3 s2 p1 ceil', (v) => F.maxPool1d(v, 3, { stride: 2, padding: 1, ceilMode: true }), [2, 2, 9]],
    ];
    geoms.forEach(([name, f, shape], i) => {
      const x = R(shape, 300 + i);
      const first = gx.autograd.gradcheck(f, [x], { raiseException: false });
      t.true(first.ok, `${name} first order: ${JSON.stringify(first.worst)}`);
      const y = gx.noGrad(() => f(x));
      const gy = R([...y.shape], 310 + i);
      // x's gradient as a function of (x, gy): the backward op, differentiated through its own record (the gather).
      const grad = (v: gx.Tensor, g: gx.Tensor): gx.Tensor => gx.autograd.functional.vjp(f, v, g, { createGraph: true })[1];
      const second = gx.autograd.gradcheck(grad, [x, gy], { raiseException: false });
      t.true(second.ok, `${name} second order: ${JSON.stringify(second.worst)}`);
      // The gather's own derivative (the backward op again): the vjp of grad in gy.
      const gx2 = R([...x.shape], 320 + i);
      const third = gx.autograd.gradcheck((g, u) => gx.autograd.functional.vjp((q: gx.Tensor) => grad(x, q), g, u, { createGraph: true })[1], [gy, gx2], { raiseException: false });
      t.true(third.ok, `${name} third order: ${JSON.stringify(third.worst)}`);
    });
  });
});

deviceTestSerial('a maxPool2d forward and backward is two native ops and leaves no tensor behind', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  gx.tidy(() => {
    const x = gx.tensor(uniform(4 * 3 * 12 * 12, 9), { device: d }).reshape([4, 3, 12, 12]).requiresGrad_();
    const gy = gx.tensor(uniform(4 * 3 * 6 * 6, 10), { device: d }).reshape([4, 3, 6, 6]);
    const prof = gx.profiler.profile(() => gx.tidy(() => F.maxPool2d(x, 2).backward(gy)));
    t.deepEqual(prof.events.map((e) => e.name), ['max_pool2d_with_indices', 'max_pool2d_with_indices_backward']);
    // Second order too: the gradient's graph holds the indices until it goes.
    const gy1 = gx.tensor(uniform(4 * 3 * 71, 12), { device: d }).reshape([4, 3, 71]).requiresGrad_();
    const [, g] = gx.autograd.functional.vjp((v: gx.Tensor) => F.maxPool1d(v, 3, { stride: 2 }), x.reshape([4, 3, 144]), gy1, { createGraph: true });
    gx.sum(gx.mul(g, g)).backward();
    t.true(gy1.grad instanceof gx.Tensor, 'the gradient reached gy1 through the gather');
    for (const v of [x, gy1]) (v.grad as gx.Tensor).dispose();
  });
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});

cudaTest('CUDA equals the CPU bit for bit: values, indices and gradients, every floating dtype', (t) => {
  const cases: Case[] = [
    ...CASES,
    { name: 'large k3 s2 p1', shape: [8, 16, 33, 35], spatial: 2, k: 3, opts: { stride: 2, padding: 1 } },
    { name: 'large k[4,3] s[3,2] d2 p1 ceil', shape: [4, 8, 40, 31], spatial: 2, k: [4, 3], opts: { stride: [3, 2], dilation: 2, padding: 1, ceilMode: true } },
  ];
  cases.forEach((c, ci) => {
    for (const dtype of FLOATS) {
      gx.tidy(() => {
        const xs = uniform(numel(c.shape), 500 + ci).map((v, i) => (i % 11 === 0 ? NaN : i % 5 === 0 ? Math.round(3 * v) : v));
        const out = (['cpu', 'cuda'] as const).map((dev) => {
          const { x, leaf } = input(c, xs, dtype, dev);
          const r = pool(c, x);
          r.values.backward(gx.tensor(uniform(numel(r.values.shape), 600 + ci), { dtype, device: dev }).reshape([...r.values.shape]));
          return { values: numbers(r.values), indices: numbers(r.indices), grad: gradOf(c, leaf) };
        });
        t.deepEqual(out[1], out[0], `${c.name} ${dtype}`);
      });
    }
  });
});

deviceTest('bad arguments keep their errors', (t, d) => {
  using x = gx.tensor(uniform(2 * 3 * 5 * 5, 11), { device: d }).reshape([2, 3, 5, 5]);
  using xi = gx.zeros([2, 3, 5, 5], { dtype: 'int32', device: d });
  rejects(t, d, () => F.maxPool2d(x, 2, { padding: 2 }), RangeError, /gx\.nn\.functional\.maxPool2d: argument 'padding' must be at most half the kernel size/);
  rejects(t, d, () => F.maxPool2d(xi, 2), TypeError, /maxPool2d: argument 'input' must be a floating tensor, got int32/);
  rejects(t, d, () => F.maxPool2d(x, 7), RangeError, /maxPool2d: the input's spatial size \[5, 5\] gives an output of \[0, 0\], which is too small/);
  rejects(t, d, () => F.maxPool1d(x, 2), RangeError, /maxPool1d: argument 'input' must be 2-d \(unbatched\) or 3-d \(batched\)/);
  rejects(t, d, () => F.maxPool2d(x, 2, { dilation: 0 }), RangeError, /maxPool2d: argument 'dilation' must be positive/);
  rejects(t, d, () => F.maxPool2d(x, 2, { returnIndex: true } as gx.nn.MaxPoolOptions), TypeError, /maxPool2d.*returnIndex/);
});

test('the reference and the op on hand-worked windows: a tie, a NaN after a NaN, a padded edge', (t) => {
  // One plane [[NaN, 3, 3], [NaN, 2, NaN]], kernel 2, stride 1, padding 1 on the width only.
  const c: Case = { name: 'hand', shape: [1, 2, 3], spatial: 2, k: 2, opts: { stride: 1, padding: [0, 1] } };
  const ref = reference([NaN, 3, 3, NaN, 2, NaN], c);
  t.deepEqual(ref.shape, [1, 1, 4]);
  // Windows cover columns [-1, 0], [0, 1], [1, 2], [2, 3] of both rows.
  t.deepEqual(ref.indices, [3, 3, 5, 5]);
  t.deepEqual(ref.values, [NaN, NaN, NaN, NaN]);
  const noNan = reference([1, 3, 3, 0, 2, 3], c);
  t.deepEqual(noNan.indices, [0, 1, 1, 2]);  // the first 3 wins the tie of window [1, 2]
  t.deepEqual(noNan.values, [1, 3, 3, 3]);
  gx.tidy(() => {
    const r = F.maxPool2d(gx.tensor([NaN, 3, 3, NaN, 2, NaN]).reshape([1, 2, 3]), 2, { ...c.opts, returnIndices: true as const });
    t.deepEqual(numbers(r.indices), [3, 3, 5, 5]);
    const q = F.maxPool2d(gx.tensor([1, 3, 3, 0, 2, 3]).reshape([1, 2, 3]), 2, { ...c.opts, returnIndices: true as const });
    t.deepEqual(numbers(q.indices), [0, 1, 1, 2]);
  });
});
