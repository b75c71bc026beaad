// The binary elementwise ops (gx.add ... gx.logicalXor, their Tensor methods
// and in-place forms) against a plain-JS reference with PyTorch's semantics:
// operands converted to the common dtype first, then computed in the kernels'
// compute type, then converted to the result's (or out's) dtype.
import fc from 'fast-check';

import * as gx from '../../../lib';
import type { DType } from '../../../lib';
import { baseOf, dtypeArb, relationArb, relatedShape, scalarArb, shapeArb, cpuArb } from '../arbitraries';
import {
  aliasing, badOptions, errorVerdict, operandArb, optsJunkArb, outArb, resolveOperand, resolveOut,
  targetProblem, deviceOf, outValue, type ModelOperand, type OperandSpec, type OutSpec, type Plan,
} from '../calls';
import {
  BINARY_NAMES, BINARY_REF, BINARY_SPECS, callMethod, gxFunction, INEXACT_BINARY, type BinaryName,
} from '../../elementwise-reference';
import type { Known } from '../harness';
import { broadcast, broadcastIndex, numel, overlapsItself, type BaseSpec, type ModelTensor } from '../model';
import {
  canCastTo, cast, castFrom, checkedInt, computeOf, epsOf, isFloat, isInt, resultTypeOf, roundCompute, toCompute, truthy, type Compute, type PromoOperand, type V,
} from '../semantics';
import type { FuzzProperty } from '../property';

type Fn = (a: gx.Operand, b: gx.Operand, o?: gx.OutOptions) => gx.Tensor;
const fnOf = (op: BinaryName): Fn => gxFunction(op) as Fn;
const methodOf = (op: BinaryName): ((a: gx.Tensor, b: gx.Operand, o?: gx.OutOptions) => gx.Tensor) =>
  (a, b, o) => callMethod(a, op, b, o);
const inplaceOf = (op: BinaryName): ((a: gx.Tensor, b: gx.Operand) => gx.Tensor) | undefined =>
  (BINARY_SPECS[op].inplace ? (a, b) => callMethod(a, `${op}_`, b) : undefined);

export interface BinaryInput {
  op: BinaryName;
  form: 'fn' | 'method' | 'inplace';
  bases: BaseSpec[];
  self: OperandSpec;
  other: OperandSpec;
  out: OutSpec;
  opts?: { junk: unknown };
}

/** Two bases: the second of a shape that broadcasts with the first (mostly), of the same dtype half the time. */
export const basePairArb: fc.Arbitrary<BaseSpec[]> = fc.record({
  d0: dtypeArb, s0: shapeArb, same: fc.boolean(), d1: dtypeArb, rel: relationArb, cpu0: cpuArb, cpu1: cpuArb,
}).chain((r) => fc.tuple(baseOf(r.d0, r.s0, r.cpu0), baseOf(r.same ? r.d0 : r.d1, relatedShape(r.s0, r.rel), r.cpu1)));

const otherBase = fc.oneof({ weight: 6, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(0) });

export const binaryArb: fc.Arbitrary<BinaryInput> = fc.record({
  op: fc.constantFrom(...BINARY_NAMES),
  form: fc.constantFrom<BinaryInput['form']>('fn', 'fn', 'method', 'inplace'),
  bases: basePairArb,
  self: operandArb(fc.constant(0), scalarArb, { tensor: 8, scalar: 1, junk: 1 }),
  other: operandArb(otherBase, scalarArb, { tensor: 6, scalar: 3, junk: 1 }),
  out: outArb(fc.nat(1)),
  opts: optsJunkArb(),
});

export function promoOf(o: ModelOperand): PromoOperand | undefined {
  if (o.kind === 'tensor') return { tensor: true, dtype: o.t.dtype, ndim: o.t.layout.shape.length };
  if (o.kind === 'scalar') return { tensor: false, value: o.value };
  return undefined;
}

/** Why a JS scalar cannot take part in an op computing in `common` (lib/ops/elementwise/elementwise.ts scalarArgs), or undefined. */
export function scalarProblem(v: number | bigint | boolean, common: DType, checkRange: boolean): string | undefined {
  if (typeof v === 'boolean' || !checkRange) return undefined;
  if (isFloat(common)) return undefined;
  if (typeof v === 'number' && !Number.isInteger(v)) return undefined;
  // torch's checked conversion (its where, clamp and pow refuse the rest; its add wraps any integer, gx refuses).
  return checkedInt(v, isInt(common) ? common : 'int64') === undefined ? `the number ${String(v)} does not fit ${common}` : undefined;
}

/** A tensor operand's values in compute type c, after conversion to `common` (PyTorch converts first). */
export function loadTensor(t: ModelTensor, common: DType, c: Compute): V[] {
  return t.values.map((v) => {
    const w = castFrom(v, t.dtype, common) as V;
    return c === 'bool' ? (truthy(w) ? 1 : 0) : toCompute(w, c);
  });
}

/**
 * A JS scalar in compute type c: it enters the kernel directly, without rounding to a 16-bit common dtype; an
 * integer one as the element of the integer common dtype it converts to (uint8 takes -1 as 255, so x == -1 is x == 255).
 */
export function loadScalar(s: number | bigint | boolean, c: Compute, common: DType): V {
  const v: V = typeof s === 'boolean' ? (s ? 1 : 0) : s;
  switch (c) {
    case 'int': return (isInt(common) ? checkedInt(v, common) : undefined) ?? (typeof v === 'bigint' ? v : BigInt(v));
    case 'bool': return truthy(v) ? 1 : 0;
    case 'float': return typeof v === 'bigint' ? Math.fround(Number(v)) : Math.fround(v);
    case 'double': return Number(v);
  }
}

/** Whether converting some tensor operand to `common` changes a value (issue 14 item 4 shows there). */
export function narrowsAnOperand(tensors: readonly ModelTensor[], common: DType): boolean {
  return tensors.some((t) => t.values.some((v) => {
    const w = castFrom(v, t.dtype, common);
    if (w === undefined) return true;
    if (typeof v === 'bigint' && typeof w === 'bigint') return v !== w;
    if (typeof v === 'bigint') return !Number.isInteger(w) || BigInt(w) !== v;
    return Number(w) !== v && !(Number.isNaN(v) && Number.isNaN(Number(w)));
  }));
}

export function binaryPlan(inp: BinaryInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const self = resolveOperand(inp.self, bases);
  const other = resolveOperand(inp.other, bases);
  const form = self.kind !== 'tensor' ? 'fn' : inp.form === 'inplace' && !BINARY_SPECS[inp.op].inplace ? 'method' : inp.form;
  const isMethod = form !== 'fn';
  const fn = !isMethod ? `gx.${inp.op}` : `Tensor.${inp.op}${form === 'inplace' ? '_' : ''}`;
  const inplace = isMethod && form === 'inplace';
  const kind = BINARY_SPECS[inp.op].kind;
  const tensors = [self, other].flatMap((o) => (o.kind === 'tensor' ? [o.t] : []));
  let outTarget: ModelTensor | undefined;

  const result = (): { verdict: Plan['verdict']; writes?: ModelTensor; outValue?: () => unknown } => {
    if (!inplace && inp.opts !== undefined && badOptions(inp.opts.junk)) return { verdict: errorVerdict('options of the wrong kind') };
    if (self.kind === 'junk' || other.kind === 'junk') return { verdict: errorVerdict('an operand of the wrong kind') };
    if (tensors.some((t) => t.disposed)) return { verdict: errorVerdict('a disposed operand') };
    if (tensors.length === 0) return { verdict: errorVerdict('no tensor operand') };
    const pa = promoOf(self), pb = promoOf(other);
    let common = resultTypeOf([pa, pb].filter((p): p is PromoOperand => p !== undefined)) as DType;
    if (kind === 'div' && !isFloat(common)) common = 'float32';
    if ('noBool' in BINARY_SPECS[inp.op] && common === 'bool') return { verdict: errorVerdict('bool operands') };
    if (inp.op === 'pow' && isInt(common) && other.kind === 'scalar' && typeof other.value !== 'boolean' && other.value < 0) {
      return { verdict: errorVerdict('an integer to a negative power') };
    }
    const resDtype: DType = kind === 'compare' || kind === 'logical' ? 'bool' : common;
    if (new Set(tensors.map((t) => deviceOf(t, device))).size > 1) return { verdict: errorVerdict('operands on two devices') };
    const shape = broadcast(tensors.map((t) => t.layout.shape));
    if (shape === undefined) return { verdict: errorVerdict('shapes that do not broadcast') };
    let target: ModelTensor | undefined;
    if (inplace && self.kind === 'tensor') {
      target = self.t;
      const s = target.layout.shape;
      if (s.length !== shape.length || s.some((v, i) => v !== shape[i])) return { verdict: errorVerdict('a result of another shape than self') };
      if (!canCastTo(resDtype, target.dtype)) return { verdict: errorVerdict(`a ${resDtype} result in place into ${target.dtype}`) };
      if (overlapsItself(target.layout)) return { verdict: errorVerdict('self has elements sharing memory') };
    } else if (form !== 'inplace') {
      const out = resolveOut(inp.out, bases, shape, resDtype);
      outTarget = out.target;
      if (out.junk !== undefined && out.junk !== null) return { verdict: errorVerdict('out of the wrong kind') };
      if (out.target !== undefined) {
        const why = targetProblem(out.target, shape, resDtype, device, 'out', deviceOf(tensors[0], device));
        if (why !== undefined) return { verdict: errorVerdict(why) };
        target = out.target;
      }
    }
    const s = self.kind === 'scalar' ? self.value : other.kind === 'scalar' ? other.value : undefined;
    if (s !== undefined) {
      const why = scalarProblem(s, common, kind !== 'logical');
      if (why !== undefined) return { verdict: errorVerdict(why) };
    }
    // The values.
    const c: Compute = kind === 'logical' ? 'bool' : computeOf(common);
    const side = (o: ModelOperand): ((i: number) => V) => {
      if (o.kind === 'tensor') {
        const vals = loadTensor(o.t, common, c);
        const idx = broadcastIndex(shape, o.t.layout.shape);
        return (i) => vals[idx(i)];
      }
      const v = loadScalar(o.kind === 'scalar' ? o.value : 0, c, common);
      return () => v;
    };
    const fa = side(self), fb = side(other);
    const storeDtype = target?.dtype ?? resDtype;
    const values: (V | undefined)[] = [];
    for (let i = 0; i < numel(shape); i++) {
      const r = BINARY_REF[inp.op](fa(i), fb(i), c);
      // The kernels store the compute-type value straight into out's dtype (as test/ops-binary.test.ts
      // expects); PyTorch rounds to the result dtype first (a wider out sees the difference).
      const v = typeof r === 'boolean' ? (r ? 1 : 0) : roundCompute(r, c);
      values.push(cast(v, storeDtype));
    }
    const inexact = INEXACT_BINARY.has(inp.op) && isFloat(common);
    const coarser = isFloat(storeDtype) && epsOf(storeDtype) > epsOf(common) ? storeDtype : common;
    const known: Known[] = [];
    const al = aliasing(target, tensors.filter((t) => t !== target || !inplace), true);
    return {
      verdict: {
        kind: 'ok',
        expect: {
          dtype: storeDtype, shape, values,
          rtol: inexact ? 4 * epsOf(coarser) : 0,
          atol: inexact ? (i) => atolOf(inp.op, fa(i), fb(i), common, coarser) : undefined,
        },
        ...(al.mayThrow ? { mayThrow: al.mayThrow } : {}),
        known,
      },
      writes: target,
    };
  };
  const r = result();
  const plan: Plan = {
    names: [fn],
    verdict: r.verdict,
    writes: r.writes,
    prepare: (pool) => {
      const val = (o: ModelOperand): unknown => (o.kind === 'tensor' ? pool.tensor(o.t) : o.value);
      const a = val(self), b = val(other);
      let opts: unknown;
      let returns: gx.Tensor | undefined;
      if (inp.opts !== undefined) {
        opts = inp.opts.junk;
      } else if (inp.out.kind !== 'none' && !inplace) {
        const out = outValue(pool, outTarget, inp.out);
        opts = { out };
        if (out instanceof gx.Tensor) returns = out;
      }
      if (inplace) {
        const f = inplaceOf(inp.op) as (a: gx.Tensor, b: gx.Operand) => gx.Tensor;
        return { call: () => f(a as gx.Tensor, b as gx.Operand), returns: a as gx.Tensor };
      }
      if (isMethod) return { call: () => methodOf(inp.op)(a as gx.Tensor, b as gx.Operand, opts as gx.OutOptions), returns };
      return { call: () => fnOf(inp.op)(a as gx.Operand, b as gx.Operand, opts as gx.OutOptions), returns };
    },
  };
  return { bases, plan };
}

export const binaryProperty: FuzzProperty<BinaryInput> = {
  name: 'binary',
  about: 'gx.add ... gx.logicalXor, their methods and in-place forms',
  arb: binaryArb,
  plan: binaryPlan,
};

/**
 * The absolute tolerance of an inexact op's element. logaddexp is max(a, b) + log1p(exp(-|a - b|)) in the
 * compute type, as torch's kernel: the rounding of d = |a - b| (an ulp of d) becomes a relative error of d
 * ulps in exp(-d), and when max(a, b) and the term nearly cancel the term's ulps are many of the result's.
 * So its error is bounded by ulps of |max(a, b)| + term * (1 + d), not of the result.
 */
function atolOf(op: string, a: unknown, b: unknown, common: DType, coarser: DType): number {
  const tiny = common === 'float64' ? 1e-300 : 1e-37;
  if (op !== 'logaddexp') return tiny;
  const x = Number(a), y = Number(b);
  const d = Math.abs(x - y);
  return tiny + 4 * epsOf(coarser) * (Math.abs(Math.max(x, y)) + Math.log1p(Math.exp(-d)) * (1 + d));
}
