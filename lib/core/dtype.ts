// dtypes on the TypeScript side: parsing names, inferring from typed arrays,
// converting JS values to a dtype's storage, and fill bit patterns. The list
// itself is generated from csrc/include/gpuext/dtype_list.h.
import {
  DTYPE_INFO, dtypeInfo, DTYPES, INTEGER_RANGE, STORAGE_ARRAY, TYPED_ARRAY_DTYPE, type DType, type FloatDType, type IntegerDType, type StorageArrayMap,
} from '../generated/dtypes';
import {
  bfloat16BitsToFloat32, encodeBFloat16, encodeFloat16, float16BitsToFloat32, float32ToBFloat16Bits, float32ToFloat16Bits,
} from './half';
import { describeValue } from './shape';

export type { DType };

/** The default dtype for JS numbers (as in tfjs and torch.get_default_dtype()). */
export const DEFAULT_FLOAT: DType = 'float32';

export type Scalar = number | bigint | boolean;

export function isDType(x: unknown): x is DType {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(DTYPE_INFO, x);
}

/** Checks a user-supplied dtype name; `fn` names the API in the error. */
export function parseDType(x: unknown, fn: string): DType {
  if (isDType(x)) return x;
  throw new TypeError(`${fn}: unknown dtype ${typeof x === 'string' ? JSON.stringify(x) : describeValue(x)}; expected one of ${DTYPES.join(', ')}`);
}

export function dtypeCode(d: DType): number {
  return dtypeInfo(d).code;
}

export function dtypeFromCode(code: number): DType {
  const d = DTYPES[code];
  if (d === undefined) throw new Error(`gpuext internal error: unknown dtype code ${code}`);
  return d;
}

export type AnyTypedArray =
  | Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | BigInt64Array
  | Uint8Array | Uint8ClampedArray | Uint16Array | Uint32Array | BigUint64Array;

export function isTypedArray(x: unknown): x is AnyTypedArray {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

/** The dtype a typed array stands for, or undefined when it has none (Uint16Array, Uint32Array...). */
export function dtypeOfTypedArray(a: AnyTypedArray): DType | undefined {
  for (const [array, dtype] of TYPED_ARRAY_DTYPE) if (a instanceof array) return dtype;
  return a instanceof Uint8ClampedArray ? 'uint8' : undefined;
}


/** Each floating dtype's largest finite value (torch.finfo(dtype).max); the lowest is its negation. */
export const FLOAT_MAX: { readonly [K in FloatDType]: number } = {
  float32: 3.4028234663852886e38, float64: Number.MAX_VALUE, float16: 65504, bfloat16: 3.3895313892515355e38,
};

/**
 * `x` as an element of floating `dtype` holds it: float32 by Math.fround, float16 and bfloat16 by way of float32,
 * as c10 converts a double (and as torch rounds each operation of those dtypes); float64 and any other dtype as it is.
 */
export function roundToDType(x: number, dtype: DType): number {
  switch (dtype) {
    case 'float32': return Math.fround(x);
    case 'float16': return float16BitsToFloat32(float32ToFloat16Bits(Math.fround(x)));
    case 'bfloat16': return bfloat16BitsToFloat32(float32ToBFloat16Bits(x));  // it takes x to float32 first itself
    default: return x;
  }
}

// NOTE [ Integers into integer dtypes ]
// A JS number or bigint becomes an element of an integer dtype as torch's checked
// conversion of a Scalar argument makes it (c10::checked_convert and c10::overflows):
// - an integer (a bigint, or a number with no fraction, as a Python int) must lie in
//   the dtype's range, except that an unsigned dtype also takes a negative one whose
//   magnitude is at most its largest value, wrapped: -1 is uint8's 255, -255 its 1,
//   and -256 is refused (torch.full([2], -1, dtype=torch.uint8) is [255, 255]);
// - any other number (a fraction, NaN, an infinity) must lie in the range before
//   truncation toward zero: 127.5 is refused for int8, -0.5 for uint8.
// torch refuses a Python float -1.0 for uint8 where it takes the int -1; a JS number
// cannot tell the two apart and counts as the integer. checkedIntegerValue is the
// rule; every place that takes a JS value into an integer dtype asks it (fills,
// gx.tensor's data, linspace's and logspace's bounds, the scalar operands of the
// elementwise ops, clamp's bounds), and integerRangeText says it in their errors.

/** The element of integer `dtype` that integer `i` converts to, or undefined where torch refuses it (NOTE [ Integers into integer dtypes ]). */
export function checkedInteger(i: bigint, dtype: IntegerDType): bigint | undefined {
  const [lo, hi] = INTEGER_RANGE[dtype];
  if (i > hi) return undefined;
  if (i >= lo) return i;
  // An unsigned dtype: a negative integer whose magnitude is at most the largest value wraps (-1 is 255).
  return lo === 0n && -i <= hi ? i + hi + 1n : undefined;
}

/**
 * The element of integer `dtype` that a JS number or bigint converts to (truncated toward zero, a negative integer
 * wrapped into an unsigned dtype), or undefined where torch's checked conversion refuses it (NOTE [ Integers into
 * integer dtypes ]).
 */
export function checkedIntegerValue(v: number | bigint, dtype: IntegerDType): bigint | undefined {
  if (typeof v === 'bigint' || Number.isInteger(v)) return checkedInteger(BigInt(v), dtype);
  const [lo, hi] = INTEGER_RANGE[dtype];
  // (NaN fails both comparisons; for int64 the doubles compare with 2^63 itself, so the truncated value is checked too.)
  if (!(v >= Number(lo) && v <= Number(hi))) return undefined;
  const i = BigInt(Math.trunc(v));
  return i <= hi ? i : undefined;
}

/** The integers `dtype` takes, for errors: "[-128, 127]"; "[0, 255] (or -255 to -1, which wrap)" for an unsigned one. */
export function integerRangeText(dtype: IntegerDType): string {
  const [lo, hi] = INTEGER_RANGE[dtype];
  return lo === 0n ? `[${lo}, ${hi}] (or -${hi} to -1, which wrap)` : `[${lo}, ${hi}]`;
}

/**
 * Refuses a number `dtype` cannot hold, as torch's checked conversion of a Scalar argument (c10::checked_convert:
 * "value cannot be converted to type ... without overflow", which torch.linspace applies to its bounds), and gives
 * the value it converts to: for a floating dtype, a finite number beyond its largest finite value is refused
 * (65519 for float16, though it would round to 65504; inf and NaN pass) and `v` comes back as it is; for an integer
 * dtype, checkedIntegerValue's rule (NOTE [ Integers into integer dtypes ]) and its element as a number (-1 is 255
 * for uint8). bool takes any number. `name` is the argument's name in the error.
 */
export function checkConvertible(v: number, dtype: DType, fn: string, name: string): number {
  const info = dtypeInfo(dtype);
  if (info.kind === 'b') return v;
  if (info.kind === 'f') {
    const max = FLOAT_MAX[dtype as FloatDType];
    if (Number.isFinite(v) && (v > max || v < -max)) {
      throw new RangeError(`${fn}: ${name} ${v} is out of range for ${dtype}, whose largest finite value is ${max}`);
    }
    return v;
  }
  return Number(checkedIntegerArgument(v, dtype as IntegerDType, fn, name));
}

/**
 * checkedIntegerValue's element of `v` (NOTE [ Integers into integer dtypes ]), or a RangeError naming `fn` and the
 * argument `name` where torch refuses it: "gx.clamp: min 200 is out of range for int8 [-128, 127]".
 */
export function checkedIntegerArgument(v: number | bigint, dtype: IntegerDType, fn: string, name: string): bigint {
  const i = checkedIntegerValue(v, dtype);
  if (i === undefined) throw new RangeError(`${fn}: ${name} ${String(v)} is out of range for ${dtype} ${integerRangeText(dtype)}`);
  return i;
}

/** An integer dtype's element for `v` (NOTE [ Integers into integer dtypes ]); a RangeError naming `fn` where torch refuses it. */
function toIntegerValue(v: number | bigint, dtype: IntegerDType, fn: string): bigint {
  if (typeof v === 'number' && !Number.isFinite(v)) throw new RangeError(`${fn}: ${v} cannot be converted to ${dtype}`);
  return checkedIntegerArgument(v, dtype, fn, 'value');
}

// NOTE [ JS numbers to 16-bit floats ]
// A JS number becomes a float16 or bfloat16 element by way of float32, as in
// torch (double -> float -> half) and as every kernel path here does it
// (astype, scalar operands, clamp, where, arange): `gx.tensor([x], float16)`
// must agree with `gx.tensor([x]).astype('float16')`. Rounding the float64
// value directly would differ in the rare double-rounding cases, e.g.
// 1 + 2^-11 + 2^-40 (1 through float32, 1 + 2^-10 directly).

/**
 * Converts JS values to the typed array that holds `dtype`'s raw bytes.
 * Floats go through float16/bfloat16 encoding where needed; integer dtypes
 * take torch's checked conversion (NOTE [ Integers into integer dtypes ]:
 * truncated toward zero, -1 is uint8's 255); bool stores 0/1.
 */
export function toStorageArray<D extends DType>(
  values: ArrayLike<Scalar>,
  dtype: D,
  fn: string,
): StorageArrayMap[D] {
  const n = values.length;
  const info = dtypeInfo(dtype);
  const Ctor = STORAGE_ARRAY[dtype];
  if (dtype === 'float16' || dtype === 'bfloat16') {
    const out = new Uint16Array(n);
    // Through float32 first (NOTE [ JS numbers to 16-bit floats ]).
    const nums = new Float32Array(n);
    for (let i = 0; i < n; i++) nums[i] = Number(values[i]);
    (dtype === 'float16' ? encodeFloat16 : encodeBFloat16)(nums, out);
    return out as StorageArrayMap[D];
  }
  if (info.kind === 'f') {
    const out = new (Ctor as Float32ArrayConstructor | Float64ArrayConstructor)(n);
    for (let i = 0; i < n; i++) out[i] = Number(values[i]);
    return out as StorageArrayMap[D];
  }
  if (dtype === 'bool') {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = isNonzero(values[i]) ? 1 : 0;
    return out as StorageArrayMap[D];
  }
  if (dtype === 'int64') {
    const out = new BigInt64Array(n);
    for (let i = 0; i < n; i++) out[i] = toIntegerValue(asNumeric(values[i]), dtype, fn);
    return out as StorageArrayMap[D];
  }
  const out = new (Ctor as Int8ArrayConstructor)(n);
  const range = INTEGER_RANGE[dtype as IntegerDType];
  const lo = Number(range[0]), hi = Number(range[1]);
  for (let i = 0; i < n; i++) {
    const v = asNumeric(values[i]);
    // A number in the range truncates (the common case, without a bigint); anything else takes the whole rule.
    out[i] = typeof v === 'number' && v >= lo && v <= hi ? Math.trunc(v) : Number(toIntegerValue(v, dtype as IntegerDType, fn));
  }
  return out as StorageArrayMap[D];
}

function asNumeric(v: Scalar): number | bigint {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

/** A JS value as a bool element: nonzero, as C++ and torch convert (NaN is true; JS truthiness says false). */
function isNonzero(v: Scalar): boolean {
  return typeof v === 'number' ? v !== 0 : Boolean(v);
}

/**
 * fillBits' scratch, made once: `new DataView(new ArrayBuffer(8))` per call
 * took ~1 µs in Node 20 (an ArrayBuffer's store is allocated outside V8's heap
 * and registered with it), more than the fill it served, and gx.ones,
 * gx.zeros, gx.full and every backward's seed fill.
 */
const FILL_SCRATCH = new DataView(new ArrayBuffer(8));

/** The bit pattern of `value` as one element of `dtype` (for fills); a TypeError naming `fn` unless it is a number, bigint or boolean. */
export function fillBits(value: Scalar, dtype: DType, fn: string): bigint {
  if (typeof value !== 'number' && typeof value !== 'bigint' && typeof value !== 'boolean') {
    throw new TypeError(`${fn}: value must be a number, bigint or boolean, got ${describeValue(value)}`);
  }
  // A finite number past float32's largest is refused, as torch's fill_ and full refuse it (1e39); float16 and
  // bfloat16 round it as torch 2.13's do (70000 is float16's inf and bfloat16's 70144), and no JS number passes
  // float64's. An integer dtype takes toIntegerValue's (-1 fills uint8 with 255). A tensor's elements convert
  // unchecked, as torch's.
  if (dtype === 'float32') checkConvertible(Number(value), dtype, fn, 'value');
  const view = FILL_SCRATCH;
  switch (dtype) {
    case 'float32':
      view.setFloat32(0, Number(value), true);
      return BigInt(view.getUint32(0, true));
    case 'float64':
      view.setFloat64(0, Number(value), true);
      return view.getBigUint64(0, true);
    case 'float16':
      return BigInt(float32ToFloat16Bits(Math.fround(Number(value))));
    case 'bfloat16':
      return BigInt(float32ToBFloat16Bits(Number(value)));
    case 'bool':
      return isNonzero(value) ? 1n : 0n;
    default:
      return BigInt.asUintN(dtypeInfo(dtype).itemsize * 8, toIntegerValue(asNumeric(value), dtype as IntegerDType, fn));
  }
}

/** The default dtype of a JS scalar: float32 for numbers, int64 for bigints, bool for booleans. */
export function dtypeOfScalar(v: Scalar): DType {
  return typeof v === 'bigint' ? 'int64' : typeof v === 'boolean' ? 'bool' : DEFAULT_FLOAT;
}
