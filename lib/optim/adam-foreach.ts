// Adam's and AdamW's step over a param group: the multi-tensor path (NOTE
// [ Multi-tensor steps ] in foreach.ts), the capturable one (step counts in
// tensors on the device) and the per-parameter path of adam-update.ts.
import { full, zeros } from '../ops/creation/creation';
import * as ops from '../generated/ops';
import { capturingDevice } from '../core/capture-guard';
import { Tensor } from '../core/tensor';
import { adamUpdate, stepCount, type AdamOptions } from './adam-update';
import { Buckets, checkNotCapturing, foreachable, handles, useForeach, written } from './foreach';
import { own, type ParamGroup, type ParamState } from './optimizer';

interface Entry {
  p: Tensor;
  grad: Tensor;
  s: ParamState;
}

/** The moments (and, with amsgrad, the largest second moment) of `p`, made on its first step. */
function ensureMoments(fn: string, e: Entry, amsgrad: boolean): void {
  const like = (): Tensor => {
    checkNotCapturing(fn, e.p);
    return own(zeros(e.p.shape, { dtype: e.p.dtype, device: e.p.device }));
  };
  e.s.expAvg ??= like();
  e.s.expAvgSq ??= like();
  if (amsgrad) e.s.maxExpAvgSq ??= like();
}

/** A capturable step count: one float64 element on the parameter's device (made from a number step when loaded). */
function stepTensor(fn: string, e: Entry): Tensor {
  const s = e.s.step;
  if (s instanceof Tensor && s.dtype === 'float64' && s.device.equals(e.p.device) && s.numel === 1) return s;
  checkNotCapturing(fn, e.p);
  const count = s instanceof Tensor ? stepCount(s) : typeof s === 'number' ? s : 0;
  if (s instanceof Tensor) s.dispose();
  const t = own(full([], count, { dtype: 'float64', device: e.p.device }));
  e.s.step = t;
  return t;
}

/** One Adam (decoupled: AdamW) step of a param group. */
export function adamStep(fn: string, g: ParamGroup<AdamOptions>, decoupled: boolean, stateOf: (p: Tensor) => ParamState): void {
  const capturing = capturingDevice() !== null;
  if (capturing && !g.capturable) {
    throw new Error(`${fn}: attempting CUDA graph capture of step() with capturable false; make the optimizer with ` +
      '{ capturable: true } (its step counts then live on the device)');
  }
  const multi = g.capturable || useForeach(g);
  const buckets = new Buckets<Entry>();
  for (const p of g.params) {
    const grad = p.grad;
    if (grad === null) continue;
    const s = stateOf(p);
    if (!multi || !foreachable(p, grad)) {
      if (g.capturable) {
        throw new Error(`${fn}: capturable needs each parameter and its gradient contiguous and of one floating dtype; ` +
          `a parameter of shape [${p.shape.join(', ')}] (${p.dtype}) has a gradient of ${grad.dtype}${grad.isContiguous() ? '' : ', not contiguous'}`);
      }
      if (s.step === undefined) checkNotCapturing(fn, p);
      adamUpdate(p, grad, s, g, decoupled);
      continue;
    }
    const e = { p, grad, s };
    ensureMoments(fn, e, g.amsgrad);
    if (g.capturable) stepTensor(fn, e);
    else if (s.step instanceof Tensor) s.step = stepCount(s.step);
    buckets.add(p, g.capturable ? 'capturable' : String(s.step ?? 0), e);
  }
  for (const list of buckets.lists) adamBucket(fn, list, g, decoupled);
}

/** One multi-tensor call over a bucket (one device, dtype and step count, or capturable). */
function adamBucket(fn: string, list: readonly Entry[], g: ParamGroup<AdamOptions>, decoupled: boolean): void {
  const [beta1, beta2] = g.betas;
  let negStepSize = 0, biasCorrection2Sqrt = 1;
  const steps: Tensor[] = [];
  if (g.capturable) {
    for (const e of list) steps.push(e.s.step as Tensor);
  } else {
    // The scalars exactly as adamUpdate computes them.
    const step = ((list[0].s.step as number | undefined) ?? 0) + 1;
    for (const e of list) e.s.step = step;
    negStepSize = -(g.lr / (1 - beta1 ** step));
    biasCorrection2Sqrt = Math.sqrt(1 - beta2 ** step);
  }
  const pick = (k: string): Tensor[] => list.map((e) => e.s[k] as Tensor);
  const params = list.map((e) => e.p), expAvgs = pick('expAvg'), expAvgSqs = pick('expAvgSq');
  const maxes = g.amsgrad ? pick('maxExpAvgSq') : [];
  ops.foreachAdam(fn, {
    params: handles(fn, params), grads: handles(fn, list.map((e) => e.grad)), expAvgs: handles(fn, expAvgs),
    expAvgSqs: handles(fn, expAvgSqs), maxExpAvgSqs: handles(fn, maxes), steps: handles(fn, steps),
    lr: g.lr, beta1, beta2, eps: g.eps, weightDecay: g.weightDecay, negStepSize, biasCorrection2Sqrt,
    amsgrad: g.amsgrad, maximize: g.maximize, decoupled,
  });
  written(params, expAvgs, expAvgSqs, maxes, steps);
}
