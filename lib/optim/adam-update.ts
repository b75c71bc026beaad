// The Adam update of one parameter, shared by gx.optim.Adam (L2 weight decay,
// added to the gradient) and gx.optim.AdamW (decoupled weight decay, applied
// to the parameter), step for step as torch.optim's single-tensor Adam:
//   g = grad (-grad with maximize);  Adam: g += weightDecay * p;  AdamW: p *= 1 - lr * weightDecay
//   m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  vmax = max(vmax, v) (amsgrad)
//   p -= lr / (1 - beta1^t) * m / (sqrt(v or vmax) / sqrt(1 - beta2^t) + eps)
import { zeros } from '../ops/creation/creation';
import { add, div, maximum, mul, neg, sqrt, sub } from '../generated/elementwise';
import { copyValues, Tensor } from '../core/tensor';
import { booleanOption, optionKeys } from '../core/options';
import { describeValue } from '../core/shape';
import { checkForeach, type ForeachOptions } from './foreach';
import { learningRate, nonNegative, number, weightDecay } from './hyper';
import { own, withDefaults, type ParamState } from './optimizer';
import type { StateSpec } from './state-check';

export interface AdamOptions extends ForeachOptions {
  /** Learning rate (default 1e-3). */
  lr?: number;
  /** Decay rates of the first and second moment estimates (default [0.9, 0.999]). */
  betas?: readonly [number, number];
  /** Added to the denominator for numerical stability (default 1e-8). */
  eps?: number;
  /** Adam: L2 penalty added to the gradient (default 0). AdamW: decoupled decay of the parameter (default 1e-2). */
  weightDecay?: number;
  /** The AMSGrad variant: divide by the largest second moment seen so far. */
  amsgrad?: boolean;
  /** Maximize the objective instead of minimizing it. */
  maximize?: boolean;
  /**
   * Keep each parameter's step count in a tensor on its device and compute
   * the step's scalars there (torch's capturable), so the step can be
   * captured in a CUDA graph (default false). The scalars then come from the
   * device's pow, which may differ from the host's in the last ulp.
   */
  capturable?: boolean;
}

export const ADAM_KEYS = optionKeys<AdamOptions>({
  lr: true, betas: true, eps: true, weightDecay: true, amsgrad: true, maximize: true, foreach: true, fused: true, capturable: true,
});

/** The state of a parameter of Adam and AdamW (NOTE [ Loading optimizer state ]). */
export const ADAM_STATE: StateSpec = {
  step: { kind: 'count', required: true }, expAvg: { kind: 'param', required: true }, expAvgSq: { kind: 'param', required: true },
  maxExpAvgSq: { kind: 'param' },
};

/** Adam's and AdamW's defaults but weightDecay (each has its own). */
export function adamDefaults(o: AdamOptions, weightDecay: number): Required<AdamOptions> {
  return withDefaults(o, {
    lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay, amsgrad: false, maximize: false, foreach: null, fused: null, capturable: false,
  });
}

/** Adam's and AdamW's checks, with torch's messages. */
export function checkAdamGroup(fn: string, g: Required<AdamOptions>): void {
  learningRate(fn, g.lr);
  nonNegative(fn, 'eps', g.eps, 'Invalid epsilon value');
  const b = g.betas as unknown;
  if (!Array.isArray(b) || b.length !== 2) throw new TypeError(`${fn}: betas must be two numbers [beta1, beta2], got ${Array.isArray(b) ? `${b.length} values` : describeValue(b)}`);
  b.forEach((beta: unknown, i) => {
    const x = number(fn, `betas[${i}]`, beta);
    if (!(x >= 0 && x < 1)) throw new RangeError(`${fn}: Invalid beta parameter at index ${i}: ${x}`);
  });
  weightDecay(fn, g.weightDecay);
  booleanOption(fn, 'amsgrad', g.amsgrad);
  booleanOption(fn, 'maximize', g.maximize);
  booleanOption(fn, 'capturable', g.capturable);
  checkForeach(fn, g);
}

/** torch's lerp: start + w * (end - start), or end - (end - start) * (1 - w) for |w| >= 0.5; in place on start. */
function lerp_(start: Tensor, end: Tensor, w: number): void {
  if (Math.abs(w) < 0.5) start.add_(mul(sub(end, start), w));
  else copyValues(start, sub(end, mul(sub(end, start), 1 - w)), 'Tensor.copy_');
}

/** One Adam (or, with `decoupled`, AdamW) step of `p` from its .grad; `s` is its state, filled on the first step. */
export function adamUpdate(p: Tensor, grad: Tensor, s: ParamState, g: Required<AdamOptions>, decoupled: boolean): void {
  const [beta1, beta2] = g.betas;
  if (s.step instanceof Tensor) s.step = stepCount(s.step);
  if (s.step === undefined) {
    const like = (): Tensor => own(zeros(p.shape, { dtype: p.dtype, device: p.device }));
    s.step = 0;
    s.expAvg = like();
    s.expAvgSq = like();
    if (g.amsgrad) s.maxExpAvgSq = like();
  }
  if (g.amsgrad && s.maxExpAvgSq === undefined) s.maxExpAvgSq = own(zeros(p.shape, { dtype: p.dtype, device: p.device }));
  const expAvg = s.expAvg as Tensor, expAvgSq = s.expAvgSq as Tensor;
  let d: Tensor = g.maximize ? neg(grad) : grad;
  const step = (s.step as number) + 1;
  s.step = step;
  if (g.weightDecay !== 0) {
    if (decoupled) p.mul_(1 - g.lr * g.weightDecay);
    else d = add(d, mul(p, g.weightDecay));
  }
  lerp_(expAvg, d, 1 - beta1);
  expAvgSq.mul_(beta2).add_(mul(mul(d, 1 - beta2), d));
  const biasCorrection1 = 1 - beta1 ** step;
  const biasCorrection2Sqrt = Math.sqrt(1 - beta2 ** step);
  const stepSize = g.lr / biasCorrection1;
  let v = expAvgSq;
  if (g.amsgrad) {
    v = s.maxExpAvgSq as Tensor;
    maximum(v, expAvgSq, { out: v });
  }
  const denom = div(sqrt(v), biasCorrection2Sqrt).add_(g.eps);
  p.add_(div(mul(expAvg, -stepSize), denom));
}

/** A step count kept in a tensor (a capturable optimizer's state, loaded into one that is not) as a number. */
export function stepCount(t: Tensor): number {
  const v = t.toArraySync()[0];
  return Number(v);
}
