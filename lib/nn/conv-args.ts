// The argument checks the convolutions, pools, unfold and fold share: sizes
// given as one number or one per spatial dim, and the window geometry (the
// grid of windows torch's formulas give). Errors name the function and the
// argument, as torch's do.
import { describeValue, formatShape } from '../core/shape';
import type { Tensor } from '../core/tensor';
import type { Im2colGeometry } from '../ops/conv/unfold';

/** A size argument: one integer for every spatial dim, or one per dim; each >= min. */
export function sizes(v: unknown, spatial: number, fn: string, name: string, min: number): number[] {
  const list = typeof v === 'number' ? Array<number>(spatial).fill(v) : v;
  if (!Array.isArray(list) || list.length !== spatial || !list.every((x) => typeof x === 'number' && Number.isInteger(x))) {
    throw new TypeError(`${fn}: argument '${name}' must be an integer or a list of ${spatial} integers, got ${describeValue(v)}`);
  }
  const bad = list.find((x: number) => x < min);
  if (bad !== undefined) {
    throw new RangeError(`${fn}: argument '${name}' must be ${min === 0 ? 'non-negative' : 'positive'}, got ${describeValue(v)}`);
  }
  return list as number[];
}

/** The number of spatial dims a kernel size names: its length when a list (1 or 2), else `fallback`. */
export function spatialDims(kernelSize: unknown, fallback: number, fn: string): number {
  if (!Array.isArray(kernelSize)) return fallback;
  if (kernelSize.length !== 1 && kernelSize.length !== 2) {
    throw new RangeError(`${fn}: argument 'kernelSize' must have 1 or 2 entries (1-d or 2-d windows), got ${describeValue(kernelSize)}`);
  }
  return kernelSize.length;
}

/** Windows along one dim: floor((size + 2 pad - dilation (k - 1) - 1) / stride) + 1 (torch's). */
export function windows(size: number, k: number, d: number, pad: number, s: number): number {
  return Math.floor((size + 2 * pad - d * (k - 1) - 1) / s) + 1;
}

/** A spatial geometry lifted to the two dims the kernels take: a 1-d one gets a unit height. */
export function lift(k: number[], d: number[], p: number[], s: number[], grid: number[]): Im2colGeometry {
  const two = (a: number[], unit: number): [number, number] => (a.length === 1 ? [unit, a[0]] : [a[0], a[1]]);
  return { kernelSize: two(k, 1), dilation: two(d, 1), padding: two(p, 0), stride: two(s, 1), grid: two(grid, 1) };
}

/**
 * The input as (N, C, H, W) for the kernels, from a batched (N, C, *spatial)
 * or unbatched (C, *spatial) one; `batched` says which it was. A view, or x
 * itself when already 4-d (a view would cost a native call and a tape node).
 */
export function asImage(x: Tensor, spatial: number, fn: string, name: string): { image: Tensor; batched: boolean } {
  if (x.ndim !== spatial + 1 && x.ndim !== spatial + 2) {
    throw new RangeError(`${fn}: argument '${name}' must be ${spatial + 1}-d (unbatched) or ${spatial + 2}-d (batched), got ${formatShape(x.shape)}`);
  }
  const batched = x.ndim === spatial + 2;
  const shape = batched ? [...x.shape] : [1, ...x.shape];
  if (spatial === 1) shape.splice(2, 0, 1);
  if (shape.slice(1).some((v) => v === 0)) {
    throw new RangeError(`${fn}: argument '${name}' must have non-zero channel and spatial sizes, got ${formatShape(x.shape)}`);
  }
  return { image: shape.length === x.ndim ? x : x.reshape(shape), batched };
}
