// Reductions (gx.sum, prod, mean, max, min, argmax, argmin and their
// methods) over random axes (negative, repeated, out of range, not integers),
// keepdims, dtype and out, against plain-JS references: exact for integers
// and extrema, within a bound on the rounding of a float sum otherwise.
import fc from 'fast-check';

import * as gx from '../../../lib';
import { DTYPES, type DType } from '../../../lib';
import { baseArb, dtypeArb, junkArb } from '../arbitraries';
import {
  aliasing, deviceOf, errorVerdict, operandArb, outArb, outValue, resolveOperand, resolveOut, targetProblem, type OperandSpec, type OutSpec, type Plan,
} from '../calls';
import type { Expect, Known } from '../harness';
import { numel, type BaseSpec, type ModelTensor } from '../model';
import { castFrom, cast, computeOf, epsOf, isFloat, maxFinite, roundCompute, toCompute, type Compute, type V } from '../semantics';
import type { FuzzProperty } from '../property';

export const REDUCE_OPS = ['sum', 'prod', 'mean', 'max', 'min', 'argmax', 'argmin'] as const;
export type ReduceName = (typeof REDUCE_OPS)[number];
type Kind = 'sum' | 'mean' | 'extremum' | 'arg';

function kindOf(op: ReduceName): Kind {
  if (op === 'sum' || op === 'prod') return 'sum';
  if (op === 'mean') return 'mean';
  return op === 'max' || op === 'min' ? 'extremum' : 'arg';
}

/** An axis argument: none, one (maybe negative or out of range), a list (maybe repeating), or junk. */
export type AxisSpec = { kind: 'none' } | { kind: 'null' } | { kind: 'one'; axis: number } | { kind: 'list'; axes: number[] } | { kind: 'junk'; value: unknown };

const axisNumber = fc.oneof({ weight: 12, arbitrary: fc.integer({ min: -2, max: 1 }) }, { weight: 1, arbitrary: fc.integer({ min: -18, max: 18 }) });

export const axisArb: fc.Arbitrary<AxisSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<AxisSpec>({ kind: 'none' }) },
  { weight: 1, arbitrary: fc.constant<AxisSpec>({ kind: 'null' }) },
  { weight: 8, arbitrary: axisNumber.map((axis): AxisSpec => ({ kind: 'one', axis })) },
  { weight: 4, arbitrary: fc.array(axisNumber, { maxLength: 3 }).map((axes): AxisSpec => ({ kind: 'list', axes })) },
  { weight: 1, arbitrary: fc.oneof(junkArb, fc.constantFrom<unknown>(1.5, Number.NaN, '0', [0.5])).map((value): AxisSpec => ({ kind: 'junk', value })) },
);

/**
 * The axis argument passed. With `fit`, numbers are first brought into the
 * valid range of an ndim-d tensor (keeping their sign), so most calls are
 * valid; without it they go as generated (often out of range).
 */
export function axisValue(a: AxisSpec, ndim = 0, fit = false): unknown {
  const lim = Math.max(ndim, 1);
  const f = (x: number): number => (fit ? (x < 0 ? -1 - ((-1 - x) % lim) : x % lim) : x);
  switch (a.kind) {
    case 'none': return undefined;
    case 'null': return null;
    case 'one': return f(a.axis);
    case 'list': return a.axes.map(f);
    case 'junk': return a.value;
  }
}

/**
 * The dims an axis argument names (lib/ops/axes.ts normalizeAxes: sorted,
 * distinct; all for none or an empty list, as torch.sum(x, dim=[]); [] for a
 * 0-d tensor), or why it is refused.
 */
export function axesOf(a: unknown, ndim: number): number[] | string {
  if (a === undefined || a === null || (Array.isArray(a) && a.length === 0)) return Array.from({ length: ndim }, (_, i) => i);
  const list = typeof a === 'number' ? [a] : Array.isArray(a) ? (a as unknown[]) : undefined;
  if (list === undefined) return 'an axis of the wrong kind';
  const lim = Math.max(ndim, 1);
  const seen = new Set<number>();
  for (const x of list) {
    if (typeof x !== 'number' || !Number.isInteger(x)) return 'an axis that is not an integer';
    if (x < -lim || x >= lim) return 'an axis out of range';
    const d = x < 0 ? x + lim : x;
    if (seen.has(d)) return 'an axis named twice';
    seen.add(d);
  }
  return ndim === 0 ? [] : [...seen].sort((p, q) => p - q);
}

/** For each output element, the input's elements it reduces (C order over the reduced dims). */
export function groups<T>(values: readonly T[], shape: readonly number[], dims: readonly number[]): T[][] {
  const kept = shape.map((_, i) => i).filter((i) => !dims.includes(i));
  const outN = numel(kept.map((i) => shape[i]));
  const out: T[][] = Array.from({ length: outN }, () => []);
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < values.length; i++) {
    let o = 0;
    for (const d of kept) o = o * shape[d] + idx[d];
    out[o].push(values[i]);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

export interface ReduceInput {
  op: ReduceName;
  method: boolean;
  /** 0: no options, 1: the axis alone, 2: an options object, 3: junk options. */
  style: number;
  bases: BaseSpec[];
  x: OperandSpec;
  axis: AxisSpec;
  /** Bring axis numbers into the tensor's range (see axisValue). */
  fit: boolean;
  keepdims: boolean;
  dtype?: unknown;
  /** Pass the dtype to ops that take none (max, min, argmax, argmin) too. */
  dtypeAnyway: boolean;
  out: OutSpec;
  junk: unknown;
}

export const reduceArb: fc.Arbitrary<ReduceInput> = fc.record({
  op: fc.constantFrom(...REDUCE_OPS),
  method: fc.boolean(),
  style: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: fc.constant(1) },
    { weight: 16, arbitrary: fc.constant(2) }, { weight: 1, arbitrary: fc.constant(3) }),
  bases: fc.tuple(baseArb()).map((b) => [...b]),
  x: operandArb(fc.constant(0), fc.constant(1), { tensor: 16, scalar: 0, junk: 1 }),
  axis: axisArb,
  fit: fc.nat(4).map((n) => n > 0),
  keepdims: fc.boolean(),
  dtype: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: dtypeArb },
    { weight: 1, arbitrary: fc.constantFrom<unknown>('f32', 1) }),
  dtypeAnyway: fc.nat(5).map((n) => n === 0),
  out: outArb(fc.constant(0)),
  junk: fc.constantFrom<unknown>('x', true, Symbol.for('o'), () => 0),
});

/** The reference of one group in compute type c, with the tolerance it carries. */
function reduceGroup(op: ReduceName, vals: readonly V[], c: Compute): { v: V | undefined; atol: number; rtol: number } {
  const n = vals.length;
  if (c === 'int') {
    const b = vals.map((v) => BigInt(v));
    switch (op) {
      case 'sum': return { v: BigInt.asIntN(64, b.reduce((a, x) => a + x, 0n)), atol: 0, rtol: 0 };
      case 'prod': return { v: b.reduce((a, x) => BigInt.asIntN(64, a * x), 1n), atol: 0, rtol: 0 };
      case 'max': return { v: b.reduce((a, x) => (x > a ? x : a)), atol: 0, rtol: 0 };
      case 'min': return { v: b.reduce((a, x) => (x < a ? x : a)), atol: 0, rtol: 0 };
      case 'argmax': return { v: BigInt(b.reduce((best, x, i) => (x > b[best] ? i : best), 0)), atol: 0, rtol: 0 };
      case 'argmin': return { v: BigInt(b.reduce((best, x, i) => (x < b[best] ? i : best), 0)), atol: 0, rtol: 0 };
      default: return { v: undefined, atol: 0, rtol: 0 };
    }
  }
  const x = vals.map((v) => Number(v));
  const eps = c === 'double' ? 2 ** -53 : 2 ** -24;
  const big = c === 'double' ? Number.MAX_VALUE : maxFinite('float32');
  const absSum = x.reduce((a, v) => a + Math.abs(v), 0);
  switch (op) {
    case 'sum':
    case 'mean': {
      const s = x.reduce((a, v) => a + v, 0);
      // A float accumulator can overflow where a double one does not (the CPU sums float in double),
      // and then meet an infinity (inf - inf = NaN): judged on the finite terms.
      const finiteAbs = x.reduce((a, v) => a + (Number.isFinite(v) ? Math.abs(v) : 0), 0);
      if (finiteAbs > big / 4) return { v: undefined, atol: 0, rtol: 0 };
      const v = op === 'sum' ? s : s / n;
      // The floor: a float sum in a wider out may be the CPU's double value, unrounded even in the subnormal range.
      return { v, atol: ((n + 2) * eps * absSum) / (op === 'mean' ? Math.max(n, 1) : 1) + (c === 'double' ? 5e-324 : 1.5e-45), rtol: 0 };
    }
    case 'prod': {
      const finite = x.filter((v) => Number.isFinite(v) && v !== 0);
      const hi = finite.reduce((a, v) => a * Math.max(1, Math.abs(v)), 1);
      const lo = finite.reduce((a, v) => a * Math.min(1, Math.abs(v)), 1);
      const tiny = c === 'double' ? 1e-290 : 1e-30;
      // Partial products may overflow or underflow in one order and not in another.
      if (hi > big / 4 || lo < tiny) return { v: undefined, atol: 0, rtol: 0 };
      return { v: x.reduce((a, v) => a * v, 1), atol: 0, rtol: (n + 2) * eps };
    }
    case 'max':
    case 'min': {
      if (x.some(Number.isNaN)) return { v: Number.NaN, atol: 0, rtol: 0 };
      return { v: op === 'max' ? Math.max(...x) : Math.min(...x), atol: 0, rtol: 0 };
    }
    case 'argmax':
    case 'argmin': {
      const nan = x.findIndex(Number.isNaN);
      if (nan >= 0) return { v: BigInt(nan), atol: 0, rtol: 0 };
      let best = 0;
      x.forEach((v, i) => { if (op === 'argmax' ? v > x[best] : v < x[best]) best = i; });
      return { v: BigInt(best), atol: 0, rtol: 0 };
    }
  }
}

const NAMES_OK = new Set<string>(DTYPES);

function reducePlan(inp: ReduceInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const x = resolveOperand(inp.x, bases);
  const method = inp.method && x.kind === 'tensor';
  // max and min are called as the reductions amax and amin (gx.max along one axis gives { values, indices }).
  const name = inp.op === 'max' || inp.op === 'min' ? `a${inp.op}` : inp.op;
  const fn = method ? `Tensor.${name}` : `gx.${name}`;
  const kind = kindOf(inp.op);
  const ndim = x.kind === 'tensor' ? x.t.layout.shape.length : 0;
  let axisSpec = inp.axis;
  // argmax and argmin take one axis: a list only now and then.
  if (kind === 'arg' && axisSpec.kind === 'list' && inp.fit) axisSpec = axisSpec.axes.length > 0 ? { kind: 'one', axis: axisSpec.axes[0] } : { kind: 'none' };
  const axisArg = axisValue(axisSpec, ndim, inp.fit);
  const dtypeArg = kind === 'sum' || kind === 'mean' || inp.dtypeAnyway ? inp.dtype : undefined;
  // What the call passes as its second argument.
  const style = inp.style === 1 && (typeof axisArg === 'number' || Array.isArray(axisArg)) ? 1 : inp.style === 1 ? 2 : inp.style;
  let outTarget: ModelTensor | undefined;
  const withOut = style === 2 && inp.out.kind !== 'none';
  const decide = (): { verdict: Plan['verdict']; writes?: ModelTensor } => {
    if (style === 3) return { verdict: errorVerdict('options of the wrong kind') };
    if (x.kind !== 'tensor') return { verdict: errorVerdict('self is not a tensor') };
    if (x.t.disposed) return { verdict: errorVerdict('self is disposed') };
    const t = x.t, shape = t.layout.shape, xd = t.dtype;
    const axis = style === 0 ? undefined : axisArg;
    if (kind === 'arg' && Array.isArray(axis)) return { verdict: errorVerdict('argmax/argmin take one axis') };
    const dims = axesOf(axis, shape.length);
    if (typeof dims === 'string') return { verdict: errorVerdict(dims) };
    const keepdims = style === 2 && inp.keepdims;
    const outShape = keepdims ? shape.map((s, i) => (dims.includes(i) ? 1 : s)) : shape.filter((_, i) => !dims.includes(i));
    const askedRaw = style === 2 ? dtypeArg : undefined;
    if (askedRaw !== undefined && (typeof askedRaw !== 'string' || !NAMES_OK.has(askedRaw))) return { verdict: errorVerdict('not a dtype') };
    const asked = askedRaw as DType | undefined;
    if (asked !== undefined && (kind === 'extremum' || kind === 'arg')) return { verdict: errorVerdict('a dtype option') };
    let compute: DType, res: DType;
    if (kind === 'sum') {
      compute = res = asked ?? (isFloat(xd) ? xd : 'int64');
    } else if (kind === 'mean') {
      compute = res = asked ?? xd;
      if (!isFloat(compute)) return { verdict: errorVerdict('mean of a non-floating dtype') };
    } else if (kind === 'extremum') {
      compute = res = xd;
    } else {
      if (xd === 'bool') return { verdict: errorVerdict('argmax of bool') };
      compute = xd;
      res = 'int64';
    }
    const reduced = numel(shape.filter((_, i) => dims.includes(i)));
    const kept = numel(shape.filter((_, i) => !dims.includes(i)));
    if ((kind === 'extremum' || kind === 'arg') && reduced === 0 && kept > 0) return { verdict: errorVerdict('an empty reduction without identity') };
    if (withOut) {
      const out = resolveOut(inp.out, bases, outShape, res);
      outTarget = out.target;
      if (out.junk !== undefined && out.junk !== null) return { verdict: errorVerdict('out of the wrong kind') };
      if (out.target !== undefined) {
        const why = targetProblem(out.target, outShape, res, device, 'out', deviceOf(t, device));
        if (why !== undefined) return { verdict: errorVerdict(why) };
      }
    }
    const store = outTarget?.dtype ?? res;
    const c = computeOf(compute);
    const ins = t.values.map((v) => castFrom(v, xd, compute));
    const values: (V | undefined)[] = [];
    const atols: number[] = [];
    let rtol = 0;
    for (const g of groups(ins, shape, dims)) {
      if (g.some((v) => v === undefined)) {
        values.push(undefined);
        atols.push(0);
        continue;
      }
      const r = reduceGroup(inp.op, g.map((v) => toCompute(v as V, c)), c);
      values.push(r.v === undefined ? undefined : kind === 'arg' ? cast(r.v, store) : cast(roundCompute(r.v, c), store));
      atols.push(r.atol);
      rtol = Math.max(rtol, r.rtol);
    }
    const inexact = (kind === 'sum' || kind === 'mean') && c !== 'int';
    const expect: Expect = {
      dtype: store, shape: outShape, values,
      rtol: inexact ? rtol + 2 * epsOf(isFloat(store) && epsOf(store) > epsOf(compute) ? store : compute) : 0,
      atol: inexact ? (i) => atols[i] : undefined,
    };
    const al = aliasing(outTarget, [t], false);
    return { verdict: { kind: 'ok', expect, ...(al.mayThrow ? { mayThrow: al.mayThrow } : {}) }, writes: outTarget };
  };
  const d = decide();
  return {
    bases,
    plan: {
      names: [fn],
      verdict: d.verdict,
      writes: d.writes,
      prepare: (pool) => {
        const a = x.kind === 'tensor' ? pool.tensor(x.t) : x.value;
        let arg: unknown;
        let returns: gx.Tensor | undefined;
        if (style === 1) arg = axisArg;
        else if (style === 3) arg = inp.junk;
        else if (style === 2) {
          const o: Record<string, unknown> = {};
          if (axisSpec.kind !== 'none') o.axis = axisArg;
          if (inp.keepdims) o.keepdims = true;
          if (dtypeArg !== undefined) o.dtype = dtypeArg;
          if (withOut) {
            o.out = outValue(pool, outTarget, inp.out);
            if (o.out instanceof gx.Tensor) returns = o.out;
          }
          arg = o;
        }
        type R = (x: gx.Tensor, o?: unknown) => gx.Tensor;
        const f = (method ? METHOD[inp.op] : FN[inp.op]) as R;
        return { call: () => (style === 0 ? f(a as gx.Tensor) : f(a as gx.Tensor, arg)), returns };
      },
    },
  };
}

type AnyReduce = (x: gx.Tensor, o?: gx.ReduceArg) => gx.Tensor;
const FN: Record<ReduceName, AnyReduce> = {
  sum: (x, o) => gx.sum(x, o), prod: (x, o) => gx.prod(x, o), mean: (x, o) => gx.mean(x, o), max: (x, o) => gx.amax(x, o),
  min: (x, o) => gx.amin(x, o), argmax: (x, o) => gx.argmax(x, o as gx.ArgReduceOptions), argmin: (x, o) => gx.argmin(x, o as gx.ArgReduceOptions),
};
const METHOD: Record<ReduceName, AnyReduce> = {
  sum: (x, o) => x.sum(o), prod: (x, o) => x.prod(o), mean: (x, o) => x.mean(o), max: (x, o) => (o === undefined ? x.amax() : x.amax(o)), min: (x, o) => (o === undefined ? x.amin() : x.amin(o)),
  argmax: (x, o) => x.argmax(o as gx.ArgReduceOptions), argmin: (x, o) => x.argmin(o as gx.ArgReduceOptions),
};

export const reduceProperty: FuzzProperty<ReduceInput> = {
  name: 'reduce',
  about: 'gx.sum, prod, mean, max, min, argmax, argmin and their methods',
  arb: reduceArb,
  plan: reducePlan,
};
