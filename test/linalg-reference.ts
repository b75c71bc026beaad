// Plain-JS helpers for the tests of the vector and matrix helpers, the norms
// and einsum (test/linalg-products.test.ts, test/norms.test.ts,
// test/einsum.test.ts): random inputs as tensors and as the values they hold,
// row-major arrays, a comparison with a tolerance per dtype, and a check that
// a test leaves no tensor behind.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { cast, isFloat } from './ops-reference';
import { rng } from './rng';

/** A row-major array: its shape and values. */
export interface Arr {
  shape: number[];
  values: number[];
}

export const numelOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** Row-major strides of a shape. */
export function stridesOf(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/** The multi-index of flat index i. */
export function unravel(i: number, shape: readonly number[]): number[] {
  const st = stridesOf(shape);
  return shape.map((n, d) => Math.floor(i / st[d]) % n);
}

export const offsetOf = (p: readonly number[], shape: readonly number[]): number => {
  const st = stridesOf(shape);
  return p.reduce((acc, v, d) => acc + v * st[d], 0);
};

/** A tensor's values (through its strides) as numbers. */
export function valuesOf(t: gx.Tensor): number[] {
  using c = t.contiguous();
  return Array.from(c.toArraySync() as ArrayLike<number | bigint>, Number);
}

/**
 * A random tensor of `shape` and dtype on `device` with values in [lo, hi)
 * (integers: whole numbers in [lo, hi)), and the values it holds (rounded to
 * its dtype). `transposed` makes it a non-contiguous view: the last two dims
 * of a contiguous tensor with them swapped, transposed back.
 */
export function randomTensor(shape: readonly number[], dtype: gx.DType, device: string, seed: number,
  opts: { lo?: number; hi?: number; transposed?: boolean } = {}): { t: gx.Tensor; arr: Arr } {
  const r = rng(seed);
  const lo = opts.lo ?? -2, hi = opts.hi ?? 2;
  const n = numelOf(shape);
  const values = Array.from({ length: n }, () => {
    const v = lo + r() * (hi - lo);
    return isFloat(dtype) ? Number(cast(v, dtype)) : dtype === 'bool' ? (v > (lo + hi) / 2 ? 1 : 0) : Math.floor(v);
  });
  const data = dtype === 'int64' ? values.map(BigInt) : dtype === 'bool' ? values.map(Boolean) : values;
  const arr = { shape: shape.slice(), values };
  if (opts.transposed && shape.length >= 2) {
    // Lay the values out with the last two dims swapped, then view them back.
    const k = shape.length;
    const swapped = [...shape.slice(0, k - 2), shape[k - 1], shape[k - 2]];
    const laid = Array.from({ length: n }, (_, i) => {
      const p = unravel(i, swapped);
      [p[k - 2], p[k - 1]] = [p[k - 1], p[k - 2]];
      return data[offsetOf(p, shape)];
    });
    using base = gx.tensor(laid as number[], { dtype, device, shape: swapped } as never);
    return { t: base.transpose(-2, -1), arr };
  }
  return { t: gx.tensor(data as number[], { dtype, device, shape } as never), arr };
}

/** Relative tolerance of a computed (summed) result in `dtype`. */
export function rtolOf(dtype: gx.DType): number {
  switch (dtype) {
    case 'float64': return 1e-12;
    case 'float32': return 1e-5;
    case 'float16': return 4e-3;
    case 'bfloat16': return 3e-2;
    default: return 0;
  }
}

/** got against want (shape and values), within rtol * |want| + atol; NaN equals NaN. */
export function expectClose(t: ExecutionContext, got: gx.Tensor, want: Arr, what: string, rtol = 0, atol = 0): void {
  t.deepEqual(got.shape, want.shape, `${what}: shape`);
  const g = valuesOf(got);
  for (let i = 0; i < want.values.length; i++) {
    const a = g[i], e = want.values[i];
    if (Object.is(a, e) || a === e || (Number.isNaN(a) && Number.isNaN(e))) continue;
    if (Number.isFinite(e) && Math.abs(a - e) <= rtol * Math.abs(e) + atol) continue;
    t.fail(`${what}: element ${i} is ${a}, expected ${e} (rtol ${rtol}, atol ${atol})`);
    return;
  }
  t.pass();
}

/** Runs body in a tidy scope and checks it leaves as many live tensors as it found (on the CPU and the device). */
export function noLeaks(t: ExecutionContext, device: string, body: () => void): void {
  const live = (): number => gx.memory.stats('cpu').liveTensors + (device === 'cuda' ? gx.memory.stats('cuda').liveTensors : 0);
  const before = live();
  gx.tidy(body);
  t.is(live(), before, 'no tensor left behind');
}

/**
 * Without tidy: each call's result disposed, the live tensors must be as
 * before (an op that drops an intermediate without disposing it fails here,
 * where a tidy scope would have hidden it).
 */
export function noStrayTensors(t: ExecutionContext, device: string, calls: Record<string, () => gx.Tensor>): void {
  const live = (): number => gx.memory.stats('cpu').liveTensors + (device === 'cuda' ? gx.memory.stats('cuda').liveTensors : 0);
  for (const [what, call] of Object.entries(calls)) {
    const before = live();
    call().dispose();
    t.is(live(), before, `${what}: no intermediate left behind`);
  }
}
