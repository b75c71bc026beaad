// The derivative of gx.prod, as torch's prod_safe_zeros_backward
// (torch/csrc/autograd/FunctionsManual.cpp): d prod / d x_i is the product of
// the other elements of x_i's line (the reduced axes, flattened), which
// g * prod / x_i gives only where x_i is not 0 (a single zero made the whole
// gradient NaN there, where it is the product of the others). Here it is the
// products before and after each place (exclusive cumulative products from
// both ends), multiplied: exact with any number of zeros, in ops that record,
// so a backward with createGraph differentiates it again.
import * as E from '../generated/elementwise';
import type { Tensor } from '../core/tensor';
import { full } from '../ops/creation/creation';
import { flip } from '../ops/layout/reorder';
import { cat } from '../ops/layout/layout';
import { cumprod } from '../ops/reduce/scan';

/** Along the last axis, the product of the elements before each place (1 for the first). */
function productsBefore(y: Tensor): Tensor {
  const n = y.shape[y.ndim - 1];
  const one = full([...y.shape.slice(0, -1), 1], 1, { dtype: y.dtype as 'float32', device: y.device });
  return cat([one, cumprod(y, -1).narrow(-1, 0, n - 1)], -1);
}

/** For each element of x, the product of the other elements of its line along `axes` (prod's gradient for g = 1). */
export function othersProduct(x: Tensor, axes: readonly number[]): Tensor {
  const kept = x.shape.map((_, d) => d).filter((d) => !axes.includes(d));
  const order = [...kept, ...axes];
  const moved = x.permute(order);
  const n = axes.reduce((m, d) => m * x.shape[d], 1);
  if (n === 0) return E.mul(x, 0);  // an empty line: no element to take a gradient
  const lines = moved.reshape([...kept.map((d) => x.shape[d]), n]);
  const others = E.mul(productsBefore(lines), flip(productsBefore(flip(lines, -1)), -1));
  return others.reshape(moved.shape as number[]).permute(order.map((_, i) => order.indexOf(i)));
}
