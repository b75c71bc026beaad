// gx.jit.device: a JS function callable from kernels, vectorized functions
// and other device functions, compiled beside each caller for the argument
// types of each call (Numba's @cuda.jit(device=True)); it returns a number
// or a tuple, an array the caller destructures. The simulator runs its typed
// form too; called from plain JS it is the function itself.
import { closureValues, type Lookup } from './closure';
import { parseFunction, referencedNames } from './source';
import { DEVICE, type DeviceFunctionInfo } from './translate';

/**
 * Marks `fn` as a device function: kernels, vectorized functions and device
 * functions call it, and it is compiled with them.
 * @example
 * const polarToCartesian = gx.jit.device((rho: number, theta: number) => [rho * Math.cos(theta), rho * Math.sin(theta)]);
 * const polarDistance = gx.vectorize(['float32(float32, float32, float32, float32)'], (r1, t1, r2, t2) => {
 *   const [x1, y1] = polarToCartesian(r1, t1);
 *   const [x2, y2] = polarToCartesian(r2, t2);
 *   return ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5;
 * });
 */
export function device<F extends (...args: number[]) => number | boolean | readonly number[]>(fn: F): F {
  const parsed = parseFunction(fn, 'gx.jit.device');
  let lookup: Lookup | undefined;
  const info: DeviceFunctionInfo = { parsed, lookup: () => (lookup ??= closureValues(fn, referencedNames(parsed))) };
  const wrapped = ((...args: number[]) => fn(...args)) as unknown as F;
  Object.defineProperty(wrapped, 'name', { value: fn.name });
  Object.defineProperty(wrapped, DEVICE, { value: info });
  return wrapped;
}
