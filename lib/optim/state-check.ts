// What each optimizer's per-parameter state holds, by key, and the check
// Optimizer.loadStateDict makes of a loaded state against it.
//
// NOTE [ Loading optimizer state ]
// A loaded state is read by key, so a key the optimizer does not know (a
// misspelling, another optimizer's state) was kept and never read: the
// momentum or the moments silently restarted from zero. A tensor of another
// shape than its parameter's either failed later with a message naming an
// op, or, on the multi-tensor path, was used as long as its element count
// matched; a missing moment of Adam failed at the step with "Cannot read
// properties of undefined". So every key is checked before anything is
// copied: known to the optimizer, present where required, and of the kind it
// holds; the error names the entry and the key.
import { describeValue, formatShape } from '../core/shape';
import { Tensor } from '../core/tensor';
import { isFloating } from '../ops/promotion';

/**
 * What one key of a parameter's state holds:
 * - `param`: a floating tensor of the parameter's shape (a momentum buffer, a moment);
 * - `count`: a whole number >= 0, or a one-element tensor holding one (a step count);
 * - `number`: a finite number;
 * - `flat` / `flatList`: a 1-d floating tensor of all the parameters' elements, or a list of them (L-BFGS);
 * - `numbers`: a list of finite numbers.
 */
export type StateKind = 'param' | 'count' | 'number' | 'flat' | 'flatList' | 'numbers';

/** A state key's kind, and whether a state that has any key must have it (Adam's moments). */
export interface StateKey {
  kind: StateKind;
  required?: boolean;
}

/** The keys of a parameter's state (NOTE [ Loading optimizer state ]). */
export type StateSpec = Readonly<Record<string, StateKey>>;

/** What the tensors of a state entry are checked against. */
export interface StateTarget {
  /** The parameter the entry belongs to. */
  param: Tensor;
  /** The elements of all the optimizer's parameters (L-BFGS's flat vectors). */
  flatNumel: number;
}

function wholeCount(v: number): boolean {
  return Number.isInteger(v) && v >= 0;
}

/** Why `v` is not a floating tensor of `shape` (`of`: what that shape is), or null. */
function floatingTensor(v: unknown, shape: readonly number[], of: string, where: string): string | null {
  const want = `a floating tensor of ${of} ${formatShape(shape)}`;
  if (!(v instanceof Tensor)) return `${where} must be ${want}, got ${describeValue(v)}`;
  if (v.isDisposed) return `${where} was disposed`;
  if (!isFloating(v.dtype)) return `${where} must be ${want}, got a tensor of ${v.dtype}`;
  if (formatShape(v.shape) !== formatShape(shape)) return `${where} has shape ${formatShape(v.shape)}, not ${of} ${formatShape(shape)}`;
  return null;
}

/** Why `v` is not of `kind`, or null when it is. */
function kindError(kind: StateKind, v: unknown, t: StateTarget, where: string): string | null {
  const flat = [t.flatNumel];
  switch (kind) {
    case 'param': return floatingTensor(v, t.param.shape, 'its parameter\'s shape', where);
    case 'flat': return floatingTensor(v, flat, 'the parameters\' flat shape', where);
    case 'number': return typeof v === 'number' && Number.isFinite(v) ? null : `${where} must be a finite number, got ${describeValue(v)}`;
    case 'count': {
      if (typeof v === 'number') return wholeCount(v) ? null : `${where} must be a whole number >= 0, got ${v}`;
      if (!(v instanceof Tensor) || v.isDisposed || v.numel !== 1) return `${where} must be a whole number >= 0 or a one-element tensor of one, got ${describeValue(v)}`;
      const n = Number(v.toArraySync()[0]);
      return wholeCount(n) ? null : `${where} must hold a whole number >= 0, got ${n}`;
    }
    case 'flatList':
    case 'numbers': {
      if (!Array.isArray(v)) return `${where} must be a list, got ${describeValue(v)}`;
      for (let i = 0; i < v.length; i++) {
        const e = kindError(kind === 'flatList' ? 'flat' : 'number', v[i], t, `${where}[${i}]`);
        if (e !== null) return e;
      }
      return null;
    }
  }
}

/**
 * Checks one loaded state entry (`where`: `state[2]`) against `spec` before
 * anything is copied; throws naming the entry and the key. Null values of
 * keys that are not required stand for "none yet" (torch's momentum_buffer
 * of None) and are left out by the caller.
 */
export function checkStateEntry(fn: string, where: string, entry: unknown, spec: StateSpec, t: StateTarget, owner: string): void {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry) || entry instanceof Tensor) {
    throw new TypeError(`${fn}: ${where} must be an object of state by key, got ${describeValue(entry)}`);
  }
  const known = Object.keys(spec);
  const holds = known.length === 0 ? 'holds nothing for this parameter' : `holds ${known.join(', ')}`;
  const keys = Object.keys(entry);
  for (const k of keys) {
    if (!Object.prototype.hasOwnProperty.call(spec, k)) throw new Error(`${fn}: ${where} has the key '${k}', which ${owner}'s state does not hold (it ${holds})`);
  }
  if (keys.length === 0) return;
  for (const [k, s] of Object.entries(spec)) {
    const v = (entry as Record<string, unknown>)[k];
    if (v === undefined || v === null) {
      if (s.required === true) throw new Error(`${fn}: ${where} lacks '${k}', which ${owner}'s state needs (it ${holds})`);
      continue;
    }
    const e = kindError(s.kind, v, t, `${where}.${k}`);
    if (e !== null) throw new Error(`${fn}: ${e}`);
  }
}
