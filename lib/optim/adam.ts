// gx.optim.Adam (torch.optim.Adam): adaptive moment estimation, with L2
// weight decay added to the gradient, AMSGrad and maximize.
import { checkOptions } from '../core/options';
import { ADAM_KEYS, ADAM_STATE, adamDefaults, checkAdamGroup, type AdamOptions } from './adam-update';
import { adamStep } from './adam-foreach';
import { Optimizer, type ParamGroup } from './optimizer';
import type { Params } from './params';
import type { StateSpec } from './state-check';

export type { AdamOptions };

/**
 * Adam (torch.optim.Adam). State per parameter: `step` (a number),
 * `expAvg`, `expAvgSq`, and `maxExpAvgSq` with amsgrad.
 * @example
 * const opt = new gx.optim.Adam([w, b], { lr: 1e-3 });
 * opt.zeroGrad(); loss().backward(); opt.step();
 */
export class Adam extends Optimizer<AdamOptions> {
  constructor(params: Params<AdamOptions>, opts: AdamOptions = {}) {
    const o = checkOptions<AdamOptions>(opts, 'gx.optim.Adam', ADAM_KEYS);
    super('Adam', params, adamDefaults(o, 0), ADAM_KEYS);
  }

  protected checkGroup(fn: string, g: Required<AdamOptions>): void {
    checkAdamGroup(fn, g);
  }

  protected override stateSpec(): StateSpec {
    return ADAM_STATE;
  }

  protected updateGroup(g: ParamGroup<AdamOptions>, fn: string): void {
    adamStep(fn, g, false, (p) => this.stateOf(p));
  }
}
