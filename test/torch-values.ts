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
