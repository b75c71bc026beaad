// The losses of gx.nn.functional, torch.nn.functional's formulas written with
// gx ops (composite: gradients from the ops'): mseLoss, l1Loss, smoothL1Loss,
// huberLoss, crossEntropy with probabilities, binaryCrossEntropy,
// binaryCrossEntropyWithLogits; nllLoss and crossEntropy with class indices
// (label smoothing, ignoreIndex, weight) are one native call forward and one
// backward (lib/ops/loss/cross-entropy.ts). reduction: 'mean' (default), 'sum', 'none'.
import { abs, add, div, gt, log, log1p, logSigmoid, logicalOr, mul, neg, sub } from '../generated/elementwise';
import { any, isnan } from '../ops/elementwise/predicates';
import { clamp, where } from '../ops/elementwise/functions';
import { lt } from '../generated/elementwise';
import { mean, sum } from '../ops/reduce/functions';
import { checkTensor } from '../ops/common';
import { classIndexLoss, type ClassIndexLoss } from '../ops/loss/cross-entropy';
import { isFloating } from '../ops/promotion';
import { logSoftmax } from '../ops/softmax/softmax';
import { checkOptions, optionKeys } from '../core/options';
import { broadcastShapes, describeValue, equalShapes, formatShape } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import { Function as AutogradFunction, type FunctionContext } from '../tape/function';

export type Reduction = 'mean' | 'sum' | 'none';

export interface LossOptions {
  /** 'mean' (default), 'sum' or 'none' (the loss of each element). */
  reduction?: Reduction;
}
export interface SmoothL1Options extends LossOptions {
  /** Below |input - target| < beta the loss is quadratic (default 1; 0 gives l1Loss). */
  beta?: number;
}
export interface HuberOptions extends LossOptions {
  /** Below |input - target| < delta the loss is quadratic (default 1). */
  delta?: number;
}
export interface NllOptions extends LossOptions {
  /** A weight per class ([C]). */
  weight?: Tensor | null;
  /** A target equal to it adds nothing, to the loss nor to the mean's denominator (default -100). */
  ignoreIndex?: number;
}
export interface CrossEntropyOptions extends NllOptions {
  /** Mixes the target with the uniform distribution: (1 - s) target + s / C (default 0). */
  labelSmoothing?: number;
}
export interface BceOptions extends LossOptions {
  /** A weight broadcast over the elements' losses. */
  weight?: Tensor | null;
}
export interface BceWithLogitsOptions extends BceOptions {
  /** A weight of the positive term, per class (broadcast over the last dim). */
  posWeight?: Tensor | null;
}

const F = 'gx.nn.functional';
export const LOSS_KEYS = optionKeys<LossOptions>({ reduction: true });
export const SMOOTH_KEYS = optionKeys<SmoothL1Options>({ reduction: true, beta: true });
export const HUBER_KEYS = optionKeys<HuberOptions>({ reduction: true, delta: true });
export const NLL_KEYS = optionKeys<NllOptions>({ reduction: true, weight: true, ignoreIndex: true });
export const CE_KEYS = optionKeys<CrossEntropyOptions>({ reduction: true, weight: true, ignoreIndex: true, labelSmoothing: true });
export const BCE_KEYS = optionKeys<BceOptions>({ reduction: true, weight: true });
export const BCEL_KEYS = optionKeys<BceWithLogitsOptions>({ reduction: true, weight: true, posWeight: true });

function floating(x: unknown, fn: string, name: string): Tensor {
  const t = checkTensor(x, fn, name);
  if (!isFloating(t.dtype)) throw new TypeError(`${fn}: argument '${name}' must be a floating tensor, got ${t.dtype}`);
  return t;
}

function reductionOf(r: unknown, fn: string): Reduction {
  if (r === undefined) return 'mean';
  if (r !== 'mean' && r !== 'sum' && r !== 'none') throw new TypeError(`${fn}: option 'reduction' must be 'mean', 'sum' or 'none', got ${describeValue(r)}`);
  return r;
}

function reduce(loss: Tensor, r: Reduction): Tensor {
  return r === 'none' ? loss : r === 'sum' ? sum(loss) : mean(loss);
}

/** input and target of one shape (torch broadcasts with a warning; a silent broadcast is more often a bug). */
function pair(input: unknown, target: unknown, fn: string): [Tensor, Tensor] {
  const x = floating(input, fn, 'input');
  const y = floating(target, fn, 'target');
  if (formatShape(x.shape) !== formatShape(y.shape)) {
    throw new RangeError(`${fn}: argument 'target' has shape ${formatShape(y.shape)} but 'input' has ${formatShape(x.shape)}; they must match`);
  }
  return [x, y];
}

function nonNegative(v: unknown, fn: string, name: string, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw new RangeError(`${fn}: option '${name}' must be a finite number >= 0, got ${describeValue(v)}`);
  return v;
}

/** mean((input - target)^2) (torch.nn.functional.mse_loss). @example gx.nn.functional.mseLoss(pred, y) */
export function mseLoss(input: Tensor, target: Tensor, opts?: LossOptions): Tensor {
  const fn = `${F}.mseLoss`;
  const r = reductionOf(checkOptions<LossOptions>(opts, fn, LOSS_KEYS).reduction, fn);
  const [x, y] = pair(input, target, fn);
  return tidy(() => {
    const d = sub(x, y);
    return reduce(mul(d, d), r);
  });
}

/** mean(|input - target|) (torch.nn.functional.l1_loss). */
export function l1Loss(input: Tensor, target: Tensor, opts?: LossOptions): Tensor {
  const fn = `${F}.l1Loss`;
  const r = reductionOf(checkOptions<LossOptions>(opts, fn, LOSS_KEYS).reduction, fn);
  const [x, y] = pair(input, target, fn);
  return tidy(() => reduce(abs(sub(x, y)), r));
}

/** 0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta (torch.nn.functional.smooth_l1_loss). */
export function smoothL1Loss(input: Tensor, target: Tensor, opts?: SmoothL1Options): Tensor {
  const fn = `${F}.smoothL1Loss`;
  const o = checkOptions<SmoothL1Options>(opts, fn, SMOOTH_KEYS);
  const r = reductionOf(o.reduction, fn);
  const beta = nonNegative(o.beta, fn, 'beta', 1);
  const [x, y] = pair(input, target, fn);
  return tidy(() => {
    const d = abs(sub(x, y));
    if (beta === 0) return reduce(d, r);
    return reduce(where(lt(d, beta), div(mul(mul(d, d), 0.5), beta), sub(d, 0.5 * beta)), r);
  });
}

/** 0.5 d^2 where d = |input - target| < delta, else delta (d - 0.5 delta) (torch.nn.functional.huber_loss). */
export function huberLoss(input: Tensor, target: Tensor, opts?: HuberOptions): Tensor {
  const fn = `${F}.huberLoss`;
  const o = checkOptions<HuberOptions>(opts, fn, HUBER_KEYS);
  const r = reductionOf(o.reduction, fn);
  const delta = nonNegative(o.delta, fn, 'delta', 1);
  if (delta === 0) throw new RangeError(`${fn}: option 'delta' must be > 0, got 0`);
  const [x, y] = pair(input, target, fn);
  return tidy(() => {
    const d = abs(sub(x, y));
    return reduce(where(lt(d, delta), mul(mul(d, d), 0.5), mul(sub(d, 0.5 * delta), delta)), r);
  });
}

/** A class weight [C], checked. */
function classWeight(w: unknown, c: number, fn: string): Tensor | null {
  if (w === undefined || w === null) return null;
  const t = floating(w, fn, 'weight');
  if (t.ndim !== 1 || t.shape[0] !== c) throw new RangeError(`${fn}: option 'weight' must have shape [${c}] (one per class), got ${formatShape(t.shape)}`);
  return t;
}

/**
 * Scores [N, C, d...] (or [C]) as [N, C, D] (the d's flattened: the native loss's layout) and the integer
 * target [N, d...] (or []) as [N D].
 */
function rows(x: Tensor, target: Tensor, fn: string): { x3: Tensor; t1: Tensor; shape: number[] } {
  if (x.ndim === 0) throw new RangeError(`${fn}: argument 'input' must have a class dim (shape [C] or [N, C, ...]), got a 0-d tensor`);
  const want = x.ndim === 1 ? [] : [x.shape[0], ...x.shape.slice(2)];
  if (formatShape(target.shape) !== formatShape(want)) {
    throw new RangeError(`${fn}: argument 'target' must have shape ${formatShape(want)} for input ${formatShape(x.shape)}, got ${formatShape(target.shape)}`);
  }
  const [n, c] = x.ndim === 1 ? [1, x.shape[0]] : [x.shape[0], x.shape[1]];
  const d = x.shape.slice(2).reduce((p, q) => p * q, 1);
  return { x3: x.reshape([n, c, d]), t1: target.reshape([-1]), shape: want };
}

function classTarget(t: unknown, fn: string): Tensor {
  const target = checkTensor(t, fn, 'target');
  if (target.dtype !== 'int64' && target.dtype !== 'int32') {
    throw new TypeError(`${fn}: argument 'target' must hold class indices (int64 or int32), or be floating probabilities for crossEntropy; got ${target.dtype}`);
  }
  return target;
}

/** nllLoss's and crossEntropy's class-index case: the native loss on [N, C, D], shaped back for 'none'. */
function classIndexOf(x: Tensor, t: Tensor, weightOpt: unknown, o: Omit<ClassIndexLoss, 'weight'>, fn: string): Tensor {
  return tidy(() => {
    const { x3, t1, shape } = rows(x, t, fn);
    const loss = classIndexLoss(x3, t1, { ...o, weight: classWeight(weightOpt, x3.shape[1], fn) }, fn);
    return o.reduction === 'none' ? loss.reshape(shape) : loss;
  });
}

function ignoreOf(v: unknown, fn: string): number {
  if (v === undefined) return -100;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${fn}: option 'ignoreIndex' must be an integer, got ${describeValue(v)}`);
  return v;
}

/**
 * The negative log-likelihood of class-index targets from log-probabilities [N, C, d...] or [C]
 * (torch.nn.functional.nll_loss): -weight[t] input[t], the mean divided by the weights' sum.
 */
export function nllLoss(input: Tensor, target: Tensor, opts?: NllOptions): Tensor {
  const fn = `${F}.nllLoss`;
  const o = checkOptions<NllOptions>(opts, fn, NLL_KEYS);
  const r = reductionOf(o.reduction, fn);
  const x = floating(input, fn, 'input');
  const t = classTarget(target, fn);
  const ignoreIndex = ignoreOf(o.ignoreIndex, fn);
  return classIndexOf(x, t, o.weight, { ignoreIndex, labelSmoothing: 0, reduction: r, logProbs: true }, fn);
}

/**
 * Cross entropy of scores (logits) [N, C, d...] or [C] (torch.nn.functional.cross_entropy): with class-index
 * targets (int64, shape [N, d...]) it is nllLoss(logSoftmax(input)) with label smoothing mixed in, one native
 * call forward and one backward; with floating targets of input's shape (probabilities) it is
 * -sum(target log softmax(input)) over the classes.
 * @example gx.nn.functional.crossEntropy(logits, labels, { labelSmoothing: 0.1 })
 */
export function crossEntropy(input: Tensor, target: Tensor, opts?: CrossEntropyOptions): Tensor {
  const fn = `${F}.crossEntropy`;
  const o = checkOptions<CrossEntropyOptions>(opts, fn, CE_KEYS);
  const r = reductionOf(o.reduction, fn);
  const x = floating(input, fn, 'input');
  const s = nonNegative(o.labelSmoothing, fn, 'labelSmoothing', 0);
  if (s > 1) throw new RangeError(`${fn}: option 'labelSmoothing' must be in [0, 1], got ${s}`);
  const tt = checkTensor(target, fn, 'target');
  if (isFloating(tt.dtype)) return probabilityCrossEntropy(x, tt, o, r, s, fn);
  const t = classTarget(tt, fn);
  const ignoreIndex = ignoreOf(o.ignoreIndex, fn);
  return classIndexOf(x, t, o.weight, { ignoreIndex, labelSmoothing: s, reduction: r, logProbs: false }, fn);
}

function probabilityCrossEntropy(x: Tensor, t: Tensor, o: CrossEntropyOptions, r: Reduction, s: number, fn: string): Tensor {
  if (formatShape(t.shape) !== formatShape(x.shape)) {
    throw new RangeError(`${fn}: a floating 'target' holds probabilities and must have input's shape ${formatShape(x.shape)}, got ${formatShape(t.shape)}`);
  }
  if (o.ignoreIndex !== undefined) throw new TypeError(`${fn}: option 'ignoreIndex' applies to class-index targets only`);
  const axis = x.ndim === 1 ? 0 : 1;
  const c = x.shape[axis];
  const weight = classWeight(o.weight, c, fn);
  return tidy(() => {
    const lp = logSoftmax(x, axis);
    const target = s > 0 ? add(mul(t, 1 - s), s / c) : t;
    let prod = mul(lp, target);
    if (weight !== null) prod = mul(prod, weight.reshape([c, ...Array<number>(x.ndim - axis - 1).fill(1)]));
    if (r === 'none') return neg(sum(prod, axis));
    const total = neg(sum(prod));
    return r === 'sum' ? total : div(total, x.numel / c);
  });
}

/**
 * A per-element weight, broadcast to the input's shape (torch's rule): one
 * that would broadcast the loss up ([3, 1] against [3] made a [3, 3] loss, and
 * 'mean' averaged 9 terms) is refused.
 */
function elementWeight(w: unknown, fn: string, name: string, shape: readonly number[]): Tensor | null {
  if (w === undefined || w === null) return null;
  const t = floating(w, fn, name);
  if (!broadcastsTo(t.shape, shape, fn)) {
    throw new Error(`${fn}: ${name} of shape ${formatShape(t.shape)} does not broadcast to the input's shape ${formatShape(shape)}`);
  }
  return t;
}

/** Whether shape `from` broadcasts to `to` without growing it: broadcasting the two gives `to` itself. */
function broadcastsTo(from: readonly number[], to: readonly number[], fn: string): boolean {
  try {
    return equalShapes(broadcastShapes([from, to], fn), to);
  } catch {
    return false;  // they do not broadcast at all
  }
}

/**
 * -weight (target log(input) + (1 - target) log(1 - input)) for probabilities input in [0, 1], each log
 * clamped at -100 as torch's (torch.nn.functional.binary_cross_entropy).
 */
export function binaryCrossEntropy(input: Tensor, target: Tensor, opts?: BceOptions): Tensor {
  const fn = `${F}.binaryCrossEntropy`;
  const o = checkOptions<BceOptions>(opts, fn, BCE_KEYS);
  const r = reductionOf(o.reduction, fn);
  const [x, y] = pair(input, target, fn);
  const weight = elementWeight(o.weight, fn, 'weight', x.shape);
  if (x.numel > 0) {
    const outside = tidy(() => Boolean(any(logicalOr(lt(x, 0), gt(x, 1))).item()) || Boolean(any(isnan(x)).item()));
    const [lo, hi] = outside ? tidy(() => [Number(x.min().item()), Number(x.max().item())]) : [0, 1];
    if (outside) throw new RangeError(`${fn}: argument 'input' must hold probabilities in [0, 1], got values in [${lo}, ${hi}]; use binaryCrossEntropyWithLogits for scores`);
  }
  return tidy(() => {
    let loss = BinaryCrossEntropy.apply(x, y);
    if (weight !== null) loss = mul(loss, weight);
    return reduce(loss, r);
  });
}

const BCE_EPSILON = Math.fround(1e-12);
/** The eps of torch's second derivatives of binary_cross_entropy (FunctionsManual.cpp), the double 1e-12. */
const BCE_EPSILON2 = 1e-12;

/**
 * The elementwise binary cross entropy with torch's derivatives (binary_cross_entropy_backward):
 * d/dp = (p - t) / max(p (1 - p), eps) (eps torch's EPSILON, the float 1e-12), a function of its own below
 * with torch's second derivatives; d/dt = -logit(p) (not clamped), in ops that record. The loss as ops of
 * its own had NaN for d/dp at p = 0 and 1 (the clamp's zero derivative times log's infinite one), where
 * torch's is finite: a sigmoid that rounds to 1, common in float32, poisoned every gradient of the model.
 */
class BinaryCrossEntropy extends AutogradFunction {
  static override forward(ctx: FunctionContext, p: Tensor, t: Tensor): Tensor {
    ctx.saveForBackward(p, t);
    return tidy(() => neg(add(mul(t, clamp(log(p), -100)), mul(sub(1, t), clamp(log1p(neg(p)), -100)))));
  }

  static override backward(ctx: FunctionContext, g: Tensor): [Tensor | null, Tensor | null] {
    const [p, t] = ctx.savedTensors;
    const [needP, needT] = ctx.needsInputGrad;
    const gp = needP ? BinaryCrossEntropyBackward.apply(g, p, t) : null;
    const gt = needT ? mul(g, sub(log1p(neg(p)), log(p))) : null;
    return [gp, gt];
  }
}

/**
 * d/dp of the binary cross entropy, g (p - t) / max(p (1 - p), eps), with torch's derivatives of it
 * (derivatives.yaml, binary_cross_entropy_backward; FunctionsManual.cpp), which are not those of the
 * clamped formula: with e = 1e-12,
 *   d/dp = g (p^2 - 2 p t + t) / ((p + e)^2 (1 - p + e)^2)      (binary_cross_entropy_double_backward)
 *   d/dg = (p - t) / ((p + e) (1 - p + e))                       (..._double_backward_grad_output)
 *   d/dt = -g / max(p (1 - p), e)                                 (..._double_backward_target)
 * Through the clamp, d/dp was g / eps = 1e12 g wherever p (1 - p) < eps (p = 0, 1, 1e-13), whatever the
 * target, where torch's is 0 for p = t = 0 and of order t / e^2 = 1e24 t; d/dg was off by (1 - p) at
 * p = 1e-13. These are written in ops that record, so a third derivative follows from them (torch's clamp
 * in d/dt is in place under no_grad, keeping p (1 - p)'s derivative where it clamps; ours has the clamp's, 0).
 */
class BinaryCrossEntropyBackward extends AutogradFunction {
  static override forward(ctx: FunctionContext, g: Tensor, p: Tensor, t: Tensor): Tensor {
    ctx.saveForBackward(g, p, t);
    return tidy(() => mul(g, div(sub(p, t), clamp(mul(p, sub(1, p)), BCE_EPSILON))));
  }

  static override backward(ctx: FunctionContext, gg: Tensor): [Tensor | null, Tensor | null, Tensor | null] {
    const [g, p, t] = ctx.savedTensors;
    const [needG, needP, needT] = ctx.needsInputGrad;
    const pe = add(p, BCE_EPSILON2), qe = add(sub(1, p), BCE_EPSILON2);
    const dg = needG ? mul(gg, div(sub(p, t), mul(pe, qe))) : null;
    const dp = needP ? mul(mul(gg, g), div(add(sub(mul(p, p), mul(mul(p, 2), t)), t), mul(mul(pe, pe), mul(qe, qe)))) : null;
    const dt = needT ? div(neg(mul(gg, g)), clamp(mul(sub(1, p), p), BCE_EPSILON2)) : null;
    return [dg, dp, dt];
  }
}

/**
 * Binary cross entropy of scores (logits), computed stably (torch.nn.functional.binary_cross_entropy_with_logits):
 * (1 - t) x - lw logSigmoid(x), lw = 1 + (posWeight - 1) t. -logSigmoid(x) is log1p(exp(-|x|)) + max(-x, 0),
 * written as the one op so that its derivative is -sigmoid(-x) at x = 0 too: the two pieces' derivatives there
 * (of |x| and of relu, 0 each by convention) summed to 0 instead of -1/2, so a logit of exactly 0 (a
 * zero-initialized head) got the gradient 1 - t instead of torch's sigmoid(0) - t.
 * @example gx.nn.functional.binaryCrossEntropyWithLogits(scores, labels)
 */
export function binaryCrossEntropyWithLogits(input: Tensor, target: Tensor, opts?: BceWithLogitsOptions): Tensor {
  const fn = `${F}.binaryCrossEntropyWithLogits`;
  const o = checkOptions<BceWithLogitsOptions>(opts, fn, BCEL_KEYS);
  const r = reductionOf(o.reduction, fn);
  const [x, y] = pair(input, target, fn);
  const weight = elementWeight(o.weight, fn, 'weight', x.shape);
  const posWeight = elementWeight(o.posWeight, fn, 'posWeight', x.shape);
  return tidy(() => {
    const softTail = neg(logSigmoid(x));
    const lw = posWeight === null ? null : add(mul(sub(posWeight, 1), y), 1);
    let loss = add(mul(sub(1, y), x), lw === null ? softTail : mul(lw, softTail));
    if (weight !== null) loss = mul(loss, weight);
    return reduce(loss, r);
  });
}
