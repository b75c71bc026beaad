// What a value of each dtype is, written down independently of lib/: the
// conversions PyTorch makes (floats to integers truncate, integers wrap, 16-bit
// floats round through float32), the compute types of the built-in kernels,
// torch's type promotion, and the limits the fuzz tolerances need.
import type { DType } from '../../lib';
import { cast as castNumber, isFloat, type V } from '../ops-reference';

export type { V };
export { isFloat };

export const FLOAT_DTYPES: readonly DType[] = ['float32', 'float64', 'float16', 'bfloat16'];
export const INT_DTYPES: readonly DType[] = ['int8', 'int16', 'int32', 'int64', 'uint8'];

export function isInt(d: DType): boolean {
  return INT_DTYPES.includes(d);
}

const INT_RANGE: Partial<Record<DType, readonly [bigint, bigint]>> = {
  int8: [-128n, 127n], int16: [-32768n, 32767n], int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n], uint8: [0n, 255n],
};

/** An integer dtype's range (bool: [0, 1]). */
export function intRange(d: DType): readonly [bigint, bigint] {
  return INT_RANGE[d] ?? [0n, 1n];
}

/**
 * The integer a JS number or bigint becomes in integer dtype d as torch's checked
 * conversion of a Scalar argument makes it (c10::checked_convert, c10::overflows),
 * or undefined where torch refuses it. An integer (a bigint, or a number without a
 * fraction, as a Python int) must fit d, but an unsigned d also takes a negative
 * one whose magnitude is at most d's largest value, wrapped: uint8 takes -1 as 255
 * and -255 as 1, and refuses -256. Any other number must lie in d's range before
 * it truncates toward zero (int8 refuses 127.5, uint8 -0.5; NaN and infinities never fit).
 */
export function checkedInt(v: number | bigint, d: DType): bigint | undefined {
  const [lo, hi] = intRange(d);
  if (typeof v === 'number' && !Number.isInteger(v)) {
    if (!(v >= Number(lo) && v <= Number(hi))) return undefined;
    const t = BigInt(Math.trunc(v));
    return t <= hi ? t : undefined;
  }
  const i = BigInt(v);
  if (i >= lo && i <= hi) return i;
  return lo === 0n && i < 0n && -i <= hi ? i + hi + 1n : undefined;
}

/** A finite double as m * 2^e, m an integer (exact). */
function split(x: number): [bigint, number] {
  if (x === 0) return [0n, 0];
  let e = 0;
  while (!Number.isInteger(x)) { x *= 2; e--; }
  return [BigInt(x), e];
}

/**
 * a * b + c with one rounding (to nearest, ties to even) to a double (p = 53) or a float32 (p = 24), as
 * fma / fmaf compute it: worked out exactly in integers. Finite operands; results in the normal range.
 */
export function fusedMulAdd(a: number, b: number, c: number, p: 24 | 53): number {
  const [ma, ea] = split(a), [mb, eb] = split(b), [mc, ec] = split(c);
  const e = Math.min(ea + eb, ec);
  const m = ma * mb * 2n ** BigInt(ea + eb - e) + mc * 2n ** BigInt(ec - e);
  if (m === 0n) return Object.is(a * b + c, -0) ? -0 : 0;
  const neg = m < 0n, abs = neg ? -m : m;
  const drop = Math.max(0, abs.toString(2).length - p);
  let kept = abs >> BigInt(drop);
  if (drop > 0) {
    const rest = abs - (kept << BigInt(drop)), half = 1n << BigInt(drop - 1);
    if (rest > half || (rest === half && (kept & 1n) === 1n)) kept += 1n;
  }
  const r = Number(kept) * 2 ** (e + drop);
  return neg ? -r : r;
}

/** The largest finite value of a floating dtype. */
export function maxFinite(d: DType): number {
  switch (d) {
    case 'float64': return Number.MAX_VALUE;
    case 'float16': return 65504;
    case 'bfloat16': return 3.3895313892515355e38;  // float32's exponent, an 8-bit significand
    default: return 3.4028234663852886e38;
  }
}

/** The unit roundoff of a floating dtype (half an ulp at 1). */
export function epsOf(d: DType): number {
  switch (d) {
    case 'float64': return 2 ** -53;
    case 'float16': return 2 ** -11;
    case 'bfloat16': return 2 ** -8;
    default: return 2 ** -24;
  }
}

/** A bigint to float32 with one rounding (to nearest, ties to even), as static_cast<float>(int64_t). */
export function bigToFloat32(v: bigint): number {
  const a = v < 0n ? -v : v;
  if (a < 2n ** 53n) return Math.fround(Number(v));
  const bits = a.toString(2).length;
  const shift = BigInt(bits - 24);
  let m = a >> shift;
  const rest = a & ((1n << shift) - 1n);
  const half = 1n << (shift - 1n);
  if (rest > half || (rest === half && (m & 1n) === 1n)) m += 1n;
  const r = Number(m) * 2 ** Number(shift);
  return v < 0n ? -r : r;
}

/**
 * `v` converted to dtype d, as PyTorch converts it: integers wrap, floats to
 * integers truncate toward zero, anything to bool is "nonzero", 16-bit floats
 * round through float32. Returns undefined where C++ leaves it undefined (a
 * NaN, an infinity or an out-of-range float converted to an integer).
 */
export function cast(v: V | boolean, d: DType): V | undefined {
  if (typeof v === 'number' && (isInt(d))) {
    if (!Number.isFinite(v)) return undefined;
    const t = Math.trunc(v);
    const [lo, hi] = intRange(d);
    // Out of the range of the target dtype: undefined in C++ (x86 and CUDA disagree).
    if (t < Number(lo) || t > Number(hi)) return undefined;
  }
  if (typeof v === 'bigint' && d !== 'float64' && isFloat(d)) {
    return castNumber(bigToFloat32(v), d);
  }
  return castNumber(v, d);
}

/** `v`, a value of dtype `from`, converted to `to`: integer and bool sources wrap (defined), floats as cast(). */
export function castFrom(v: V, from: DType, to: DType): V | undefined {
  if (typeof v === 'number' && !isFloat(from) && !isFloat(to) && to !== 'bool') return castNumber(v, to);
  if (typeof v === 'number' && from === 'bool') return castNumber(v, to);
  return cast(v, to);
}

/** cast() where the caller knows the conversion is defined. */
export function castDefined(v: V | boolean, d: DType): V {
  const r = cast(v, d);
  if (r === undefined) throw new Error(`fuzz model: ${String(v)} has no ${d} value`);
  return r;
}

/** Whether v is nonzero (NaN is nonzero, as in C). */
export function truthy(v: V | boolean): boolean {
  if (typeof v === 'boolean') return v;
  return typeof v === 'bigint' ? v !== 0n : v !== 0;
}

/** The four C++ types the kernels compute in (ops/common/hd.h NOTE [ Compute types ]). */
export type Compute = 'float' | 'double' | 'int' | 'bool';

export function computeOf(common: DType): Compute {
  if (common === 'float64') return 'double';
  if (isFloat(common)) return 'float';
  return 'int';
}

/** A value of dtype `common` as the compute type holds it. */
export function toCompute(v: V, c: Compute): V {
  switch (c) {
    case 'double': return Number(v);
    case 'float': return typeof v === 'bigint' ? bigToFloat32(v) : Math.fround(v);
    case 'int': return typeof v === 'bigint' ? v : BigInt(v);
    case 'bool': return truthy(v) ? 1 : 0;
  }
}

/** A compute-type result as the kernel's arithmetic rounds it (float: float32; int: int64 wrapping). */
export function roundCompute(v: V, c: Compute): V {
  if (c === 'float') return Math.fround(Number(v));
  if (c === 'int') return BigInt.asIntN(64, BigInt(v));
  return v;
}

// --- type promotion (torch.promote_types, torch.result_type, torch.can_cast) ---

type Category = 0 | 1 | 2;

function categoryOf(d: DType): Category {
  return d === 'bool' ? 0 : isFloat(d) ? 2 : 1;
}

const INT_ORDER: readonly DType[] = ['uint8', 'int8', 'int16', 'int32', 'int64'];
const FLOAT_ORDER: readonly DType[] = ['float16', 'bfloat16', 'float32', 'float64'];

/** torch.promote_types, from its documented lattice. */
export function promote(a: DType, b: DType): DType {
  if (a === b) return a;
  const ca = categoryOf(a), cb = categoryOf(b);
  if (ca !== cb) return ca > cb ? a : b;
  if (ca === 1) {
    if ((a === 'uint8' && b === 'int8') || (a === 'int8' && b === 'uint8')) return 'int16';
    return INT_ORDER.indexOf(a) > INT_ORDER.indexOf(b) ? a : b;
  }
  if ((a === 'float16' && b === 'bfloat16') || (a === 'bfloat16' && b === 'float16')) return 'float32';
  return FLOAT_ORDER.indexOf(a) > FLOAT_ORDER.indexOf(b) ? a : b;
}

/** What the model knows of an operand for promotion. */
export type PromoOperand = { tensor: true; dtype: DType; ndim: number } | { tensor: false; value: number | bigint | boolean };

/** The dtype of a JS scalar: integral numbers and bigints int64, other numbers float32, booleans bool. */
export function scalarDType(v: number | bigint | boolean): DType {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int64';
  return Number.isInteger(v) ? 'int64' : 'float32';
}

/**
 * torch.result_type: dimensioned tensors, then 0-d tensors, then scalars; a
 * lower rank only counts when it lifts the category.
 */
export function resultTypeOf(ops: readonly PromoOperand[]): DType | undefined {
  const tiers: (DType | undefined)[] = [undefined, undefined, undefined];
  for (const o of ops) {
    const tier = o.tensor ? (o.ndim > 0 ? 0 : 1) : 2;
    const d = o.tensor ? o.dtype : scalarDType(o.value);
    const cur = tiers[tier];
    tiers[tier] = cur === undefined ? d : promote(cur, d);
  }
  let r: DType | undefined;
  for (const d of tiers) {
    if (d === undefined) continue;
    if (r === undefined) r = d;
    else if (categoryOf(d) > categoryOf(r)) r = promote(r, d);
  }
  return r;
}

/** torch.can_cast: no floating into integer or bool, nothing but bool into bool. */
export function canCastTo(from: DType, to: DType): boolean {
  if (isFloat(from) && !isFloat(to)) return false;
  if (from !== 'bool' && to === 'bool') return false;
  return true;
}
