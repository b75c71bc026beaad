// gx.cat and gx.stack, and the Tensor methods that read or write values:
// fill_, copy_, item, to, toArraySync, against the model.
import fc from 'fast-check';

import * as gx from '../../../lib';
import type { DType } from '../../../lib';
import { argArb, baseOf, dtypeArb, junkArb, scalarArb, shapeArb } from '../arbitraries';
import { aliasing, errorVerdict, deviceOf, type Plan } from '../calls';
import { numel, resolveArg, type BaseSpec, type ModelTensor, type TensorArg } from '../model';
import { cast, checkedInt, intRange, isInt, maxFinite, type V } from '../semantics';
import type { FuzzProperty } from '../property';

// --- cat, stack -----------------------------------------------------------------

export interface JoinInput {
  stack: boolean;
  bases: BaseSpec[];
  parts: TensorArg[];
  dim: unknown;
  /** Pass a non-array, or an array holding junk. */
  junk?: { v: unknown };
}

export const joinArb: fc.Arbitrary<JoinInput> = fc.record({
  stack: fc.boolean(), d: dtypeArb, s: shapeArb, k: fc.integer({ min: 1, max: 3 }), along: fc.nat(15), sizes: fc.array(fc.nat(3), { minLength: 3, maxLength: 3 }),
  misfit: fc.nat(12), other: dtypeArb,
}).chain((r) => {
  const n = r.s.length;
  const shapes = Array.from({ length: r.k }, (_, i) => {
    if (r.stack || n === 0) return r.s;
    const t = r.s.slice();
    t[r.along % n] = r.sizes[i];
    return t;
  });
  if (r.misfit === 0 && r.k > 1 && n < 16) shapes[1] = [...shapes[1], 2];
  if (r.misfit === 1 && r.k > 1) shapes[r.k - 1] = [0];  // cat skips 1-d empty tensors
  const dt = (i: number): DType => (r.misfit === 2 && i === 1 ? r.other : r.d);
  return fc.record({
    stack: fc.constant(r.stack),
    bases: fc.tuple(...shapes.map((s, i) => baseOf(dt(i), s))).map((b) => [...b]),
    parts: fc.tuple(...shapes.map((_, i) => argArb(fc.constant(i), fc.constant([])))).map((p) => [...p]),
    dim: fc.oneof({ weight: 12, arbitrary: fc.constant<unknown>(n === 0 ? 0 : r.along % (n + 1)) }, { weight: 3, arbitrary: fc.integer({ min: -4, max: 4 }) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(1.5, '0', undefined) }),
    junk: fc.oneof({ weight: 25, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: junkArb.map((v): { v: unknown } => ({ v })) }),
  });
});

function joinPlan(inp: JoinInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const parts = inp.parts.map((p) => resolveArg(p, bases));
  const fn = inp.stack ? 'gx.stack' : 'gx.cat';
  const verdict = ((): Plan['verdict'] => {
    if (inp.junk !== undefined) return errorVerdict('tensors of the wrong kind');
    if (parts.some((p) => p.disposed)) return errorVerdict('a disposed input');
    const d0 = parts[0].dtype;
    if (parts.some((p) => p.dtype !== d0)) return errorVerdict('dtypes differ');
    if (parts.some((p) => deviceOf(p, device) !== deviceOf(parts[0], device))) return errorVerdict('devices differ');
    const dim = inp.dim === undefined ? 0 : inp.dim;
    if (typeof dim !== 'number' || !Number.isSafeInteger(dim)) return errorVerdict('a dim that is not an integer');
    if (inp.stack) {
      const ref = parts[0].layout.shape, n = ref.length;
      if (dim < -(n + 1) || dim > n) return errorVerdict('a dim out of range');
      const d = dim < 0 ? dim + n + 1 : dim;
      if (parts.some((p) => p.layout.shape.length !== n || p.layout.shape.some((v, i) => v !== ref[i]))) return errorVerdict('shapes differ');
      if (n + 1 > 16) return errorVerdict('more than 16 dims');
      const shape = ref.slice();
      shape.splice(d, 0, parts.length);
      // Element (outer, i, inner) of the result is element (outer, inner) of part i.
      const inner = numel(ref.slice(d)), outer = numel(ref.slice(0, d));
      const values: V[] = [];
      for (let o = 0; o < outer; o++) for (const p of parts) values.push(...p.values.slice(o * inner, (o + 1) * inner));
      return { kind: 'ok', expect: { dtype: d0, shape, values } };
    }
    const skip = (p: ModelTensor): boolean => p.layout.shape.length === 1 && p.layout.shape[0] === 0;
    const live = parts.filter((p) => !skip(p));
    if (live.length === 0) return { kind: 'ok', expect: { dtype: d0, shape: [0], values: [] } };
    if (live.some((p) => p.layout.shape.length === 0)) return errorVerdict('a 0-d input');
    const ref = live[0].layout.shape, n = ref.length;
    if (dim < -n || dim >= n) return errorVerdict('a dim out of range');
    const d = dim < 0 ? dim + n : dim;
    if (live.some((p) => p.layout.shape.length !== n || p.layout.shape.some((v, i) => i !== d && v !== ref[i]))) return errorVerdict('shapes differ');
    const shape = ref.slice();
    shape[d] = live.reduce((a, p) => a + p.layout.shape[d], 0);
    const outer = numel(ref.slice(0, d));
    const values: V[] = [];
    for (let o = 0; o < outer; o++) {
      for (const p of live) {
        const chunk = numel(p.layout.shape.slice(d));
        values.push(...p.values.slice(o * chunk, (o + 1) * chunk));
      }
    }
    return { kind: 'ok', expect: { dtype: d0, shape, values } };
  })();
  return {
    bases,
    plan: {
      names: [fn],
      verdict,
      prepare: (pool) => {
        const ts: unknown[] = parts.map((p) => pool.tensor(p));
        const list: unknown = inp.junk === undefined ? ts : Array.isArray(inp.junk.v) ? [...ts, inp.junk.v] : inp.junk.v;
        const f = inp.stack ? gx.stack : gx.cat;
        return { call: () => (inp.dim === undefined ? f(list as gx.Tensor[]) : f(list as gx.Tensor[], inp.dim as number)) };
      },
    },
  };
}

export const joinProperty: FuzzProperty<JoinInput> = {
  name: 'join', about: 'gx.cat and gx.stack', arb: joinArb, plan: joinPlan, weight: 0.5,
};

// --- fill_, copy_, item, to, toArraySync ----------------------------------------

const METHODS = ['fill_', 'copy_', 'item', 'to', 'toArraySync'] as const;
type MethodName = (typeof METHODS)[number];

export interface MethodInput {
  op: MethodName;
  bases: BaseSpec[];
  x: TensorArg;
  src: TensorArg;
  value: unknown;
  device: unknown;
}

export const methodArb: fc.Arbitrary<MethodInput> = fc.record({
  op: fc.constantFrom(...METHODS), d: dtypeArb, s: shapeArb, same: fc.nat(5), d2: dtypeArb, s2: shapeArb, one: fc.nat(3),
}).chain((r) => {
  const s = r.one === 0 ? r.s.map(() => 1) : r.s;
  return fc.record({
    op: fc.constant(r.op),
    bases: fc.tuple(baseOf(r.d, s), baseOf(r.same === 0 ? r.d2 : r.d, r.same === 1 ? r.s2 : s)).map((b) => [...b]),
    x: argArb(fc.constant(0)),
    src: argArb(fc.oneof({ weight: 5, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(0) })),
    value: fc.oneof({ weight: 12, arbitrary: scalarArb }, { weight: 1, arbitrary: junkArb }, { weight: 1, arbitrary: fc.constantFrom<unknown>('2', {}) }),
    device: fc.constantFrom<unknown>('cpu', 'cuda', 'cpu', 'tpu', 7),
  });
});

/** What fill_ stores for a JS value (lib/core/dtype.ts fillBits: integers by torch's checked conversion, NaN and inf refused; float32 must not pass its largest, float16 and bfloat16 round). */
function fillValue(v: unknown, d: DType): V | string {
  if (typeof v !== 'number' && typeof v !== 'bigint' && typeof v !== 'boolean') return 'a value of the wrong kind';
  const x = typeof v === 'boolean' ? (v ? 1 : 0) : v;
  if (isInt(d)) {
    if (typeof x === 'number' && !Number.isFinite(x)) return 'a non-finite value for an integer dtype';
    const i = checkedInt(x, d);
    if (i === undefined) return 'a value out of range';
    return cast(i, d) as V;
  }
  if (d === 'bool') return cast(typeof x === 'bigint' ? x !== 0n : x !== 0, d) as V;
  // A finite value past float32's largest is refused, as torch's fill_ (a checked conversion); float16 and bfloat16
  // round it (to inf past their range), as torch 2.13's.
  if (d === 'float32' && Number.isFinite(Number(x)) && Math.abs(Number(x)) > maxFinite(d)) return 'a value out of range';
  return cast(Number(x), d) as V;
}

function methodPlan(inp: MethodInput, device: string): { bases: BaseSpec[]; plan: Plan } {
  const bases = inp.bases.slice();
  const x = resolveArg(inp.x, bases), src = resolveArg(inp.src, bases);
  const fn = `Tensor.${inp.op}`;
  let writes: ModelTensor | undefined;
  const verdict = ((): Plan['verdict'] => {
    if (x.disposed) return errorVerdict('a disposed tensor', inp.op === 'item' ? [] : undefined);
    const shape = x.layout.shape;
    switch (inp.op) {
      case 'fill_': {
        const v = fillValue(inp.value, x.dtype);
        if (typeof v === 'string') {
          // fill_ takes strings and objects for floating and bool dtypes (NaN, or "truthy").
          if (typeof inp.value === 'string' || (typeof inp.value === 'object' && inp.value !== null) || typeof inp.value === 'function'
            || typeof inp.value === 'symbol' || inp.value === undefined || inp.value === null) {
            return { kind: 'error', why: v, known: [] };
          }
          return errorVerdict(v);
        }
        writes = x;
        return { kind: 'ok', expect: { dtype: x.dtype, shape, values: x.values.map(() => v) } };
      }
      case 'copy_': {
        if (src.disposed) return errorVerdict('a disposed source');
        const ss = src.layout.shape;
        if (ss.length !== shape.length || ss.some((v, i) => v !== shape[i])) return errorVerdict('shapes differ');
        if (src.dtype !== x.dtype) return errorVerdict('dtypes differ');
        writes = x;
        if (x.layout.shape.some((s, i) => s > 1 && x.layout.strides[i] === 0)) {
          // Elements of self share memory: an Error (as torch), or any of the values written there.
          return { kind: 'ok', expect: { dtype: x.dtype, shape }, mayThrow: 'self has elements sharing memory' };
        }
        const al = aliasing(x, [src], true);
        return { kind: 'ok', expect: { dtype: x.dtype, shape, values: src.values }, ...(al.mayThrow ? { mayThrow: al.mayThrow } : {}) };
      }
      case 'item': {
        if (numel(shape) !== 1) return errorVerdict('not one element');
        const v = x.values[0];
        // int64 gives a number when one holds it exactly, and a RangeError (pointing to itemBigInt) beyond.
        if (typeof v === 'bigint' && (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER))) {
          return errorVerdict('int64 beyond 2^53 - 1');
        }
        const want = x.dtype === 'bool' ? v !== 0 : typeof v === 'bigint' ? Number(v) : v;
        return { kind: 'value', check: (r) => (Object.is(r, want) || (typeof r === 'number' && Number.isNaN(r) && Number.isNaN(Number(want))) ? undefined : `item() is ${String(r)}, expected ${String(want)}`) };
      }
      case 'to': {
        const d = inp.device;
        if (d !== 'cpu' && d !== 'cuda') return errorVerdict('not a device');
        if (d === 'cuda' && !gx.cuda.isAvailable()) return errorVerdict('no CUDA');
        return { kind: 'ok', expect: { dtype: x.dtype, shape, values: x.values } };
      }
      case 'toArraySync':
        return { kind: 'value', check: (r) => compareArray(r, x.values) };
    }
  })();
  return {
    bases,
    plan: {
      names: [fn],
      verdict,
      writes,
      prepare: (pool) => {
        const t = pool.tensor(x);
        switch (inp.op) {
          case 'fill_': return { call: () => t.fill_(inp.value as number), returns: t };
          case 'copy_': {
            const s = pool.tensor(src);
            return { call: () => t.copy_(s), returns: t };
          }
          case 'item': return { call: () => t.item() };
          case 'to': return { call: () => t.to(inp.device as string) };
          case 'toArraySync': return { call: () => t.toArraySync() };
        }
      },
    },
  };
}

/** The elements of a typed array, or undefined for anything else. */
function elements(r: unknown): V[] | undefined {
  if (r instanceof BigInt64Array) return Array.from(r);
  if (r instanceof Float32Array || r instanceof Float64Array || r instanceof Int8Array || r instanceof Int16Array
    || r instanceof Int32Array || r instanceof Uint8Array) return Array.from(r);
  return undefined;
}

function compareArray(r: unknown, want: readonly V[]): string | undefined {
  const a = elements(r);
  if (a === undefined) return 'not a typed array';
  if (a.length !== want.length) return `${a.length} elements, expected ${want.length}`;
  for (let i = 0; i < a.length; i++) {
    const g = a[i], e = want[i];
    if (!(g === e || (typeof g === 'number' && Number.isNaN(g) && Number.isNaN(Number(e))))) return `element ${i} is ${g}, expected ${e}`;
  }
  return undefined;
}

export const methodProperty: FuzzProperty<MethodInput> = {
  name: 'methods', about: 'Tensor.fill_, copy_, item, to, toArraySync', arb: methodArb, plan: methodPlan, weight: 0.5,
};
