// gx.nn.functional: the layers' computations as functions (torch.nn.functional):
// linear, dropout, layerNorm, embedding, and the activations, softmax and
// pad (gx.pad) re-exported; the losses live in losses.ts and are re-exported here too.
// Every function is composite: made of ops that record on the tape, so
// gradients come from theirs (NOTE [ One declaration per op ]), and each
// runs its intermediates inside gx.tidy.
import { add, mul, ne, rsqrt, sub } from '../generated/elementwise';
import { mean } from '../ops/reduce/functions';
import { where } from '../ops/elementwise/functions';
import { checkTensor } from '../ops/common';
import { indexSelect } from '../ops/indexing/indexing';
import { matmul } from '../ops/linalg/matmul';
import type { Generator } from '../ops/random/random';
import { dropoutOp } from '../ops/random/sampling';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue, formatShape } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { floatingArg, normDtype, normResultDtype } from './args';
import { tidy } from '../core/tidy';

export {
  relu, gelu, sigmoid, tanh, softplus, silu, mish, selu, hardsigmoid, logSigmoid, leakyRelu, elu, hardtanh,
} from '../generated/elementwise';
export { softmax, logSoftmax } from '../ops/softmax/softmax';
export { pad, type PadOptions, type PadMode } from '../ops/layout/pad';
export { unfold, fold, conv1d, conv2d, type UnfoldOptions, type ConvOptions } from './conv';
export {
  maxPool1d, maxPool2d, avgPool1d, avgPool2d, type PoolOptions, type MaxPoolOptions, type AvgPoolOptions, type MaxPoolResult,
} from './pooling';
export {
  mseLoss, l1Loss, smoothL1Loss, huberLoss, nllLoss, crossEntropy, binaryCrossEntropy, binaryCrossEntropyWithLogits,
  type Reduction, type LossOptions, type SmoothL1Options, type HuberOptions, type NllOptions, type CrossEntropyOptions,
  type BceOptions, type BceWithLogitsOptions,
} from './losses';
export { rmsNorm, bilinear, finfoEps } from './functional-norms';
export { scaledDotProductAttention, type ScaledDotProductAttentionOptions } from './attention-functional';

const F = 'gx.nn.functional';

/**
 * x W^T + b over the last dim of x (torch.nn.functional.linear): weight is
 * [out, in], bias [out] or null.
 * @example gx.nn.functional.linear(x, w, b)
 */
export function linear(input: Tensor, weight: Tensor, bias: Tensor | null = null): Tensor {
  const fn = `${F}.linear`;
  const x = floatingArg(input, fn, 'input');
  const w = floatingArg(weight, fn, 'weight');
  if (w.ndim !== 2) throw new RangeError(`${fn}: argument 'weight' must be 2-d [out, in], got ${formatShape(w.shape)}`);
  if (x.ndim === 0 || x.shape[x.ndim - 1] !== w.shape[1]) {
    throw new RangeError(`${fn}: argument 'input' must end in ${w.shape[1]} features (weight is ${formatShape(w.shape)}), got ${formatShape(x.shape)}`);
  }
  if (bias !== null) {
    const b = floatingArg(bias, fn, 'bias');
    if (b.ndim !== 1 || b.shape[0] !== w.shape[0]) throw new RangeError(`${fn}: argument 'bias' must be [${w.shape[0]}], got ${formatShape(b.shape)}`);
  }
  return tidy(() => {
    const y = matmul(x, w.T);
    return bias === null ? y : add(y, bias);
  });
}

/** A probability argument in [0, 1]. */
function probability(p: unknown, fn: string): number {
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new RangeError(`${fn}: argument 'p' must be a probability in [0, 1], got ${describeValue(p)}`);
  return p;
}

export interface DropoutOptions {
  /** Draw the mask from this generator instead of the default one. */
  generator?: Generator;
}
const DROPOUT_KEYS = optionKeys<DropoutOptions>({ generator: true });

/**
 * Zeroes each element with probability p and scales the rest by 1 / (1 - p)
 * (torch.nn.functional.dropout), when training; else returns input itself,
 * as torch does. The mask comes from gx.rand (gx.manualSeed reproduces it).
 * @example gx.nn.functional.dropout(x, 0.1, model.training)
 */
export function dropout(input: Tensor, p = 0.5, training = true, opts?: DropoutOptions): Tensor {
  const fn = `${F}.dropout`;
  const x = floatingArg(input, fn, 'input');
  probability(p, fn);
  booleanOption(fn, 'training', training);
  const o = checkOptions<DropoutOptions>(opts, fn, DROPOUT_KEYS);
  if (!training || p === 0) return x;
  return dropoutOp(x, p, o.generator);  // gx.dropout's
}

/**
 * Normalizes over the last dims given by `normalizedShape` (torch.nn.functional.layer_norm):
 * (x - mean) / sqrt(var + eps) * weight + bias, the variance biased.
 * @example gx.nn.functional.layerNorm(x, [x.shape[x.ndim - 1]])
 */
export function layerNorm(input: Tensor, normalizedShape: readonly number[], weight: Tensor | null = null, bias: Tensor | null = null, eps = 1e-5): Tensor {
  const fn = `${F}.layerNorm`;
  const x = floatingArg(input, fn, 'input');
  if (!Array.isArray(normalizedShape) || normalizedShape.length === 0 || normalizedShape.length > x.ndim) {
    throw new RangeError(`${fn}: argument 'normalizedShape' must be a non-empty list of at most ${x.ndim} sizes, got ${describeValue(normalizedShape)}`);
  }
  const k = normalizedShape.length;
  const tail = x.shape.slice(x.ndim - k);
  if (tail.some((s, i) => s !== normalizedShape[i])) {
    throw new RangeError(`${fn}: input ${formatShape(x.shape)} does not end in normalizedShape ${formatShape(normalizedShape)}`);
  }
  for (const [name, t] of [['weight', weight], ['bias', bias]] as const) {
    if (t !== null && formatShape(floatingArg(t, fn, name).shape) !== formatShape(normalizedShape)) {
      throw new RangeError(`${fn}: argument '${name}' must have shape ${formatShape(normalizedShape)}, got ${formatShape(t.shape)}`);
    }
  }
  if (typeof eps !== 'number' || !(eps >= 0)) throw new RangeError(`${fn}: argument 'eps' must be a number >= 0, got ${describeValue(eps)}`);
  const axes = Array.from({ length: k }, (_, i) => x.ndim - k + i);
  const out = normResultDtype(x, weight, bias);
  return tidy(() => {
    const xc = x.dtype === normDtype(x) ? x : x.astype(normDtype(x));  // NOTE [ Norms of half inputs ] in args.ts
    const centered = sub(xc, mean(xc, axes, { keepdims: true }));
    const variance = mean(mul(centered, centered), axes, { keepdims: true });
    let y = mul(centered, rsqrt(add(variance, eps)));
    if (weight !== null) y = mul(y, weight);
    if (bias !== null) y = add(y, bias);
    return y.dtype === out ? y : y.astype(out);
  });
}

export interface EmbeddingOptions {
  /** The index whose row gets no gradient (its row is usually zeros). */
  paddingIdx?: number | null;
}
const EMBEDDING_KEYS = optionKeys<EmbeddingOptions>({ paddingIdx: true });

/**
 * The rows of `weight` ([num, dim]) at the integer indices of `input`, shaped
 * [...input.shape, dim] (torch.nn.functional.embedding); the row at paddingIdx gets no gradient.
 * @example gx.nn.functional.embedding(gx.tensor([[0, 2]], { dtype: 'int64' }), table)
 */
export function embedding(input: Tensor, weight: Tensor, opts?: EmbeddingOptions): Tensor {
  const fn = `${F}.embedding`;
  const idx = checkTensor(input, fn, 'input');
  if (!['int64', 'int32'].includes(idx.dtype)) throw new TypeError(`${fn}: argument 'input' must be an int64 or int32 tensor of indices, got ${idx.dtype}`);
  const w = floatingArg(weight, fn, 'weight');
  if (w.ndim !== 2) throw new RangeError(`${fn}: argument 'weight' must be 2-d [num, dim], got ${formatShape(w.shape)}`);
  const o = checkOptions<EmbeddingOptions>(opts, fn, EMBEDDING_KEYS);
  const pad = paddingIndex(o.paddingIdx, w.shape[0], fn);
  return tidy(() => {
    const flat = idx.reshape([-1]);
    let rows = indexSelect(w, 0, flat);
    // The padding row gets no gradient but keeps its value (torch's): those rows are taken detached.
    if (pad !== null) rows = where(ne(flat, pad).reshape([-1, 1]), rows, rows.detach());
    return rows.reshape([...idx.shape, w.shape[1]]);
  });
}

/** paddingIdx checked against `num` rows, negative counted from the end (torch's). */
export function paddingIndex(p: unknown, num: number, fn: string): number | null {
  if (p === undefined || p === null) return null;
  if (typeof p !== 'number' || !Number.isInteger(p) || p < -num || p >= num) {
    throw new RangeError(`${fn}: argument 'paddingIdx' must be an integer in [-${num}, ${num}), got ${describeValue(p)}`);
  }
  return p < 0 ? p + num : p;
}
