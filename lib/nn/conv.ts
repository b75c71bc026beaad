// Convolutions and the sliding-window ops of gx.nn.functional: unfold (im2col),
// fold (col2im), conv1d and conv2d, as torch.nn.functional's.
//
// NOTE [ Convolution as unfold and matmul ]
// conv(x, w) over (N, C, H, W) is the columns of x, unfold: (N, C*KH*KW, L)
// with L = OH*OW windows, multiplied by w viewed as (OC, C*KH*KW): one
// batched matmul whose result (N, OC, L) is already the output (N, OC, OH,
// OW) in memory, so no transpose is copied. With groups, the columns are
// viewed (N, G, C/G*KH*KW, L) and w (G, OC/G, C/G*KH*KW): the product (N, G,
// OC/G, L) is (N, OC, L) again. The gradients come from matmul's and
// unfold's (fold, its adjoint): the same two kernels, no convolution of its
// own on the tape. padding 'same' pads d*(k-1)/2 before each dim and lets the
// grid run to the input's size: the windows that reach past the end read the
// kernel's padding value, so an odd total needs no padded copy of x either.
// This is the CPU path, and CUDA's when cuDNN does not run (NOTE [ cuDNN
// convolutions ] in lib/ops/conv/cudnn.ts).
import { add } from '../generated/elementwise';
import { matmul } from '../ops/linalg/matmul';
import { col2im, im2col } from '../ops/conv/unfold';
import { cudnnConv } from '../ops/conv/cudnn';
import { checkOptions, optionKeys } from '../core/options';
import { describeValue, formatShape } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import { asImage, lift, sizes, spatialDims, windows } from './conv-args';
import { floatingArg } from './args';

const F = 'gx.nn.functional';

export interface UnfoldOptions {
  /** Spacing between a window's elements (default 1). */
  dilation?: number | number[];
  /** Zeros added on both sides of each spatial dim (default 0). */
  padding?: number | number[];
  /** Step between windows (default 1). */
  stride?: number | number[];
}
const UNFOLD_KEYS = optionKeys<UnfoldOptions>({ dilation: true, padding: true, stride: true });

/** The geometry arguments of unfold / fold, checked. */
function windowArgs(kernelSize: unknown, opts: unknown, spatial: number, fn: string): { k: number[]; d: number[]; p: number[]; s: number[] } {
  const o = checkOptions<UnfoldOptions>(opts, fn, UNFOLD_KEYS);
  return {
    k: sizes(kernelSize, spatial, fn, 'kernelSize', 1), d: sizes(o.dilation ?? 1, spatial, fn, 'dilation', 1),
    p: sizes(o.padding ?? 0, spatial, fn, 'padding', 0), s: sizes(o.stride ?? 1, spatial, fn, 'stride', 1),
  };
}

/**
 * The sliding windows of input as columns (torch.nn.functional.unfold, im2col):
 * (N, C, *spatial) to (N, C * prod(kernelSize), L), L the number of windows;
 * unbatched (C, *spatial) to (C * prod(kernelSize), L). Two spatial dims, or
 * one when kernelSize is a list of one. Differentiable (its gradient is fold).
 * @example gx.nn.functional.unfold(x, 3, { padding: 1 }) // (N, C*9, H*W)
 */
export function unfold(input: Tensor, kernelSize: number | number[], opts?: UnfoldOptions): Tensor {
  const fn = `${F}.unfold`;
  const x = floatingArg(input, fn, 'input');
  const spatial = spatialDims(kernelSize, 2, fn);
  const { k, d, p, s } = windowArgs(kernelSize, opts, spatial, fn);
  const dims = x.shape.slice(x.ndim - spatial);
  const grid = dims.map((n, i) => windows(n, k[i], d[i], p[i], s[i]));
  if (x.ndim >= spatial + 1 && grid.some((g) => g < 1)) {
    throw new RangeError(`${fn}: the input's spatial size ${formatShape(dims)} with kernelSize ${describeValue(kernelSize)}, ` +
      `dilation ${formatShape(d)}, padding ${formatShape(p)} and stride ${formatShape(s)} gives ${formatShape(grid)} windows; each must be at least 1`);
  }
  return tidy(() => {
    const { image, batched } = asImage(x, spatial, fn, 'input');
    const cols = im2col(image, lift(k, d, p, s, grid), fn);
    return batched ? cols : cols.reshape(cols.shape.slice(1));
  });
}

/**
 * Sums columns back into an image (torch.nn.functional.fold, col2im; unfold's
 * adjoint, overlapping windows added): (N, C * prod(kernelSize), L) to (N, C,
 * *outputSize); unbatched (C * prod(kernelSize), L) to (C, *outputSize).
 * @example gx.nn.functional.fold(cols, [4, 5], 2) // cols (N, C*4, 12)
 */
export function fold(input: Tensor, outputSize: number | number[], kernelSize: number | number[], opts?: UnfoldOptions): Tensor {
  const fn = `${F}.fold`;
  const x = floatingArg(input, fn, 'input');
  const spatial = spatialDims(kernelSize, Array.isArray(outputSize) ? outputSize.length : 2, fn);
  const out = sizes(outputSize, spatial, fn, 'outputSize', 1);
  const { k, d, p, s } = windowArgs(kernelSize, opts, spatial, fn);
  if (x.ndim !== 2 && x.ndim !== 3) throw new RangeError(`${fn}: argument 'input' must be 2-d (unbatched) or 3-d (batched), got ${formatShape(x.shape)}`);
  const batched = x.ndim === 3;
  const rows = x.shape[x.ndim - 2], cols = x.shape[x.ndim - 1];
  const window = k.reduce((a, b) => a * b, 1);
  if (rows === 0 || rows % window !== 0) {
    throw new RangeError(`${fn}: the size of dim ${x.ndim - 2} of 'input' (${rows}) must be a positive multiple of prod(kernelSize) = ${window}`);
  }
  const grid = out.map((n, i) => windows(n, k[i], d[i], p[i], s[i]));
  const blocks = grid.reduce((a, b) => a * b, 1);
  if (grid.some((g) => g < 1) || cols !== blocks) {
    throw new RangeError(`${fn}: outputSize ${formatShape(out)}, kernelSize ${formatShape(k)}, dilation ${formatShape(d)}, padding ` +
      `${formatShape(p)} and stride ${formatShape(s)} give ${formatShape(grid)} windows, so dim ${x.ndim - 1} of 'input' must be ${blocks}, got ${cols}`);
  }
  return tidy(() => {
    const batch = batched ? x : x.reshape([1, ...x.shape]);
    const g = lift(k, d, p, s, grid);
    const image = col2im(batch, spatial === 1 ? [1, out[0]] : [out[0], out[1]], g, fn);
    const shape = [...(batched ? [x.shape[0]] : []), rows / window, ...out];
    return image.reshape(shape);
  });
}

export interface ConvOptions {
  /** Step between windows (default 1). */
  stride?: number | number[];
  /** Zeros on both sides of each spatial dim, or 'valid' (none) or 'same' (output as large as the input; stride 1). Default 0. */
  padding?: number | number[] | 'same' | 'valid';
  /** Spacing between kernel elements (default 1). */
  dilation?: number | number[];
  /** Split channels into this many groups, each convolved with its own filters (default 1). */
  groups?: number;
}
const CONV_KEYS = optionKeys<ConvOptions>({ stride: true, padding: true, dilation: true, groups: true });

/** The convolution's padding and grid along each spatial dim. */
function convPadding(padding: ConvOptions['padding'], dims: number[], k: number[], d: number[], s: number[], fn: string): { p: number[]; grid: number[] } {
  if (padding === 'same') {
    if (s.some((v) => v !== 1)) throw new RangeError(`${fn}: padding 'same' is not supported for strided convolutions (stride ${formatShape(s)})`);
    return { p: k.map((kk, i) => Math.floor((d[i] * (kk - 1)) / 2)), grid: dims };
  }
  const p = padding === 'valid' ? dims.map(() => 0) : sizes(padding ?? 0, dims.length, fn, 'padding', 0);
  if (typeof padding === 'string' && padding !== 'valid') throw new TypeError(`${fn}: argument 'padding' must be 'same', 'valid' or sizes, got ${describeValue(padding)}`);
  return { p, grid: dims.map((n, i) => windows(n, k[i], d[i], p[i], s[i])) };
}

function convNd(input: Tensor, weight: Tensor, bias: Tensor | null, opts: ConvOptions | undefined, spatial: number, fn: string): Tensor {
  const x = floatingArg(input, fn, 'input');
  const w = floatingArg(weight, fn, 'weight');
  const o = checkOptions<ConvOptions>(opts, fn, CONV_KEYS);
  const groups = o.groups ?? 1;
  if (typeof groups !== 'number' || !Number.isInteger(groups) || groups < 1) throw new RangeError(`${fn}: argument 'groups' must be a positive integer, got ${describeValue(groups)}`);
  if (w.ndim !== spatial + 2) throw new RangeError(`${fn}: argument 'weight' must be ${spatial + 2}-d (outChannels, inChannels / groups, *kernel), got ${formatShape(w.shape)}`);
  if (x.dtype !== w.dtype) throw new TypeError(`${fn}: input (${x.dtype}) and weight (${w.dtype}) must have one dtype`);
  const [oc, cg] = w.shape;
  const c = x.shape[x.ndim - spatial - 1];
  if (x.ndim >= spatial + 1 && c !== cg * groups) {
    throw new RangeError(`${fn}: argument 'input' of shape ${formatShape(x.shape)} has ${c} channels; weight ${formatShape(w.shape)} with groups ${groups} expects ${cg * groups}`);
  }
  if (oc % groups !== 0) throw new RangeError(`${fn}: the weight's ${oc} output channels must be divisible by groups ${groups}`);
  if (bias !== null) {
    const b = floatingArg(bias, fn, 'bias');
    if (b.ndim !== 1 || b.shape[0] !== oc) throw new RangeError(`${fn}: argument 'bias' must be [${oc}], got ${formatShape(b.shape)}`);
    if (b.dtype !== x.dtype) throw new TypeError(`${fn}: bias (${b.dtype}) and input (${x.dtype}) must have one dtype`);
  }
  const k = w.shape.slice(2);
  const s = sizes(o.stride ?? 1, spatial, fn, 'stride', 1);
  const d = sizes(o.dilation ?? 1, spatial, fn, 'dilation', 1);
  const dims = x.shape.slice(x.ndim - spatial);
  const { p, grid } = convPadding(o.padding, dims, k, d, s, fn);
  if (grid.some((g) => g < 1)) {
    throw new RangeError(`${fn}: the input's spatial size ${formatShape(dims)} (padded by ${formatShape(p)}) is smaller than the kernel ${formatShape(k)} dilated by ${formatShape(d)}`);
  }
  return tidy(() => {
    const { image, batched } = asImage(x, spatial, fn, 'input');
    const n = image.shape[0], l = grid.reduce((a, b) => a * b, 1), rows = cg * k.reduce((a, b) => a * b, 1);
    const geometry = lift(k, d, p, s, grid);
    const shape = [...(batched ? [n] : []), oc, ...grid];
    // NOTE [ cuDNN convolutions ]: on CUDA, cuDNN when it loads and takes the configuration; else the columns.
    const fast = image.device.type === 'cuda'
      ? cudnnConv(image, spatial === 1 ? w.reshape([oc, cg, 1, k[0]]) : w, bias, { ...geometry, groups }, geometry.grid, fn)
      : undefined;
    if (fast !== undefined) return fast.reshape(shape);
    const cols = im2col(image, geometry, fn);
    // NOTE [ Convolution as unfold and matmul ]: (N, OC, L) straight out of the product.
    const y = groups === 1
      ? matmul(w.reshape([oc, rows]), cols)
      : matmul(w.reshape([groups, oc / groups, rows]), cols.reshape([n, groups, rows, l]));
    const shaped = y.reshape(shape);
    return bias === null ? shaped : add(shaped, bias.reshape([oc, ...grid.map(() => 1)]));
  });
}

/**
 * A 1-d convolution (torch.nn.functional.conv1d; cross-correlation, as torch):
 * input (N, C, L) or (C, L), weight (OC, C / groups, K), bias (OC) or null.
 * @example gx.nn.functional.conv1d(x, w, b, { padding: 'same' })
 */
export function conv1d(input: Tensor, weight: Tensor, bias: Tensor | null = null, opts?: ConvOptions): Tensor {
  return convNd(input, weight, bias, opts, 1, `${F}.conv1d`);
}

/**
 * A 2-d convolution (torch.nn.functional.conv2d; cross-correlation, as torch):
 * input (N, C, H, W) or (C, H, W), weight (OC, C / groups, KH, KW), bias (OC)
 * or null. On CUDA through cuDNN when it loads (NOTE [ cuDNN convolutions ]),
 * else as NOTE [ Convolution as unfold and matmul ] (the CPU's path too).
 * @example gx.nn.functional.conv2d(x, w, b, { stride: 2, padding: 3 })
 */
export function conv2d(input: Tensor, weight: Tensor, bias: Tensor | null = null, opts?: ConvOptions): Tensor {
  return convNd(input, weight, bias, opts, 2, `${F}.conv2d`);
}
