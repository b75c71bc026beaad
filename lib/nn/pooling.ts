// Max and average pooling of gx.nn.functional (maxPool1d/2d, avgPool1d/2d, as
// torch.nn.functional's): max pooling is one native op with indices, average
// pooling unfold and a sum over each window.
//
// NOTE [ Pooling geometry ]
// Both pools check their arguments and compute the grid of windows here, as
// torch's pooling_output_shape: ceilMode adds a window where the last one
// would start inside the input or its left padding (torch's rule); its
// positions past the padded input read padding. 1-d pools run as 2-d ones
// over a unit height (lift).
// Max pooling is max_pool2d_with_indices and its backward (NOTE [ Max pooling
// with indices ] in ops/conv/max_pool.h: torch's semantics, padding never
// selected, the first maximum wins, NaN propagates; NOTE [ Derivatives of max
// pooling ] in lib/ops/conv/max-pool.ts): a forward and backward is two
// native ops, where unfold, amax, amax's gradient (eq, astype, sum, div, mul)
// and fold took eight (gx.profiler) and split a tie's gradient among the
// tied elements, where torch gives it all to the index it reports.
//
// NOTE [ Average pooling as unfold and a sum ]
// The windows of x (N, C, H, W) are its columns (N, C*KH*KW, L), viewed (N,
// C, KH*KW, L): average pooling is the sum over the window axis (padding read
// as 0) divided by torch's divisor: the window's size clipped to the padded
// input (countIncludePad, the default) or to the input itself, one number per
// window when ceil mode or padding makes them differ. Gradients come from
// sum's and unfold's (fold).
import { div } from '../generated/elementwise';
import { sum } from '../ops/reduce/functions';
import { tensor } from '../ops/creation/creation';
import { maxPool2dWithIndices } from '../ops/conv/max-pool';
import { im2col } from '../ops/conv/unfold';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue, formatShape } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import { asImage, lift, sizes } from './conv-args';
import { floatingArg } from './args';

const F = 'gx.nn.functional';

export interface PoolOptions {
  /** Step between windows (default: the kernel size). */
  stride?: number | number[] | null;
  /** Implicit padding on both sides of each spatial dim, at most half the kernel (default 0). */
  padding?: number | number[];
  /** Use ceil instead of floor for the number of windows (default false). */
  ceilMode?: boolean;
}
export interface MaxPoolOptions extends PoolOptions {
  /** Spacing between a window's elements (default 1). */
  dilation?: number | number[];
  /** Also return the flat index (into each plane of the input) of every maximum (default false). */
  returnIndices?: boolean;
}
export interface AvgPoolOptions extends PoolOptions {
  /** Count the zero padding in the divisor (default true). */
  countIncludePad?: boolean;
  /** Divide by this instead of the window's size. */
  divisorOverride?: number | null;
}
const MAX_KEYS = optionKeys<MaxPoolOptions>({ stride: true, padding: true, dilation: true, ceilMode: true, returnIndices: true });
const AVG_KEYS = optionKeys<AvgPoolOptions>({ stride: true, padding: true, ceilMode: true, countIncludePad: true, divisorOverride: true });

/** Windows along one dim, torch's pooling_output_shape. */
function poolWindows(size: number, k: number, pad: number, s: number, d: number, ceil: boolean): number {
  let out = Math.floor((size + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0)) / s) + 1;
  if (ceil && (out - 1) * s >= size + pad) out -= 1;
  return out;
}

interface PoolGeometry { k: number[]; s: number[]; p: number[]; d: number[]; grid: number[]; dims: number[] }

function poolGeometry(x: Tensor, kernelSize: unknown, o: MaxPoolOptions, spatial: number, fn: string): PoolGeometry {
  const k = sizes(kernelSize, spatial, fn, 'kernelSize', 1);
  const s = o.stride === undefined || o.stride === null ? k : sizes(o.stride, spatial, fn, 'stride', 1);
  const p = sizes(o.padding ?? 0, spatial, fn, 'padding', 0);
  const d = sizes(o.dilation ?? 1, spatial, fn, 'dilation', 1);
  if (p.some((v, i) => v > k[i] / 2)) throw new RangeError(`${fn}: argument 'padding' must be at most half the kernel size, got padding ${formatShape(p)} and kernelSize ${formatShape(k)}`);
  if (x.ndim !== spatial + 1 && x.ndim !== spatial + 2) {
    throw new RangeError(`${fn}: argument 'input' must be ${spatial + 1}-d (unbatched) or ${spatial + 2}-d (batched), got ${formatShape(x.shape)}`);
  }
  const dims = x.shape.slice(x.ndim - spatial);
  const ceil = booleanOption(fn, 'ceilMode', o.ceilMode, false);
  const grid = dims.map((n, i) => poolWindows(n, k[i], p[i], s[i], d[i], ceil));
  if (grid.some((g) => g < 1)) {
    throw new RangeError(`${fn}: the input's spatial size ${formatShape(dims)} gives an output of ${formatShape(grid)}, which is too small`);
  }
  return { k, s, p, d, grid, dims };
}

/** A pool's result shape: the input's batch (if it had one) and channels, then the grid. */
const pooledShape = (image: Tensor, batched: boolean, g: PoolGeometry): number[] => [...(batched ? [image.shape[0]] : []), image.shape[1], ...g.grid];

/** The columns of x viewed (N, C, window, L) and how to shape a (N, C, L) result back. */
function windowsOf(x: Tensor, g: PoolGeometry, spatial: number, fn: string): { w: Tensor; shape: number[] } {
  const { image, batched } = asImage(x, spatial, fn, 'input');
  const [n, c] = image.shape;
  const cols = im2col(image, lift(g.k, g.d, g.p, g.s, g.grid), fn);
  const l = g.grid.reduce((a, b) => a * b, 1);
  return { w: cols.reshape([n, c, cols.shape[1] / c, l]), shape: pooledShape(image, batched, g) };
}

export interface MaxPoolResult { values: Tensor; indices: Tensor }

function maxPoolNd(input: Tensor, kernelSize: number | number[], opts: MaxPoolOptions | undefined, spatial: number, fn: string): Tensor | MaxPoolResult {
  const x = floatingArg(input, fn, 'input');
  const o = checkOptions<MaxPoolOptions>(opts, fn, MAX_KEYS);
  const g = poolGeometry(x, kernelSize, o, spatial, fn);
  const withIndices = booleanOption(fn, 'returnIndices', o.returnIndices, false);
  return tidy(() => {
    const { image, batched } = asImage(x, spatial, fn, 'input');
    const { values, indices } = maxPool2dWithIndices(image, lift(g.k, g.d, g.p, g.s, g.grid), fn);
    if (batched && spatial === 2) return withIndices ? { values, indices } : values;
    const shape = pooledShape(image, batched, g);
    const out = values.reshape(shape);
    return withIndices ? { values: out, indices: indices.reshape(shape) } : out;
  });
}

/**
 * 1-d max pooling (torch.nn.functional.max_pool1d): input (N, C, L) or (C, L).
 * With returnIndices, { values, indices }.
 * @example gx.nn.functional.maxPool1d(x, 3, { stride: 2 })
 */
export function maxPool1d(input: Tensor, kernelSize: number | number[], opts: MaxPoolOptions & { returnIndices: true }): MaxPoolResult;
export function maxPool1d(input: Tensor, kernelSize: number | number[], opts?: MaxPoolOptions): Tensor;
export function maxPool1d(input: Tensor, kernelSize: number | number[], opts?: MaxPoolOptions): Tensor | MaxPoolResult {
  return maxPoolNd(input, kernelSize, opts, 1, `${F}.maxPool1d`);
}

/**
 * 2-d max pooling (torch.nn.functional.max_pool2d): input (N, C, H, W) or (C,
 * H, W); NOTE [ Pooling geometry ]. With returnIndices,
 * { values, indices } (flat indices into each H*W plane, as torch's).
 * @example gx.nn.functional.maxPool2d(x, 2)
 */
export function maxPool2d(input: Tensor, kernelSize: number | number[], opts: MaxPoolOptions & { returnIndices: true }): MaxPoolResult;
export function maxPool2d(input: Tensor, kernelSize: number | number[], opts?: MaxPoolOptions): Tensor;
export function maxPool2d(input: Tensor, kernelSize: number | number[], opts?: MaxPoolOptions): Tensor | MaxPoolResult {
  return maxPoolNd(input, kernelSize, opts, 2, `${F}.maxPool2d`);
}

/** torch's divisor of each window (avg_pool2d's), or one number when all agree. */
function divisors(g: PoolGeometry, includePad: boolean): number[] {
  const lg = lift(g.k, [1], g.p, g.s, g.grid);
  const [h, w] = g.dims.length === 1 ? [1, g.dims[0]] : g.dims;
  const along = (n: number, size: number, k: number, s: number, p: number): [number, number] => {
    const start = n * s - p, end = Math.min(start + k, size + p);
    return [end - start, Math.min(end, size) - Math.max(start, 0)];
  };
  const out: number[] = [];
  for (let y = 0; y < lg.grid[0]; y++) {
    const [ph, vh] = along(y, h, lg.kernelSize[0], lg.stride[0], lg.padding[0]);
    for (let z = 0; z < lg.grid[1]; z++) {
      const [pw, vw] = along(z, w, lg.kernelSize[1], lg.stride[1], lg.padding[1]);
      out.push(includePad ? ph * pw : vh * vw);
    }
  }
  return out;
}

function avgPoolNd(input: Tensor, kernelSize: number | number[], opts: AvgPoolOptions | undefined, spatial: number, fn: string): Tensor {
  const x = floatingArg(input, fn, 'input');
  const o = checkOptions<AvgPoolOptions>(opts, fn, AVG_KEYS);
  const over = o.divisorOverride ?? null;
  if (over !== null && (typeof over !== 'number' || !Number.isInteger(over) || over === 0)) {
    throw new RangeError(`${fn}: argument 'divisorOverride' must be a non-zero integer, got ${describeValue(over)}`);
  }
  const includePad = booleanOption(fn, 'countIncludePad', o.countIncludePad, true);
  const g = poolGeometry(x, kernelSize, o, spatial, fn);
  return tidy(() => {
    const { w, shape } = windowsOf(x, g, spatial, fn);
    const total = sum(w, 2);
    const each = over !== null ? [over] : divisors(g, includePad);
    const divisor = each.every((v) => v === each[0]) ? each[0] : tensor(each, { dtype: x.dtype, device: x.device });
    return div(total, divisor).reshape(shape);
  });
}

/**
 * 1-d average pooling (torch.nn.functional.avg_pool1d): input (N, C, L) or (C, L).
 * @example gx.nn.functional.avgPool1d(x, 2)
 */
export function avgPool1d(input: Tensor, kernelSize: number | number[], opts?: AvgPoolOptions): Tensor {
  return avgPoolNd(input, kernelSize, opts, 1, `${F}.avgPool1d`);
}

/**
 * 2-d average pooling (torch.nn.functional.avg_pool2d): input (N, C, H, W) or
 * (C, H, W); countIncludePad (default true) as torch's. NOTE [ Average
 * pooling as unfold and a sum ].
 * @example gx.nn.functional.avgPool2d(x, 2)
 */
export function avgPool2d(input: Tensor, kernelSize: number | number[], opts?: AvgPoolOptions): Tensor {
  return avgPoolNd(input, kernelSize, opts, 2, `${F}.avgPool2d`);
}
