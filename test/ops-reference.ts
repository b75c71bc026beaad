// Plain-JS references for the built-in ops' tests (test/ops-*.test.ts):
// values of a dtype, conversions between dtypes as the kernels do them, the
// compute types (NOTE [ Compute types ] in ops/common/hd.h), broadcasting
// indices, input generators with domains, and comparison with a tolerance.
import type { ExecutionContext } from 'ava';

import * as gx from '../lib';
import { bfloat16BitsToFloat32, float16BitsToFloat32, float32ToBFloat16Bits, float32ToFloat16Bits } from '../lib/core/half';
import { rng } from './rng';

export type V = number | bigint;

export const FLOATS = ['float32', 'float64', 'float16', 'bfloat16'] as const;
export const INTS = ['int8', 'int16', 'int32', 'int64', 'uint8'] as const;
export const ALL_DTYPES: readonly gx.DType[] = [...FLOATS, ...INTS, 'bool'];

export function isFloat(d: gx.DType): boolean {
  return d === 'float32' || d === 'float64' || d === 'float16' || d === 'bfloat16';
}

const BITS: Partial<Record<gx.DType, [number, boolean]>> = {
  int8: [8, true], int16: [16, true], int32: [32, true], int64: [64, true], uint8: [8, false],
};

/** `v` converted to dtype d as a C++ static_cast does it (floats to ints truncate; anything to bool is != 0). */
export function cast(v: V | boolean, d: gx.DType): V {
  const x = typeof v === 'boolean' ? (v ? 1 : 0) : v;
  switch (d) {
    case 'float64': return Number(x);
    case 'float32': return Math.fround(Number(x));
    case 'float16': return float16BitsToFloat32(float32ToFloat16Bits(Math.fround(Number(x))));
    case 'bfloat16': return bfloat16BitsToFloat32(float32ToBFloat16Bits(Math.fround(Number(x))));
    case 'bool': return (typeof x === 'bigint' ? x !== 0n : x !== 0) ? 1 : 0;
    default: {
      const [bits, signed] = BITS[d] as [number, boolean];
      const i = typeof x === 'bigint' ? x : BigInt(Math.trunc(x));
      const w = signed ? BigInt.asIntN(bits, i) : BigInt.asUintN(bits, i);
      return d === 'int64' ? w : Number(w);
    }
  }
}

/** The compute type of a common dtype (the kernels' C). */
export type Compute = 'float' | 'double' | 'int' | 'bool';
export function computeOf(common: gx.DType): Compute {
  if (common === 'float64') return 'double';
  if (isFloat(common)) return 'float';
  return 'int';
}

/** An input value of dtype `from` as compute type c of common dtype `common` (16-bit commons round through). */
export function load(v: V, from: gx.DType, c: Compute, common: gx.DType): V {
  switch (c) {
    case 'double': return Number(v);
    case 'float': {
      const f = Math.fround(Number(v));
      return (common === 'float16' || common === 'bfloat16') && from !== common ? cast(f, common) : f;
    }
    case 'int': return typeof v === 'bigint' ? v : BigInt(v);
    case 'bool': return (typeof v === 'bigint' ? v !== 0n : v !== 0) ? 1 : 0;
  }
}

/** A compute-type result rounded as the kernel's arithmetic rounds it (float: to float32; int: to int64). */
export function round(v: V, c: Compute): V {
  if (c === 'float') return Math.fround(Number(v));
  if (c === 'int') return BigInt.asIntN(64, BigInt(v));
  return v;
}

/** The values of a tensor in C order as numbers (bigints for int64; 0/1 for bool). */
export function values(t: gx.Tensor): V[] {
  return Array.from(t.toArraySync() as ArrayLike<V>);
}

/** C-order coordinates of flat position l in `shape`. */
export function unravel(l: number, shape: readonly number[]): number[] {
  const c = shape.map(() => 0);
  for (let d = shape.length - 1; d >= 0; d--) {
    c[d] = l % shape[d];
    l = Math.floor(l / shape[d]);
  }
  return c;
}

/** The flat C-order position of coordinates c in `shape`. */
export const ravel = (c: readonly number[], shape: readonly number[]): number => c.reduce((acc, v, d) => acc * shape[d] + v, 0);

/** A tensor's values as JS numbers (bool as 0/1, int64 rounded). */
export const numbers = (t: gx.Tensor): number[] => Array.from(t.toArraySync() as ArrayLike<number | bigint | boolean>, Number);

export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** For each C-order index of `out`, the C-order index of an input of shape `inp` broadcast to it. */
export function broadcastIndex(out: readonly number[], inp: readonly number[]): (i: number) => number {
  const lead = out.length - inp.length;
  const inStrides = new Array<number>(inp.length);
  let s = 1;
  for (let d = inp.length - 1; d >= 0; d--) {
    inStrides[d] = inp[d] === 1 ? 0 : s;
    s *= inp[d];
  }
  return (i) => {
    let j = 0;
    for (let d = out.length - 1; d >= 0; d--) {
      const idx = i % out[d];
      i = Math.floor(i / out[d]);
      if (d >= lead) j += idx * inStrides[d - lead];
    }
    return j;
  };
}

export interface Domain {
  /** Floats: uniform in [lo, hi); ints: integers in [lo, hi]. Default: the dtype's random spread (helpers.randomValues). */
  lo?: number;
  hi?: number;
  /** Leave out values whose magnitude is below this (divisors, log arguments). */
  avoidZero?: boolean;
}

/** n random values exactly representable in dtype, within `dom`, never all zero. */
export function randomIn(dtype: gx.DType, n: number, seed: number, dom: Domain = {}): V[] {
  const r = rng(seed);
  const out: V[] = [];
  const ranges: Record<gx.DType, [number, number]> = {
    float32: [-100, 100], float64: [-1e6, 1e6], float16: [-50, 50], bfloat16: [-50, 50],
    int8: [-128, 127], int16: [-32768, 32767], int32: [-2147483648, 2147483647], int64: [-1e15, 1e15], uint8: [0, 255], bool: [0, 1],
  };
  const [lo, hi] = [dom.lo ?? ranges[dtype][0], dom.hi ?? ranges[dtype][1]];
  while (out.length < n) {
    let v: V;
    if (isFloat(dtype)) v = cast(lo + r() * (hi - lo), dtype);
    else if (dtype === 'bool') v = out.length === 0 ? 1 : r() < 0.5 ? 1 : 0;
    else v = cast(Math.floor(lo + r() * (hi - lo + 1)), dtype);
    if (dom.avoidZero && Math.abs(Number(v)) < (isFloat(dtype) ? 1e-3 : 1)) continue;
    out.push(v);
  }
  return out;
}

/** A tensor of these values (int64 from bigints) with `shape`. */
export function make(vals: readonly V[], dtype: gx.DType, shape: readonly number[], device: string): gx.Tensor {
  const data = dtype === 'int64' ? vals.map((v) => BigInt(v)) : vals.map((v) => Number(v));
  return gx.tensor(data as number[], { dtype, device, shape });
}

/** Relative tolerance of a result dtype for ops that are not exact (transcendental functions, sums). */
export function tolerance(d: gx.DType): number {
  switch (d) {
    case 'float64': return 1e-12;
    case 'float32': return 2e-6;
    case 'float16': return 2e-3;
    case 'bfloat16': return 1.6e-2;
    default: return 0;
  }
}

/**
 * Elementwise comparison: exact (NaN equals NaN) when rtol is 0, else
 * |a - e| <= rtol * |e| + atol. Fails at the first mismatch, naming it.
 */
export function close(t: ExecutionContext, actual: readonly V[], expected: readonly V[], what: string, rtol = 0, atol = 0): void {
  if (actual.length !== expected.length) {
    t.fail(`${what}: ${actual.length} elements, expected ${expected.length}`);
    return;
  }
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i];
    if (typeof a === 'bigint' || typeof e === 'bigint') {
      if (BigInt(a) !== BigInt(e)) {
        t.fail(`${what}: element ${i} is ${a}, expected ${e}`);
        return;
      }
      continue;
    }
    if (Number.isNaN(a) && Number.isNaN(e)) continue;
    if (a === e) continue;
    if (rtol > 0 && Number.isFinite(e) && Math.abs(a - e) <= rtol * Math.abs(e) + atol) continue;
    t.fail(`${what}: element ${i} is ${a}, expected ${e}${rtol > 0 ? ` (rtol ${rtol}, atol ${atol})` : ''}`);
    return;
  }
  t.pass();
}

/**
 * Elementwise comparison with an absolute tolerance per element (bigints
 * exact, NaN equals NaN); checks the count, fails at the first mismatch.
 */
export function closeEach(t: ExecutionContext, actual: readonly V[], expected: readonly V[], atol: readonly number[], what: string): void {
  t.is(actual.length, expected.length, `${what}: element count`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i];
    const ok = typeof e === 'bigint' || typeof a === 'bigint' ? BigInt(a) === BigInt(e)
      : (Number.isNaN(a) && Number.isNaN(e)) || a === e || Math.abs(Number(a) - Number(e)) <= atol[i];
    if (!ok) {
      t.fail(`${what}: element ${i} is ${a}, expected ${e} (atol ${atol[i]})`);
      return;
    }
  }
  t.pass();
}

/**
 * Live tensors on a device now (for leak checks in serial tests), after a
 * collection: tensors other tests forgot are finalized inside collections
 * (NOTE [ Finalizers inside the GC ]), so one must not land mid-check.
 */
export function live(device: string): number {
  globalThis.gc?.();
  return gx.memory.stats(device).liveTensors;
}

/** erfc(x) for x >= 0 by its continued fraction (Lentz), accurate to ~1e-15 relative for x >= 2. */
function erfcCF(x: number): number {
  const tiny = 1e-300;
  // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + 1/2/(x + 1/(x + 3/2/(x + 2/(x + ...)))))
  let f = x, c = x, d = 0;
  for (let k = 1; k < 5000; k++) {
    const a = k / 2;
    d = x + a * d;
    d = d === 0 ? tiny : d;
    c = x + a / c;
    c = c === 0 ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  // exp(-x^2) with x^2 split exactly (x = hi + lo, hi of 24 bits): exp(-x * x) would carry x * x's rounding, x^2 ulps.
  // Past 27 erfc is below the smallest double (and exp(-hi * hi) underflows while the other factor may not).
  if (x > 27) return 0;
  const hi = Math.fround(x), lo = x - hi;
  return Math.exp(-hi * hi) * Math.exp(-(2 * hi * lo + lo * lo)) / Math.sqrt(Math.PI) / f;
}

/**
 * The error function to a few ulps: its Taylor series below 1, 1 - erfc beyond (the series' alternating
 * terms cancel past 1: at x = 2.44 it was 26 ulps off).
 */
export function erf(x: number): number {
  if (Number.isNaN(x)) return x;
  if (!Number.isFinite(x)) return Math.sign(x);
  const ax = Math.abs(x);
  if (ax >= 1) return Math.sign(x) * (1 - erfcCF(ax));
  let term = x, sum = x;
  for (let n = 1; n < 200; n++) {
    term *= -x * x / n;
    const add = term / (2 * n + 1);
    sum += add;
    if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
  }
  return sum * 2 / Math.sqrt(Math.PI);
}

/**
 * The complementary error function to ~1e-15 relative: the continued fraction from 1 on (1 - erf loses
 * digits as erf nears 1: at x = 2.4 about three), 1 - erf below, 2 - erfc(-x) for x < 0.
 */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x < 0) return 2 - erfc(-x);
  if (x === Infinity) return 0;
  return x >= 1 ? erfcCF(x) : 1 - erf(x);
}

/**
 * The inverse error function, by bisection on erf (|y| <= 0.5) or on erfc(x) = 1 - |y| (exact
 * there), to the last double: as accurate as erf and erfc above. +-inf at +-1, NaN beyond.
 */
export function erfinv(y: number): number {
  if (!(Math.abs(y) <= 1)) return Number.NaN;
  if (y === 0) return y;
  const a = Math.abs(y);
  if (a === 1) return Math.sign(y) * Infinity;
  const q = 1 - a;
  const above = a <= 0.5 ? (x: number): boolean => erf(x) > a : (x: number): boolean => erfc(x) < q;
  let lo = 0, hi = 27;
  for (let k = 0; k < 200; k++) {
    const mid = (lo + hi) / 2;
    if (mid === lo || mid === hi) break;
    if (above(mid)) hi = mid;
    else lo = mid;
  }
  return Math.sign(y) * (lo + hi) / 2;
}

/** Round half to even, as C's rint and torch.round. */
export function rint(x: number): number {
  if (!Number.isFinite(x)) return x;
  const f = Math.floor(x);
  const diff = x - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Integer a ** b wrapping like int64; negative exponents as ops/binary/functors.h (1, +-1 or 0). */
export function intPow(a: bigint, b: bigint): bigint {
  if (b < 0n) return a === 1n ? 1n : a === -1n ? (b % 2n === 0n ? 1n : -1n) : 0n;
  let r = 1n, base = a;
  for (let e = b; e > 0n; e >>= 1n) {
    if (e & 1n) r = BigInt.asIntN(64, r * base);
    base = BigInt.asIntN(64, base * base);
  }
  return r;
}

/** Python's %: the divisor's sign; integer x % 0 (and % -1) is 0 (ops/binary/functors.h). */
export function remainderRef(a: V, b: V, c: Compute): V {
  if (c === 'int') {
    const x = BigInt(a), y = BigInt(b);
    if (y === 0n || y === -1n) return 0n;
    let r = x % y;
    if (r !== 0n && (r < 0n) !== (y < 0n)) r += y;
    return r;
  }
  const x = Number(a), y = Number(b);
  let r = x % y;
  if (r !== 0 && (r < 0) !== (y < 0)) r = c === 'float' ? Math.fround(r + y) : r + y;
  return r;
}

/**
 * Floor division as ops/binary/functors.h (NOTE [ Floor division ]): integers exact, x // 0 is 0 and x // -1
 * is -x wrapping; floats torch's div_floor_floating, each step rounded to float32 for compute type float.
 */
export function floorDivideRef(a: V, b: V, c: Compute): V {
  if (c === 'int') {
    const x = BigInt(a), y = BigInt(b);
    if (y === 0n) return 0n;
    if (y === -1n) return BigInt.asIntN(64, -x);
    const q = x / y;
    return x % y !== 0n && (x < 0n) !== (y < 0n) ? q - 1n : q;
  }
  const r = c === 'float' ? Math.fround : (v: number): number => v;
  const x = Number(a), y = Number(b);
  if (y === 0) return x / y;
  const mod = x % y;
  let div = r(r(x - mod) / y);
  if (mod !== 0 && (y < 0) !== (mod < 0)) div = r(div - 1);
  if (div === 0) {
    const q = x / y;
    return q < 0 || Object.is(q, -0) ? -0 : 0;
  }
  let floordiv = Math.floor(div);
  if (r(div - floordiv) > 0.5) floordiv = r(floordiv + 1);
  return floordiv;
}

/** Division rounded toward 0 as TruncDivideOp: integers exact (x / 0 is 0, x / -1 is -x wrapping); floats trunc(a / b). */
export function truncDivideRef(a: V, b: V, c: Compute): V {
  if (c === 'int') {
    const x = BigInt(a), y = BigInt(b);
    if (y === 0n) return 0n;
    return BigInt.asIntN(64, x / y);
  }
  const q = Number(a) / Number(b);
  return Math.trunc(c === 'float' ? Math.fround(q) : q);
}
