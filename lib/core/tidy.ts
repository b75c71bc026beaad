// gx.tidy: dispose every tensor made inside a function except what it returns.
import type { Tensor } from './tensor';
import { tooManyArguments } from './options';

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

/** @internal Opens a new innermost scope: the tensors made until closeScope(scope) join it. */
export function openScope(): Set<Tensor> {
  const scope = new Set<Tensor>();
  scopes.push(scope);
  return scope;
}

/**
 * @internal Closes `scope`, the innermost: the tensors made in it that
 * `kept` holds (a Set, or a list) join the enclosing scope, and the rest are
 * disposed (all of them when kept is undefined, as when the code threw).
 */
export function closeScope(scope: Set<Tensor>, kept: ReadonlySet<unknown> | readonly unknown[] | undefined): void {
  scopes.pop();
  for (const t of scope) {
    if (kept !== undefined && (kept instanceof Set ? kept.has(t) : (kept as readonly unknown[]).includes(t))) track(t);
    else if (!t.isDisposed) t.dispose();
  }
}

/**
 * Runs `fn` and disposes every tensor created during it, except the tensors
 * it returns (directly, or inside arrays, Maps and plain objects). Those join
 * the enclosing tidy scope, if any. `fn` must be synchronous.
 * @example
 * const y = gx.tidy(() => a.add(b).mul(2));   // the intermediate a + b is freed
 */
export function tidy<T>(fn: () => T): T {
  if (arguments.length > 1) tooManyArguments('gx.tidy', '(fn)', arguments.length - 1, arguments[1]);
  if (typeof fn !== 'function') throw new TypeError('gx.tidy: argument \'fn\' must be a function');
  const scope = openScope();
  const keep = new Set<unknown>();
  let result: T;
  try {
    result = fn();
    if (result instanceof Promise) {
      throw new TypeError('gx.tidy: fn must be synchronous (it returned a Promise); dispose tensors explicitly in async code');
    }
    collect(result, keep, new Set());
  } catch (err) {
    closeScope(scope, undefined);
    throw err;
  }
  closeScope(scope, keep);
  return result;
}
