// The native cross entropy of class-index targets (ops/loss/cross_entropy.h):
// one call forward (the loss, each row's logsumexp and the mean's denominator)
// and one backward, recorded with record() as the cuDNN convolutions are; the
// backward records too, its own derivative written with gx ops below, so that
// gradients of gradients work (gradgradcheck).
//
// NOTE [ The cross entropy's second derivative ]
// grad_input = G (A p - a) per row (cross entropy) or -G a (log_probs), with
// a_c = valid ((1 - s) w_t [c = t] + s / C w_c), A = sum_c a_c, p = softmax(x)
// and G the incoming gradient (over total_weight for the mean; total_weight is
// a constant, as in torch). It is linear in the gradient, so the gradient's
// gradient from gg (grad_input's) is sum_c gg_c (A p_c - a_c) per row; and
// through p alone x's is G A p (gg - sum_c gg_c p_c). Both are written in gx
// ops that record, so a third derivative follows from theirs.
import * as E from '../../generated/elementwise';
import * as ops from '../../generated/ops';
import { record, requiresGrad, shouldRecord } from '../../tape/graph';
import type { Tensor } from '../../core/tensor';
import { allocate, arange } from '../creation/creation';
import { namedForCaller } from '../library';
import { sum } from '../reduce/functions';
import { softmax } from '../softmax/softmax';

/** The options of one call, checked by the caller (lib/nn/losses.ts). */
export interface ClassIndexLoss {
  weight: Tensor | null;
  ignoreIndex: number;
  labelSmoothing: number;
  reduction: 'none' | 'sum' | 'mean';
  /** The input holds log-probabilities (nllLoss): no softmax. */
  logProbs: boolean;
}

const REDUCTION = { none: 0, sum: 1, mean: 2 } as const;

const computeDtype = (x: Tensor): 'float32' | 'float64' => (x.dtype === 'float64' ? 'float64' : 'float32');

/**
 * The loss of scores (or log-probabilities) x [N, C, D] for the targets [N D] (either layout contiguous or
 * not): [N D] for 'none', else a scalar. A target out of [0, C) (not ignoreIndex) throws naming it.
 */
export function classIndexLoss(input: Tensor, targets: Tensor, o: ClassIndexLoss, fn: string): Tensor {
  const x = input.isContiguous() ? input : input.contiguous();
  const t = targets.isContiguous() ? targets : targets.contiguous();
  const w = o.weight === null || o.weight.isContiguous() ? o.weight : o.weight.contiguous();
  if (w !== null && requiresGrad(w) && shouldRecord(w)) {
    throw new TypeError(`${fn}: option 'weight' requires grad, but the loss is not differentiable with respect to it (as torch's); pass weight.detach()`);
  }
  const recording = shouldRecord(x);
  const rows = t.numel;
  const out = allocate(o.reduction === 'none' ? [rows] : [], x.dtype, x.device, undefined, fn);
  const lse = recording && !o.logProbs ? allocate([rows], computeDtype(x), x.device, undefined, fn) : null;
  const total = recording && o.reduction === 'mean' ? allocate([], computeDtype(x), x.device, undefined, fn) : null;
  const drop = (): void => {
    out.dispose();
    lse?.dispose();
    total?.dispose();
  };
  let bad: number;
  try {
    bad = ops.crossEntropyLoss(fn, {
      self: x.handle(fn), target: t.handle(fn), weight: w === null ? null : w.handle(fn), ignoreIndex: o.ignoreIndex,
      labelSmoothing: o.labelSmoothing, reduction: REDUCTION[o.reduction], logProbs: o.logProbs, out: out.handle(fn),
      lse: lse === null ? null : lse.handle(fn), totalWeight: total === null ? null : total.handle(fn),
    });
  } catch (e) {
    drop();
    throw namedForCaller(e, fn);
  }
  if (bad !== o.ignoreIndex) {
    drop();
    throw new RangeError(`${fn}: argument 'target' holds class ${bad}, out of range [0, ${x.shape[1]}) (ignoreIndex is ${o.ignoreIndex})`);
  }
  if (!recording) return out;
  const kept: Saved = { x, target: t, lse, total, weight: w };
  const how = layoutOf(kept);
  const result = record('cross_entropy_loss', [x], out, pack(kept), (g, s) => [classIndexLossBackward(g, unpack(s, how), o, fn)]);
  // The node keeps its saved tensors (aliases once these go): these handles are the forward's own.
  lse?.dispose();
  total?.dispose();
  return result;
}

interface Saved {
  x: Tensor;
  target: Tensor;
  lse: Tensor | null;
  total: Tensor | null;
  weight: Tensor | null;
}

type SavedLayout = { hasLse: boolean; hasTotal: boolean; hasWeight: boolean };
const layoutOf = (r: Saved): SavedLayout => ({ hasLse: r.lse !== null, hasTotal: r.total !== null, hasWeight: r.weight !== null });

/** The tensors to save: x, target, then lse, total_weight and weight where the call has them (unpack's order). */
function pack(r: Saved): Tensor[] {
  return [r.x, r.target, ...[r.lse, r.total, r.weight].filter((v): v is Tensor => v !== null)];
}

/** The saved tensors by name: x, target, then lse, total_weight and weight where the call had them. */
function unpack(s: readonly Tensor[], how: SavedLayout): Saved {
  let i = 2;
  const lse = how.hasLse ? s[i++] : null;
  const total = how.hasTotal ? s[i++] : null;
  return { x: s[0], target: s[1], lse, total, weight: how.hasWeight ? s[i] : null };
}

/** grad_input [N, C, D] from the loss's gradient g, in one native call; recorded (NOTE [ The cross entropy's second derivative ]). */
function classIndexLossBackward(grad: Tensor, s: Saved, o: ClassIndexLoss, fn: string): Tensor {
  const g = grad.isContiguous() && grad.dtype === s.x.dtype ? grad : grad.astype(s.x.dtype).contiguous();
  const gi = allocate(s.x.shape, s.x.dtype, s.x.device, undefined, fn);
  try {
    ops.crossEntropyLossBackward(fn, {
      grad: g.handle(fn), self: s.x.handle(fn), target: s.target.handle(fn), weight: s.weight === null ? null : s.weight.handle(fn),
      lse: s.lse === null ? null : s.lse.handle(fn), totalWeight: s.total === null ? null : s.total.handle(fn),
      ignoreIndex: o.ignoreIndex, labelSmoothing: o.labelSmoothing, reduction: REDUCTION[o.reduction], logProbs: o.logProbs,
      gradInput: gi.handle(fn),
    });
  } catch (e) {
    gi.dispose();
    throw namedForCaller(e, fn);
  }
  if (!shouldRecord(g, s.x)) return gi;
  const needG = requiresGrad(g), needX = requiresGrad(s.x) && !o.logProbs;
  // g, then the forward's saved tensors less lse (the second derivative recomputes softmax).
  const kept: Saved = { ...s, lse: null };
  const how = layoutOf(kept);
  return record('cross_entropy_loss_backward', [g, s.x], gi, [g, ...pack(kept)], (gg, saved) => {
    const r = unpack(saved.slice(1), how);
    return secondOrder(gg, saved[0], r.x, r.target, r.total, r.weight, o, needG, needX);
  });
}

/** The gradients of g and x from grad_input's gradient gg (NOTE [ The cross entropy's second derivative ]). */
function secondOrder(gg: Tensor, g: Tensor, x: Tensor, target: Tensor, total: Tensor | null, weight: Tensor | null, o: ClassIndexLoss,
  needG: boolean, needX: boolean): (Tensor | null)[] {
  const [n, c, d] = x.shape;
  const s = o.labelSmoothing;
  const t3 = target.reshape([n, 1, d]);
  const valid = E.ne(t3, o.ignoreIndex);
  const onehot = E.logicalAnd(E.eq(arange(c, { dtype: target.dtype, device: x.device }).reshape([1, c, 1]), t3), valid);
  const w = weight === null ? 1 : weight.astype(x.dtype).reshape([1, c, 1]);
  // a = valid ((1 - s) w [c = t] + s / C w); A = sum_c a.
  let a = E.mul(E.mul(onehot.astype(x.dtype), w), 1 - s);
  if (s > 0) a = E.add(a, E.mul(E.mul(valid.astype(x.dtype), w), s / c));
  const scale = o.reduction === 'none' ? g.reshape([n, 1, d]) : o.reduction === 'sum' ? g : E.div(g, total as Tensor);
  if (o.logProbs) {
    const dg = needG ? reduceLike(E.neg(sum(E.mul(gg, a), { axis: 1, keepdims: true })), g, total, o) : null;
    return [dg, null];
  }
  const p = softmax(x, 1);
  const bigA = sum(a, { axis: 1, keepdims: true });
  const dg = needG ? reduceLike(sum(E.mul(gg, E.sub(E.mul(bigA, p), a)), { axis: 1, keepdims: true }), g, total, o) : null;
  const dx = needX ? E.mul(E.mul(E.mul(scale, bigA), p), E.sub(gg, sum(E.mul(gg, p), { axis: 1, keepdims: true }))) : null;
  return [dg, dx];
}

/** Per-row values r [N, 1, D] as the gradient of g: g's own shape for 'none', else their sum (over the denominator for the mean). */
function reduceLike(r: Tensor, g: Tensor, total: Tensor | null, o: ClassIndexLoss): Tensor {
  if (o.reduction === 'none') return r.reshape(g.shape);
  const all = sum(r);
  return o.reduction === 'sum' ? all : E.div(all, total as Tensor);
}
