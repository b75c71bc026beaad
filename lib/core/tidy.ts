// gx.tidy: dispose every tensor made inside a function except what it returns.
import type { Tensor } from './tensor';

const scopes: Set<Tensor>[] = [];

/** @internal Called for every new Tensor: joins the innermost tidy scope. */
export function track(t: Tensor): void {
  if (scopes.length > 0) scopes[scopes.length - 1].add(t);
}

/** @internal Takes `t` out of every tidy scope: it outlives them (autograd's saved tensors and gradients). */
export function untrack(t: Tensor): Tensor {
  for (const s of scopes) s.delete(t);
  return t;
}

function collect(value: unknown, out: Set<unknown>, seen: Set<unknown>): void {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  out.add(value);
  if (Array.isArray(value)) {
    for (const v of value) collect(v, out, seen);
  } else if (value instanceof Map) {
    for (const v of value.values()) collect(v, out, seen);
  } else if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) collect(v, out, seen);
  }
}

/**
 * Runs `fn` in a new innermost scope; then the tensors made during it that
 * `kept(result)` accepts join the enclosing scope, and the rest are
 * disposed (all of them when fn throws).
 */
function scoped<T>(fn: () => T, kept: (result: T) => (t: Tensor) => boolean): T {
  const scope = new Set<Tensor>();
  scopes.push(scope);
  let result: T;
  let keep: (t: Tensor) => boolean;
  try {
    result = fn();
    keep = kept(result);
  } catch (err) {
    scopes.pop();
    for (const t of scope) if (!t.isDisposed) t.dispose();
    throw err;
  }
  scopes.pop();
  for (const t of scope) {
    if (keep(t)) track(t);
    else if (!t.isDisposed) t.dispose();
  }
  return result;
}

/**
 * Runs `fn` and disposes every tensor created during it, except the tensors
 * it returns (directly, or inside arrays, Maps and plain objects). Those join
 * the enclosing tidy scope, if any. `fn` must be synchronous.
 * @example
 * const y = gx.tidy(() => a.add(b).mul(2));   // the intermediate a + b is freed
 */
export function tidy<T>(fn: () => T): T {
  if (typeof fn !== 'function') throw new TypeError('gx.tidy: argument \'fn\' must be a function');
  return scoped(fn, (result) => {
    if (result instanceof Promise) {
      throw new TypeError('gx.tidy: fn must be synchronous (it returned a Promise); dispose tensors explicitly in async code');
    }
    const keep = new Set<unknown>();
    collect(result, keep, new Set());
    return (t) => keep.has(t);
  });
}

/**
 * @internal tidy for code that returns a list of tensors (or nulls): keeps
 * the tensors in the list, disposes the rest made during `fn`. The autograd
 * engine runs each backward formula in one (tidy's walk of the result is
 * more than a flat list needs).
 */
export function tidyList<T extends Tensor | null>(fn: () => T[]): T[] {
  return scoped(fn, (result) => (t) => result.includes(t as T));
}
