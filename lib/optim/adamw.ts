// gx.optim.AdamW (torch.optim.AdamW): Adam with decoupled weight decay
// (Loshchilov and Hutter): the parameter itself shrinks by lr * weightDecay
// each step, instead of an L2 term in the gradient.
import { checkOptions } from '../core/options';
import { ADAM_KEYS, ADAM_STATE, adamDefaults, checkAdamGroup, type AdamOptions } from './adam-update';
import { adamStep } from './adam-foreach';
import { Optimizer, type ParamGroup } from './optimizer';
import type { Params } from './params';
import type { StateSpec } from './state-check';

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
    super('AdamW', params, adamDefaults(o, 1e-2), ADAM_KEYS);
  }

  protected checkGroup(fn: string, g: Required<AdamWOptions>): void {
    checkAdamGroup(fn, g);
  }

  protected override stateSpec(): StateSpec {
    return ADAM_STATE;
  }

  protected updateGroup(g: ParamGroup<AdamWOptions>, fn: string): void {
    adamStep(fn, g, true, (p) => this.stateOf(p));
  }
}
