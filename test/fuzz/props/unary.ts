// The unary elementwise ops (gx.exp ... gx.relu, their Tensor methods and
// in-place forms) against plain-JS references: the input converted to the
// op's dtype, computed in the compute type, rounded to the op's dtype, then
// converted to out's.
import fc from 'fast-check';

import * as gx from '../../../lib';
import type { DType } from '../../../lib';
import { baseArb } from '../arbitraries';
import {
  aliasing, badOptions, deviceOf, errorVerdict, operandArb, optsJunkArb, outArb, outValue, resolveOperand, resolveOut, targetProblem,
  type OperandSpec, type OutSpec, type Plan,
} from '../calls';
import { overlapsItself, type BaseSpec, type ModelTensor } from '../model';
import {
  callMethod, gxFunction, UNARY_NAMES, UNARY_REF, UNARY_SPECS, type UnaryName,
} from '../../elementwise-reference';
import { canCastTo, cast, castFrom, computeOf, epsOf, isFloat, roundCompute, toCompute, type V } from '../semantics';
import type { FuzzProperty } from '../property';


type Fn = (x: gx.Tensor, o?: gx.OutOptions) => gx.Tensor;
/** Positional parameters left at their defaults (NOTE [ Parameters of elementwise ops ]), so `o` lands in the options' place. */
const defaults = (op: UnaryName): undefined[] =>
  (UNARY_SPECS[op].paramStyle === 'positional' ? UNARY_SPECS[op].params.map(() => undefined) : []);
const fnOf = (op: UnaryName): Fn => (x, o) => gxFunction(op)(x, ...defaults(op), o);
const methodOf = (op: UnaryName): Fn => (x, o) => callMethod(x, op, ...defaults(op), o);
const inplaceOf = (op: UnaryName): ((x: gx.Tensor) => gx.Tensor) | undefined =>
  (UNARY_SPECS[op].inplace ? (x) => callMethod(x, `${op}_`) : undefined);

export interface UnaryInput {
  op: UnaryName;
  form: 'fn' | 'method' | 'inplace';
  bases: BaseSpec[];
  x: OperandSpec;
  out: OutSpec;
  opts?: { junk: unknown };
}

export const unaryArb: fc.Arbitrary<UnaryInput> = fc.record({
  op: fc.constantFrom(...UNARY_NAMES),
  form: fc.constantFrom<UnaryInput['form']>('fn', 'fn', 'method', 'inplace'),
  bases: fc.tuple(baseArb()).map((b) => [...b]),
  x: operandArb(fc.constant(0), fc.constant(1), { tensor: 12, scalar: 0, junk: 1 }),
  out: outArb(fc.constant(0)),
  opts: optsJunkArb(),
});

function unaryPlan(inp: UnaryInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const x = resolveOperand(inp.x, bases);
  const isTensor = x.kind === 'tensor';
  const form = !isTensor ? 'fn' : inp.form === 'inplace' && !UNARY_SPECS[inp.op].inplace ? 'method' : inp.form;
  const fn = form === 'fn' ? `gx.${inp.op}` : `Tensor.${inp.op}${form === 'inplace' ? '_' : ''}`;
  const keep = UNARY_SPECS[inp.op].kind === 'keep';
  let outTarget: ModelTensor | undefined;

  const decide = (): { verdict: Plan['verdict']; writes?: ModelTensor } => {
    if (form !== 'inplace' && inp.opts !== undefined && badOptions(inp.opts.junk)) return { verdict: errorVerdict('options of the wrong kind') };
    if (x.kind !== 'tensor') return { verdict: errorVerdict('self is not a tensor') };
    const t = x.t;
    if (t.disposed) return { verdict: errorVerdict('self is disposed') };
    if (keep && t.dtype === 'bool') return { verdict: errorVerdict('bool input') };
    const common: DType = keep || isFloat(t.dtype) ? t.dtype : 'float32';
    const shape = t.layout.shape;
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
    const store = target?.dtype ?? common;
    const ins = t.values.map((v) => toCompute(castFrom(v, t.dtype, common) as V, c));
    // Stored straight from the compute type into out's dtype (as binary.ts notes).
    const values = ins.map((v) => (inp.op === 'gelu' && v === -Infinity ? undefined : cast(roundCompute(UNARY_REF[inp.op](v, c, common), c), store)));
    const eps = epsOf(c === 'double' ? 'float64' : 'float32');
    const coarser = isFloat(store) && epsOf(store) > epsOf(common) ? store : common;
    const al = aliasing(target, form === 'inplace' ? [] : [t], true);
    return {
      verdict: {
        kind: 'ok',
        expect: {
          dtype: store, shape, values,
          rtol: keep ? 0 : 4 * epsOf(coarser),
          // gelu: the reference erf (test/ops-reference.ts) is good to ~1e-14 near |x| = 2.5, not to float64's eps.
          atol: keep ? undefined : (i) => (inp.op === 'gelu' ? Math.max(4 * eps, 1e-12) : 4 * eps) * Math.max(1, Math.abs(Number(ins[i]))),
        },
        ...(al.mayThrow ? { mayThrow: al.mayThrow } : {}),
      },
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
        if (form === 'inplace') {
          const f = inplaceOf(inp.op) as (x: gx.Tensor) => gx.Tensor;
          return { call: () => f(a as gx.Tensor), returns: a as gx.Tensor };
        }
        let opts: unknown;
        let returns: gx.Tensor | undefined;
        if (inp.opts !== undefined) {
          opts = inp.opts.junk;
        } else if (inp.out.kind !== 'none') {
          const out = outValue(pool, outTarget, inp.out);
          opts = { out };
          if (out instanceof gx.Tensor) returns = out;
        }
        const f = form === 'fn' ? fnOf(inp.op) : methodOf(inp.op);
        return { call: () => f(a as gx.Tensor, opts as gx.OutOptions), returns };
      },
    },
  };
}

export const unaryProperty: FuzzProperty<UnaryInput> = {
  name: 'unary',
  about: 'gx.exp ... gx.relu, their methods and in-place forms',
  arb: unaryArb,
  plan: unaryPlan,
};
