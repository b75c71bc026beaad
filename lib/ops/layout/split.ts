// Splitting a tensor into views along one axis: split, chunk, unbind, as
// torch's. Each piece is a view (NOTE [ Layout views ] in layout.ts):
// dispose each; gradients flow back through narrow and sliceDims.
import type { DType } from '../../core/dtype';
import { describeValue, formatShape } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { normalizeAxis } from '../axes';
import { checkTensor } from '../common';
import { checkInt, narrow, sliceDims } from './layout';
import { tooManyArguments } from '../../core/options';

/** Views of `sizes` consecutive lengths along axis d. */
function pieces<D extends DType>(x: Tensor<D>, d: number, sizes: readonly number[]): Tensor<D>[] {
  const out: Tensor<D>[] = [];
  let at = 0;
  for (const s of sizes) {
    out.push(narrow(x, d, at, s));
    at += s;
  }
  return out;
}

/**
 * Views of x along `axis` (default 0): pieces of `sizeOrSections` elements
 * each (the last one smaller when it does not divide), or of the listed
 * sizes, which must add up to the axis' size (torch.split).
 * @example gx.split(gx.arange(5), 2) // [0, 1], [2, 3], [4]; gx.split(x, [1, 3], 1)
 */
export function split<D extends DType>(x: Tensor<D>, sizeOrSections: number | readonly number[], axis = 0): Tensor<D>[] {
  if (arguments.length > 3) tooManyArguments('gx.split', '(x, sizeOrSections, axis?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.split';
  checkTensor(x, fn, 'input');
  const d = normalizeAxis(axis, x.shape, fn, 'axis', 'strict');
  const n = x.shape[d];
  if (Array.isArray(sizeOrSections)) {
    const sizes = sizeOrSections.map((s: unknown, i) => checkInt(s, fn, `sizeOrSections[${i}]`));
    const total = sizes.reduce((a, b) => a + b, 0);
    if (sizes.some((s) => s < 0) || total !== n) {
      throw new RangeError(`${fn}: sizes [${sizes.join(', ')}] must be non-negative and add up to ${n}, the size of dimension ${d} (shape ${formatShape(x.shape)})`);
    }
    return pieces(x, d, sizes);
  }
  if (typeof sizeOrSections !== 'number') {
    throw new TypeError(`${fn}: sizeOrSections must be an integer or an array of integers, got ${describeValue(sizeOrSections)}`);
  }
  const size = checkInt(sizeOrSections, fn, 'sizeOrSections');
  if (size < 1 && !(size === 0 && n === 0)) throw new RangeError(`${fn}: sizeOrSections must be a positive integer, got ${size}`);
  return bySize(x, d, size);
}

/** Views of `size` elements along d, the last smaller; one empty view for an empty axis. */
function bySize<D extends DType>(x: Tensor<D>, d: number, size: number): Tensor<D>[] {
  const n = x.shape[d];
  if (n === 0) return [narrow(x, d, 0, 0)];
  return pieces(x, d, Array.from({ length: Math.ceil(n / size) }, (_, i) => Math.min(size, n - i * size)));
}

/**
 * x split into `chunks` views along `axis` (default 0) of ceil(size / chunks)
 * elements each, the last smaller; fewer when the axis is short (torch.chunk).
 * @example gx.chunk(gx.arange(6), 4) // [0, 1], [2, 3], [4, 5]
 */
export function chunk<D extends DType>(x: Tensor<D>, chunks: number, axis = 0): Tensor<D>[] {
  if (arguments.length > 3) tooManyArguments('gx.chunk', '(x, chunks, axis?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.chunk';
  checkTensor(x, fn, 'input');
  if (checkInt(chunks, fn, 'chunks') < 1) throw new RangeError(`${fn}: chunks must be a positive integer, got ${chunks}`);
  const d = normalizeAxis(axis, x.shape, fn, 'axis', 'strict');
  return bySize(x, d, Math.ceil(x.shape[d] / chunks));
}

/**
 * The slices of x along `axis` (default 0), that axis removed: views
 * (torch.unbind).
 * @example const [a, b] = gx.unbind(gx.zeros([2, 3])); // shapes [3] and [3]
 */
export function unbind<D extends DType>(x: Tensor<D>, axis = 0): Tensor<D>[] {
  if (arguments.length > 2) tooManyArguments('gx.unbind', '(x, axis?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.unbind';
  checkTensor(x, fn, 'input');
  const d = normalizeAxis(axis, x.shape, fn, 'axis', 'strict');
  const keep = new Array<null>(d).fill(null);
  return Array.from({ length: x.shape[d] }, (_, i) => sliceDims(x, ...keep, i));
}
