// gx.jit.device: a JS function callable from kernels, vectorized functions
// and other device functions, compiled beside each caller for the argument
// types of each call (Numba's @cuda.jit(device=True)); it returns a number
// or a tuple, an array the caller destructures. The simulator runs its typed
// form too; called from plain JS it is the function itself. It is parsed
// when a caller's translation first needs it (NOTE [ Translation cache ]:
// a caller found in the cache needs only its text and what it closes over).
import { DEVICE, type DeviceFunctionInfo } from './module';
import { infoGet, infoPut, parser, type FunctionInfo } from './translation-cache';
import type { Parsed } from './parse';

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
  if (typeof fn !== 'function') throw new TypeError(`gx.jit.device: expected a function, got ${typeof fn}`);
  const text = Function.prototype.toString.call(fn);
  let parsed: Parsed | undefined;
  // Compiled with its callers, which read NVRTC's files ahead when they will need it.
  let info: FunctionInfo | undefined = infoGet(text, false);
  const parse = (): Parsed => {
    if (parsed === undefined) {
      const r = parser().parse(fn, 'gx.jit.device');
      parsed = r.p;
      if (info === undefined) infoPut(text, (info = r.info));
    }
    return parsed;
  };
  // Not in the cache: parsed now, which also reports a syntax error at once.
  if (info === undefined) parse();
  const dev: DeviceFunctionInfo = {
    fn,
    get parsed() { return parse().parsed; },
    lookup: () => parse().lookup(),
    info: (): FunctionInfo => {
      if (info === undefined) parse();
      return info as FunctionInfo;
    },
  };
  const wrapped = ((...args: number[]) => fn(...args)) as unknown as F;
  Object.defineProperty(wrapped, 'name', { value: fn.name });
  Object.defineProperty(wrapped, DEVICE, { value: dev });
  return wrapped;
}
