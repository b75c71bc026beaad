// Reordering elements along axes: flip and roll, composed from layout ops
// (narrow, cat, reshape) so that they run on every device without a kernel
// of their own. Both return new tensors.
//
// NOTE [ flip without negative strides ]
// gpuext views cannot have negative strides, so flip copies. Reversing an
// axis of size N = 2^k is swapping its halves, then the halves of each half,
// and so on: k rounds, each one cat of two narrows of a reshaped view
// ([.., N / 2b, 2, b, ..] with the middle axis swapped), so k copies of the
// tensor and O(k) ops, where cat of single elements would need O(N) ops.
// An axis of size n that is not a power of two is first put at the end of a
// zero-padded axis of N; after reversing, its elements are the first n.
import { zeros } from '../creation/creation';
import type { DType } from '../../core/dtype';
import { record, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import { describeValue } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { normalizeAxisList } from '../axes';
import { checkTensor } from '../common';
import { cat, checkInt, narrow } from './layout';
import { tooManyArguments } from '../../core/options';

/** f applied to x along each axis in turn, intermediates disposed; a copy even for no axes. */
export function alongAxes<D extends DType>(x: Tensor<D>, axes: readonly number[], f: (t: Tensor<D>, d: number, i: number) => Tensor<D>): Tensor<D> {
  let cur = x;
  axes.forEach((d, i) => {
    const next = f(cur, d, i);
    if (cur !== x) cur.dispose();
    cur = next;
  });
  return cur === x ? x.clone() : cur;
}

/** The new tensor `f(parts)` makes of views `parts`, which are disposed after. */
export function joined<D extends DType>(parts: Tensor<D>[], f: (parts: Tensor<D>[]) => Tensor<D>): Tensor<D> {
  try {
    return f(parts);
  } finally {
    parts.forEach((p) => p.dispose());
  }
}

/** x reversed along axis d (NOTE [ flip without negative strides ]); not recorded for autograd. */
function flipAxis<D extends DType>(x: Tensor<D>, d: number): Tensor<D> {
  const n = x.shape[d];
  if (n <= 1) return x.clone();
  let size = 1;
  while (size < n) size *= 2;
  const pre = x.shape.slice(0, d), post = x.shape.slice(d + 1);
  let buf: Tensor<D>;
  if (size === n) {
    buf = x.contiguous();
  } else {
    using pad = zeros<D>([...pre, size - n, ...post], { dtype: x.dtype, device: x.device });
    buf = cat([pad, x], d);
  }
  for (let block = 1; block < size; block *= 2) {
    using v = buf.view([...pre, size / (2 * block), 2, block, ...post]);
    const swapped = joined([narrow(v, d + 1, 1, 1), narrow(v, d + 1, 0, 1)], (p) => cat(p, d + 1));
    buf.dispose();
    buf = swapped.view([...pre, size, ...post]);
    swapped.dispose();
  }
  if (size === n) return buf;
  using head = narrow(buf, d, 0, n);
  buf.dispose();
  return head.clone();  // its own storage: buf's is up to twice as large
}

/**
 * A copy of x with the order of elements reversed along `axes` (torch.flip).
 * @example gx.flip(gx.tensor([[1, 2], [3, 4]]), 1) // [[2, 1], [4, 3]]; gx.flip(x, [0, 1])
 */
export function flip<D extends DType>(x: Tensor<D>, axes: number | readonly number[]): Tensor<D> {
  const fn = 'gx.flip';
  checkTensor(x, fn, 'input');
  if (arguments.length > 2) throw new TypeError(`${fn}: takes (x, axes): give several axes as a list, gx.flip(x, [0, 1])`);
  const dims = normalizeAxisList(axes, x.shape, fn, 'axes', 'axis').filter(() => x.ndim > 0);
  // One node for autograd, whose gradient is the flipped gradient, not the k rounds of cat.
  const out = noGrad(() => alongAxes(x, dims, flipAxis));
  if (shouldRecord(x)) record('flip', [x], out, [], (g) => [flip(g, dims)]);
  return out;
}

/**
 * A copy of x with its elements shifted by `shifts` along `axes`, wrapping
 * around (torch.roll); without axes, the flattened tensor is rolled and
 * reshaped back.
 * @example gx.roll(gx.arange(5), 2) // [3, 4, 0, 1, 2]; gx.roll(x, [1, -1], [0, 1])
 */
export function roll<D extends DType>(x: Tensor<D>, shifts: number | readonly number[], axes?: number | readonly number[]): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.roll', '(x, shifts, axes?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.roll';
  checkTensor(x, fn, 'input');
  const list = typeof shifts === 'number' ? [shifts] : Array.isArray(shifts) ? shifts : undefined;
  if (list === undefined) throw new TypeError(`${fn}: shifts must be an integer or an array of integers, got ${describeValue(shifts)}`);
  const amounts = list.map((s: unknown, i) => checkInt(s, fn, typeof shifts === 'number' ? 'shifts' : `shifts[${i}]`));
  if (axes === undefined) {
    if (amounts.length !== 1) throw new RangeError(`${fn}: without axes, shifts must be one integer (the flattened tensor is rolled), got ${amounts.length}`);
    using flat = x.reshape([-1]);
    using rolled = roll(flat, amounts[0], 0);
    return rolled.reshape(x.shape as number[]);
  }
  const dims = normalizeAxisList(axes, x.shape, fn, 'axes', 'axis');
  if (dims.length !== amounts.length) throw new RangeError(`${fn}: shifts has ${amounts.length} entries but axes names ${dims.length}; they must match`);
  return alongAxes(x, dims, (t, d, i) => {
    const n = t.shape[d];
    const s = n === 0 ? 0 : ((amounts[i] % n) + n) % n;
    if (s === 0) return t.clone();
    return joined([narrow(t, d, n - s, s), narrow(t, d, 0, n - s)], (p) => cat(p, d));
  });
}
