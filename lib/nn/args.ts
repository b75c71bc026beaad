// Argument checks the gx.nn files share.
import { checkTensor } from '../ops/common';
import { isFloating } from '../ops/promotion';
import { describeValue } from '../core/shape';
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
 * A boolean option, checked: `dflt` when undefined, else true or false. Read
 * as written (`=== false`, `=== true`, truthiness) a 0 or a 'false' was a silent
 * answer that differed from one option to the next: Linear made a bias for
 * { bias: 0 }, maxPool2d took { ceilMode: 1 } as false.
 */
export function flag(v: unknown, fn: string, name: string, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw new TypeError(`${fn}: option '${name}' must be a boolean, got ${describeValue(v)}`);
  return v;
}
