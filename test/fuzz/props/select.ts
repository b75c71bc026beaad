// gx.where, gx.clamp (and Tensor.where, clamp, clamp_) and gx.astype against
// plain-JS references.
import fc from 'fast-check';

import * as gx from '../../../lib';
import { DTYPES, type DType } from '../../../lib';
import { baseArb, baseOf, cpuArb, dtypeArb, junkArb, relationArb, relatedShape, scalarArb, shapeArb } from '../arbitraries';
import {
  aliasing, badOptions, deviceOf, errorVerdict, operandArb, optsJunkArb, outArb, outValue, resolveOperand, resolveOut,
  targetProblem, type ModelOperand, type OperandSpec, type OutSpec, type Plan,
} from '../calls';
import { broadcast, broadcastIndex, numel, overlapsItself, type BaseSpec, type ModelTensor } from '../model';
import {
  canCastTo, cast, castFrom, checkedInt, computeOf, isInt, resultTypeOf, roundCompute, toCompute, truthy, type Compute, type PromoOperand, type V,
} from '../semantics';
import { promoOf, scalarProblem } from './binary';
import type { FuzzProperty } from '../property';

// --- where ----------------------------------------------------------------------

export interface WhereInput {
  method: boolean;
  bases: BaseSpec[];
  cond: OperandSpec;
  x: OperandSpec;
  y: OperandSpec;
  out: OutSpec;
  opts?: { junk: unknown };
}

/** A condition base (bool, now and then another dtype) and two operand bases of related shapes. */
const whereBases: fc.Arbitrary<BaseSpec[]> = fc.record({
  s0: shapeArb, notBool: fc.nat(15).map((n) => n === 0), dc: dtypeArb, d1: dtypeArb, d2: dtypeArb, same: fc.boolean(),
  r1: relationArb, r2: relationArb, cpu: cpuArb,
}).chain((r) => fc.tuple(
  baseOf(r.notBool ? r.dc : 'bool', r.s0, r.cpu),
  baseOf(r.d1, relatedShape(r.s0, r.r1)),
  baseOf(r.same ? r.d1 : r.d2, relatedShape(r.s0, r.r2)),
));

export const whereArb: fc.Arbitrary<WhereInput> = fc.record({
  method: fc.boolean(),
  bases: whereBases,
  cond: operandArb(fc.constant(0), fc.constant(true), { tensor: 12, scalar: 0, junk: 1 }),
  x: operandArb(fc.constant(1), scalarArb, { tensor: 6, scalar: 3, junk: 1 }),
  y: operandArb(fc.oneof(fc.constant(2), fc.constant(1)), scalarArb, { tensor: 6, scalar: 3, junk: 1 }),
  out: outArb(fc.nat(2)),
  opts: optsJunkArb(),
});

/** A JS scalar as compute type c holds it. */
/** A JS scalar in compute type c; an integer one as the element of the integer common dtype it converts to (uint8: -1 is 255). */
function scalarIn(s: number | bigint | boolean, c: Compute, common: DType): V {
  const v = typeof s === 'boolean' ? (s ? 1 : 0) : s;
  return c === 'int' ? (isInt(common) ? checkedInt(v, common) : undefined) ?? BigInt(v) : toCompute(Number(v), c);
}

function wherePlan(inp: WhereInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const cond = resolveOperand(inp.cond, bases);
  const x = resolveOperand(inp.x, bases), y = resolveOperand(inp.y, bases);
  const method = inp.method && x.kind === 'tensor';
  const fn = method ? 'Tensor.where' : 'gx.where';
  const tensors = [cond, x, y].flatMap((o) => (o.kind === 'tensor' ? [o.t] : []));
  let outTarget: ModelTensor | undefined;
  const decide = (): { verdict: Plan['verdict']; writes?: ModelTensor } => {
    if (inp.opts !== undefined && badOptions(inp.opts.junk)) return { verdict: errorVerdict('options of the wrong kind') };
    if (cond.kind !== 'tensor') return { verdict: errorVerdict('condition is not a tensor') };
    if (cond.t.disposed) return { verdict: errorVerdict('condition is disposed') };
    if (cond.t.dtype !== 'bool') return { verdict: errorVerdict('condition is not bool') };
    if (x.kind === 'junk' || y.kind === 'junk') return { verdict: errorVerdict('an operand of the wrong kind') };
    if (tensors.some((t) => t.disposed)) return { verdict: errorVerdict('a disposed operand') };
    if (new Set(tensors.map((t) => deviceOf(t, device))).size > 1) return { verdict: errorVerdict('operands on two devices') };
    const shape = broadcast(tensors.map((t) => t.layout.shape));
    if (shape === undefined) return { verdict: errorVerdict('shapes that do not broadcast') };
    const common = resultTypeOf([promoOf(x), promoOf(y)].filter((p): p is PromoOperand => p !== undefined)) as DType;
    for (const o of [x, y]) {
      if (o.kind === 'scalar' && scalarProblem(o.value, common, true) !== undefined) return { verdict: errorVerdict('a number out of range') };
    }
    const out = resolveOut(inp.out, bases, shape, common);
    outTarget = out.target;
    if (out.junk !== undefined && out.junk !== null) return { verdict: errorVerdict('out of the wrong kind') };
    if (out.target !== undefined) {
      const why = targetProblem(out.target, shape, common, device, 'out', deviceOf(tensors[0], device));
      if (why !== undefined) return { verdict: errorVerdict(why) };
    }
    const store = out.target?.dtype ?? common;
    // Tensors go through the common dtype, JS scalars enter the compute type directly; then into out's dtype.
    const c = computeOf(common);
    const side = (o: ModelOperand): ((i: number) => V | undefined) => {
      if (o.kind === 'tensor') {
        const vals = o.t.values.map((v) => toCompute(castFrom(v, o.t.dtype, common) as V, c));
        const idx = broadcastIndex(shape, o.t.layout.shape);
        return (i) => vals[idx(i)];
      }
      const v = scalarIn(o.kind === 'scalar' ? o.value : 0, c, common);
      return () => v;
    };
    const cv = cond.t.values, ci = broadcastIndex(shape, cond.t.layout.shape);
    const fx = side(x), fy = side(y);
    const values = Array.from({ length: numel(shape) }, (_, i) => {
      const v = truthy(cv[ci(i)]) ? fx(i) : fy(i);
      return v === undefined ? undefined : cast(v, store);
    });
    const al = aliasing(out.target, tensors, true);
    return {
      verdict: { kind: 'ok', expect: { dtype: store, shape, values }, ...(al.mayThrow ? { mayThrow: al.mayThrow } : {}) },
      writes: out.target,
    };
  };
  const d = decide();
  return {
    bases,
    plan: {
      names: [fn],
      verdict: d.verdict,
      writes: d.writes,
      prepare: (pool) => {
        const val = (o: ModelOperand): unknown => (o.kind === 'tensor' ? pool.tensor(o.t) : o.value);
        const c = val(cond), a = val(x), b = val(y);
        let opts: unknown;
        let returns: gx.Tensor | undefined;
        if (inp.opts !== undefined) {
          opts = inp.opts.junk;
        } else if (inp.out.kind !== 'none') {
          const out = outValue(pool, outTarget, inp.out);
          opts = { out };
          if (out instanceof gx.Tensor) returns = out;
        }
        if (method) return { call: () => (a as gx.Tensor).where(c as gx.Tensor, b as gx.Operand, opts as gx.OutOptions), returns };
        return { call: () => gx.where(c as gx.Tensor, a as gx.Operand, b as gx.Operand, opts as gx.OutOptions), returns };
      },
    },
  };
}

export const whereProperty: FuzzProperty<WhereInput> = {
  name: 'where', about: 'gx.where and Tensor.where', arb: whereArb, plan: wherePlan, weight: 0.5,
};

// --- clamp ----------------------------------------------------------------------

type Bound = { kind: 'none' } | { kind: 'null' } | { kind: 'value'; value: number | bigint } | { kind: 'junk'; value: unknown };

export interface ClampInput {
  form: 'fn' | 'method' | 'inplace';
  bases: BaseSpec[];
  x: OperandSpec;
  min: Bound;
  max: Bound;
  out: OutSpec;
  opts?: { junk: unknown };
}

const boundArb: fc.Arbitrary<Bound> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Bound>({ kind: 'none' }) },
  { weight: 1, arbitrary: fc.constant<Bound>({ kind: 'null' }) },
  {
    weight: 10,
    arbitrary: scalarArb.filter((v): v is number | bigint => typeof v !== 'boolean').map((value): Bound => ({ kind: 'value', value })),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(junkArb.filter((v) => v !== undefined && v !== null), fc.constantFrom<unknown>(true, Number.NaN))
      .map((value): Bound => ({ kind: 'junk', value })),
  },
);

export const clampArb: fc.Arbitrary<ClampInput> = fc.record({
  form: fc.constantFrom<ClampInput['form']>('fn', 'method', 'inplace'),
  bases: fc.tuple(baseArb()).map((b) => [...b]),
  x: operandArb(fc.constant(0), fc.constant(1), { tensor: 12, scalar: 0, junk: 1 }),
  min: boundArb,
  max: boundArb,
  out: outArb(fc.constant(0)),
  opts: optsJunkArb(),
});

function boundValue(b: Bound): unknown {
  return b.kind === 'none' ? undefined : b.kind === 'null' ? null : b.value;
}

function clampPlan(inp: ClampInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const x = resolveOperand(inp.x, bases);
  const form = x.kind !== 'tensor' ? 'fn' : inp.form;
  const fn = form === 'fn' ? 'gx.clamp' : form === 'method' ? 'Tensor.clamp' : 'Tensor.clamp_';
  let outTarget: ModelTensor | undefined;
  const decide = (): { verdict: Plan['verdict']; writes?: ModelTensor } => {
    if (form !== 'inplace' && inp.opts !== undefined && badOptions(inp.opts.junk)) return { verdict: errorVerdict('options of the wrong kind') };
    if (x.kind !== 'tensor') return { verdict: errorVerdict('self is not a tensor') };
    if (x.t.disposed) return { verdict: errorVerdict('self is disposed') };
    const nan = (b: Bound): boolean => b.kind === 'value' && Number.isNaN(b.value);
    if (inp.min.kind === 'junk' || inp.max.kind === 'junk' || nan(inp.min) || nan(inp.max)) {
      return { verdict: errorVerdict('a bound of the wrong kind (NaN included)') };
    }
    const bounds = [inp.min, inp.max].flatMap((b) => (b.kind === 'value' ? [b.value] : []));
    if (bounds.length === 0) return { verdict: errorVerdict('no bound') };
    const common = resultTypeOf([promoOf(x), ...bounds.map((value): PromoOperand => ({ tensor: false, value }))]
      .filter((p): p is PromoOperand => p !== undefined)) as DType;
    if (common === 'bool') return { verdict: errorVerdict('bool input') };
    const t = x.t, shape = t.layout.shape;
    let target: ModelTensor | undefined;
    if (form === 'inplace') {
      target = t;
      if (!canCastTo(common, t.dtype)) return { verdict: errorVerdict(`a ${common} result in place into ${t.dtype}`) };
      if (overlapsItself(t.layout)) return { verdict: errorVerdict('self has elements sharing memory') };
    } else {
      const out = resolveOut(inp.out, bases, shape, common);
      outTarget = out.target;
      if (out.junk !== undefined && out.junk !== null) return { verdict: errorVerdict('out of the wrong kind') };
      if (out.target !== undefined) {
        const why = targetProblem(out.target, shape, common, device, 'out', deviceOf(t, device));
        if (why !== undefined) return { verdict: errorVerdict(why) };
        target = out.target;
      }
    }
    const c = computeOf(common);
    // An integer dtype takes each bound by torch's checked conversion (uint8: -1 is 255), refusing the rest.
    const asC = (b: Bound): V | undefined => {
      if (b.kind !== 'value') return undefined;
      if (c !== 'int') return toCompute(Number(b.value), c);
      return checkedInt(b.value, common);
    };
    if ([inp.min, inp.max].some((b) => b.kind === 'value' && c === 'int' && asC(b) === undefined)) {
      return { verdict: errorVerdict('a bound out of the dtype\'s range') };
    }
    const lo = asC(inp.min), hi = asC(inp.max);
    const store = target?.dtype ?? common;
    const values = t.values.map((v) => {
      let r = toCompute(castFrom(v, t.dtype, common) as V, c);
      if (lo !== undefined && r < lo) r = lo;
      if (hi !== undefined && r > hi) r = hi;
      return cast(roundCompute(r, c), store);
    });
    const al = aliasing(target, form === 'inplace' ? [] : [t], true);
    return {
      verdict: { kind: 'ok', expect: { dtype: store, shape, values }, ...(al.mayThrow ? { mayThrow: al.mayThrow } : {}) },
      writes: target,
    };
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
        const lo = boundValue(inp.min) as number | undefined, hi = boundValue(inp.max) as number | undefined;
        if (form === 'inplace') return { call: () => (a as gx.Tensor).clamp_(lo, hi), returns: a as gx.Tensor };
        let opts: unknown;
        let returns: gx.Tensor | undefined;
        if (inp.opts !== undefined) {
          opts = inp.opts.junk;
        } else if (inp.out.kind !== 'none') {
          const out = outValue(pool, outTarget, inp.out);
          opts = { out };
          if (out instanceof gx.Tensor) returns = out;
        }
        if (form === 'method') return { call: () => (a as gx.Tensor).clamp(lo, hi, opts as gx.OutOptions), returns };
        return { call: () => gx.clamp(a as gx.Tensor, lo, hi, opts as gx.OutOptions), returns };
      },
    },
  };
}

export const clampProperty: FuzzProperty<ClampInput> = {
  name: 'clamp', about: 'gx.clamp, Tensor.clamp and clamp_', arb: clampArb, plan: clampPlan, weight: 0.5,
};

// --- astype ---------------------------------------------------------------------

export interface AstypeInput {
  method: boolean;
  bases: BaseSpec[];
  x: OperandSpec;
  dtype: unknown;
}

export const astypeArb: fc.Arbitrary<AstypeInput> = fc.record({
  method: fc.boolean(),
  bases: fc.tuple(baseArb()).map((b) => [...b]),
  x: operandArb(fc.constant(0), fc.constant(1), { tensor: 12, scalar: 0, junk: 1 }),
  dtype: fc.oneof({ weight: 20, arbitrary: dtypeArb }, { weight: 1, arbitrary: fc.constantFrom<unknown>('float', 'int', undefined, 3) }),
});

function astypePlan(inp: AstypeInput): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const x = resolveOperand(inp.x, bases);
  const method = inp.method && x.kind === 'tensor';
  const fn = method ? 'Tensor.astype' : 'gx.astype';
  const d = inp.dtype;
  const verdict = ((): Plan['verdict'] => {
    if (x.kind !== 'tensor') return errorVerdict('self is not a tensor');
    if (x.t.disposed) return errorVerdict('self is disposed');
    if (typeof d !== 'string' || !(DTYPES as readonly string[]).includes(d)) return errorVerdict('not a dtype');
    const to = d as DType;
    const t = x.t;
    return { kind: 'ok', expect: { dtype: to, shape: t.layout.shape, values: t.values.map((v) => castFrom(v, t.dtype, to)) } };
  })();
  return {
    bases,
    plan: {
      names: [fn],
      verdict,
      prepare: (pool) => {
        const a = x.kind === 'tensor' ? pool.tensor(x.t) : x.value;
        if (method) return { call: () => (a as gx.Tensor).astype(d as DType) };
        return { call: () => gx.astype(a as gx.Tensor, d as DType) };
      },
    },
  };
}

export const astypeProperty: FuzzProperty<AstypeInput> = {
  name: 'astype', about: 'gx.astype and Tensor.astype, every pair of dtypes', arb: astypeArb, plan: astypePlan, weight: 0.5,
};
