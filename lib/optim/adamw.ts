// gx.optim.AdamW (torch.optim.AdamW): Adam with decoupled weight decay
// (Loshchilov and Hutter): the parameter itself shrinks by lr * weightDecay
// each step, instead of an L2 term in the gradient.
import { checkOptions } from '../options';
import { ADAM_KEYS, adamUpdate, checkAdamGroup, type AdamOptions } from './adam-update';
import { Optimizer, type ParamGroup } from './optimizer';
import type { Params } from './params';

/** AdamW's options: Adam's, with weightDecay (default 1e-2) decoupled from the gradient. */
export type AdamWOptions = AdamOptions;

/**
 * AdamW (torch.optim.AdamW): p *= 1 - lr * weightDecay, then the Adam step.
 * State as Adam's.
 * @example const opt = new gx.optim.AdamW(params, { lr: 3e-4, weightDecay: 0.1 });
 */
export class AdamW extends Optimizer<AdamWOptions> {
  constructor(params: Params<AdamWOptions>, opts: AdamWOptions = {}) {
    const o = checkOptions<AdamWOptions>(opts, 'gx.optim.AdamW', ADAM_KEYS);
    super('AdamW', params, {
      lr: o.lr ?? 1e-3, betas: o.betas ?? [0.9, 0.999], eps: o.eps ?? 1e-8, weightDecay: o.weightDecay ?? 1e-2,
      amsgrad: o.amsgrad ?? false, maximize: o.maximize ?? false,
    }, ADAM_KEYS);
  }

  protected checkGroup(fn: string, g: Required<AdamWOptions>): void {
    checkAdamGroup(fn, g);
  }

  protected updateGroup(g: ParamGroup<AdamWOptions>): void {
    for (const p of g.params) {
      const grad = p.grad;
      if (grad !== null) adamUpdate(p, grad, this.stateOf(p), g, true);
    }
  }
}
