// The reference of every elementwise built-in op, one line each, shared by
// the op tests (ops-binary, ops-unary) and the fuzz properties: the names and
// dtype rules come from the ops' one list (ops/op-list.js, through
// lib/generated/ops.ts), so an op added there without a reference here fails
// to compile; the gx function and the Tensor methods are found by name.
import * as gx from '../lib';
import { BINARY, UNARY } from '../lib/generated/ops';
import { truthy } from './fuzz/semantics';
import { erf, erfc, erfinv, floorDivideRef, intPow, remainderRef, rint, type Compute, type V } from './ops-reference';

export type BinaryName = keyof typeof BINARY;
export type UnaryName = keyof typeof UNARY;
export const BINARY_NAMES = Object.keys(BINARY) as BinaryName[];
export const UNARY_NAMES = Object.keys(UNARY) as UnaryName[];
export { BINARY as BINARY_SPECS, UNARY as UNARY_SPECS };

const big = (v: V): bigint => BigInt(v);
const num = (v: V): number => Number(v);

/** C's pow: 1 ** y and (-1) ** +-inf are 1, even for NaN (JS's Math.pow says NaN). */
function cPow(x: number, y: number): number {
  if (x === 1) return 1;
  if (x === -1 && !Number.isFinite(y) && !Number.isNaN(y)) return 1;
  return Math.pow(x, y);
}

function nanFirst(a: V, b: V, pick: (a: V, b: V) => V): V {
  if (typeof a === 'number' && Number.isNaN(a)) return a;
  if (typeof b === 'number' && Number.isNaN(b)) return b;
  return pick(a, b);
}

/** Each binary op in compute type c: numbers for float/double, bigints for int; comparisons and logical ops give booleans. */
export const BINARY_REF: Record<BinaryName, (a: V, b: V, c: Compute) => V | boolean> = {
  add: (a, b, c) => (c === 'int' ? big(a) + big(b) : num(a) + num(b)),
  sub: (a, b, c) => (c === 'int' ? big(a) - big(b) : num(a) - num(b)),
  mul: (a, b, c) => (c === 'int' ? big(a) * big(b) : num(a) * num(b)),
  div: (a, b) => num(a) / num(b),
  pow: (a, b, c) => (c === 'int' ? intPow(big(a), big(b)) : cPow(num(a), num(b))),
  maximum: (a, b) => nanFirst(a, b, (x, y) => (x > y ? x : y)),
  minimum: (a, b) => nanFirst(a, b, (x, y) => (x < y ? x : y)),
  remainder: remainderRef,
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  lt: (a, b) => a < b,
  le: (a, b) => a <= b,
  gt: (a, b) => a > b,
  ge: (a, b) => a >= b,
  fmod: (a, b, c) => (c === 'int' ? (big(b) === 0n || big(b) === -1n ? 0n : big(a) % big(b)) : num(a) % num(b)),
  floorDivide: floorDivideRef,
  atan2: (a, b) => Math.atan2(num(a), num(b)),
  hypot: (a, b) => Math.hypot(num(a), num(b)),
  logaddexp: (a, b) => logaddexp(num(a), num(b)),
  copysign: (a, b) => (num(b) < 0 || Object.is(num(b), -0) ? -Math.abs(num(a)) : Math.abs(num(a))),
  logicalAnd: (a, b) => truthy(a) && truthy(b),
  logicalOr: (a, b) => truthy(a) || truthy(b),
  logicalXor: (a, b) => truthy(a) !== truthy(b),
};

/** The binary ops whose floating results are not correctly rounded (libm functions): compared within a few ulps. */
export const INEXACT_BINARY: ReadonlySet<BinaryName> = new Set<BinaryName>(['pow', 'atan2', 'hypot', 'logaddexp']);

/** log(e^a + e^b) as torch: max + log1p(e^-|a - b|), equal infinities giving themselves. */
function logaddexp(a: number, b: number): number {
  if (a === b && !Number.isFinite(a) && !Number.isNaN(a)) return a;
  return Math.max(a, b) + Math.log1p(Math.exp(-Math.abs(a - b)));
}

/** The largest finite value of a floating dtype (nanToNum's defaults). */
const FINITE_MAX: Partial<Record<gx.DType, number>> = {
  float64: Number.MAX_VALUE, float32: 3.4028234663852886e38, float16: 65504, bfloat16: 3.3895313892515355e38,
};

const SELU_SCALE = 1.0507009873554804934193349852946, SELU_ALPHA = 1.6732632423543772848170429916717;

/**
 * Each unary op in the compute type c of the result dtype `common`: numbers (float, double) or
 * bigints (int; the keep ops only). The parameters' defaults where an op has parameters.
 */
export const UNARY_REF: Record<UnaryName, (x: V, c: Compute, common: gx.DType) => V> = {
  exp: (x) => Math.exp(num(x)),
  log: (x) => Math.log(num(x)),
  log1p: (x) => Math.log1p(num(x)),
  sqrt: (x) => Math.sqrt(num(x)),
  rsqrt: (x) => 1 / Math.sqrt(num(x)),
  sin: (x) => Math.sin(num(x)),
  cos: (x) => Math.cos(num(x)),
  tanh: (x) => Math.tanh(num(x)),
  sigmoid: (x) => 1 / (1 + Math.exp(-num(x))),
  gelu: (x) => (x === Infinity ? x : 0.5 * num(x) * (1 + erf(num(x) / Math.SQRT2))),  // -inf: NaN or 0, unchecked
  softplus: (x) => (num(x) > 20 ? num(x) : Math.log1p(Math.exp(num(x)))),
  tan: (x) => Math.tan(num(x)),
  asin: (x) => Math.asin(num(x)),
  acos: (x) => Math.acos(num(x)),
  atan: (x) => Math.atan(num(x)),
  sinh: (x) => Math.sinh(num(x)),
  cosh: (x) => Math.cosh(num(x)),
  asinh: (x) => Math.asinh(num(x)),
  acosh: (x) => Math.acosh(num(x)),
  atanh: (x) => Math.atanh(num(x)),
  expm1: (x) => Math.expm1(num(x)),
  exp2: (x) => 2 ** num(x),
  log2: (x) => Math.log2(num(x)),
  log10: (x) => Math.log10(num(x)),
  erf: (x) => erf(num(x)),
  erfc: (x) => erfc(num(x)),
  erfinv: (x) => erfinv(num(x)),
  reciprocal: (x) => 1 / num(x),
  frac: (x) => num(x) - Math.trunc(num(x)),
  silu: (x) => num(x) / (1 + Math.exp(-num(x))),
  mish: (x) => num(x) * Math.tanh(Math.log1p(Math.exp(num(x)))),
  selu: (x) => (num(x) > 0 ? SELU_SCALE * num(x) : SELU_SCALE * SELU_ALPHA * Math.expm1(num(x))),
  hardsigmoid: (x) => (Number.isNaN(num(x)) ? num(x) : Math.min(Math.max(num(x) + 3, 0), 6) / 6),
  logSigmoid: (x) => Math.min(num(x), 0) - Math.log1p(Math.exp(-Math.abs(num(x)))),
  leakyRelu: (x) => (num(x) > 0 ? num(x) : num(x) * 0.01),
  elu: (x) => (num(x) > 0 ? num(x) : Math.expm1(num(x))),
  hardtanh: (x) => (Number.isNaN(num(x)) ? num(x) : Math.min(Math.max(num(x), -1), 1)),
  square: (x) => (typeof x === 'bigint' ? x * x : x * x),
  trunc: (x) => (typeof x === 'bigint' ? x : Math.trunc(x)),
  nanToNum: (x, _c, common) => {
    if (typeof x === 'bigint' || Number.isFinite(x)) return x;
    const max = FINITE_MAX[common] as number;
    return Number.isNaN(x) ? 0 : x > 0 ? max : -max;
  },
  neg: (x) => (typeof x === 'bigint' ? -x : -x),
  abs: (x) => (typeof x === 'bigint' ? (x < 0n ? -x : x) : Math.abs(x)),
  sign: (x) => (typeof x === 'bigint' ? (x > 0n ? 1n : x < 0n ? -1n : 0n) : Number.isNaN(x) ? 0 : x > 0 ? 1 : x < 0 ? -1 : 0),
  floor: (x) => (typeof x === 'bigint' ? x : Math.floor(x)),
  ceil: (x) => (typeof x === 'bigint' ? x : Math.ceil(x)),
  round: (x) => (typeof x === 'bigint' ? x : rint(x)),
  relu: (x) => (typeof x === 'bigint' ? (x > 0n ? x : 0n) : x > 0 || Number.isNaN(x) ? x : 0),
};

type AnyFn = (...args: unknown[]) => gx.Tensor;

/** gx.<name>: the op's gx function. */
export function gxFunction(name: BinaryName | UnaryName): AnyFn {
  return Reflect.get(gx, name) as AnyFn;
}

/** t.<name>(...args): the op's Tensor method (name_ for the in-place one). */
export function callMethod(t: gx.Tensor, name: string, ...args: unknown[]): gx.Tensor {
  return (Reflect.get(t, name) as AnyFn).apply(t, args);
}
