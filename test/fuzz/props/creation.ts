// Creation functions (gx.tensor from scalars, nested arrays and typed arrays;
// empty, zeros, ones, full, arange, linspace) against the conversions PyTorch
// makes, and the promotion functions (promoteTypes, canCast, resultType)
// against torch's table.
import fc from 'fast-check';

import * as gx from '../../../lib';
import { DTYPES, type DType } from '../../../lib';
import { dtypeArb, junkArb, scalarArb, shapeArb, valuesArb } from '../arbitraries';
import { errorVerdict, type Plan } from '../calls';
import type { Known } from '../harness';
import { numel, type BaseSpec } from '../model';
import {
  canCastTo, cast, castFrom, checkedInt, fusedMulAdd, isFloat, isInt, maxFinite, promote, resultTypeOf, type PromoOperand, type V,
} from '../semantics';
import type { FuzzProperty } from '../property';

const DTYPE_NAMES = new Set<string>(DTYPES);
const isDType = (v: unknown): v is DType => typeof v === 'string' && DTYPE_NAMES.has(v);

/** A JS value as gx.tensor stores it in dtype d (lib/core/dtype.ts toStorageArray), or why it is refused. */
function storeValue(v: unknown, d: DType): V | undefined | string {
  const x = typeof v === 'boolean' ? (v ? 1 : 0) : v;
  if (typeof x !== 'number' && typeof x !== 'bigint') return 'a value of the wrong kind';
  if (d === 'bool') return typeof x === 'bigint' ? (x !== 0n ? 1 : 0) : x !== 0 ? 1 : 0;
  if (isFloat(d)) return typeof x === 'bigint' ? cast(Number(x), d) : cast(x, d);
  if (typeof x === 'number' && !Number.isFinite(x)) return 'a non-finite value for an integer dtype';
  const i = checkedInt(x, d);
  if (i === undefined) return 'a value out of range';
  return cast(i, d);
}

// --- creation -------------------------------------------------------------------

const CREATE = ['tensor', 'empty', 'zeros', 'ones', 'full', 'arange', 'linspace'] as const;
type CreateName = (typeof CREATE)[number];

/** How gx.tensor gets its data. */
type DataKind = 'scalar' | 'nested' | 'typed' | 'ragged' | 'mixed' | 'junk';

export interface CreateInput {
  op: CreateName;
  kind: DataKind;
  shape: number[];
  /** The values (of `vdtype`), or JS numbers for float kinds. */
  values: V[];
  vdtype: DType;
  /** The dtype asked for: none, one, or junk. */
  dtype?: unknown;
  /** gx.tensor's options.shape: 0 none, 1 the same count reshaped, 2 a wrong count. */
  reshape: number;
  nums: number[];
  scalar: unknown;
  badShape: number;
  junkOpts: boolean;
}

const numArg: fc.Arbitrary<number> = fc.oneof(
  { weight: 10, arbitrary: fc.integer({ min: -6, max: 6 }) },
  { weight: 6, arbitrary: fc.double({ min: -10, max: 10, noNaN: true }).map((x) => Math.round(x * 64) / 64) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, 1e30, 0.1, 1 + 2 ** -11 + 2 ** -40, 70000, -129) },
);

export const createArb: fc.Arbitrary<CreateInput> = fc.record({
  op: fc.constantFrom(...CREATE), kind: fc.constantFrom<DataKind>('scalar', 'nested', 'nested', 'typed', 'typed', 'ragged', 'mixed', 'junk'),
  shape: shapeArb, vdtype: dtypeArb, jsNumbers: fc.nat(2),
}).chain((r) => fc.record({
  op: fc.constant(r.op), kind: fc.constant(r.kind), shape: fc.constant(r.shape), vdtype: fc.constant(r.vdtype),
  values: r.jsNumbers === 0 && isFloat(r.vdtype)
    ? fc.array(numArg, { minLength: numel(r.shape), maxLength: numel(r.shape) }).map((v): V[] => v)
    : valuesArb(r.vdtype, numel(r.shape)),
  dtype: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 6, arbitrary: dtypeArb }, { weight: 1, arbitrary: junkArb }),
  reshape: fc.nat(8).map((n) => (n === 0 ? 2 : n < 3 ? 1 : 0)),
  nums: fc.array(numArg, { minLength: 3, maxLength: 3 }),
  scalar: fc.oneof({ weight: 10, arbitrary: scalarArb }, { weight: 1, arbitrary: junkArb }),
  badShape: fc.nat(20),
  junkOpts: fc.nat(40).map((n) => n === 0),
}));

function nest(values: readonly unknown[], shape: readonly number[]): unknown {
  if (shape.length === 0) return values[0];
  const inner = numel(shape.slice(1));
  return Array.from({ length: shape[0] }, (_, i) => nest(values.slice(i * inner, (i + 1) * inner), shape.slice(1)));
}

/** The JS values gx.tensor gets for the model's values: numbers, bigints for int64, booleans for bool. */
function jsValues(inp: CreateInput): unknown[] {
  return inp.values.map((v) => (inp.vdtype === 'bool' ? v === 1 : inp.vdtype === 'int64' ? BigInt(v) : Number(v)));
}

function typedArray(inp: CreateInput): ArrayBufferView {
  const v = inp.values;
  switch (inp.vdtype) {
    case 'float64': return Float64Array.from(v, Number);
    case 'int8': return Int8Array.from(v, Number);
    case 'int16': return Int16Array.from(v, Number);
    case 'int32': return Int32Array.from(v, Number);
    case 'int64': return BigInt64Array.from(v, (x) => BigInt(x));
    case 'uint8': return Uint8Array.from(v, Number);
    case 'bool': return Uint32Array.from(v, Number);  // no dtype of its own: needs { dtype }
    default: return Float32Array.from(v, Number);  // float32, float16, bfloat16 values all fit
  }
}

function elementsOf(a: ArrayBufferView): (number | bigint)[] {
  if (a instanceof BigInt64Array) return Array.from(a);
  if (a instanceof Float32Array || a instanceof Float64Array || a instanceof Int8Array || a instanceof Int16Array
    || a instanceof Int32Array || a instanceof Uint8Array || a instanceof Uint32Array) return Array.from(a);
  return [];
}

function typedDType(a: ArrayBufferView): DType | undefined {
  if (a instanceof Float32Array) return 'float32';
  if (a instanceof Float64Array) return 'float64';
  if (a instanceof Int8Array) return 'int8';
  if (a instanceof Int16Array) return 'int16';
  if (a instanceof Int32Array) return 'int32';
  if (a instanceof BigInt64Array) return 'int64';
  if (a instanceof Uint8Array) return 'uint8';
  return undefined;
}

/** A shape argument: the good one, or now and then one of the wrong kind, negative, fractional, too long or huge. */
function shapeArg(shape: readonly number[], bad: number): unknown {
  switch (bad) {
    case 1: return shape.length > 0 ? [...shape.slice(1), -1] : [-1];
    case 2: return [1.5];
    case 3: return new Array(17).fill(1);
    case 4: return 'x';
    case 5: return [2 ** 52];
    default: return bad === 6 && shape.length === 1 ? shape[0] : shape.slice();
  }
}

function shapeProblem(s: unknown): string | undefined {
  const dims = typeof s === 'number' ? [s] : s;
  if (!Array.isArray(dims)) return 'a shape of the wrong kind';
  if (dims.length > 16) return 'more than 16 dims';
  for (const d of dims as unknown[]) {
    if (typeof d !== 'number') return 'a size of the wrong kind';
    if (!Number.isSafeInteger(d) || d < 0) return 'a size that is not a non-negative integer';
  }
  return undefined;
}

// Sizes no machine can allocate: 2^52 elements pass any address space. (2^40 float32 was granted by the
// H100 machine's overcommit, and filling it never finished: the GPU suite's timeout, likely). arange
// lengths between 4096 and HUGE are cut to 4096, so no call allocates much.
const HUGE = 2 ** 50;

function nanBool(dtype: DType, values: readonly unknown[]): Known[] {
  return dtype === 'bool' && values.some((v) => typeof v === 'number' && Number.isNaN(v)) ? [] : [];
}

function createPlan(inp: CreateInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const fn = `gx.${inp.op}`;
  const asked = inp.dtype;
  const opts: unknown = inp.junkOpts ? 'opts' : { device, ...(asked !== undefined ? { dtype: asked } : {}) };
  const known: Known[] = [];
  let call: () => unknown = () => undefined;
  const model = ((): Plan['verdict'] => {
    const a = isDType(asked) ? asked : undefined;
    const [n0, n1, n2] = inp.nums;
    switch (inp.op) {
      case 'tensor': {
        const vals = jsValues(inp);
        let data: unknown;
        let shape = inp.shape;
        let dtype: DType;
        let values: (V | undefined | string)[];
        if (inp.kind === 'junk') {
          data = inp.scalar;
          if (typeof data !== 'number' && typeof data !== 'bigint' && typeof data !== 'boolean') {
            if (Array.isArray(data) && data.length === 0) {
              call = () => gx.tensor([], opts as gx.TensorOptions);
              return { kind: 'ok', expect: { dtype: a ?? 'float32', shape: [0], values: [] } };
            }
            if (ArrayBuffer.isView(data) || Array.isArray(data)) {
              call = () => gx.tensor(data as number[], opts as gx.TensorOptions);
              return { kind: 'value', check: () => undefined, mayThrow: 'odd data' };
            }
            call = () => gx.tensor(data as number, opts as gx.TensorOptions);
            return errorVerdict('data of the wrong kind');
          }
          shape = [];
          dtype = a ?? (typeof data === 'bigint' ? 'int64' : typeof data === 'boolean' ? 'bool' : 'float32');
          values = [storeValue(data, dtype)];
        } else if (inp.kind === 'scalar' && vals.length > 0) {
          data = vals[0];
          shape = [];
          dtype = a ?? (inp.vdtype === 'int64' ? 'int64' : inp.vdtype === 'bool' ? 'bool' : 'float32');
          values = [storeValue(data, dtype)];
        } else if (inp.kind === 'typed') {
          const arr = typedArray(inp);
          data = arr;
          const own = typedDType(arr);
          if (own === undefined && a === undefined) {
            call = () => gx.tensor(arr as Float32Array, opts as gx.TensorOptions);
            return errorVerdict('a typed array without a dtype');
          }
          dtype = a ?? (own as DType);
          shape = [numel(inp.shape)];
          values = elementsOf(arr).map((v) => (dtype === own ? castFrom(v, own, dtype) : storeValue(v, dtype)));
        } else if ((inp.kind === 'ragged' || inp.kind === 'mixed') && inp.shape.length > 0 && inp.shape[0] >= 2
          && (inp.shape.length === 1 || inp.shape[1] > 0)) {
          const nested = nest(vals, inp.shape) as unknown[];
          if (inp.kind === 'ragged') nested[1] = Array.isArray(nested[1]) ? (nested[1] as unknown[]).slice(1) : [nested[1]];
          else nested[nested.length - 1] = inp.shape.length === 1 ? (typeof vals[0] === 'bigint' ? 1 : 1n) : 'x';
          call = () => gx.tensor(nested as number[], opts as gx.TensorOptions);
          return errorVerdict(`a ${inp.kind} nested array`);
        } else {
          data = nest(vals, inp.shape);
          // Nesting shows no size past the first 0 ([[]] is shape [1, 0]).
          const z = inp.shape.indexOf(0);
          if (z >= 0) shape = inp.shape.slice(0, z + 1);
          dtype = a ?? (vals.length === 0 ? 'float32' : inp.vdtype === 'int64' ? 'int64' : inp.vdtype === 'bool' ? 'bool' : 'float32');
          values = vals.map((v) => storeValue(v, dtype));
        }
        // options.shape: reshape to the same count, or a count that does not fit.
        const n = numel(shape);
        let want = shape;
        if (inp.reshape === 1) want = n === 0 ? [0, 1] : [n];
        if (inp.reshape === 2) want = [n + 1];
        const o = inp.reshape === 0 || inp.junkOpts ? opts : { ...(opts as object), shape: want };
        call = () => gx.tensor(data as number[], o as gx.TensorOptions & { shape?: number[] });
        const bad = values.find((v): v is string => typeof v === 'string');
        if (bad !== undefined) return errorVerdict(bad);
        if (inp.reshape === 2) return errorVerdict('a shape of another element count');
        const sent = inp.kind === 'junk' || (inp.kind === 'scalar' && vals.length > 0) ? [data] : inp.kind === 'typed' ? elementsOf(data as ArrayBufferView) : vals;
        return { kind: 'ok', expect: { dtype, shape: want, values: values as (V | undefined)[] }, known: nanBool(dtype, sent) };
      }
      case 'empty':
      case 'zeros':
      case 'ones':
      case 'full': {
        const s = shapeArg(inp.shape, inp.badShape);
        const value = inp.op === 'full' ? inp.scalar : inp.op === 'ones' ? 1 : 0;
        call = inp.op === 'full' ? () => gx.full(s as number[], value as number, opts as gx.EmptyOptions)
          : () => (inp.op === 'empty' ? gx.empty : inp.op === 'zeros' ? gx.zeros : gx.ones)(s as number[], opts as gx.EmptyOptions);
        if (inp.op === 'full' && typeof value !== 'number' && typeof value !== 'bigint' && typeof value !== 'boolean') return errorVerdict('a fill value of the wrong kind');
        const why = shapeProblem(s);
        if (why !== undefined) return errorVerdict(why);
        const shape = typeof s === 'number' ? [s] : (s as number[]);
        const dtype: DType = a ?? (inp.op !== 'full' ? 'float32' : typeof value === 'bigint' ? 'int64' : typeof value === 'boolean' ? 'bool' : 'float32');
        if (numel(shape) >= HUGE) {
          return errorVerdict('out of memory', known);
        }
        if (inp.op === 'empty') return { kind: 'ok', expect: { dtype, shape } };
        // A finite fill past float32's largest value is refused, as torch.full's checked conversion; float16 and
        // bfloat16 round it (to inf past their range), as torch 2.13's.
        if (dtype === 'float32' && (typeof value === 'number' || typeof value === 'bigint') && Number.isFinite(Number(value)) &&
          Math.abs(Number(value)) > maxFinite(dtype)) return errorVerdict('a fill value out of the dtype\'s range', []);
        const v = storeValue(value, dtype);
        if (typeof v === 'string') return errorVerdict(v, inp.op === 'full' ? [] : undefined);
        return { kind: 'ok', expect: { dtype, shape, values: new Array<V | undefined>(numel(shape)).fill(v) }, known: nanBool(dtype, [value]) };
      }
      case 'arange': {
        const form = inp.badShape % 3;
        let [start, end, step] = form === 0 ? [0, n0, 1] : form === 1 ? [n0, n1, 1] : [n0, n1, n2];
        // Lengths between 4096 and a size no allocator gives are cut to 4096 (the fuzz stays small).
        const len = Math.ceil((end - start) / step);
        if (len > 4096 && len < HUGE) end = start + 4096 * step;
        call = form === 0 ? () => gx.arange(end, opts as gx.TensorOptions)
          : form === 1 ? () => gx.arange(start, end, undefined, opts as gx.TensorOptions) : () => gx.arange(start, end, step, opts as gx.TensorOptions);
        if (![start, end, step].every(Number.isFinite)) return errorVerdict('a bound that is not finite');
        if (step === 0) return errorVerdict('step 0');
        const integral = [start, end, step].every(Number.isInteger);
        const dtype = a ?? (integral ? 'int64' : 'float32');
        if (dtype === 'bool') return errorVerdict('a bool arange');
        // torch truncates the bounds for an integer dtype: all three (and counts with them) for int64, start and
        // step after counting for the narrower ones (NOTE [ Integer aranges ] in lib/ops/creation/creation.ts).
        // (Copies: the call above reads start, end and step when it runs.)
        let [s0, e0, st] = dtype === 'int64' ? [start, end, step].map(Math.trunc) : [start, end, step];
        if (st === 0) return errorVerdict('a step that truncates to 0');
        if ((e0 - s0) * st < 0) return errorVerdict('an end not reachable');
        const n = Math.ceil((e0 - s0) / st);
        if (['int8', 'int16', 'int32', 'uint8'].includes(dtype)) [s0, st] = [Math.trunc(s0), Math.trunc(st)];
        if (n >= HUGE) return errorVerdict('out of memory', []);
        const values = Array.from({ length: n }, (_, i) => cast(s0 + i * st, dtype));
        return { kind: 'ok', expect: { dtype, shape: [n], values } };
      }
      case 'linspace': {
        const steps = inp.badShape === 1 ? 2 ** 52 : inp.badShape === 2 ? -1 : inp.badShape === 3 ? 2.5 : Math.abs(Math.trunc(n2)) % 9;
        call = () => gx.linspace(n0, n1, steps, opts as gx.TensorOptions);
        if (!Number.isFinite(n0) || !Number.isFinite(n1)) return errorVerdict('a bound that is not finite');
        if (!Number.isSafeInteger(steps) || steps < 0) return errorVerdict('steps that is not a non-negative integer');
        const dtype = a ?? 'float32';
        if (dtype === 'bool' && steps > 1) return errorVerdict('a bool linspace');
        // A bound the dtype cannot hold is refused, as torch's checked conversion: an integer dtype's by checkedInt
        // (-0.5 for uint8, before truncation; -1 is its 255), a finite one past a floating dtype's largest;
        // torch checks no bound for 0 steps, only start for 1.
        const integer = isInt(dtype);
        const fmax = isFloat(dtype) && dtype !== 'float64' ? maxFinite(dtype) : undefined;
        const checked = steps === 0 ? [] : steps === 1 ? [n0] : [n0, n1];
        const holds = (v: number): boolean => (integer ? checkedInt(v, dtype) !== undefined : fmax === undefined || Math.abs(v) <= fmax);
        if (!checked.every(holds)) return errorVerdict('a bound out of the dtype\'s range');
        const asBound = (v: number, used: boolean): number => (integer && used ? Number(checkedInt(v, dtype)) : v);
        const [b0, b1] = [asBound(n0, steps >= 1), asBound(n1, steps >= 2)];
        if (steps >= HUGE) return errorVerdict('out of memory', []);
        // torch's CPU kernel: the first half up from start, the rest down from end, each point one fused multiply-add
        // (its build contracts them): in float for float32, in double for float64 and the integer dtypes.
        // float16 and bfloat16 compute with every operation rounded to the dtype (index included).
        const r16 = (v: number): number => Number(cast(Math.fround(v), dtype));
        const point = (i: number): number => {
          if (steps === 1) return b0;
          const k = steps - 1 - i, up = i < Math.floor(steps / 2);
          if (dtype === 'float16' || dtype === 'bfloat16') {
            const [s, e] = [r16(b0), r16(b1)];
            const st = r16(r16(e - s) / r16(steps - 1));
            return up ? r16(s + r16(st * r16(i))) : r16(e - r16(st * r16(k)));
          }
          if (dtype === 'float32') {
            const [s, e] = [Math.fround(b0), Math.fround(b1)];
            const st = Math.fround(Math.fround(e - s) / Math.fround(steps - 1));
            return up ? fusedMulAdd(st, Math.fround(i), s, 24) : fusedMulAdd(-st, Math.fround(k), e, 24);
          }
          const st = (b1 - b0) / (steps - 1);
          return up ? fusedMulAdd(st, i, b0, 53) : fusedMulAdd(-st, k, b1, 53);
        };
        const values = Array.from({ length: steps }, (_, i) => cast(point(i), dtype));
        return { kind: 'ok', expect: { dtype, shape: [steps], values } };
      }
    }
  })();
  // The model ran with the call's arguments; options of the wrong kind or an unknown dtype fail first.
  const verdict = inp.junkOpts ? errorVerdict('options of the wrong kind')
    : asked !== undefined && !isDType(asked) ? errorVerdict('not a dtype') : model;
  return {
    bases: [],
    plan: { names: [fn], verdict, prepare: () => ({ call }) },
  };
}

export const createProperty: FuzzProperty<CreateInput> = {
  name: 'create', about: 'gx.tensor, empty, zeros, ones, full, arange, linspace', arb: createArb, plan: createPlan, weight: 0.7,
};

// --- promotion ------------------------------------------------------------------

export interface PromoteInput {
  op: 'promoteTypes' | 'canCast' | 'resultType';
  a: unknown;
  b: unknown;
  /** resultType's operands: a 0-d or dimensioned tensor of a dtype, a JS scalar, or junk. */
  operands: ({ t: DType; ndim: number } | { s: number | bigint | boolean } | { junk: unknown })[];
}

const dtypeOrJunk = fc.oneof({ weight: 12, arbitrary: dtypeArb }, { weight: 1, arbitrary: fc.constantFrom<unknown>('x', 'float', undefined, 3) });

export const promoteArb: fc.Arbitrary<PromoteInput> = fc.record({
  op: fc.constantFrom<PromoteInput['op']>('promoteTypes', 'canCast', 'resultType'),
  a: dtypeOrJunk,
  b: dtypeOrJunk,
  operands: fc.array(fc.oneof(
    { weight: 6, arbitrary: fc.record({ t: dtypeArb, ndim: fc.nat(2) }) },
    { weight: 4, arbitrary: scalarArb.map((s) => ({ s })) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>('x', null, {}).map((junk) => ({ junk })) },
  ), { maxLength: 4 }),
});

function promotePlan(inp: PromoteInput): { bases: BaseSpec[]; plan: Plan } {
  const fn = `gx.${inp.op}`;
  const bases: BaseSpec[] = [];
  const verdict = ((): Plan['verdict'] => {
    if (inp.op !== 'resultType') {
      if (!isDType(inp.a) || !isDType(inp.b)) return errorVerdict('not a dtype', []);
      const want = inp.op === 'promoteTypes' ? promote(inp.a, inp.b) : canCastTo(inp.a, inp.b);
      return { kind: 'value', check: (r) => (r === want ? undefined : `${String(r)}, expected ${String(want)}`) };
    }
    if (inp.operands.length === 0) return errorVerdict('no operands');
    if (inp.operands.some((o) => 'junk' in o)) return errorVerdict('an operand of the wrong kind', []);
    const ops = inp.operands.map((o): PromoOperand => ('t' in o ? { tensor: true, dtype: o.t, ndim: o.ndim } : { tensor: false, value: (o as { s: number }).s }));
    const want = resultTypeOf(ops);
    return { kind: 'value', check: (r) => (r === want ? undefined : `${String(r)}, expected ${String(want)}`) };
  })();
  inp.operands.forEach((o) => {
    if ('t' in o) bases.push({ dtype: o.t, shape: new Array<number>(o.ndim).fill(1), data: [castFrom(1, 'int32', o.t) as V] });
  });
  return {
    bases,
    plan: {
      names: [fn],
      verdict,
      prepare: (pool) => {
        let bi = 0;
        const args = inp.operands.map((o) => ('t' in o ? pool.base(bi++) : 's' in o ? o.s : o.junk));
        if (inp.op === 'promoteTypes') return { call: () => gx.promoteTypes(inp.a as DType, inp.b as DType) };
        if (inp.op === 'canCast') return { call: () => gx.canCast(inp.a as DType, inp.b as DType) };
        return { call: () => gx.resultType(...(args as gx.Operand[])) };
      },
    },
  };
}

export const promoteProperty: FuzzProperty<PromoteInput> = {
  name: 'promote', about: 'gx.promoteTypes, canCast, resultType against torch\'s table', arb: promoteArb, plan: promotePlan, weight: 0.3,
};
