// The simulator's arithmetic: each operation of the kernel language computed
// as the generated CUDA computes it (lib/jit/LANGUAGE.md), on JS values:
// bool as boolean, int32 as an int32 number, int64 as a BigInt, float32 as a
// number passed through Math.fround at every operation, float64 as a number.
// interpret.ts calls these for what one JS operator does not already say.
import { bfloat16BitsToFloat32, float16BitsToFloat32, float32ToBFloat16Bits, float32ToFloat16Bits } from '../core/half';
import type { AtomicOp } from './ir';

const F = Math.fround;
const TWO53 = 2 ** 53;
const I64_MAX = 2n ** 63n - 1n;
const I64_MIN = -(2n ** 63n);

/** JS truthiness (NaN is false): conditions and conversions to bool. */
const truth = (x: number): boolean => x === x && x !== 0;

/** Float to int32: toward zero, saturating, NaN 0 (the GPU's conversion). */
function f2i(x: number): number {
  if (x !== x) return 0;
  if (x >= 2147483647) return 2147483647;
  if (x <= -2147483648) return -2147483648;
  return Math.trunc(x) | 0;
}

function f2l(x: number): bigint {
  if (x !== x) return 0n;
  if (x >= 9223372036854775807) return I64_MAX;
  if (x <= -9223372036854775808) return I64_MIN;
  return BigInt(Math.trunc(x));
}

/** int64 to float32 in one rounding (Number() first would round twice past 2^53). */
function l2f(v: bigint): number {
  const n = Number(v);
  if (Math.abs(n) < TWO53) return F(n);
  const neg = v < 0n;
  const a = neg ? -v : v;
  const shift = BigInt(a.toString(2).length - 53);
  // 53 bits with the dropped ones folded into a sticky last bit: rounding that to 24 bits is exact.
  let hi = a >> shift;
  if ((a & ((1n << shift) - 1n)) !== 0n) hi |= 1n;
  const r = F(Number(hi) * 2 ** Number(shift));
  return neg ? -r : r;
}

/** C's remainder of integers; by 0 (and by -1, which traps on INT_MIN in C) it is 0. */
const rem32 = (a: number, b: number): number => (b === 0 || b === -1 ? 0 : (a % b) | 0);
const rem64 = (a: bigint, b: bigint): bigint => (b === 0n || b === -1n ? 0n : a % b);

function pow32(b: number, e: number): number {
  if (e < 0) return b === 1 ? 1 : b === -1 ? ((e & 1) !== 0 ? -1 : 1) : 0;
  let r = 1, x = b;
  while (e !== 0) {
    if ((e & 1) !== 0) r = Math.imul(r, x);
    x = Math.imul(x, x);
    e >>>= 1;
  }
  return r;
}

function pow64(b: bigint, e: bigint): bigint {
  if (e < 0n) return b === 1n ? 1n : b === -1n ? ((e & 1n) !== 0n ? -1n : 1n) : 0n;
  let r = 1n, x = b;
  while (e !== 0n) {
    if ((e & 1n) !== 0n) r = BigInt.asIntN(64, r * x);
    x = BigInt.asIntN(64, x * x);
    e >>= 1n;
  }
  return r;
}

/** C's pow where JS's ** differs: 1 to any power and -1 to an infinite one are 1. */
function pow(a: number, b: number): number {
  if (a === 1 || b === 0) return 1;
  if (a === -1 && !Number.isFinite(b) && b === b) return 1;
  return Math.pow(a, b);
}

/** NaN-propagating min / max (JS's Math.min / max; C's fmin would drop the NaN). */
const fmin = (a: number, b: number): number => (a !== a || b !== b ? a + b : Math.min(a, b));
const fmax = (a: number, b: number): number => (a !== a || b !== b ? a + b : Math.max(a, b));
const sign = (x: number): number => (x > 0 ? 1 : x < 0 ? -1 : x);
const imin = <T extends number | bigint>(a: T, b: T): T => (a < b ? a : b);
const imax = <T extends number | bigint>(a: T, b: T): T => (a > b ? a : b);
const iabs32 = (x: number): number => (x < 0 ? -x | 0 : x);
const iabs64 = (x: bigint): bigint => (x < 0n ? BigInt.asIntN(64, -x) : x);
const isign32 = (x: number): number => (x > 0 ? 1 : x < 0 ? -1 : 0);
const isign64 = (x: bigint): bigint => (x > 0n ? 1n : x < 0n ? -1n : 0n);

/** Rounding at a store of a float16 / bfloat16 element (RNE, as CUDA's conversions). */
const half = (x: number): number => float16BitsToFloat32(float32ToFloat16Bits(x));
const bf16 = (x: number): number => bfloat16BitsToFloat32(float32ToBFloat16Bits(x));

const bits = new DataView(new ArrayBuffer(8));
/** Float compare-and-swap compares bit patterns (CUDA's atomicCAS on the int view). */
function sameBits(a: number, b: number, dtype: string): boolean {
  if (dtype === 'float32') {
    bits.setFloat32(0, a);
    const x = bits.getUint32(0);
    bits.setFloat32(0, b);
    return x === bits.getUint32(0);
  }
  if (dtype === 'float64') {
    bits.setFloat64(0, a);
    const x = bits.getBigUint64(0);
    bits.setFloat64(0, b);
    return x === bits.getBigUint64(0);
  }
  return a === b;
}

/** The new value of an atomic read-modify-write on an element of `dtype` (int32, int64, float32, float64). */
function atomic(op: AtomicOp, dtype: string, old: number | bigint, v: number | bigint, c: number | bigint | undefined): number | bigint {
  const i64 = dtype === 'int64';
  switch (op) {
    case 'add': case 'sub': {
      if (i64) return BigInt.asIntN(64, op === 'add' ? (old as bigint) + (v as bigint) : (old as bigint) - (v as bigint));
      const r = op === 'add' ? (old as number) + (v as number) : (old as number) - (v as number);
      return dtype === 'int32' ? r | 0 : dtype === 'float32' ? F(r) : r;
    }
    case 'min': return v < old ? v : old;
    case 'max': return v > old ? v : old;
    case 'exch': return v;
    case 'cas': return sameBits(old as number, c as number, dtype) ? v : old;
    case 'and': return i64 ? (old as bigint) & (v as bigint) : (old as number) & (v as number);
    case 'or': return i64 ? (old as bigint) | (v as bigint) : (old as number) | (v as number);
    case 'xor': return i64 ? (old as bigint) ^ (v as bigint) : (old as number) ^ (v as number);
  }
}

/** { debug: true }: a remainder's divisor, which must not be zero. */
function nonzero<T extends number | bigint>(b: T, line: number): T {
  if (b === 0 || b === 0n) throw new RangeError(`integer remainder by zero, line ${line}`);
  return b;
}

/** What generated simulator code calls as `R.*`. */
export const RUNTIME = {
  F, truth, f2i, f2l, l2f, rem32, rem64, pow32, pow64, pow, fmin, fmax, sign, imin, imax, iabs32, iabs64, isign32, isign64,
  half, bf16, atomic, nonzero,
  round32: (x: number): number => F(Math.floor(F(x + 0.5))),
  round64: (x: number): number => Math.floor(x + 0.5),
};
export type Runtime = typeof RUNTIME;
