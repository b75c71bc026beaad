// Whether autograd records: on by default; gx.noGrad(fn) runs fn without
// recording (inference, optimizer steps), gx.enableGrad(fn) turns it back on
// inside. Per thread, as everything in gpuext's JS state is.
import { tooManyArguments } from '../core/options';

let enabled = true;

export function isGradEnabled(): boolean {
  if (arguments.length > 0) tooManyArguments('gx.isGradEnabled', '()', arguments.length, arguments[0]);
  return enabled;
}

function withMode<T>(on: boolean, fn: () => T, api: string): T {
  if (typeof fn !== 'function') throw new TypeError(`${api}: argument 'fn' must be a function`);
  const before = enabled;
  enabled = on;
  try {
    const r = fn();
    if (r instanceof Promise) throw new TypeError(`${api}: fn must be synchronous (it returned a Promise)`);
    return r;
  } finally {
    enabled = before;
  }
}

/**
 * Runs `fn` without recording operations for autograd (torch.no_grad).
 * @example gx.noGrad(() => w.sub_(w.grad.mul(lr)));
 */
export function noGrad<T>(fn: () => T): T {
  if (arguments.length > 1) tooManyArguments('gx.noGrad', '(fn)', arguments.length - 1, arguments[1]);
  return withMode(false, fn, 'gx.noGrad');
}

/** Runs `fn` recording operations, also inside noGrad (torch.enable_grad). */
export function enableGrad<T>(fn: () => T): T {
  if (arguments.length > 1) tooManyArguments('gx.enableGrad', '(fn)', arguments.length - 1, arguments[1]);
  return withMode(true, fn, 'gx.enableGrad');
}
