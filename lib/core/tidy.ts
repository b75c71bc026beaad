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

// NOTE [ Tidy scopes are arrays ]
// The tensors of every open scope are one list, `tracked`, in the order
// they were made: a scope is the range from where it opened to the end of
// the list (its inner scopes' ranges follow its own), and each tensor names
// the scope holding it (Tensor.tidyScope). Tracking is a store at the end
// and one on the tensor, untracking a store; an entry whose tensor has left
// (untracked) is skipped. Closing a scope disposes its tensors and closes
// the list up over its range, keeping the entries of the tensors it kept,
// which name the enclosing scope from then on and lie in its range (they
// follow its start). Scopes were Sets: every
// tensor then took an identity hash, each add a hash insert and the set's
// regrowth, each untrack a delete from every open scope, and the engine
// opens one per node of a backward (~800 instructions of a one-element op's
// ~23000 on the tape). Untracked entries of the innermost scope are
// compacted away when they are most of its range, so that a long scope
// does not hold on to tensors nothing else keeps.

/** A tidy scope: where its range of `tracked` starts (NOTE [ Tidy scopes are arrays ]). */
export interface Scope {
  readonly start: number;
  /** How many of its entries are stale (counted as they leave; a compaction drops them). */
  stale: number;
}

/** The open scopes, innermost last. */
const scopes: Scope[] = [];
/**
 * The tensors of the open scopes, each scope's from its start on, up to
 * `end`; the slots past it are cleared (undefined), not cut off: the list
 * keeps its store (a length set lower gives it back, and the next pushes
 * regrow it) until the outermost scope closes.
 */
const tracked: (Tensor | undefined)[] = [];
let end = 0;
/** Nonzero while a scope closes: tensors leaving then (disposal's aliases) must not compact the list it walks. */
let closing = 0;
/** Past this many slots the list gives its store back when no scope is open. */
const KEEP_SLOTS = 4096;

/** Past this many stale entries, and half its range, the innermost scope drops them. */
const COMPACT_AT = 64;

/** @internal Called for every new Tensor: joins the innermost tidy scope. */
export function track(t: Tensor): void {
  const n = scopes.length;
  const s = n === 0 ? undefined : scopes[n - 1];
  if (t.tidyScope === s) return;
  leave(t);
  if (s === undefined) return;
  tracked[end++] = t;
  t.tidyScope = s;
}

/** @internal Takes `t` out of every tidy scope: it outlives them (autograd's saved tensors and gradients). */
export function untrack(t: Tensor): Tensor {
  leave(t);
  return t;
}

/** `t` leaves the scope holding it, if any. */
function leave(t: Tensor): void {
  const s = t.tidyScope as Scope | undefined;
  if (s === undefined) return;
  t.tidyScope = undefined;
  if (++s.stale > COMPACT_AT && closing === 0 && s === scopes[scopes.length - 1] && s.stale * 2 > end - s.start) {
    let j = s.start;
    for (let i = s.start; i < end; i++) if ((tracked[i] as Tensor).tidyScope === s) tracked[j++] = tracked[i];
    cutTo(j);
    s.stale = 0;
  }
}

/** @internal For tests: how many entries the open scopes' list holds. */
export function trackedLength(): number {
  return end;
}

/** The list ends at `j`: the slots from there to `end` cleared. */
function cutTo(j: number): void {
  for (let i = j; i < end; i++) tracked[i] = undefined;
  end = j;
  if (end === 0 && scopes.length === 0 && tracked.length > KEEP_SLOTS) tracked.length = 0;
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
export function openScope(): Scope {
  const scope: Scope = { start: end, stale: 0 };
  scopes.push(scope);
  return scope;
}

/**
 * @internal Closes `scope`, the innermost: the tensors made in it that
 * `kept` holds (a Set, or a list, of tensors and any other values) join the
 * enclosing scope, and the rest are disposed (all of them when kept is
 * undefined, as when the code threw).
 */
export function closeScope(scope: Scope, kept: ReadonlySet<unknown> | readonly unknown[] | undefined): void {
  scopes.pop();
  const parent = scopes.length === 0 ? undefined : scopes[scopes.length - 1];
  // The kept tensors name the parent first: in this range, only they can (a tensor tracked twice has two entries).
  if (Array.isArray(kept)) {
    for (let i = 0; i < kept.length; i++) moveKept(kept[i], scope, parent);
  } else if (kept !== undefined) {
    for (const v of kept as ReadonlySet<unknown>) moveKept(v, scope, parent);
  }
  const start = scope.start;
  const last = end;
  let j = start;
  closing++;
  try {
    for (let i = start; i < last; i++) {
      const t = tracked[i] as Tensor;
      if (t.tidyScope === scope) {
        t.tidyScope = undefined;
        if (!t.isDisposed) t.dispose();
      } else if (t.tidyScope === parent && parent !== undefined) {
        tracked[j++] = t;  // kept: now in the parent's range
      }
    }
  } finally {
    closing--;
    // Tensors made while disposing (autograd's aliases of saved tensors) were pushed past `last`, into the parent's range.
    for (let i = last; i < end; i++) tracked[j++] = tracked[i];
    cutTo(j);
  }
}

/** A kept value that is a tensor of `scope` joins `parent` (only a tensor can name a scope). */
function moveKept(v: unknown, scope: Scope, parent: Scope | undefined): void {
  if (typeof v === 'object' && v !== null && (v as { tidyScope?: unknown }).tidyScope === scope) (v as Tensor).tidyScope = parent;
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
