// Reductions over outer + inner dims and over outer dims, on every device
// (NOTE [ Reducing outer and inner dims ] and NOTE [ Reducing outer dims ] in
// ops/reduce/cuda_reduce.cuh): sum / mean / amax over (0, 2, 3) of NCHW with
// rows of whole 16-byte vectors (the vectorized row path) and without (the
// block kernel), float32 and float16; sum / mean / amin over dim 0 of (N, a, b)
// with few and many reduced rows (one slice, and slices folded by a second
// kernel), and fewer outputs than a block's threads (the block kernel); a
// strided pair of reduced dims beside a contiguous kept one.
// Against a float64 JS reference (float32 sums: relative 1e-5), NaN propagated
// by amax, and every call twice: the same bits (no atomics).
import * as gx from '../lib';
import { deviceTest, rng } from './helpers';

const numel = (s: readonly number[]): number => s.reduce((x, y) => x * y, 1);

/** The reduction of x (row-major, shape) over `axes` in float64, folded by f from init. */
function reference(x: ArrayLike<number>, shape: readonly number[], axes: readonly number[], f: (a: number, v: number) => number, init: number): number[] {
  const keep = shape.map((_, d) => !axes.includes(d));
  const outShape = shape.filter((_, d) => keep[d]);
  const out = new Array<number>(numel(outShape)).fill(init);
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < x.length; i++) {
    let o = 0;
    for (let d = 0; d < shape.length; d++) if (keep[d]) o = o * shape[d] + idx[d];
    out[o] = f(out[o], x[i]);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

function randomTensor(d: string, shape: number[], seed: number, dtype: gx.DType = 'float32'): [gx.Tensor, number[]] {
  const r = rng(seed);
  const t = gx.tensor(Array.from({ length: numel(shape) }, () => 4 * r() - 1), { dtype, device: d, shape });
  return [t, Array.from(t.astype('float64').toArraySync() as Float64Array)];
}

function close(t: { true: (c: boolean, m?: string) => void }, got: ArrayLike<number>, want: readonly number[], rel: number, what: string): void {
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    if (Number.isNaN(want[i])) {
      if (!Number.isNaN(got[i])) worst = Infinity;
      continue;
    }
    worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  }
  t.true(got.length === want.length && worst <= rel, `${what}: worst relative error ${worst}`);
}

/** The op twice: the same bits each time. */
function twice(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }, f: () => gx.Tensor, what: string): number[] {
  const a = Array.from(f().astype('float64').toArraySync() as Float64Array);
  t.deepEqual(Array.from(f().astype('float64').toArraySync() as Float64Array), a, `${what}: repeatable`);
  return a;
}

const add = (a: number, v: number): number => a + v;
const max = (a: number, v: number): number => (Number.isNaN(a) || Number.isNaN(v) ? NaN : Math.max(a, v));
const min = (a: number, v: number): number => (Number.isNaN(a) || Number.isNaN(v) ? NaN : Math.min(a, v));

deviceTest('sum, mean and amax over (0, 2, 3) of NCHW (rows of whole vectors and not) equal a float64 reference', (t, d) => {
  gx.tidy(() => {
    // H*W = 256 (vectors of 4 float32 or 8 float16), 15 (no whole vectors), 12 (float32 yes, float16 no).
    for (const [shape, dtype] of [[[8, 6, 16, 16], 'float32'], [[8, 6, 16, 16], 'float16'], [[9, 5, 3, 5], 'float32'],
      [[70, 3, 3, 4], 'float32'], [[70, 3, 3, 4], 'float16'], [[1, 4, 32, 32], 'float32']] as [number[], gx.DType][]) {
      const [x, xv] = randomTensor(d, shape, numel(shape) + shape[1]);
      const xs = x.astype(dtype);
      const vals = dtype === 'float32' ? xv : Array.from(xs.astype('float64').toArraySync() as Float64Array);
      const n = shape[0] * shape[2] * shape[3];
      const rel = dtype === 'float32' ? 1e-5 : 2e-3;  // float16 outputs round to 11 bits
      const what = `${dtype} ${JSON.stringify(shape)}`;
      close(t, twice(t, () => gx.sum(xs, [0, 2, 3]), `${what} sum`), reference(vals, shape, [0, 2, 3], add, 0), rel, `${what} sum`);
      close(t, twice(t, () => gx.mean(xs, [0, 2, 3]), `${what} mean`), reference(vals, shape, [0, 2, 3], add, 0).map((s) => s / n), rel, `${what} mean`);
      close(t, twice(t, () => gx.amax(xs, [0, 2, 3]), `${what} amax`), reference(vals, shape, [0, 2, 3], max, -Infinity), 0, `${what} amax`);
    }
  });
});

deviceTest('amax over (0, 2, 3) and over dim 0 propagates a NaN to its output only', (t, d) => {
  gx.tidy(() => {
    const shape = [6, 4, 8, 8];
    const [x, xv] = randomTensor(d, shape, 81);
    xv[3 * 256 + 2 * 64 + 17] = NaN;  // batch 3, channel 2
    const xn = gx.tensor(xv, { dtype: 'float32', device: d, shape });
    close(t, gx.amax(xn, [0, 2, 3]).astype('float64').toArraySync() as Float64Array, reference(xv, shape, [0, 2, 3], max, -Infinity), 0, 'amax (0, 2, 3)');
    const flat = xn.reshape([6, 256]);
    close(t, gx.amax(flat, 0).astype('float64').toArraySync() as Float64Array, reference(xv, [6, 256], [0], max, -Infinity), 0, 'amax over dim 0');
    t.is(x.shape.length, 4);
  });
});

deviceTest('sum, mean and amin over dim 0 of (N, a, b) (few rows, many rows in slices) equal a float64 reference', (t, d) => {
  gx.tidy(() => {
    for (const shape of [[64, 9, 33], [1000, 40], [300, 300], [37, 3, 100], [5, 2, 300]]) {
      const [x, xv] = randomTensor(d, shape, numel(shape));
      const what = JSON.stringify(shape);
      close(t, twice(t, () => gx.sum(x, 0), `${what} sum`), reference(xv, shape, [0], add, 0), 1e-5, `${what} sum`);
      close(t, twice(t, () => gx.mean(x, 0), `${what} mean`), reference(xv, shape, [0], add, 0).map((s) => s / shape[0]), 1e-5, `${what} mean`);
      close(t, twice(t, () => gx.amin(x, 0), `${what} amin`), reference(xv, shape, [0], min, Infinity), 0, `${what} amin`);
    }
    // Two strided reduced dims beside a contiguous kept one: (0, 2) of (4, 6, 5, 50).
    const shape = [4, 6, 5, 50];
    const [x, xv] = randomTensor(d, shape, 91);
    close(t, twice(t, () => gx.sum(x, [0, 2]), 'sum (0, 2)'), reference(xv, shape, [0, 2], add, 0), 1e-5, 'sum (0, 2)');
    // A permuted input: the kept dim is no longer the contiguous one.
    const p = gx.permute(x, [3, 1, 2, 0]);
    close(t, gx.sum(p, [0, 2]).toArraySync() as Float32Array, reference(Array.from(p.astype('float64').toArraySync() as Float64Array), [50, 6, 5, 4], [0, 2], add, 0),
      1e-5, 'sum (0, 2) of a permuted view');
  });
});
