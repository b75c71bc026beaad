// What the op properties share: operands (tensor, JS scalar or junk), `out`
// (fresh of the right or a wrong shape and dtype, non-contiguous, expanded,
// disposed, or a view aliasing an input), the rules every op applies to them,
// and running one planned call: make its tensors, judge it, check that it
// wrote nothing outside its output, free everything.
import fc from 'fast-check';

import * as gx from '../../lib';
import { DTYPES, type DType } from '../../lib';
import { argArb, junkArb } from './arbitraries';
import { fail, judge, type Ctx, type Known, type Verdict } from './harness';
import {
  contiguousLayout, numel, offsetsOf, overlap, overlapsItself, Pool, resolveArg, type BaseSpec, type Layout, type ModelTensor,
  type TensorArg,
} from './model';
import { canCastTo, castDefined, isFloat, type V } from './semantics';

export type OperandSpec =
  | { kind: 'tensor'; arg: TensorArg }
  | { kind: 'scalar'; value: number | bigint | boolean }
  | { kind: 'junk'; value: unknown };

/** An operand as the model sees it. */
export type ModelOperand = { kind: 'tensor'; t: ModelTensor } | { kind: 'scalar'; value: number | bigint | boolean } | { kind: 'junk'; value: unknown };

export function resolveOperand(o: OperandSpec, bases: readonly BaseSpec[]): ModelOperand {
  return o.kind === 'tensor' ? { kind: 'tensor', t: resolveArg(o.arg, bases) } : o;
}

export function operandArb(base: fc.Arbitrary<number>, scalar: fc.Arbitrary<number | bigint | boolean>, weights = { tensor: 8, scalar: 2, junk: 1 }): fc.Arbitrary<OperandSpec> {
  const choices: fc.WeightedArbitrary<OperandSpec>[] = [
    { weight: weights.tensor * 8, arbitrary: argArb(base).map((arg): OperandSpec => ({ kind: 'tensor', arg })) },
    { weight: weights.scalar * 8, arbitrary: scalar.map((value): OperandSpec => ({ kind: 'scalar', value })) },
    { weight: weights.junk, arbitrary: junkArb.map((value): OperandSpec => ({ kind: 'junk', value })) },
  ];
  return fc.oneof(...choices.filter((c) => c.weight > 0));
}

export type OutSpec =
  | { kind: 'none' }
  | { kind: 'fresh'; dtype: number; shape: number; layout: number; disposed: boolean }
  | { kind: 'alias'; arg: TensorArg }
  | { kind: 'junk'; value: unknown };

/** `out` choices: mostly none, else a fresh tensor (right shape and dtype most of the time), an alias of an input, junk. */
export function outArb(base: fc.Arbitrary<number>): fc.Arbitrary<OutSpec> {
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant<OutSpec>({ kind: 'none' }) },
    {
      weight: 5,
      arbitrary: fc.record({ dtype: fc.nat(15), shape: fc.nat(11), layout: fc.nat(5), disposed: fc.nat(30).map((n) => n === 0) })
        .map((r): OutSpec => ({ kind: 'fresh', ...r })),
    },
    { weight: 2, arbitrary: argArb(base).map((arg): OutSpec => ({ kind: 'alias', arg })) },
    { weight: 1, arbitrary: junkArb.map((value): OutSpec => ({ kind: 'junk', value })) },
  );
}

/** Options objects of the wrong kind, or none. */
export function optsJunkArb(): fc.Arbitrary<{ junk: unknown } | undefined> {
  return fc.oneof(
    { weight: 30, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>('x', 5, [], true, Symbol.for('o')).map((junk) => ({ junk })) },
  );
}

/** Whether optionsOf() refuses this options value. */
export function badOptions(o: unknown): boolean {
  if (o === undefined || o === null) return false;
  return typeof o !== 'object' || Array.isArray(o) || o instanceof gx.Tensor;
}

function poison(dtype: DType, n: number): V[] {
  return Array.from({ length: n }, (_, i) => castDefined(dtype === 'bool' ? i % 2 === 0 : isFloat(dtype) ? (i % 7) * 3 - 10.25 : (i % 7) * 3 + 1, dtype));
}

/** A fresh model tensor over a new base pushed onto `bases`. */
export function freshTensor(bases: BaseSpec[], dtype: DType, shape: readonly number[], layoutMode: number, disposed = false): ModelTensor {
  const r = shape.length;
  const bi = bases.length;
  const expandDim = shape.findIndex((s) => s > 1);
  if (layoutMode === 1 && r >= 2) {
    // A non-contiguous tensor of this shape: a reversed-shape base, permuted back.
    const rev = shape.slice().reverse();
    const perm = shape.map((_, i) => r - 1 - i);
    bases.push({ dtype, shape: rev, data: poison(dtype, numel(shape)) });
    const base = contiguousLayout(rev);
    const layout: Layout = { shape: shape.slice(), strides: perm.map((d) => base.strides[d]), offset: 0 };
    return { base: bi, dtype, layout, steps: [{ call: (t) => gx.permute(t, perm), layout }], disposed, cpu: false, values: [] };
  }
  if (layoutMode === 2 && expandDim >= 0) {
    // Stride 0 along one dim: elements share memory.
    const small = shape.slice();
    small[expandDim] = 1;
    bases.push({ dtype, shape: small, data: poison(dtype, numel(small)) });
    const base = contiguousLayout(small);
    const layout: Layout = { shape: shape.slice(), strides: base.strides.map((s, i) => (i === expandDim ? 0 : s)), offset: 0 };
    return { base: bi, dtype, layout, steps: [{ call: (t) => gx.expand(t, shape.slice()), layout }], disposed, cpu: false, values: [] };
  }
  bases.push({ dtype, shape: shape.slice(), data: poison(dtype, numel(shape)) });
  return { base: bi, dtype, layout: contiguousLayout(shape), steps: [], disposed, cpu: false, values: [] };
}

/** A shape the result does not have. */
function wrongShape(shape: readonly number[], mode: number): number[] {
  if ((mode === 7 && shape.length < 16) || shape.length === 0) return [...shape, 2];
  if (mode === 8) return shape.slice(1);
  return shape.map((s, i) => (i === 0 ? s + 1 : s));
}

export interface ModelOut {
  /** The out value passed (junk), or the tensor. */
  junk?: unknown;
  target?: ModelTensor;
  given: boolean;
}

/** The `out` of a call whose result has this shape and dtype. */
export function resolveOut(spec: OutSpec, bases: BaseSpec[], shape: readonly number[], dtype: DType): ModelOut {
  switch (spec.kind) {
    case 'none': return { given: false };
    case 'junk': return { given: true, junk: spec.value };
    case 'alias': return { given: true, target: resolveArg(spec.arg, bases) };
    case 'fresh': {
      const d = spec.dtype < 6 ? dtype : DTYPES[spec.dtype % DTYPES.length];
      const s = spec.shape < 9 ? shape : wrongShape(shape, spec.shape - 2);
      return { given: true, target: freshTensor(bases, d, s, spec.layout % 3, spec.disposed) };
    }
  }
}

/** The out value a call passes: the target's tensor, or the junk (undefined when the model never got to resolve it). */
export function outValue(pool: Pool, target: ModelTensor | undefined, spec: OutSpec): unknown {
  if (spec.kind === 'junk') return spec.value;
  return target === undefined ? undefined : pool.tensor(target);
}

export function deviceOf(t: ModelTensor, device: string): string {
  return t.cpu ? 'cpu' : device;
}

/**
 * Why writing a result of this shape and dtype into `target` must fail
 * (resultTensor's rules: shape, can_cast, device, no self-overlap), or undefined.
 * `device` is the property's; `resultDevice` the inputs' (a 0-d CPU tensor's op runs on the CPU).
 */
export function targetProblem(target: ModelTensor, shape: readonly number[], dtype: DType, device: string, what: string,
  resultDevice = device): string | undefined {
  if (target.disposed) return `${what} is disposed`;
  const s = target.layout.shape;
  if (s.length !== shape.length || s.some((v, i) => v !== shape[i])) return `${what} has shape [${s}], the result [${shape}]`;
  if (!canCastTo(dtype, target.dtype)) return `a ${dtype} result cannot be stored in ${what} of dtype ${target.dtype}`;
  if (deviceOf(target, device) !== resultDevice) return `${what} is on another device`;
  if (overlapsItself(target.layout)) return `${what} has elements sharing memory`;
  return undefined;
}

/**
 * How the output overlaps the inputs. Elementwise ops may write over an
 * input with the very same layout; any other overlap must give the right
 * result or an Error naming the op (issue 14 item 3).
 */
export function aliasing(target: ModelTensor | undefined, inputs: readonly ModelTensor[], elementwise: boolean): { mayThrow?: string } {
  if (target === undefined) return {};
  for (const x of inputs) {
    if (x.base !== target.base) continue;
    const o = overlap(target.layout, x.layout);
    if (o === 'none' || (o === 'same' && elementwise)) continue;
    return { mayThrow: `the output overlaps an input (${o})` };
  }
  return {};
}

export function errorVerdict(why: string, known?: Known[]): Verdict {
  return { kind: 'error', why, ...(known ? { known } : {}) };
}

/** A planned call: its names, what the model expects, and how to make it. */
export interface Plan {
  names: readonly string[];
  verdict: Verdict;
  /** Makes the tensors and returns the call (and the tensor it writes into, which it must return). */
  prepare: (pool: Pool) => { call: () => unknown; returns?: gx.Tensor };
  /** The model tensor the call writes into (out, or self in place): memory outside it must stay as it was. */
  writes?: ModelTensor;
}

function sameBits(a: V, b: V): boolean {
  return Object.is(a, b) || (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b));
}

/** Tensors inside a call's result (a tensor, an array or an object of them). */
function tensorsIn(v: unknown): gx.Tensor[] {
  if (v instanceof gx.Tensor) return [v];
  if (Array.isArray(v)) return v.filter((x): x is gx.Tensor => x instanceof gx.Tensor);
  if (typeof v === 'object' && v !== null) return Object.values(v).filter((x): x is gx.Tensor => x instanceof gx.Tensor);
  return [];
}

/** Runs a plan on ctx.device against its bases; frees what it made. */
export function execute(ctx: Ctx, bases: readonly BaseSpec[], plan: Plan): void {
  const pool = new Pool(bases, ctx.device);
  try {
    const { call, returns } = plan.prepare(pool);
    const r = judge(ctx, plan.names, plan.verdict, call, (v) => {
      for (const t of tensorsIn(v)) if (!pool.made.includes(t)) pool.keep(t);
    });
    if (!r.threw && returns !== undefined && r.value !== returns) {
      fail(ctx, `${plan.names[0]} did not return the tensor it wrote into (out or self)`, plan.verdict.known);
    }
    // Nothing outside the output changed (nothing at all when the call threw).
    const written = !r.threw && plan.writes !== undefined ? plan.writes : undefined;
    const skip = written === undefined ? new Set<number>() : new Set(offsetsOf(written.layout));
    pool.baseTensors.forEach((t, i) => {
      if (t === undefined) return;
      const now = pool.readBase(i), was = bases[i].data;
      for (let k = 0; k < was.length; k++) {
        if (written !== undefined && written.base === i && skip.has(k)) continue;
        if (!sameBits(now[k], was[k])) {
          fail(ctx, `${plan.names[0]} changed element ${k} of a tensor it does not write (${String(was[k])} -> ${String(now[k])})` +
            `${r.threw ? ' and then threw' : ''}`, plan.verdict.known);
          return;
        }
      }
    });
  } finally {
    pool.disposeAll();
  }
}
