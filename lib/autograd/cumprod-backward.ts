// The derivative of gx.cumprod, as torch's cumprod_backward
// (torch/csrc/autograd/FunctionsManual.cpp), in ops that record, so that a
// backward with createGraph differentiates it again.
//
// NOTE [ cumprod's gradient with zeros ]
// With y_j = prod_{i <= j} x_i and g the gradient of y, the gradient of x_k
// is sum_{j >= k} g_j prod_{i <= j, i != k} x_i. Without zeros that is
// rcs(g y)_k / x_k (rcs: the sum from k to the end of the line), which is
// what breaks at a zero. Per line, with z the first zero:
//   k < z: rcs(g y)_k / x_k, exact (every y_j with j >= z is 0, so only the
//          terms without a zero factor count, and x_k is not 0);
//   k = z: rcs(g y')_z, y' the cumprod of x with x_z set to 1 (y'_j is the
//          product without x_z for j >= z; later zeros still count);
//   k > z: 0 (every product holds x_z = 0 besides x_k).
// Both parts are computed for every line (no read of the data to ask whether
// there is a zero: that would synchronize a CUDA stream), masked by place.
// That is the gradient's value, and its derivative with respect to every x_i
// but the first zero of each line (the zero pattern stays put as they move).
// With respect to x_z, the places k > z have derivative
// sum_{j >= k} g_j prod_{i <= j, i != k, z} x_i: the gradient at x with x_z
// set to 1. So when the gradient is itself differentiated (createGraph, the
// engine runs this with grad enabled) it adds x_z times that gradient (its
// value, computed without recording) at k > z: 0 in value, right in its
// first derivative everywhere (torch gets the same with an O(n^2) loop in
// grad mode).
import * as E from '../generated/elementwise';
import type { Tensor } from '../core/tensor';
import { whereOp } from '../ops/elementwise/elementwise';
import { flip } from '../ops/layout/reorder';
import { cumprod, cumsum } from '../ops/reduce/scan';
import { sum } from '../ops/reduce/functions';
import { isGradEnabled, noGrad } from '../tape/mode';

const FN = 'gx.cumprod (backward)';

/** The sums from each place to the end of its line along axis. */
function reversedCumsum(t: Tensor, axis: number): Tensor {
  return flip(cumsum(flip(t, axis), axis), axis);
}

/** The gradient of x for y = cumprod(x, axis) and the gradient g of y (NOTE [ cumprod's gradient with zeros ]). */
export function cumprodBackward(x: Tensor, y: Tensor, g: Tensor, axis: number): Tensor {
  if (x.ndim === 0 || x.shape[axis] <= 1) return g;
  const isZero = E.eq(x, 0);
  const zerosSoFar = cumsum(isZero, axis);
  const before = E.eq(zerosSoFar, 0);
  const first = E.logicalAnd(isZero, E.eq(zerosSoFar, 1));
  const head = E.div(reversedCumsum(E.mul(g, y), axis), whereOp(before, x, 1, FN));
  const xWithoutFirst = whereOp(first, 1, x, FN);
  const yWithoutFirst = cumprod(xWithoutFirst, axis);
  const atFirst = reversedCumsum(E.mul(g, yWithoutFirst), axis);
  let rest: Tensor | number = 0;
  if (isGradEnabled()) {
    const after = E.logicalXor(E.gt(zerosSoFar, 0), first);  // k > z: first is among them
    const without = noGrad(() => cumprodBackward(xWithoutFirst.detach(), yWithoutFirst.detach(), g.detach(), axis));
    const xz = sum(whereOp(first, x, 0, FN), { axis, keepdims: true });
    rest = whereOp(after, E.mul(xz, without), 0, FN);
  }
  return whereOp(before, head, whereOp(first, atFirst, rest, FN), FN);
}
