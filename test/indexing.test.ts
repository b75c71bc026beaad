// gather, indexSelect, take, scatter, scatterAdd (and the in-place methods)
// and maskedFill against plain-JS references on random inputs, on every
// device: several dtypes, every axis, int64 and int32 indices, transposed
// (non-contiguous) inputs and indices, src larger than index, empty
// indices, negative take indices, gradients, errors that name the op and
// the argument, and no leaked tensors.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { deviceTest, deviceTestSerial, randomValues, rng } from './helpers';
import { unravel, ravel, numel as numelOf, numbers } from './ops-reference';



function refGather(x: number[], xs: number[], axis: number, idx: number[], is: number[]): number[] {
  return idx.map((k, p) => {
    const c = unravel(p, is);
    c[axis] = k;
    return x[ravel(c, xs)];
  });
}

function refScatter(x: number[], xs: number[], axis: number, idx: number[], is: number[], src: number[], ss: number[], add: boolean): number[] {
  const out = x.slice();
  idx.forEach((k, p) => {
    const c = unravel(p, is);
    const v = src[ravel(c, ss)];
    c[axis] = k;
    const o = ravel(c, xs);
    out[o] = add ? out[o] + v : v;
  });
  return out;
}

/** Random indices in [0, n) of `shape` (or, with unique, distinct along axis: a slice of a permutation per line). */
function randomIndex(shape: number[], n: number, seed: number, dtype: 'int64' | 'int32', device: string, unique?: number): { t: gx.Tensor; v: number[] } {
  const r = rng(seed);
  const v = Array.from({ length: numelOf(shape) }, (_, p) => {
    if (unique === undefined) return Math.floor(r() * n);
    // A rotation of 0..n-1 along each line (its amount set by the line's other coordinates): distinct along `unique`.
    const c = unravel(p, shape);
    const line = c.reduce((h, x, d) => (d === unique ? h : h * 31 + x), 0);
    return (c[unique] + line) % n;
  });
  return { t: gx.tensor(v, { dtype, device }).reshape(shape), v };
}

const DTYPES: gx.DType[] = ['float32', 'float64', 'float16', 'int64', 'int32', 'uint8', 'bool'];

function valuesOf(dtype: gx.DType, n: number, seed: number): number[] {
  if (dtype === 'bool') return Array.from({ length: n }, (_, i) => (i * 7 + seed) % 3 === 0 ? 1 : 0);
  // Small values for the narrow dtypes, so that the reference's sums (plain JS numbers) are exact there too.
  const v = Array.from(randomValues(dtype, n, seed) as ArrayLike<number | bigint>, Number);
  return dtype === 'float32' || dtype === 'float64' ? v : v.map((e) => (Math.trunc(e) % 50) + 0);  // (+ 0: no -0)
}
const make = (v: number[], dtype: gx.DType, shape: number[], device: string): gx.Tensor =>
  gx.tensor(dtype === 'bool' ? v.map(Boolean) : dtype === 'int64' ? v.map(BigInt) : v, { dtype, device } as never).reshape(shape);

function noLeaks(t: ExecutionContext, device: string, body: () => void): void {
  const live = gx.memory.stats(device as never).liveTensors;
  gx.tidy(body);
  t.is(gx.memory.stats(device as never).liveTensors, live, 'no tensor left behind');
}

deviceTestSerial('gather matches the reference: dtypes, axes, index dtypes, transposed views, smaller index', (t, device) => {
  noLeaks(t, device, () => {
    const xs = [4, 5, 3];
    for (const dtype of DTYPES) {
      const xv = valuesOf(dtype, numelOf(xs), 3);
      const x = make(xv, dtype, xs, device);
      for (const axis of [0, 1, 2, -1]) {
        const a = (axis + 3) % 3;
        for (const idt of ['int64', 'int32'] as const) {
          const is = xs.map((n, d) => (d === a ? 6 : Math.max(1, n - 1)));
          const { t: index, v } = randomIndex(is, xs[a], 11 + a, idt, device);
          const got = gx.gather(x, axis, index);
          t.deepEqual(got.shape, is);
          t.is(got.dtype, dtype);
          t.deepEqual(numbers(got), refGather(xv, xs, a, v, is), `${dtype} axis ${axis} ${idt}`);
          t.deepEqual(numbers(x.gather(axis, index)), numbers(got), 'the method');
        }
      }
    }
    // A transposed x and a transposed index.
    const xv = valuesOf('float32', 20, 5);
    const x = make(xv, 'float32', [4, 5], device).transpose(0, 1);  // [5, 4]
    const xt = refTranspose(xv, 4, 5);
    const { t: i0, v: iv0 } = randomIndex([3, 5], 4, 9, 'int64', device);
    const index = i0.transpose(0, 1);  // [5, 3]
    t.deepEqual(numbers(gx.gather(x, 1, index)), refGather(xt, [5, 4], 1, refTranspose(iv0, 3, 5), [5, 3]));
  });
});

function refTranspose(v: number[], rows: number, cols: number): number[] {
  return Array.from({ length: v.length }, (_, p) => v[(p % rows) * cols + Math.floor(p / rows)]);
}

deviceTestSerial('indexSelect and take match the reference', (t, device) => {
  noLeaks(t, device, () => {
    const xs = [4, 6];
    const xv = valuesOf('float64', 24, 2);
    const x = make(xv, 'float64', xs, device);
    for (const idt of ['int64', 'int32'] as const) {
      const sel = [5, 0, 5, 2];
      const r1 = gx.indexSelect(x, 1, gx.tensor(sel, { dtype: idt, device }));
      t.deepEqual(r1.shape, [4, 4]);
      t.deepEqual(numbers(r1), Array.from({ length: 16 }, (_, p) => xv[Math.floor(p / 4) * 6 + sel[p % 4]]));
      const r0 = x.transpose(0, 1).indexSelect(-1, gx.tensor([3, 1], { dtype: idt, device }));
      t.deepEqual(numbers(r0), Array.from({ length: 12 }, (_, p) => xv[[3, 1][p % 2] * 6 + Math.floor(p / 2)]), 'transposed');
      const tk = gx.take(x.transpose(0, 1), gx.tensor([[0, -1], [5, 23]], { dtype: idt, device }));
      const flatT = refTranspose(xv, 4, 6);
      t.deepEqual(tk.shape, [2, 2]);
      t.deepEqual(numbers(tk), [flatT[0], flatT[23], flatT[5], flatT[23]]);
    }
    t.deepEqual(gx.indexSelect(x, 0, gx.tensor([], { dtype: 'int64', device })).shape, [0, 6], 'empty index');
    t.deepEqual(gx.take(x, gx.zeros([0, 2], { dtype: 'int64', device })).shape, [0, 2]);
    t.deepEqual(gx.gather(x, 0, gx.zeros([0, 6], { dtype: 'int64', device })).shape, [0, 6]);
  });
});

deviceTestSerial('scatter and scatterAdd match the reference; src larger than index; in place', (t, device) => {
  noLeaks(t, device, () => {
    const xs = [5, 7, 3];
    const addTypes: gx.DType[] = DTYPES.filter((d) => d !== 'bool');
    for (const dtype of DTYPES) {
      const xv = valuesOf(dtype, numelOf(xs), 4).map((v) => (dtype.startsWith('float') ? Math.round(v) : v));
      const x = make(xv, dtype, xs, device);
      for (const a of [0, 1, 2]) {
        const is = xs.map((n, d) => (d === a ? n : Math.max(1, n - 1)));
        const ss = xs.map((n) => n + 1);
        const sv = valuesOf(dtype, numelOf(ss), 8).map((v) => (dtype.startsWith('float') ? Math.round(v) / 8 : v));
        const src = make(sv, dtype, ss, device);
        // Distinct indices along the axis for the assignment (CUDA's order among repeats is unspecified).
        const u = randomIndex(is, xs[a], 3, 'int64', device, a);
        t.deepEqual(numbers(gx.scatter(x, a, u.t, src)), refScatter(xv, xs, a, u.v, is, sv, ss, false), `scatter ${dtype} axis ${a}`);
        if (!addTypes.includes(dtype)) continue;
        const r = randomIndex(is, xs[a], 17, 'int32', device);
        const want = refScatter(xv, xs, a, r.v, is, sv, ss, true);
        const wrap = (v: number) => (dtype === 'uint8' ? v & 255 : v);  // uint8 sums wrap
        t.deepEqual(numbers(gx.scatterAdd(x, a, r.t, src)), want.map(wrap), `scatterAdd ${dtype} axis ${a}`);
        const y = x.clone();
        t.is(y.scatterAdd_(a, r.t, src), y);
        t.deepEqual(numbers(y), want.map(wrap), 'scatterAdd_');
      }
    }
    // A number as src, a transposed self, in place.
    const z = gx.zeros([3, 4], { device }).transpose(0, 1);
    z.scatter_(1, gx.tensor([[2], [0], [1], [2]], { dtype: 'int64', device }), 9);
    t.deepEqual(numbers(z), [0, 0, 9, 9, 0, 0, 0, 9, 0, 0, 0, 9]);
    t.deepEqual(numbers(gx.scatterAdd(gx.zeros([3], { device }), 0, gx.zeros([0], { dtype: 'int64', device }), gx.zeros([0], { device }))), [0, 0, 0], 'empty index');
  });
});

deviceTestSerial('maskedFill', (t, device) => {
  noLeaks(t, device, () => {
    const x = gx.tensor([[1, -2, 3], [-4, 5, -6]], { dtype: 'int32', device });
    const r = gx.maskedFill(x, x.lt(0), 7.9);
    t.is(r.dtype, 'int32');
    t.deepEqual(numbers(r), [1, 7, 3, 7, 5, 7]);
    const f = gx.tensor([[1, 2, 3], [4, 5, 6]], { device }).transpose(0, 1);
    t.deepEqual(numbers(f.maskedFill(gx.tensor([true, false], { device }), gx.tensor(0, { device }))), [0, 4, 0, 5, 0, 6], 'broadcast mask, transposed self');
    t.throws(() => gx.maskedFill(f, gx.zeros([2, 3, 2], { dtype: 'bool', device }), 0), { message: /gx\.maskedFill: mask of shape \[2, 3, 2\] does not broadcast to self's shape \[3, 2\]/ });
    t.throws(() => gx.maskedFill(f, f, 0), { message: /gx\.maskedFill: mask must be a bool tensor/ });
  });
});

deviceTestSerial('gradients of gather, indexSelect, take, scatterAdd and scatter', (t, device) => {
  noLeaks(t, device, () => {
    const xv = [0.5, -1, 2, 3, -4, 1.5];
    const w = [1, 2, 3, 4];
    const gradOf = (f: (x: gx.Tensor) => gx.Tensor): number[] => {
      const x = gx.tensor(xv, { dtype: 'float64', device }).reshape([2, 3]);
      x.requiresGrad = true;
      gx.sum(gx.mul(f(x), gx.tensor(w, { dtype: 'float64', device }).reshape([2, 2]))).backward();
      const g = numbers(x.grad as gx.Tensor);
      x.grad?.dispose();
      return g;
    };
    const i64 = (v: number[][]) => gx.tensor(v, { dtype: 'int64', device });
    t.deepEqual(gradOf((x) => gx.gather(x, 1, i64([[0, 0], [2, 1]]))), [3, 0, 0, 0, 4, 3]);
    t.deepEqual(gradOf((x) => gx.indexSelect(x, 1, gx.tensor([2, 2], { dtype: 'int64', device }))), [0, 0, 3, 0, 0, 7]);
    t.deepEqual(gradOf((x) => gx.take(x, i64([[-1, 0], [5, 1]]))), [2, 4, 0, 0, 0, 4]);
    // scatterAdd: self gets g, src gets g gathered.
    const s = gx.tensor([[1, 2], [3, 4]], { dtype: 'float64', device });
    s.requiresGrad = true;
    t.deepEqual(gradOf((x) => gx.scatterAdd(x, 1, i64([[2, 0], [1, 1]]), s).narrow(1, 0, 2)), [1, 2, 0, 3, 4, 0]);
    t.deepEqual(numbers(s.grad as gx.Tensor), [0, 1, 4, 4]);
    s.grad?.dispose();
    const x2 = gx.zeros([2, 3], { dtype: 'float64', device });
    const s2 = gx.tensor([[1, 2], [3, 4]], { dtype: 'float64', device });
    s2.requiresGrad = true;
    const y = gx.scatter(x2, 1, i64([[2, 0], [1, 1]]), s2);
    gx.sum(gx.mul(y, gx.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float64', device }))).backward();
    t.deepEqual(numbers(s2.grad as gx.Tensor), [3, 1, 5, 5]);
    s2.grad?.dispose();
  });
});

deviceTest('errors name the op, the argument, the value, the axis and its size', (t, device) => {
  gx.tidy(() => {
    const x = gx.zeros([2, 5], { device });
    const i64 = (v: number[][]) => gx.tensor(v, { dtype: 'int64', device });
    t.throws(() => gx.gather(x, 1, i64([[7]])), { message: 'gx.gather: index 7 is out of range for dimension 1 of size 5' });
    t.throws(() => gx.gather(x, 0, i64([[-1]])), { message: 'gx.gather: index -1 is out of range for dimension 0 of size 2' });
    t.throws(() => gx.scatterAdd(x, 1, i64([[1, 5]]), x), { message: 'gx.scatterAdd: index 5 is out of range for dimension 1 of size 5' });
    t.throws(() => gx.scatter(x, 1, i64([[1, 5]]), 1), { message: /^gx\.scatter: index 5 is out of range/ });
    t.throws(() => gx.indexSelect(x, 0, gx.tensor([2], { dtype: 'int32', device })), { message: /^gx\.indexSelect: index 2 is out of range for dimension 0 of size 2/ });
    t.throws(() => gx.take(x, gx.tensor([-11], { dtype: 'int64', device })), { message: /^gx\.take: index -11 is out of range/ });
    t.throws(() => gx.gather(x, 1, gx.zeros([1, 1], { device })), { instanceOf: TypeError, message: /gx\.gather: index must be an int64 or int32 tensor, got float32 \[1, 1\]/ });
    t.throws(() => gx.gather(x, 1, gx.zeros([3, 1], { dtype: 'int64', device })), { message: /gx\.gather: index of shape \[3, 1\] is larger than self .* in dimension 0/ });
    t.throws(() => gx.gather(x, 1, gx.zeros([2], { dtype: 'int64', device })), { message: /gx\.gather: index of shape \[2\] must have as many dimensions as self/ });
    t.throws(() => gx.gather(x, 2, gx.zeros([1, 1], { dtype: 'int64', device })), { message: /gx\.gather: axis/ });
    t.throws(() => gx.scatter(x, 1, gx.zeros([2, 2], { dtype: 'int64', device }), gx.zeros([2, 1], { device })), { message: /gx\.scatter: index of shape \[2, 2\] is larger than src/ });
    t.throws(() => gx.scatterAdd(x, 1, gx.zeros([1, 1], { dtype: 'int64', device }), gx.zeros([1, 1], { dtype: 'float64', device })), { instanceOf: TypeError, message: /gx\.scatterAdd: src \(float64 \[1, 1\]\) must have self's dtype float32/ });
    t.throws(() => gx.indexSelect(x, 0, gx.zeros([1, 1], { dtype: 'int64', device })), { message: /gx\.indexSelect: index must be 0-d or 1-d/ });
  });
});
