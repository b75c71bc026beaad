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
import { erf, rint } from '../../ops-reference';
import { canCastTo, cast, castFrom, computeOf, epsOf, isFloat, roundCompute, toCompute, type V } from '../semantics';
import type { FuzzProperty } from '../property';

export const UNARY_OPS = [
  'exp', 'log', 'log1p', 'sqrt', 'rsqrt', 'sin', 'cos', 'tanh', 'sigmoid', 'gelu', 'softplus',
  'neg', 'abs', 'sign', 'floor', 'ceil', 'round', 'relu',
] as const;
export type UnaryName = (typeof UNARY_OPS)[number];
const KEEP: readonly UnaryName[] = ['neg', 'abs', 'sign', 'floor', 'ceil', 'round', 'relu'];
const NO_INPLACE: readonly UnaryName[] = ['gelu', 'softplus'];

type Fn = (x: gx.Tensor, o?: gx.OutOptions) => gx.Tensor;
const FN: Record<UnaryName, Fn> = {
  exp: gx.exp, log: gx.log, log1p: gx.log1p, sqrt: gx.sqrt, rsqrt: gx.rsqrt, sin: gx.sin, cos: gx.cos, tanh: gx.tanh,
  sigmoid: gx.sigmoid, gelu: gx.gelu, softplus: gx.softplus, neg: gx.neg, abs: gx.abs, sign: gx.sign, floor: gx.floor,
  ceil: gx.ceil, round: gx.round, relu: gx.relu,
};
const METHOD: Record<UnaryName, Fn> = {
  exp: (x, o) => x.exp(o), log: (x, o) => x.log(o), log1p: (x, o) => x.log1p(o), sqrt: (x, o) => x.sqrt(o),
  rsqrt: (x, o) => x.rsqrt(o), sin: (x, o) => x.sin(o), cos: (x, o) => x.cos(o), tanh: (x, o) => x.tanh(o),
  sigmoid: (x, o) => x.sigmoid(o), gelu: (x, o) => x.gelu(o), softplus: (x, o) => x.softplus(o), neg: (x, o) => x.neg(o),
  abs: (x, o) => x.abs(o), sign: (x, o) => x.sign(o), floor: (x, o) => x.floor(o), ceil: (x, o) => x.ceil(o),
  round: (x, o) => x.round(o), relu: (x, o) => x.relu(o),
};
const INPLACE: Partial<Record<UnaryName, (x: gx.Tensor) => gx.Tensor>> = {
  exp: (x) => x.exp_(), log: (x) => x.log_(), log1p: (x) => x.log1p_(), sqrt: (x) => x.sqrt_(), rsqrt: (x) => x.rsqrt_(),
  sin: (x) => x.sin_(), cos: (x) => x.cos_(), tanh: (x) => x.tanh_(), sigmoid: (x) => x.sigmoid_(), neg: (x) => x.neg_(),
  abs: (x) => x.abs_(), sign: (x) => x.sign_(), floor: (x) => x.floor_(), ceil: (x) => x.ceil_(), round: (x) => x.round_(),
  relu: (x) => x.relu_(),
};

/** The reference in the compute type: numbers (float, double) or bigints (int). */
export function unaryRef(op: UnaryName, x: V): V {
  if (typeof x === 'bigint') {
    switch (op) {
      case 'neg': return -x;
      case 'abs': return x < 0n ? -x : x;
      case 'sign': return x > 0n ? 1n : x < 0n ? -1n : 0n;
      case 'relu': return x > 0n ? x : 0n;
      default: return x;  // floor, ceil, round
    }
  }
  switch (op) {
    case 'exp': return Math.exp(x);
    case 'log': return Math.log(x);
    case 'log1p': return Math.log1p(x);
    case 'sqrt': return Math.sqrt(x);
    case 'rsqrt': return 1 / Math.sqrt(x);
    case 'sin': return Math.sin(x);
    case 'cos': return Math.cos(x);
    case 'tanh': return Math.tanh(x);
    case 'sigmoid': return 1 / (1 + Math.exp(-x));
    case 'gelu': return x === Infinity ? x : 0.5 * x * (1 + erf(x / Math.SQRT2));  // -inf: NaN or 0, unchecked
    case 'softplus': return x > 20 ? x : Math.log1p(Math.exp(x));
    case 'neg': return -x;
    case 'abs': return Math.abs(x);
    case 'sign': return Number.isNaN(x) ? 0 : x > 0 ? 1 : x < 0 ? -1 : 0;
    case 'floor': return Math.floor(x);
    case 'ceil': return Math.ceil(x);
    case 'round': return rint(x);
    case 'relu': return x > 0 || Number.isNaN(x) ? x : 0;
  }
}

export interface UnaryInput {
  op: UnaryName;
  form: 'fn' | 'method' | 'inplace';
  bases: BaseSpec[];
  x: OperandSpec;
  out: OutSpec;
  opts?: { junk: unknown };
}

export const unaryArb: fc.Arbitrary<UnaryInput> = fc.record({
  op: fc.constantFrom(...UNARY_OPS),
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
  const form = !isTensor ? 'fn' : inp.form === 'inplace' && NO_INPLACE.includes(inp.op) ? 'method' : inp.form;
  const fn = form === 'fn' ? `gx.${inp.op}` : `Tensor.${inp.op}${form === 'inplace' ? '_' : ''}`;
  const keep = KEEP.includes(inp.op);
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
    const values = ins.map((v) => (inp.op === 'gelu' && v === -Infinity ? undefined : cast(roundCompute(unaryRef(inp.op, v), c), store)));
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
          const f = INPLACE[inp.op] as (x: gx.Tensor) => gx.Tensor;
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
        const f = form === 'fn' ? FN[inp.op] : METHOD[inp.op];
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
