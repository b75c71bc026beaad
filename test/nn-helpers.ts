// Inputs the gx.nn tests share with test/reference/torch_nn.py: each made by
// vals() from sin(), so both sides build the same numbers without sharing a
// random state.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';

/** scale sin(a i + b) for i < n: the generator torch_nn.py's vals() mirrors. */
export function vals(n: number, a: number, b: number, scale = 1): number[] {
  return Array.from({ length: n }, (_, i) => scale * Math.sin(a * i + b));
}

/** A tensor of vals() in `shape` (float64 unless told). */
export function T(shape: number[], a: number, b: number, scale: number, device: gx.DeviceLike, dtype: gx.DType = 'float64'): gx.Tensor {
  const n = shape.reduce((x, y) => x * y, 1);
  using flat = gx.tensor(vals(n, a, b, scale), { dtype, device });
  return flat.reshape(shape);
}

/** Asserts every element of `actual` is within atol + rtol |expected| of `expected`. */
export function close(t: ExecutionContext, actual: ArrayLike<number>, expected: readonly number[], what: string, atol = 1e-10, rtol = 1e-9): void {
  t.is(actual.length, expected.length, `${what}: length`);
  let worst = 0, at = -1;
  for (let i = 0; i < expected.length; i++) {
    const err = Math.abs(actual[i] - expected[i]) - rtol * Math.abs(expected[i]);
    if (!(err <= worst)) { worst = Number.isNaN(err) ? Infinity : err; at = i; }
  }
  t.true(worst <= atol, `${what}: element ${at} is ${actual[at]}, expected ${expected[at]}`);
}

/** The values of a tensor as numbers. */
export function values(x: gx.Tensor): number[] {
  return Array.from(x.toArraySync() as ArrayLike<number>, Number);
}
