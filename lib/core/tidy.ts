// gx.tidy: dispose every tensor made inside a function except what it returns.
//
// NOTE [ Owned tensors ]
// tidy keeps what fn returns by walking the value: tensors, and arrays, Maps,
// Sets and plain objects of them. A class that holds tensors the walk cannot
// see (a ChunkedTensor's blocks, behind its methods) lists them under the
// `ownedTensors` symbol; the walk follows that list as it follows an array's
// items, so returning such an object keeps everything it owns (tidy once
// disposed a returned ChunkedTensor's blocks, leaving it unusable). Any other
// class instance is opaque: its tensors are disposed.
import type { Tensor } from './tensor';
import { tooManyArguments } from './options';

/**
 * The protocol of a container of tensors (NOTE [ Owned tensors ]): a method
 * under this symbol returns the tensors the object owns (or other
 * containers), and gx.tidy keeps them when fn returns the object.
 * @example
 * class Pair { constructor(readonly a: gx.Tensor, readonly b: gx.Tensor) {}
 *   [gx.ownedTensors]() { return [this.a, this.b]; } }
 * const p = gx.tidy(() => new Pair(gx.ones([2]), gx.zeros([2])));  // a and b stay alive
 */
export const ownedTensors: unique symbol = Symbol.for('gpuext.ownedTensors');

/** An object that lists the tensors it owns (NOTE [ Owned tensors ]). */
export interface TensorOwner {
  [ownedTensors](): Iterable<unknown>;
}

function ownerOf(value: object): TensorOwner | undefined {
  return typeof (value as Partial<TensorOwner>)[ownedTensors] === 'function' ? value as TensorOwner : undefined;
}

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
  const owner = ownerOf(value);
  if (owner !== undefined) {
    for (const v of owner[ownedTensors]()) collect(v, out, seen);
  } else if (Array.isArray(value) || value instanceof Set) {
    for (const v of value) collect(v, out, seen);
  } else if (value instanceof Map) {
    for (const [k, v] of value) {
      collect(k, out, seen);
      collect(v, out, seen);
    }
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
 * it returns (directly, or inside arrays, Maps, Sets and plain objects, or
 * owned by an object that lists them under `gx.ownedTensors`, as a
 * ChunkedTensor its blocks). Those join the enclosing tidy scope, if any.
 * `fn` must be synchronous.
 * @example
 * const y = gx.tidy(() => a.add(b).mul(2));   // the intermediate a + b is freed
 * const c = gx.tidy(() => gx.chunked(x.mul(2), { chunks: [2, 3] }));  // x * 2 is freed, c's blocks kept
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
