// fast-check generators for the fuzz suite's inputs. Everything generated is
// plain data (shapes, values, view steps, scalars), never a gx tensor, so a
// failing input prints, shrinks and replays; model.ts turns it into tensors.
import fc from 'fast-check';

import { DTYPES, type DType } from '../../lib';
import { numel, VIEW_OPS, type BaseSpec, type TensorArg, type ViewStep } from './model';
import { castDefined, intRange, isFloat, type V } from './semantics';

/** The most elements a generated base has (views may reach more through expand). */
export const MAX_NUMEL = 64;

export const dtypeArb: fc.Arbitrary<DType> = fc.constantFrom(...DTYPES);
export const floatDtypeArb: fc.Arbitrary<DType> = fc.constantFrom<DType>('float32', 'float64', 'float16', 'bfloat16');
/** Floating dtypes four times in five (for ops that take only those). */
export const mostlyFloatArb: fc.Arbitrary<DType> = fc.oneof({ weight: 4, arbitrary: floatDtypeArb }, { weight: 1, arbitrary: dtypeArb });

/** A dimension: mostly 1 to 5, now and then 0. */
const dimArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(1) },
  { weight: 16, arbitrary: fc.integer({ min: 2, max: 5 }) },
  { weight: 1, arbitrary: fc.constant(0) },
);

/** Keeps the product of the nonzero dims at most `max` (later dims become 1, or 2 where that fits). */
export function limitNumel(dims: readonly number[], max = MAX_NUMEL): number[] {
  let n = 1;
  return dims.map((d) => {
    if (d === 0) return 0;
    let v = d;
    while (v > 1 && n * v > max) v--;
    n *= v;
    return v;
  });
}

/** Shapes of rank 0 to 16: mostly small ranks; high ranks are mostly size-1 and size-2 dims. */
export const shapeArb: fc.Arbitrary<number[]> = fc.oneof(
  { weight: 8, arbitrary: fc.array(dimArb, { maxLength: 4 }) },
  { weight: 2, arbitrary: fc.array(dimArb, { minLength: 5, maxLength: 16 }) },
).map((d) => limitNumel(d));

/** A shape that broadcasts with `s` (most of the time): a suffix of it with some dims set to 1, or another shape. */
export interface ShapeRelation {
  mode: number;
  keep: number;
  ones: number;
  other: number[];
}

export const relationArb: fc.Arbitrary<ShapeRelation> = fc.record({
  mode: fc.nat(19), keep: fc.nat(16), ones: fc.nat(0xffff), other: shapeArb,
});

export function relatedShape(s: readonly number[], r: ShapeRelation): number[] {
  if (r.mode === 0) return r.other;  // any shape: often does not broadcast
  if (r.mode < 8) return s.slice();
  const k = r.keep % (s.length + 1);
  const tail = s.slice(s.length - k);
  return tail.map((d, i) => (((r.ones >> i) & 1) === 1 ? 1 : d));
}

function floatValues(dtype: DType): fc.Arbitrary<number> {
  const wide = dtype === 'float64' ? 1e6 : dtype === 'float32' ? 100 : 50;
  const specials = [Number.NaN, Infinity, -Infinity, -0, 0.5, -1, 1e-3];
  if (dtype === 'float16') specials.push(65504, 6e-8);
  if (dtype === 'float32' || dtype === 'bfloat16') specials.push(1e30, -3e38, 1e-40);
  if (dtype === 'float64') specials.push(1e300, -1e-310);
  return fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: -8, max: 8 }) },
    { weight: 8, arbitrary: fc.double({ min: -wide, max: wide, noNaN: true }) },
    { weight: 1, arbitrary: fc.constantFrom(...specials) },
  ).map((v) => castDefined(v, dtype) as number);
}

function intValues(dtype: DType): fc.Arbitrary<V> {
  const [lo, hi] = intRange(dtype);
  if (dtype === 'int64') {
    return fc.oneof(
      { weight: 6, arbitrary: fc.bigInt({ min: -8n, max: 8n }) },
      { weight: 3, arbitrary: fc.bigInt({ min: lo, max: hi }) },
      { weight: 1, arbitrary: fc.constantFrom(lo, hi, -1n, 2n ** 53n + 1n) },
    );
  }
  const l = Number(lo), h = Number(hi);
  return fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: Math.max(l, -8), max: Math.min(h, 8) }) },
    { weight: 3, arbitrary: fc.integer({ min: l, max: h }) },
    { weight: 1, arbitrary: fc.constantFrom(l, h) },
  );
}

/** One value exactly representable in dtype (bigints for int64, 0/1 for bool). */
export function valueArb(dtype: DType): fc.Arbitrary<V> {
  if (dtype === 'bool') return fc.constantFrom(0, 1);
  return isFloat(dtype) ? floatValues(dtype) : intValues(dtype);
}

/** n values of dtype, never all zero. */
export function valuesArb(dtype: DType, n: number): fc.Arbitrary<V[]> {
  return fc.array(valueArb(dtype), { minLength: n, maxLength: n }).map((vals): V[] => {
    if (vals.length > 0 && vals.every((v) => v === 0 || v === 0n)) return [dtype === 'int64' ? 1n : 1, ...vals.slice(1)];
    return vals;
  });
}

/** A base tensor of a given dtype and shape. */
export function baseOf(dtype: DType, shape: readonly number[], cpu = false): fc.Arbitrary<BaseSpec> {
  return valuesArb(dtype, numel(shape)).map((data) => ({ dtype, shape: shape.slice(), data, ...(cpu ? { cpu } : {}) }));
}

/** A base of any shape; `dtype` given or any. */
export function baseArb(dtype?: fc.Arbitrary<DType>, shape: fc.Arbitrary<number[]> = shapeArb): fc.Arbitrary<BaseSpec> {
  return fc.tuple(dtype ?? dtypeArb, shape, cpuArb).chain(([d, s, cpu]) => baseOf(d, s, cpu));
}

/** Rarely true: the tensor stays on the CPU when the run is on CUDA. */
export const cpuArb: fc.Arbitrary<boolean> = fc.oneof({ weight: 30, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });

export const viewStepArb: fc.Arbitrary<ViewStep> = fc.record({
  op: fc.constantFrom(...VIEW_OPS), a: fc.nat(63), b: fc.nat(63), c: fc.nat(63),
});

/** Mostly no view, else one to three steps. */
export const viewsArb: fc.Arbitrary<ViewStep[]> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<ViewStep[]>([]) },
  { weight: 2, arbitrary: fc.array(viewStepArb, { minLength: 1, maxLength: 3 }) },
);

/** Rarely true: the argument is disposed before the call. */
export const disposedArb: fc.Arbitrary<boolean> = fc.oneof({ weight: 80, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });

/** A tensor argument over base `base` (of the call's bases). */
export function argArb(base: fc.Arbitrary<number>, views: fc.Arbitrary<ViewStep[]> = viewsArb): fc.Arbitrary<TensorArg> {
  return fc.record({ base, views, disposed: disposedArb });
}

/** JS scalars as operands: integral and fractional numbers, specials, bigints, booleans. */
export const scalarArb: fc.Arbitrary<number | bigint | boolean> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -10, max: 10 }) },
  { weight: 4, arbitrary: fc.double({ min: -100, max: 100, noNaN: true }).map((x) => Math.round(x * 8) / 8) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 300, -129, 70000, 2 ** 31, 2 ** 63, 1e20, 1 + 2 ** -11 + 2 ** -40) },
  { weight: 2, arbitrary: fc.bigInt({ min: -300n, max: 300n }) },
  { weight: 1, arbitrary: fc.constantFrom(2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n) },
  { weight: 2, arbitrary: fc.boolean() },
);

/** Values no op takes where a tensor, number, axis or options object goes. */
export const junkArb: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  undefined, null, 'float32', '1', [], [1, 2], {}, Symbol.for('gx'), () => 1, new Float32Array(2), new Date(0),
);
