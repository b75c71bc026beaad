// The helpers the derivative formulas of ops/op-list.js are written in
// (NOTE [ Derivatives beside the schemas ]): gx's elementwise ops taking
// tensors or plain numbers (a number operand of the forward op stays a
// number), and the few pieces that are not one op.
import * as E from '../generated/elementwise';
import { whereOp } from '../ops/elementwise/elementwise';
import { isfinite as gxIsfinite } from '../ops/elementwise/predicates';
import { Tensor } from '../core/tensor';

export type X = Tensor | number;

const num = (x: X): x is number => typeof x === 'number';
const binary = (op: (a: never, b: never) => Tensor, js: (a: number, b: number) => number) =>
  (a: X, b: X): X => (num(a) && num(b) ? js(a, b) : op(a as never, b as never));
const unary = (op: (a: never) => Tensor, js: (a: number) => number) => (a: X): X => (num(a) ? js(a) : op(a as never));

export const add = binary(E.add, (a, b) => a + b);
export const sub = binary(E.sub, (a, b) => a - b);
export const mul = binary(E.mul, (a, b) => a * b);
export const div = binary(E.div, (a, b) => a / b);
export const pow = binary(E.pow, (a, b) => a ** b);
export const gt = binary(E.gt, (a, b) => Number(a > b));
export const lt = binary(E.lt, (a, b) => Number(a < b));
export const eq = binary(E.eq, (a, b) => Number(a === b));
export const ge = binary(E.ge, (a, b) => Number(a >= b));
export const neg = unary(E.neg, (a) => -a);
export const exp = unary(E.exp, Math.exp);
export const log = unary(E.log, Math.log);
export const sin = unary(E.sin, Math.sin);
export const cos = unary(E.cos, Math.cos);
export const sign = unary(E.sign, Math.sign);
export const floor = unary(E.floor, Math.floor);
export const sigmoid = unary(E.sigmoid, (a) => 1 / (1 + Math.exp(-a)));
export const sqrt = unary(E.sqrt, Math.sqrt);
export const sinh = unary(E.sinh, Math.sinh);
export const cosh = unary(E.cosh, Math.cosh);
export const tanh = unary(E.tanh, Math.tanh);
export const trunc = unary(E.trunc, Math.trunc);
export const logicalAnd = binary(E.logicalAnd, (a, b) => Number(a !== 0 && b !== 0));

/** 1 where x is finite, else 0 (a bool tensor for a tensor). */
export function isfinite(x: X): X {
  return num(x) ? Number(Number.isFinite(x)) : gxIsfinite(x);
}

/** d silu(x) / dx = s (1 + x (1 - s)), s = sigmoid(x), as torch's silu_backward. */
export function siluGrad(x: X): X {
  const s = sigmoid(x);
  return mul(s, add(1, mul(x, sub(1, s))));
}

/** d mish(x) / dx = tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x) with no threshold, as torch's mish_backward. */
export function mishGrad(x: X): X {
  const t = tanh(num(x) ? Math.log1p(Math.exp(x)) : E.log1p(E.exp(x)));
  return add(t, mul(mul(x, sigmoid(x)), sub(1, mul(t, t))));
}

/** where(c, a, b); a number condition (from a number operand, as pow's exponent) picks a or b whole. */
export function where(c: X, a: X, b: X): X {
  if (num(c)) return c !== 0 ? a : b;
  return whereOp(c, a, b, 'autograd');
}

/**
 * The share of the gradient an operand of maximum / minimum gets: 1 where
 * it alone wins, 1/2 on a tie (the two split it, as torch does), else 0.
 */
export function tieShare(wins: X, ties: X): X {
  return add(wins, mul(ties, 0.5));
}

/** d gelu(x) / dx for the exact (erf) form: Phi(x) + x phi(x), Phi(x) = (gelu(x) / x). */
export function geluGrad(x: X): X {
  if (num(x)) throw new TypeError('geluGrad: expected a tensor');
  const pdf = mul(exp(mul(mul(x, x), -0.5)), 1 / Math.sqrt(2 * Math.PI));
  // Phi(x) from the forward op itself: gelu(x) = x Phi(x); near 0 use 0.5 + x phi(0).
  const phi = where(gt(E.abs(x), 1e-6), div(E.gelu(x), x), add(0.5, mul(x, 1 / Math.sqrt(2 * Math.PI))));
  return add(phi, mul(x, pdf));
}

/**
 * A gradient of zeros (ops whose derivative is zero almost everywhere): the
 * number 0, which the engine widens to the input's shape and knows for a
 * constant (NOTE [ Backward of backward ] in engine.ts).
 */
export function zeros(_x: X): X {
  return 0;
}
