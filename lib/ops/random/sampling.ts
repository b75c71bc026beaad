// Sampling as torch has it: randperm, bernoulli, normal, multinomial and
// dropout, each made of the generator's uniform (or normal) draws and the
// built-in ops, on the device of its inputs.
//
// NOTE [ Reproducible sampling ]
// Each function draws from one generator (the default, reseeded by
// gx.manualSeed, or `{ generator }`) through gx.rand/gx.randn, so a seeded
// program gives the same samples run to run. Uniform draws are the same bits
// on the CPU and on CUDA (NOTE [ Random streams ] in ops/random/philox.h), and
// what is made of them here is exact or deterministic (comparisons, a stable
// argsort, a cumulative sum read by searchsorted, topk with ties to the lower
// index), so randperm, bernoulli, dropout's mask and multinomial pick the
// same samples on every device. multinomial's cumulative sum may differ in
// its last bits between devices, which moves a sample only when a draw falls
// within those bits of a category's edge. normal is randn's: its values may
// differ in the last bits between devices (libm's log and cos).
import { parseDevice, type DeviceLike } from '../../core/device';
import { parseDType } from '../../core/dtype';
import type { DType } from '../../generated/dtypes';
import { noGrad } from '../../tape/mode';
import { booleanOption, optionKeys, tooManyArguments } from '../../core/options';
import { describeValue, formatShape, type ShapeLike } from '../../core/shape';
import { Tensor } from '../../core/tensor';
import { tidy } from '../../core/tidy';
import { broadcastShapes, checkTensor, commonDevice, describeOperand, optionsOf } from '../common';
import { astypeOp, BINARY, binaryOp, clampOp, UNARY, unaryOp } from '../elementwise/elementwise';
import { isFloating, resultType } from '../promotion';
import { Generator, rand, randn } from './random';
import { REDUCE, reduceOp } from '../reduce/reduction';
import { cumsumImpl } from '../reduce/scan';
import { argsortImpl, searchsorted, topkImpl } from '../sort/sorting';

export interface SamplingOptions {
  /** Draw from this generator instead of the default one. */
  generator?: Generator;
}

export interface RandpermOptions<D extends DType = DType> extends SamplingOptions {
  /** The result's dtype (default int64). */
  dtype?: D;
  device?: DeviceLike;
}

export interface MultinomialOptions extends SamplingOptions {
  /** Draw with replacement (default false: each category at most once per row). */
  replacement?: boolean;
}

export interface DropoutOpOptions extends SamplingOptions {
  /** Drop (default true); false returns x itself, as torch's training=False. */
  training?: boolean;
}

const SAMPLING_KEYS = optionKeys<SamplingOptions>({ generator: true });
const RANDPERM_KEYS = optionKeys<RandpermOptions>({ generator: true, dtype: true, device: true });
const MULTINOMIAL_KEYS = optionKeys<MultinomialOptions>({ generator: true, replacement: true });
const DROPOUT_KEYS = optionKeys<DropoutOpOptions>({ generator: true, training: true });

/** Draws from a probability or a tensor of them: refused outside [0, 1] (a readback on CUDA, as torch's check). */
function checkProbabilities(p: Tensor, fn: string, name: string): void {
  if (p.numel === 0) return;
  const lo = Number(reduceOp(REDUCE.min, p, undefined, undefined, fn).item());
  const hi = Number(reduceOp(REDUCE.max, p, undefined, undefined, fn).item());
  if (!(lo >= 0 && hi <= 1)) throw new RangeError(`${fn}: ${name} must hold probabilities in [0, 1], got values in [${lo}, ${hi}]`);
}

/**
 * A random permutation of 0..n-1 (int64 unless dtype says otherwise), as
 * torch.randperm: the stable argsort of n float64 uniform draws, the same on
 * every device for a seed (NOTE [ Reproducible sampling ]).
 * @example gx.manualSeed(0); gx.randperm(5) // a permutation of [0, 5)
 */
export function randperm<D extends DType = 'int64'>(n: number, opts?: RandpermOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.randperm', '(n, options?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.randperm';
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new RangeError(`${fn}: n must be a non-negative integer, got ${describeValue(n)}`);
  const o = optionsOf<RandpermOptions>(opts, fn, RANDPERM_KEYS);
  const dtype = o.dtype === undefined ? 'int64' : parseDType(o.dtype, fn);
  if (isFloating(dtype) || dtype === 'bool') throw new TypeError(`${fn}: dtype must be an integer dtype, got ${dtype}`);
  const device = parseDevice(o.device, fn);
  return tidy(() => {
    const u = rand([n], { dtype: 'float64', device, generator: o.generator });
    const order = argsortImpl(u, 0, undefined, fn);
    return (dtype === 'int64' ? order : astypeOp(order, dtype, fn)) as Tensor<D>;
  });
}

/**
 * 0 or 1 for each element, 1 with the probability the element holds (in [0,
 * 1]), as torch.bernoulli: the input's shape and floating dtype; with
 * `p`, every element 1 with probability p instead. No gradient (torch's is 0).
 * @example gx.bernoulli(gx.full([3], 0.3)); gx.bernoulli(x, 0.5)
 */
export function bernoulli<D extends DType>(input: Tensor<D>, p?: number | null, opts?: SamplingOptions): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.bernoulli', '(input, p?, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.bernoulli';
  const x = checkTensor(input, fn, 'input');
  if (!isFloating(x.dtype)) throw new TypeError(`${fn}: input must be a floating tensor (probabilities), got ${describeOperand(x)}`);
  if (p !== undefined && p !== null && (typeof p !== 'number' || !(p >= 0 && p <= 1))) {
    throw new RangeError(`${fn}: p must be a probability in [0, 1], got ${describeValue(p)}`);
  }
  const o = optionsOf<SamplingOptions>(opts, fn, SAMPLING_KEYS);
  return noGrad(() => tidy(() => {
    const probs = p === undefined || p === null ? x.detach() : p;
    if (probs instanceof Tensor) checkProbabilities(probs, fn, 'input');
    const u = rand(x.shape, { dtype: x.dtype === 'float64' ? 'float64' : 'float32', device: x.device, generator: o.generator });
    return astypeOp(binaryOp(BINARY.lt, u, probs, fn), x.dtype, fn) as Tensor<D>;
  }));
}

/**
 * Normal samples of the given mean and standard deviation, as torch.normal:
 * numbers and a `shape` (gx.randn with mean and std), or tensors (each
 * sample with its element's mean and std, broadcast; the result floating).
 * No gradient (torch's is 0: these are draws, not a reparameterization).
 * @example gx.normal(0, 2, [3, 3]); gx.normal(mu, sigma)
 */
export function normal(mean: number | Tensor, std: number | Tensor, shape?: ShapeLike | null, opts?: SamplingOptions & { dtype?: DType; device?: DeviceLike }): Tensor {
  if (arguments.length > 4) tooManyArguments('gx.normal', '(mean, std, shape?, options?)', arguments.length - 4, arguments[4]);
  const fn = 'gx.normal';
  const o = optionsOf<SamplingOptions & { dtype?: DType; device?: DeviceLike }>(opts, fn, [...SAMPLING_KEYS, 'dtype', 'device']);
  if (typeof mean === 'number' && typeof std === 'number') {
    if (shape === undefined || shape === null) throw new TypeError(`${fn}: with a number mean and std, give the shape: gx.normal(0, 1, [2, 3])`);
    return randn(shape, { mean, std, dtype: o.dtype, device: o.device, generator: o.generator });
  }
  const tensors = [mean, std].filter((v): v is Tensor => v instanceof Tensor);
  for (const [v, name] of [[mean, 'mean'], [std, 'std']] as const) {
    if (!(v instanceof Tensor) && typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number or a tensor, got ${describeOperand(v)}`);
  }
  if (shape !== undefined && shape !== null) throw new TypeError(`${fn}: a tensor mean or std gives the shape; pass no shape`);
  if (o.dtype !== undefined || o.device !== undefined) throw new TypeError(`${fn}: a tensor mean or std gives the dtype and device; pass neither`);
  return noGrad(() => tidy(() => {
    const m = mean instanceof Tensor ? mean.detach() : mean, s = std instanceof Tensor ? std.detach() : std;
    if (s instanceof Tensor && s.numel > 0 && Number(reduceOp(REDUCE.min, s, undefined, undefined, fn).item()) < 0) {
      throw new RangeError(`${fn}: std must be >= 0`);
    }
    if (typeof s === 'number' && !(s >= 0)) throw new RangeError(`${fn}: std must be >= 0, got ${s}`);
    const common = resultType(m, s);
    const dtype = isFloating(common) ? common : 'float32';
    const z = randn(broadcastShapes(tensors, fn), { dtype, device: commonDevice(tensors, tensors.map((_, i) => `argument ${i}`), fn), generator: o.generator });
    return binaryOp(BINARY.add, binaryOp(BINARY.mul, z, s, fn), m, fn);
  }));
}

/**
 * numSamples category indices (int64) per row of `probs` (1-d [n] or 2-d
 * [rows, n]; non-negative weights, not necessarily summing to 1), as
 * torch.multinomial: with replacement each draw independent; without
 * (the default) each category at most once, in the order drawn.
 * @example gx.multinomial(gx.tensor([0.1, 0.6, 0.3]), 4, { replacement: true })
 */
export function multinomial(probs: Tensor, numSamples: number, opts?: MultinomialOptions): Tensor<'int64'> {
  if (arguments.length > 3) tooManyArguments('gx.multinomial', '(probs, numSamples, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.multinomial';
  const p = checkTensor(probs, fn, 'input');
  if (!isFloating(p.dtype)) throw new TypeError(`${fn}: input must be a floating tensor of weights, got ${describeOperand(p)}`);
  if (p.ndim !== 1 && p.ndim !== 2) throw new RangeError(`${fn}: input must be 1-d or 2-d, got ${formatShape(p.shape)}`);
  const o = optionsOf<MultinomialOptions>(opts, fn, MULTINOMIAL_KEYS);
  const replacement = booleanOption(fn, 'replacement', o.replacement, false);
  const n = p.shape[p.ndim - 1];
  if (typeof numSamples !== 'number' || !Number.isSafeInteger(numSamples) || numSamples < 0) {
    throw new RangeError(`${fn}: numSamples must be a non-negative integer, got ${describeValue(numSamples)}`);
  }
  return noGrad(() => tidy(() => {
    const w = astypeOp(p.ndim === 1 ? p.detach().unsqueeze(0) : p.detach(), 'float64', fn);
    const rows = w.shape[0];
    const lo = w.numel === 0 ? 0 : Number(reduceOp(REDUCE.min, w, undefined, undefined, fn).item());
    const sums = reduceOp(REDUCE.sum, w, 1, { keepdims: true }, fn);
    const positive = reduceOp(REDUCE.sum, binaryOp(BINARY.gt, w, 0, fn), 1, undefined, fn);
    const fewest = rows === 0 ? n : Number(reduceOp(REDUCE.min, positive, undefined, undefined, fn).item());
    if (!(lo >= 0) || !Number.isFinite(Number(reduceOp(REDUCE.max, sums, undefined, undefined, fn).item()))) {
      throw new RangeError(`${fn}: the weights must be finite and >= 0`);
    }
    if (fewest === 0) throw new RangeError(`${fn}: a row of weights sums to 0`);
    if (!replacement && numSamples > fewest) {
      throw new RangeError(`${fn}: cannot draw ${numSamples} samples without replacement from a row with ${fewest} categories of nonzero weight`);
    }
    let out: Tensor;
    if (replacement) {
      // Inverse CDF: the first category whose cumulative weight exceeds u * total.
      const cdf = cumsumImpl(w, 1, undefined, fn);
      const u = rand([rows, numSamples], { dtype: 'float64', device: p.device, generator: o.generator });
      const at = searchsorted(cdf, binaryOp(BINARY.mul, u, sums, fn), { right: true });
      out = clampOp(at, undefined, n - 1, fn);  // u * total rounding up to the total
    } else {
      // Exponential races: category i finishes at E_i / w_i (E_i ~ Exp(1)); the first numSamples to finish
      // are a draw without replacement in order (Efraimidis-Spirakis); weight 0 never finishes.
      const u = rand([rows, n], { dtype: 'float64', device: p.device, generator: o.generator });
      const e = unaryOp(UNARY.neg, unaryOp(UNARY.log1p, unaryOp(UNARY.neg, u, fn), fn), fn);
      const finish = binaryOp(BINARY.div, e, w, fn);
      out = topkImpl(finish, numSamples, 1, { largest: false }, fn).indices;
    }
    return (p.ndim === 1 ? out.squeeze(0) : out) as Tensor<'int64'>;
  }));
}

/** @internal gx.dropout and gx.nn.functional.dropout's computation (p checked by the caller). */
export function dropoutOp(x: Tensor, p: number, generator: Generator | undefined): Tensor {
  return tidy(() => {
    const u = rand(x.shape, { dtype: x.dtype, device: x.device, generator });
    const keep = p === 1 ? binaryOp(BINARY.lt, u, 0, 'gx.dropout') : binaryOp(BINARY.gt, u, p, 'gx.dropout');
    // keep where u > p: P(keep) = 1 - p; the scale is in the mask, so the gradient is the mask too.
    const mask = binaryOp(BINARY.mul, astypeOp(keep, x.dtype, 'gx.dropout'), p === 1 ? 0 : 1 / (1 - p), 'gx.dropout');
    return binaryOp(BINARY.mul, x, mask, 'gx.dropout');
  });
}

/**
 * Zeroes each element with probability p (default 0.5) and scales the rest
 * by 1 / (1 - p), as torch.dropout; `{ training: false }` returns x itself.
 * The mask's draws follow NOTE [ Reproducible sampling ]. Gradients: the mask.
 * @example gx.dropout(h, 0.1); gx.dropout(h, 0.1, { training: model.training })
 */
export function dropout(x: Tensor, p = 0.5, opts?: DropoutOpOptions): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.dropout', '(x, p?, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.dropout';
  const t = checkTensor(x, fn, 'input');
  if (!isFloating(t.dtype)) throw new TypeError(`${fn}: input must be a floating tensor, got ${describeOperand(t)}`);
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new RangeError(`${fn}: p must be a probability in [0, 1], got ${describeValue(p)}`);
  const o = optionsOf<DropoutOpOptions>(opts, fn, DROPOUT_KEYS);
  const training = booleanOption(fn, 'training', o.training, true);
  if (o.generator !== undefined && !(o.generator instanceof Generator)) throw new TypeError(`${fn}: generator must be a gx.Generator`);
  if (!training || p === 0) return t;
  return dropoutOp(t, p, o.generator);
}

