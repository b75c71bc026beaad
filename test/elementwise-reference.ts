// The reference of every elementwise built-in op, one line each, shared by
// the op tests (ops-binary, ops-unary) and the fuzz properties: the names and
// dtype rules come from the ops' one list (ops/op-list.js, through
// lib/generated/ops.ts), so an op added there without a reference here fails
// to compile; the gx function and the Tensor methods are found by name.
import * as gx from '../lib';
import { BINARY, UNARY } from '../lib/generated/ops';
import { truthy } from './fuzz/semantics';
import { erf, intPow, remainderRef, rint, type Compute, type V } from './ops-reference';

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
  logicalAnd: (a, b) => truthy(a) && truthy(b),
  logicalOr: (a, b) => truthy(a) || truthy(b),
  logicalXor: (a, b) => truthy(a) !== truthy(b),
};

/** Each unary op in the compute type: numbers (float, double) or bigints (int; the keep ops only). */
export const UNARY_REF: Record<UnaryName, (x: V) => V> = {
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
