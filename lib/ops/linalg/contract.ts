// Products named as torch names them: mm and bmm (gx.matmul with torch's
// shape rules: 2-d only, 3-d batches of one size only), tensordot (the
// contracted axes moved together, one matmul) and kron (an outer product with
// the axes interleaved). Each is made of views and matmul or mul, so both
// devices and autograd come with them.
import { formatShape } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { checkTensor } from '../common';
import { BINARY, binaryOp } from '../elementwise/elementwise';
import { normalizeAxis } from '../axes';
import { checkInt, permute } from '../layout/layout';
import { matmul } from './matmul';
import { tooManyArguments } from '../../core/options';

/**
 * The matrix product of two 2-d tensors, as torch.mm (no broadcasting, no
 * vectors: gx.matmul takes those).
 * @example gx.mm(a, b) // [n, k] x [k, m] -> [n, m]
 */
export function mm(a: Tensor, b: Tensor): Tensor {
  if (arguments.length > 2) tooManyArguments('gx.mm', '(a, b)', arguments.length - 2, arguments[2]);
  const fn = 'gx.mm';
  const x = checkTensor(a, fn, 'self'), y = checkTensor(b, fn, 'mat2');
  if (x.ndim !== 2 || y.ndim !== 2) {
    throw new RangeError(`${fn}: needs two 2-d tensors, got ${formatShape(x.shape)} and ${formatShape(y.shape)} (gx.matmul broadcasts)`);
  }
  return matmul(x, y);
}

/**
 * Matrix products of two batches of the same size, as torch.bmm: [b, n, k] x
 * [b, k, m] -> [b, n, m] (no broadcasting: gx.matmul broadcasts).
 * @example gx.bmm(q, k.mT)
 */
export function bmm(a: Tensor, b: Tensor): Tensor {
  if (arguments.length > 2) tooManyArguments('gx.bmm', '(a, b)', arguments.length - 2, arguments[2]);
  const fn = 'gx.bmm';
  const x = checkTensor(a, fn, 'self'), y = checkTensor(b, fn, 'mat2');
  if (x.ndim !== 3 || y.ndim !== 3 || x.shape[0] !== y.shape[0]) {
    throw new RangeError(`${fn}: needs two 3-d tensors with the same batch size, got ${formatShape(x.shape)} and ${formatShape(y.shape)}`);
  }
  return matmul(x, y);
}

/** The axes tensordot contracts: `axes` last axes of a with the first of b, or two lists (NumPy's name; torch's dims). */
function contractedAxes(axes: unknown, x: Tensor, y: Tensor, fn: string): [number[], number[]] {
  if (typeof axes === 'number') {
    const n = checkInt(axes, fn, 'axes');
    if (n < 0 || n > x.ndim || n > y.ndim) throw new RangeError(`${fn}: axes ${n} is out of range for ${x.ndim}-d and ${y.ndim}-d tensors`);
    return [Array.from({ length: n }, (_, i) => x.ndim - n + i), Array.from({ length: n }, (_, i) => i)];
  }
  if (Array.isArray(axes) && axes.length === 2) {
    const list = (v: unknown, t: Tensor, name: string): number[] =>
      (Array.isArray(v) ? v : [v]).map((d) => normalizeAxis(d, t.shape, fn, name));
    const ax = list(axes[0], x, 'axes[0]'), bx = list(axes[1], y, 'axes[1]');
    if (ax.length !== bx.length) throw new RangeError(`${fn}: axes names ${ax.length} axes of a but ${bx.length} of b`);
    if (new Set(ax).size !== ax.length || new Set(bx).size !== bx.length) throw new RangeError(`${fn}: an axis is named twice in axes`);
    return [ax, bx];
  }
  throw new TypeError(`${fn}: axes must be a number or a pair [axesOfA, axesOfB], got ${JSON.stringify(axes)}`);
}

/**
 * Sums the products of a and b over the axes `axes` names, as
 * torch.tensordot (its `dims`, NumPy's `axes`): a number n contracts a's last n axes with b's first n;
 * a pair [axesOfA, axesOfB] names them. The result has a's other axes, then b's.
 * @example gx.tensordot(a, b, 2); gx.tensordot(a, b, [[1, 0], [0, 1]])
 */
export function tensordot(a: Tensor, b: Tensor, axes: number | readonly [number | readonly number[], number | readonly number[]] = 2): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.tensordot', '(a, b, axes?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.tensordot';
  const x = checkTensor(a, fn, 'a'), y = checkTensor(b, fn, 'b');
  const [ax, bx] = contractedAxes(axes, x, y, fn);
  ax.forEach((d, i) => {
    if (x.shape[d] !== y.shape[bx[i]]) {
      throw new RangeError(`${fn}: axis ${d} of a (size ${x.shape[d]}) and axis ${bx[i]} of b (size ${y.shape[bx[i]]}) differ`);
    }
  });
  const freeA = x.shape.map((_, d) => d).filter((d) => !ax.includes(d));
  const freeB = y.shape.map((_, d) => d).filter((d) => !bx.includes(d));
  const k = ax.reduce((p, d) => p * x.shape[d], 1);
  const outShape = [...freeA.map((d) => x.shape[d]), ...freeB.map((d) => y.shape[d])];
  return tidy(() => {
    const a2 = permute(x, [...freeA, ...ax]).reshape([freeA.reduce((p, d) => p * x.shape[d], 1), k]);
    const b2 = permute(y, [...bx, ...freeB]).reshape([k, freeB.reduce((p, d) => p * y.shape[d], 1)]);
    return matmul(a2, b2).reshape(outShape);
  });
}

/**
 * The Kronecker product, as torch.kron: out[i * b.shape + j] = a[i] * b[j]
 * axis by axis (the fewer axes padded with leading 1s).
 * @example gx.kron(gx.eye(2), block) // block on the diagonal twice
 */
export function kron(a: Tensor, b: Tensor): Tensor {
  if (arguments.length > 2) tooManyArguments('gx.kron', '(a, b)', arguments.length - 2, arguments[2]);
  const fn = 'gx.kron';
  const x = checkTensor(a, fn, 'self'), y = checkTensor(b, fn, 'other');
  const n = Math.max(x.ndim, y.ndim);
  const pad = (s: readonly number[]): number[] => [...Array<number>(n - s.length).fill(1), ...s];
  const sa = pad(x.shape), sb = pad(y.shape);
  return tidy(() => {
    const ai = x.reshape(sa.flatMap((s) => [s, 1]));
    const bi = y.reshape(sb.flatMap((s) => [1, s]));
    return binaryOp(BINARY.mul, ai, bi, fn).reshape(sa.map((s, d) => s * sb[d]));
  });
}
