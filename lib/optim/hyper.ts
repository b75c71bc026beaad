// Hyperparameter checks shared by the optimizers: a TypeError for a value of
// the wrong kind, a RangeError with torch.optim's wording for one out of
// range ("Invalid learning rate: -1"), each prefixed with the optimizer.
import { describeValue } from '../core/shape';

/** `v` as a number, or a TypeError naming `fn` and the option. */
export function number(fn: string, name: string, v: unknown): number {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describeValue(v)}`);
  return v;
}

/** A number >= 0 (NaN is not), else `${what}: ${v}` as torch words it. */
export function nonNegative(fn: string, name: string, v: unknown, what: string): number {
  const x = number(fn, name, v);
  if (!(x >= 0)) throw new RangeError(`${fn}: ${what}: ${x}`);
  return x;
}

/** A positive integer (an iteration count, a history length). */
export function positiveInt(fn: string, name: string, v: unknown): number {
  const x = number(fn, name, v);
  if (!Number.isInteger(x) || x < 1) throw new RangeError(`${fn}: ${name} must be a positive integer, got ${x}`);
  return x;
}

/** The learning rate, as every optimizer checks it. */
export function learningRate(fn: string, v: unknown): number {
  return nonNegative(fn, 'lr', v, 'Invalid learning rate');
}

/** The weight decay, as every optimizer checks it. */
export function weightDecay(fn: string, v: unknown): number {
  return nonNegative(fn, 'weightDecay', v, 'Invalid weight_decay value');
}
