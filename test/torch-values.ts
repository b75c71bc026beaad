// Comparing a result with torch's values written into a test (the torch
// audits: test/torch-audit.test.ts, test/logspace-msort.test.ts).
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';

/** A tensor's values as JS numbers (bigints and booleans converted). */
export const numbers = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint | boolean>, Number);

/** r has torch's dtype, shape and values: NaN equal to NaN, -0 told from 0, a finite nonzero value within rtol. */
export function sameAsTorch(t: ExecutionContext, r: gx.Tensor, dtype: gx.DType, shape: number[], values: number[], what: string, rtol = 1e-6): void {
  t.is(String(r.dtype), dtype, `${what}: dtype`);
  t.deepEqual(r.shape, shape, `${what}: shape`);
  const got = numbers(r);
  t.is(got.length, values.length, `${what}: length`);
  got.forEach((g, i) => {
    const w = values[i];
    const ok = Object.is(g, w) || (Number.isFinite(w) && w !== 0 && Math.abs(g - w) <= rtol * Math.abs(w));
    t.true(ok, `${what}: [${i}] is ${g}, torch gives ${w}`);
  });
}

/**
 * How far apart two finite numbers of a float32 or float64 tensor are, in units in the last place of that dtype
 * (Infinity when either is not finite or their signs differ).
 */
export function ulpsApart(a: number, b: number, dtype: 'float32' | 'float64'): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || Math.sign(a) !== Math.sign(b)) return Infinity;
  if (dtype === 'float32') {
    const bits = new Int32Array(new Float32Array([Math.abs(a), Math.abs(b)]).buffer);
    return Math.abs(bits[0] - bits[1]);
  }
  const bits = new BigInt64Array(new Float64Array([Math.abs(a), Math.abs(b)]).buffer);
  return Number(bits[0] > bits[1] ? bits[0] - bits[1] : bits[1] - bits[0]);
}

/**
 * The ulps a logspace value may lie from torch's CPU one on `device` (NOTE [ Logspace as torch computes it ]):
 * its power is the device's pow, glibc's (correctly rounded) on the CPU and CUDA's (libdevice's, at most 2 ulp from
 * the exact power) on CUDA, as torch's own CUDA logspace computes it; float32 rounds that double once more, at most 1
 * float32 ulp from the CPU's. Every other dtype and device: none.
 */
export function logspaceUlps(device: string, dtype: string): number {
  if (!device.startsWith('cuda')) return 0;
  return dtype === 'float64' ? 2 : dtype === 'float32' ? 1 : 0;
}
