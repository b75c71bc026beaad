// Argument checks the gx.nn files share.
import { checkTensor } from '../ops/common';
import { isFloating } from '../ops/promotion';
import type { Tensor } from '../core/tensor';

/** A floating tensor argument, checked. */
export function floatingArg(x: unknown, fn: string, name: string): Tensor {
  const t = checkTensor(x, fn, name);
  if (!isFloating(t.dtype)) {
    throw new TypeError(`${fn}: argument '${name}' must be a floating tensor, got ${t.dtype}`);
  }
  return t;
}
