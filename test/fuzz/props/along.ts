// The softmax family against plain-JS references in float64: softmax,
// logSoftmax, cumsum and cumprod along one axis (with dtype and out), logsumexp, var
// and std over axes (keepdims, correction, out), and their methods.
import fc from 'fast-check';

import * as gx from '../../../lib';
import { DTYPES, type DType } from '../../../lib';
import { baseArb, dtypeArb, junkArb, mostlyFloatArb } from '../arbitraries';
import {
  aliasing, deviceOf, errorVerdict, operandArb, outArb, outValue, resolveOperand, resolveOut, targetProblem, type OperandSpec, type OutSpec,
  type Plan,
} from '../calls';
import type { Expect, Known } from '../harness';
import { numel, type BaseSpec, type ModelTensor } from '../model';
import { cast, castFrom, computeOf, epsOf, isFloat, maxFinite, roundCompute, toCompute, type Compute, type V } from '../semantics';
import { axesOf, axisArb, axisValue, groups, type AxisSpec } from './reduce';
import type { FuzzProperty } from '../property';

const DTYPE_NAMES = new Set<string>(DTYPES);

/** For each line along `dim`, the C-order indices of its elements (a 0-d tensor is one line of one). */
function lines(shape: readonly number[], dim: number): number[][] {
  if (shape.length === 0) return [[0]];
  const n = numel(shape);
  const out = new Map<number, number[]>();
  const inner = numel(shape.slice(dim + 1)), size = shape[dim];
  for (let i = 0; i < n; i++) {
    const pos = Math.floor(i / inner) % size;
    const key = i - pos * inner;
    let l = out.get(key);
    if (l === undefined) out.set(key, (l = []));
    l[pos] = i;
  }
  return [...out.values()];
}

// --- softmax, logSoftmax, cumsum, cumprod ---------------------------------------

const ALONG = ['softmax', 'logSoftmax', 'cumsum', 'cumprod'] as const;
type AlongName = (typeof ALONG)[number];

export interface AlongInput {
  op: AlongName;
  method: boolean;
  bases: BaseSpec[];
  x: OperandSpec;
  axis: AxisSpec;
  fit: boolean;
  dtype?: unknown;
  out: OutSpec;
  junkOpts: boolean;
}

export const alongArb: fc.Arbitrary<AlongInput> = fc.record({
  op: fc.constantFrom(...ALONG),
  method: fc.boolean(),
  bases: fc.tuple(baseArb(mostlyFloatArb)).map((b) => [...b]),
  x: operandArb(fc.constant(0), fc.constant(1), { tensor: 16, scalar: 0, junk: 1 }),
  axis: axisArb,
  fit: fc.nat(5).map((n) => n > 0),
  dtype: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: dtypeArb }, { weight: 1, arbitrary: junkArb }),
  out: outArb(fc.constant(0)),
  junkOpts: fc.nat(30).map((n) => n === 0),
});

function softmaxLine(op: 'softmax' | 'logSoftmax', x: readonly number[]): { v: number[]; atol: number[] } {
  const n = x.length;
  const m = Math.max(...x);
  if (x.some(Number.isNaN) || m === Infinity || m === -Infinity) return { v: x.map(() => Number.NaN), atol: x.map(() => 0) };
  const e = x.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  const ls = Math.log(s);
  const eps = 2 ** -24 * (n + 4);
  if (op === 'softmax') return { v: e.map((v) => v / s), atol: x.map(() => eps) };
  return { v: x.map((v) => v - m - ls), atol: x.map((v) => eps * (Math.abs(v) + Math.abs(m) + Math.abs(ls) + 1)) };
}

/**
 * The running product of a line in the compute type c, and what it promises:
 * CUDA groups the products as a tree, so a float result is promised only
 * while every contiguous run of the line's factors (their magnitudes lie
 * between the product of those below 1 and of those above 1, zeros aside)
 * stays clear of overflow and of subnormals; integers wrap exactly.
 */
function cumprodLine(xs: readonly V[], c: Compute, put: (k: number, acc: V | undefined, atol: number) => void): void {
  let acc: V = c === 'int' ? 1n : 1;
  let hi = 1, lo = 1;
  const big = c === 'double' ? Number.MAX_VALUE : maxFinite('float32');
  const tiny = (c === 'double' ? 2 ** -1022 : 2 ** -126) * 2 ** 30;
  const eps = c === 'double' ? 2 ** -53 : 2 ** -24;
  xs.forEach((x, k) => {
    if (c === 'int') {
      acc = BigInt.asIntN(64, BigInt(acc) * BigInt(x));
      put(k, acc, 0);
      return;
    }
    acc = Number(acc) * Number(x);
    const m = Math.abs(Number(x));
    if (m > 1 || Number.isNaN(m)) hi *= Number.isNaN(m) ? Infinity : m;
    else if (m > 0) lo *= m;
    const safe = hi < big / 4 && lo > tiny;
    put(k, safe ? roundCompute(acc, c) : undefined, (k + 3) * eps * Math.abs(acc));
  });
}

function alongPlan(inp: AlongInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const x = resolveOperand(inp.x, bases);
  const method = inp.method && x.kind === 'tensor';
  const fn = `${method ? 'Tensor' : 'gx'}.${inp.op}`;
  const ndim = x.kind === 'tensor' ? x.t.layout.shape.length : 0;
  // One axis: a list gives its first; with `fit`, a missing one becomes -1 (the axis is required).
  let ax: AxisSpec = inp.axis.kind === 'list' && inp.axis.axes.length > 0 ? { kind: 'one', axis: inp.axis.axes[0] } : inp.axis;
  if (inp.fit && ax.kind !== 'one' && ax.kind !== 'junk') ax = { kind: 'one', axis: -1 };
  const axis = axisValue(ax, ndim, inp.fit);
  let outTarget: ModelTensor | undefined;
  const decide = (): { verdict: Plan['verdict']; writes?: ModelTensor } => {
    if (x.kind !== 'tensor') return { verdict: errorVerdict('self is not a tensor') };
    if (x.t.disposed) return { verdict: errorVerdict('self is disposed') };
    if (inp.junkOpts) return { verdict: errorVerdict('options of the wrong kind') };
    const t = x.t, shape = t.layout.shape, xd = t.dtype;
    if (typeof axis !== 'number' || !Number.isInteger(axis)) return { verdict: errorVerdict('the axis is not an integer') };
    const lim = Math.max(ndim, 1);
    if (axis < -lim || axis >= lim) return { verdict: errorVerdict('the axis is out of range') };
    const dim = axis < 0 ? axis + lim : axis;
    const askedRaw = inp.dtype;
    if (askedRaw !== undefined && (typeof askedRaw !== 'string' || !DTYPE_NAMES.has(askedRaw))) return { verdict: errorVerdict('not a dtype') };
    const asked = askedRaw as DType | undefined;
    let dtype: DType;
    if (inp.op === 'cumsum' || inp.op === 'cumprod') {
      if (asked === 'bool') return { verdict: errorVerdict(`${inp.op} to bool`) };
      dtype = asked ?? (isFloat(xd) ? xd : 'int64');
    } else {
      dtype = asked ?? xd;
      if (!isFloat(dtype)) return { verdict: errorVerdict(`${inp.op} in ${dtype}`) };
    }
    const out = resolveOut(inp.out, bases, shape, dtype);
    outTarget = out.target;
    if (out.junk !== undefined && out.junk !== null) return { verdict: errorVerdict('out of the wrong kind') };
    if (out.target !== undefined) {
      const why = targetProblem(out.target, shape, dtype, device, 'out', deviceOf(t, device));
      if (why !== undefined) return { verdict: errorVerdict(why) };
    }
    const store = out.target?.dtype ?? dtype;
    const c = computeOf(dtype);
    // The input is converted to the op's dtype first (an astype), then computed in its compute type.
    const ins = t.values.map((v) => castFrom(v, xd, dtype));
    const values: (V | undefined)[] = new Array(ins.length).fill(undefined);
    const atol: number[] = new Array(ins.length).fill(0);
    const big = c === 'double' ? Number.MAX_VALUE : maxFinite('float32');
    for (const line of lines(shape, dim)) {
      if (line.length === 0 || line.some((i) => ins[i] === undefined)) continue;
      const xs = line.map((i) => toCompute(ins[i] as V, c));
      if (inp.op === 'cumsum') {
        let acc: V = c === 'int' ? 0n : 0;
        let absAcc = 0, finiteAbs = 0;
        line.forEach((i, k) => {
          acc = c === 'int' ? BigInt.asIntN(64, BigInt(acc) + BigInt(xs[k])) : Number(acc) + Number(xs[k]);
          absAcc += Math.abs(Number(xs[k]));
          if (Number.isFinite(Number(xs[k]))) finiteAbs += Math.abs(Number(xs[k]));
          // Once finite terms may have overflowed the accumulator (inf, then inf - inf = NaN on CUDA's float
          // scan), no promise for the rest of the line.
          if (c === 'int' || !(finiteAbs > big / 4)) values[i] = cast(roundCompute(acc, c), store);
          atol[i] = c === 'int' ? 0 : (k + 3) * (c === 'double' ? 2 ** -53 : 2 ** -24) * absAcc;
        });
      } else if (inp.op === 'cumprod') {
        cumprodLine(xs, c, (k, acc, atolK) => {
          values[line[k]] = acc === undefined ? undefined : cast(acc, store);
          atol[line[k]] = atolK;
        });
      } else {
        const r = softmaxLine(inp.op, xs.map(Number));
        line.forEach((i, k) => {
          values[i] = cast(roundCompute(r.v[k], c), store);
          atol[i] = c === 'double' ? r.atol[k] * 2 ** -29 : r.atol[k];
        });
      }
    }
    const inexact = c !== 'int';
    const coarser = isFloat(store) && epsOf(store) > epsOf(dtype) ? store : dtype;
    const expect: Expect = {
      dtype: store, shape, values,
      rtol: inexact ? 4 * epsOf(coarser) : 0,
      atol: inexact ? (i) => atol[i] : undefined,
    };
    const al = aliasing(out.target, [t], false);
    return { verdict: { kind: 'ok', expect, ...(al.mayThrow ? { mayThrow: al.mayThrow } : {}) }, writes: out.target };
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
        const o: Record<string, unknown> = {};
        if (inp.dtype !== undefined) o.dtype = inp.dtype;
        let returns: gx.Tensor | undefined;
        if (inp.out.kind !== 'none') {
          o.out = outValue(pool, outTarget, inp.out);
          if (o.out instanceof gx.Tensor) returns = o.out;
        }
        const opts: unknown = inp.junkOpts ? 'opts' : Object.keys(o).length > 0 ? o : undefined;
        type F = (x: gx.Tensor, axis: number, o?: unknown) => gx.Tensor;
        const f = (method ? ALONG_METHOD[inp.op] : ALONG_FN[inp.op]) as F;
        return { call: () => f(a as gx.Tensor, axis as number, opts), returns };
      },
    },
  };
}

type AlongFn = (x: gx.Tensor, axis: number, o?: gx.SoftmaxOptions) => gx.Tensor;
const ALONG_FN: Record<AlongName, AlongFn> = {
  softmax: (x, a, o) => gx.softmax(x, a, o), logSoftmax: (x, a, o) => gx.logSoftmax(x, a, o), cumsum: (x, a, o) => gx.cumsum(x, a, o),
  cumprod: (x, a, o) => gx.cumprod(x, a, o),
};
const ALONG_METHOD: Record<AlongName, AlongFn> = {
  softmax: (x, a, o) => x.softmax(a, o), logSoftmax: (x, a, o) => x.logSoftmax(a, o), cumsum: (x, a, o) => x.cumsum(a, o),
  cumprod: (x, a, o) => x.cumprod(a, o),
};

export const alongProperty: FuzzProperty<AlongInput> = {
  name: 'along',
  about: 'gx.softmax, logSoftmax, cumsum, cumprod along one axis, and their methods',
  arb: alongArb,
  plan: alongPlan,
  weight: 0.7,
};

// --- logsumexp, var, std ---------------------------------------------------------

const STATS = ['logsumexp', 'var', 'std'] as const;
type StatsName = (typeof STATS)[number];

export interface StatsInput {
  op: StatsName;
  method: boolean;
  /** 0: no options, 1: the axis alone, 2: an options object, 3: junk options. */
  style: number;
  bases: BaseSpec[];
  x: OperandSpec;
  axis: AxisSpec;
  fit: boolean;
  keepdims: boolean;
  correction?: unknown;
  out: OutSpec;
}

export const statsArb: fc.Arbitrary<StatsInput> = fc.record({
  op: fc.constantFrom(...STATS),
  method: fc.boolean(),
  style: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: fc.constant(1) },
    { weight: 16, arbitrary: fc.constant(2) }, { weight: 1, arbitrary: fc.constant(3) }),
  bases: fc.tuple(baseArb(mostlyFloatArb)).map((b) => [...b]),
  x: operandArb(fc.constant(0), fc.constant(1), { tensor: 16, scalar: 0, junk: 1 }),
  axis: axisArb,
  fit: fc.nat(4).map((n) => n > 0),
  keepdims: fc.boolean(),
  correction: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 4, arbitrary: fc.constantFrom<unknown>(0, 1, 2, 0.5, -1) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(Number.NaN, Infinity, '1', null, 1n) }),
  out: outArb(fc.constant(0)),
});

function statsPlan(inp: StatsInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const x = resolveOperand(inp.x, bases);
  const method = inp.method && x.kind === 'tensor';
  const fn = `${method ? 'Tensor' : 'gx'}.${inp.op}`;
  const ndim = x.kind === 'tensor' ? x.t.layout.shape.length : 0;
  const axisArg = axisValue(inp.axis, ndim, inp.fit);
  const style = inp.style === 1 && !(typeof axisArg === 'number' || Array.isArray(axisArg)) ? 2 : inp.style;
  const withOut = style === 2 && inp.out.kind !== 'none';
  let outTarget: ModelTensor | undefined;
  const decide = (): { verdict: Plan['verdict']; writes?: ModelTensor } => {
    if (x.kind !== 'tensor') return { verdict: errorVerdict('self is not a tensor') };
    if (x.t.disposed) return { verdict: errorVerdict('self is disposed') };
    if (style === 3) return { verdict: errorVerdict('options of the wrong kind') };
    const t = x.t, shape = t.layout.shape, xd = t.dtype;
    let dtype: DType;
    let correction = 1;
    if (inp.op === 'logsumexp') {
      if (style === 2 && inp.correction !== undefined) return { verdict: errorVerdict('logsumexp has no option correction') };
      dtype = isFloat(xd) ? xd : 'float32';
    } else {
      if (!isFloat(xd)) return { verdict: errorVerdict(`${inp.op} of ${xd}`) };
      dtype = xd;
      const cr = style === 2 ? inp.correction ?? 1 : 1;
      if (typeof cr !== 'number' || !Number.isFinite(cr)) return { verdict: errorVerdict('a correction that is not a finite number') };
      correction = cr;
    }
    const dims = axesOf(style === 0 ? undefined : axisArg, ndim);
    if (typeof dims === 'string') return { verdict: errorVerdict(dims) };
    const keepdims = style === 2 && inp.keepdims;
    const outShape = keepdims ? shape.map((s, i) => (dims.includes(i) ? 1 : s)) : shape.filter((_, i) => !dims.includes(i));
    if (withOut) {
      const out = resolveOut(inp.out, bases, outShape, dtype);
      outTarget = out.target;
      if (out.junk !== undefined && out.junk !== null) return { verdict: errorVerdict('out of the wrong kind') };
      if (out.target !== undefined) {
        const why = targetProblem(out.target, outShape, dtype, device, 'out', deviceOf(t, device));
        if (why !== undefined) return { verdict: errorVerdict(why) };
      }
    }
    const store = outTarget?.dtype ?? dtype;
    const c = computeOf(dtype);
    const eps = c === 'double' ? 2 ** -53 : 2 ** -24;
    const ins = t.values.map((v) => toCompute(castFrom(v, xd, dtype) as V, c) as number);
    const values: (V | undefined)[] = [];
    const atol: number[] = [];
    for (const g of groups(ins, shape, dims)) {
      const n = g.length;
      let v: number, a = 0, variance = Number.NaN;
      if (inp.op === 'logsumexp') {
        const m = n === 0 ? -Infinity : Math.max(...g);
        if (g.some(Number.isNaN)) v = Number.NaN;
        else if (m === Infinity || m === -Infinity) v = m;
        else {
          const s = g.reduce((acc, y) => acc + Math.exp(y - m), 0);
          v = m + Math.log(s);
          a = (n + 4) * eps * (Math.abs(m) + Math.abs(Math.log(s)) + 1);
        }
      } else {
        // Two passes with the compensation term, so equal values give exactly 0.
        const mean = g.reduce((acc, y) => acc + y, 0) / n;
        const dev = g.reduce((acc, y) => acc + (y - mean), 0);
        const sq = g.reduce((acc, y) => acc + (y - mean) ** 2, 0);
        const ss = Number.isFinite(sq) ? Math.max(0, sq - (n > 0 ? (dev * dev) / n : 0)) : sq;
        const d = Math.max(0, n - correction);
        v = ss / d;
        const spread = Math.max(0, ...g.map((y) => Math.abs(y - mean)));
        // No degrees of freedom: inf for a positive sum of squares, NaN for 0, and one in the subnormal
        // range may round to either in float (here too when this sum underflowed to 0 for values that differ:
        // fuzz stats, seed 1886496068, std of [2.2e-162, 0] with correction 2 is inf).
        if (d === 0 && (ss > 0 || spread > 0) && ss < (c === 'double' ? 1e-300 : 1e-30)) variance = Number.POSITIVE_INFINITY;
        // The floor: variances in the subnormal range lose their relative precision.
        a = d > 0 ? (16 * (n + 2) * eps * spread * spread + n * (4 * eps * mean) ** 2) / d + (c === 'double' ? 1e-300 : 1e-36) : 0;
        if (variance !== Number.POSITIVE_INFINITY) variance = v;
        if (inp.op === 'std') {
          v = Math.sqrt(v);
          a = Math.sqrt(a);
        }
        if (!Number.isFinite(ss)) a = 0;
      }
      // Past float32's range a float result is inf, or the CPU's double accumulator's value in a wider out.
      // (std: where the variance itself passes it, the float accumulator's square does, as torch's does on CUDA.)
      const big = inp.op === 'logsumexp' ? v : variance;
      const overflow = (c === 'float' && Number.isFinite(big) && Math.abs(big) > maxFinite('float32') / 2) || big === Number.POSITIVE_INFINITY;
      values.push(overflow ? undefined : cast(roundCompute(v, c), store));
      atol.push(a);
    }
    const coarser = isFloat(store) && epsOf(store) > epsOf(dtype) ? store : dtype;
    const expect: Expect = { dtype: store, shape: outShape, values, rtol: 4 * epsOf(coarser), atol: (i) => atol[i] };
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
        else if (style === 3) arg = 'opts';
        else if (style === 2) {
          const o: Record<string, unknown> = {};
          if (inp.axis.kind !== 'none') o.axis = axisArg;
          if (inp.keepdims) o.keepdims = true;
          if (inp.correction !== undefined) o.correction = inp.correction;
          if (withOut) {
            o.out = outValue(pool, outTarget, inp.out);
            if (o.out instanceof gx.Tensor) returns = o.out;
          }
          arg = o;
        }
        type F = (x: gx.Tensor, o?: unknown) => gx.Tensor;
        const f = (method ? STATS_METHOD[inp.op] : STATS_FN[inp.op]) as F;
        return { call: () => (style === 0 ? f(a as gx.Tensor) : f(a as gx.Tensor, arg)), returns };
      },
    },
  };
}

type StatsFn = (x: gx.Tensor, o?: gx.VarOptions) => gx.Tensor;
const STATS_FN: Record<StatsName, StatsFn> = {
  logsumexp: (x, o) => gx.logsumexp(x, o), var: (x, o) => gx.var(x, o), std: (x, o) => gx.std(x, o),
};
const STATS_METHOD: Record<StatsName, StatsFn> = {
  logsumexp: (x, o) => x.logsumexp(o), var: (x, o) => x.var(o), std: (x, o) => x.std(o),
};

export const statsProperty: FuzzProperty<StatsInput> = {
  name: 'stats',
  about: 'gx.logsumexp, var, std over axes, and their methods',
  arb: statsArb,
  plan: statsPlan,
  weight: 0.7,
};
