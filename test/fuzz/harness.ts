// How one fuzzed call is judged. The model says what the call must do: give a
// result (dtype, shape, values within a tolerance) or throw. Any Error the
// call throws must be an `Error` whose message names the function called
// ('gx.add', 'Tensor.add_'); a result must match the model. Anything else
// fails the property, unless the model marked that very failure as a known
// bug (KNOWN: ...), which is counted instead (GPUEXT_FUZZ_STRICT=1 or --strict
// fails on those too, to check a fix).
import * as gx from '../../lib';
import type { DType } from '../../lib';
import { maxFinite, isFloat, type V } from './semantics';

/** A known bug a failure may be: its tag ('KNOWN: issue 14 item 3') and which failure it explains. */
export interface Known {
  tag: string;
  /** mismatch: a wrong result; message: an Error not naming the function; throw: an unexpected Error; any. */
  on: 'mismatch' | 'message' | 'throw' | 'any';
}

export interface Expect {
  dtype: DType;
  shape: readonly number[];
  /** The values in C order; undefined entries are not checked (C++ leaves them undefined). */
  values?: readonly (V | undefined)[];
  /** Relative tolerance (0: exact). */
  rtol?: number;
  /** Absolute tolerance per element, on top of rtol. */
  atol?: (i: number) => number;
  /** Further checks of the result; returns what is wrong. */
  check?: (t: gx.Tensor) => string | undefined;
}

export type Verdict =
  | { kind: 'ok'; expect: Expect; mayThrow?: string; known?: readonly Known[] }
  | { kind: 'value'; check: (r: unknown) => string | undefined; mayThrow?: string; known?: readonly Known[] }
  | { kind: 'error'; why: string; known?: readonly Known[] };

export class Failure extends Error {
  constructor(message: string, readonly known?: string) {
    super(message);
    this.name = 'FuzzFailure';
  }
}

/** What one run of the suite counted. */
export class Stats {
  calls = 0;
  errors = 0;
  readonly known = new Map<string, number>();
  /** Why the model expected Errors, and how often (to tune the generators: --verbose). */
  readonly expectedErrors = new Map<string, number>();

  knownLine(): string {
    return [...this.known].map(([k, n]) => `${k}: ${n}`).join('; ');
  }
}

export interface Ctx {
  device: string;
  stats: Stats;
  strict: boolean;
}

export function describeThrown(e: unknown): string {
  if (e instanceof Error) return `${e.constructor.name}: ${e.message}`;
  try {
    return `${typeof e} ${String(e)}`;
  } catch {
    return typeof e;
  }
}

/** Throws a Failure, or counts it when `known` explains it and the run is not strict. */
export function fail(ctx: Ctx, message: string, known?: readonly Known[], on: Known['on'] = 'mismatch'): void {
  const k = known?.find((x) => x.on === on || x.on === 'any');
  if (k !== undefined && !ctx.strict) {
    ctx.stats.known.set(k.tag, (ctx.stats.known.get(k.tag) ?? 0) + 1);
    return;
  }
  throw new Failure(k === undefined ? message : `${message} [${k.tag}]`, k?.tag);
}

function formatV(v: V | undefined): string {
  return typeof v === 'bigint' ? `${v}n` : String(v);
}

/** Whether a is e within the tolerances; infinities stand for results at the end of a floating dtype's range. */
function near(a: V, e: V, rtol: number, atol: number, dtype: DType): boolean {
  if (typeof a === 'bigint' || typeof e === 'bigint') {
    return typeof a === typeof e ? a === e : Number(a) === Number(e);
  }
  if (Number.isNaN(a) || Number.isNaN(e)) return Number.isNaN(a) && Number.isNaN(e);
  if (a === e) return true;
  if (rtol === 0 && atol === 0) return false;
  if (!Number.isFinite(a) || !Number.isFinite(e)) {
    // One overflowed where the other rounded to the largest finite value.
    const big = maxFinite(dtype) * (1 - 4 * Math.max(rtol, 2 ** -11));
    return isFloat(dtype) && Math.sign(a) === Math.sign(e) && Math.abs(a) >= big && Math.abs(e) >= big;
  }
  return Math.abs(a - e) <= rtol * Math.abs(e) + atol;
}

/** What is wrong with tensor r given the expectation, or undefined. */
export function compareTensor(r: gx.Tensor, x: Expect): string | undefined {
  if (r.dtype !== x.dtype) return `dtype ${r.dtype}, expected ${x.dtype}`;
  const shape = r.shape;
  if (shape.length !== x.shape.length || shape.some((s, i) => s !== x.shape[i])) {
    return `shape [${shape.join(', ')}], expected [${x.shape.join(', ')}]`;
  }
  if (x.values !== undefined) {
    const got = Array.from(r.toArraySync() as ArrayLike<V>);
    if (got.length !== x.values.length) return `${got.length} elements, expected ${x.values.length}`;
    const rtol = x.rtol ?? 0;
    for (let i = 0; i < got.length; i++) {
      const e = x.values[i];
      if (e === undefined) continue;
      const atol = x.atol?.(i) ?? 0;
      if (!near(got[i], e, rtol, atol, x.dtype)) {
        const tol = rtol > 0 || atol > 0 ? ` (rtol ${rtol}, atol ${atol})` : '';
        return `element ${i} is ${formatV(got[i])}, expected ${formatV(e)}${tol}; got [${got.slice(0, 16).map(formatV).join(', ')}` +
          `${got.length > 16 ? ', ...' : ''}]`;
      }
    }
  }
  return x.check?.(r);
}

/**
 * Makes the call and judges it against the verdict. `names`: the function
 * names an Error may carry (the one called, and where lib documents it, the
 * function a method forwards to). Returns the call's result when it returned.
 */
export function judge(ctx: Ctx, names: readonly string[], verdict: Verdict, call: () => unknown,
  keep: (value: unknown) => void = () => undefined): { value?: unknown; threw: boolean } {
  ctx.stats.calls++;
  if (verdict.kind === 'error') {
    const why = verdict.why.replace(/-?\d[\d.e+]*|\[[^\]]*\]/g, '#');
    ctx.stats.expectedErrors.set(why, (ctx.stats.expectedErrors.get(why) ?? 0) + 1);
  }
  let value: unknown;
  try {
    value = call();
    keep(value);  // before judging: a failure must not leak what the call made
  } catch (e) {
    ctx.stats.errors++;
    if (e instanceof Failure) throw e;
    if (!(e instanceof Error)) {
      fail(ctx, `${names[0]} threw a non-Error: ${describeThrown(e)}`, verdict.known, 'any');
      return { threw: true };
    }
    if (!names.some((n) => e.message.includes(n))) {
      fail(ctx, `${names[0]}: the Error does not name the function: ${describeThrown(e)}`, verdict.known, 'message');
    }
    if (verdict.kind !== 'error' && verdict.mayThrow === undefined) {
      fail(ctx, `${names[0]} threw, but the model expects a result: ${describeThrown(e)}`, verdict.known, 'throw');
    }
    return { threw: true };
  }
  if (verdict.kind === 'error') {
    fail(ctx, `${names[0]} returned ${value instanceof gx.Tensor ? 'a tensor' : describeThrown(value)}, expected an Error (${verdict.why})`,
      verdict.known, 'mismatch');
    return { value, threw: false };
  }
  if (verdict.kind === 'value') {
    const wrong = verdict.check(value);
    if (wrong !== undefined) fail(ctx, `${names[0]}: ${wrong}`, verdict.known);
    return { value, threw: false };
  }
  if (!(value instanceof gx.Tensor)) {
    fail(ctx, `${names[0]} returned ${describeThrown(value)}, expected a Tensor`, verdict.known);
    return { value, threw: false };
  }
  const wrong = compareTensor(value, verdict.expect);
  if (wrong !== undefined) fail(ctx, `${names[0]}: ${wrong}`, verdict.known);
  return { value, threw: false };
}

/** Live tensors on the CPU and on `device`: what a run must leave as it found. */
export function liveCounts(device: string): string {
  const cpu = gx.memory.stats('cpu').liveTensors;
  return device === 'cpu' ? `${cpu}` : `${cpu}/${gx.memory.stats(device).liveTensors}`;
}
