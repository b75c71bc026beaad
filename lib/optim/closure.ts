// The closure of step(closure): a function that zeroes the gradients,
// computes the loss, calls backward() and returns the loss, as torch.optim's.
// It runs with grad recording on (also when step is called inside noGrad) and
// inside gx.tidy, so what it makes is freed except the loss it returns.
import { enableGrad } from '../tape/mode';
import { describeValue } from '../core/shape';
import { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';

/** What a closure may return: the loss as a one-element tensor, or a number. */
export type Loss = Tensor | number;

/** A TypeError unless `closure` is a function (or, when not `required`, undefined). */
export function checkClosure(fn: string, closure: unknown, required: boolean): void {
  if (closure === undefined && !required) return;
  if (typeof closure !== 'function') {
    const what = closure === undefined ? 'none was given' : `got ${describeValue(closure)}`;
    throw new TypeError(`${fn}: ${required ? 'a closure is required' : 'the closure must be a function'} ` +
      `(a function that zeroes the gradients, computes the loss, calls backward() and returns the loss); ${what}`);
  }
}

/** A TypeError unless `closure` is a function. */
export function requireClosure(fn: string, closure: unknown): asserts closure is () => unknown {
  checkClosure(fn, closure, true);
}

/** Calls the closure with grad recording on, inside gx.tidy; returns its loss. */
export function callClosure<L>(fn: string, closure: () => L): L {
  return enableGrad(() => tidy(() => {
    const loss = closure();
    if (loss instanceof Promise) throw new TypeError(`${fn}: the closure must be synchronous (it returned a Promise)`);
    return loss;
  }));
}

/** The loss as a number (torch's float(loss)). */
export function lossValue(fn: string, loss: unknown): number {
  if (typeof loss === 'number') return loss;
  if (loss instanceof Tensor) {
    if (loss.numel !== 1) throw new TypeError(`${fn}: the closure must return the loss as one number or a one-element tensor, got a tensor of ${loss.numel} elements`);
    return Number(loss.item());
  }
  throw new TypeError(`${fn}: the closure must return the loss (a one-element tensor or a number), got ${describeValue(loss)}`);
}

/** Frees a loss the optimizer only read (one the closure returned besides the first). */
export function releaseLoss(loss: unknown): void {
  if (loss instanceof Tensor && !loss.isDisposed) loss.dispose();
}
