/**
 * half.ts — float16 (IEEE 754 binary16) and bfloat16 conversions in pure TypeScript.
 *
 * - float16 encoding rounds once, to nearest-even, directly from the value given:
 *   a JS number (float64) is rounded from its float64 bits, never via float32 first
 *   (double rounding would be wrong in rare cases). Subnormals, overflow to ±Inf,
 *   -0 and NaN (-> quiet NaN 0x7e00) are handled.
 * - bfloat16 encoding rounds to nearest-even from the float32 value of x (as torch
 *   does when casting float32 -> bfloat16); NaN -> 0x7fc0.
 * - Bulk encoders/decoders work on typed arrays without per-element allocation:
 *   they use shared scratch views, or reinterpret the source/destination buffers
 *   directly (Float32Array <-> Uint32Array share one buffer).
 */

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Index of the high (sign/exponent) 32-bit word of a float64 in a Uint32Array view. */
const HI = LITTLE_ENDIAN ? 1 : 0;
const LO = LITTLE_ENDIAN ? 0 : 1;

const f64 = new Float64Array(1);
const f64u = new Uint32Array(f64.buffer);
const f32 = new Float32Array(1);
const f32u = new Uint32Array(f32.buffer);

const TWO_POW_24 = 16777216;

/** float16 bits of a float32 given as its raw bit pattern (uint32). Single rounding, RNE. */
function f32BitsToF16Bits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return mant !== 0 ? 0x7e00 : sign | 0x7c00;
  const e = exp - 127;
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    let h = ((e + 15) << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (h & 1) !== 0)) h++; // may carry into Inf: correct
    return sign | h;
  }
  if (e < -25) return sign; // |x| < 2^-25 rounds to zero (float32 subnormals included)
  // Subnormal result: value = m * 2^(e-23); in units of 2^-24 it is m >> shift.
  const m = mant | 0x800000;
  const shift = -(e + 1); // 14..24
  let h = m >>> shift;
  const rest = m & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  if (rest > half || (rest === half && (h & 1) !== 0)) h++;
  return sign | h;
}

/**
 * IEEE binary16 bit pattern of `x`, rounded to nearest, ties to even, directly from the
 * float64 value. Overflow gives ±Inf, NaN gives 0x7e00, -0 gives 0x8000.
 */
export function float32ToFloat16Bits(x: number): number {
  f64[0] = x;
  const hi = f64u[HI];
  const lo = f64u[LO];
  const sign = (hi >>> 16) & 0x8000;
  const exp = (hi >>> 20) & 0x7ff;
  const mantHi = hi & 0xfffff;
  if (exp === 0x7ff) return (mantHi | lo) !== 0 ? 0x7e00 : sign | 0x7c00;
  const e = exp - 1023;
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    let h = ((e + 15) << 10) | (mantHi >>> 10);
    const rest = mantHi & 0x3ff; // 10 high bits of the 42 dropped ones; lo holds the other 32
    if ((rest & 0x200) !== 0 && ((rest & 0x1ff) !== 0 || lo !== 0 || (h & 1) !== 0)) h++;
    return sign | h;
  }
  if (e < -25) return sign;
  // Subnormal result: scaling by 2^24 is exact, so this rounds exactly once.
  const m = Math.abs(x) * TWO_POW_24; // in [0.5, 1024)
  let h = Math.floor(m);
  const frac = m - h; // exact
  if (frac > 0.5 || (frac === 0.5 && (h & 1) !== 0)) h++;
  return sign | h;
}

/** The float16 bit pattern `h` (low 16 bits used) as a number (exact). */
export function float16BitsToFloat32(h: number): number {
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  let v: number;
  if (exp === 0) v = mant * 2 ** -24;
  else if (exp === 0x1f) v = mant !== 0 ? NaN : Infinity;
  else v = (mant + 1024) * 2 ** (exp - 25);
  return (h & 0x8000) !== 0 ? -v : v;
}

/** bfloat16 bits of a float32 bit pattern (uint32), RNE; NaN -> 0x7fc0. */
function f32BitsToBF16Bits(x: number): number {
  if ((x & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  // x + 0x7fff + lsb stays below 2^32 for every non-NaN pattern; carry into Inf is correct RNE.
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

/**
 * bfloat16 bit pattern of `x`: x is first taken to float32 (Math.fround), then rounded
 * to nearest-even to bfloat16. NaN gives 0x7fc0.
 */
export function float32ToBFloat16Bits(x: number): number {
  f32[0] = x;
  return f32BitsToBF16Bits(f32u[0]);
}

/** The bfloat16 bit pattern `h` (low 16 bits used) as a number (exact). */
export function bfloat16BitsToFloat32(h: number): number {
  f32u[0] = (h & 0xffff) << 16;
  return f32[0];
}

function checkLengths(fn: string, srcLen: number, outLen: number): void {
  if (outLen < srcLen) {
    throw new RangeError(`${fn}: output has length ${outLen} but the source has length ${srcLen}`);
  }
}

/** Uint32 view over the same memory as a Float32Array (byteOffset is always 4-aligned). */
function bitsView(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/**
 * Encode `src` to float16 bit patterns in `out[0 .. src.length)`. A Float32Array source
 * is read through its bits; any other source is rounded from float64 values.
 */
export function encodeFloat16(src: ArrayLike<number>, out: Uint16Array): void {
  const n = src.length;
  checkLengths('encodeFloat16', n, out.length);
  if (src instanceof Float32Array) {
    const bits = bitsView(src);
    for (let i = 0; i < n; i++) out[i] = f32BitsToF16Bits(bits[i]);
    return;
  }
  for (let i = 0; i < n; i++) out[i] = float32ToFloat16Bits(src[i]);
}

let f16Table: Float32Array | undefined;

/** 65536-entry decode table (256 KiB), built on first use. */
function float16Table(): Float32Array {
  if (f16Table === undefined) {
    const t = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) t[h] = float16BitsToFloat32(h);
    f16Table = t;
  }
  return f16Table;
}

/** Decode float16 bit patterns into `out[0 .. src.length)`. */
export function decodeFloat16(src: Uint16Array, out: Float32Array): void {
  const n = src.length;
  checkLengths('decodeFloat16', n, out.length);
  const t = float16Table();
  for (let i = 0; i < n; i++) out[i] = t[src[i]];
}

/** Encode `src` (taken to float32 first) to bfloat16 bit patterns in `out[0 .. src.length)`. */
export function encodeBFloat16(src: ArrayLike<number>, out: Uint16Array): void {
  const n = src.length;
  checkLengths('encodeBFloat16', n, out.length);
  if (src instanceof Float32Array) {
    const bits = bitsView(src);
    for (let i = 0; i < n; i++) out[i] = f32BitsToBF16Bits(bits[i]);
    return;
  }
  for (let i = 0; i < n; i++) {
    f32[0] = src[i];
    out[i] = f32BitsToBF16Bits(f32u[0]);
  }
}

/** Decode bfloat16 bit patterns into `out[0 .. src.length)` (exact). */
export function decodeBFloat16(src: Uint16Array, out: Float32Array): void {
  const n = src.length;
  checkLengths('decodeBFloat16', n, out.length);
  const bits = bitsView(out);
  for (let i = 0; i < n; i++) bits[i] = src[i] << 16;
}
