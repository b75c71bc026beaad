// Argument checks the gx.nn files share.
import { checkTensor } from '../ops/common';
import { isFloating, promoteTypes } from '../ops/promotion';
import type { DType } from '../core/dtype';
import type { Tensor } from '../core/tensor';

/** A floating tensor argument, checked. */
export function floatingArg(x: unknown, fn: string, name: string): Tensor {
  const t = checkTensor(x, fn, name);
  if (!isFloating(t.dtype)) {
    throw new TypeError(`${fn}: argument '${name}' must be a floating tensor, got ${t.dtype}`);
  }
  return t;
}

/**
 * The dtype a norm computes in (NOTE [ Norms of half inputs ]): float32 for float16 and bfloat16 inputs.
 *
 * NOTE [ Norms of half inputs ]
 * layerNorm and rmsNorm of float16 or bfloat16 inputs compute in float32 and round once at the end, as
 * torch's kernels do (their opmath type): computed in the input's dtype, x - mean rounded to the input's
 * precision, and a float16 layerNorm of values near 100 (std 3) was off by 1e-2 (bfloat16: 9e-2) where
 * torch's is off by its final rounding, 1e-3. The result keeps the dtype the operands promote to.
 */
export function normDtype(x: Tensor): DType {
  return x.dtype === 'float16' || x.dtype === 'bfloat16' ? 'float32' : x.dtype;
}

/** The dtype x, weight and bias promote to (a norm's result: NOTE [ Norms of half inputs ]). */
export function normResultDtype(x: Tensor, ...params: (Tensor | null)[]): DType {
  return params.reduce<DType>((d, p) => (p === null ? d : promoteTypes(d, p.dtype)), x.dtype);
}
