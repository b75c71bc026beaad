// gx.optim.SGD: stochastic gradient descent, with momentum, dampening,
// Nesterov momentum and L2 weight decay, step for step as torch.optim.SGD:
//   g = grad (-grad with maximize) + weightDecay * p
//   b = g on the first step, else momentum * b + (1 - dampening) * g
//   g = nesterov ? g + momentum * b : b            (with momentum)
//   p -= lr * g
import { add, mul, neg } from '../generated/elementwise';
import type { Tensor } from '../tensor';
import { checkOptions, optionKeys } from '../options';
import { boolean, learningRate, nonNegative, number, weightDecay } from './hyper';
import { Optimizer, own, type ParamGroup } from './optimizer';
import type { Params } from './params';

export interface SGDOptions {
  /** Learning rate (default 1e-3). */
  lr?: number;
  /** Momentum factor (default 0: none). */
  momentum?: number;
  /** Dampening of the momentum (default 0). */
  dampening?: number;
  /** L2 penalty, added to the gradient as weightDecay * p (default 0). */
  weightDecay?: number;
  /** Nesterov momentum (needs momentum > 0 and dampening 0). */
  nesterov?: boolean;
  /** Maximize the objective instead of minimizing it. */
  maximize?: boolean;
}

const KEYS = optionKeys<SGDOptions>({ lr: true, momentum: true, dampening: true, weightDecay: true, nesterov: true, maximize: true });

/**
 * Stochastic gradient descent (torch.optim.SGD). State: `momentumBuffer`
 * per parameter, when momentum is on.
 * @example
 * const opt = new gx.optim.SGD([w, b], { lr: 0.1, momentum: 0.9 });
 * opt.zeroGrad(); loss().backward(); opt.step();
 */
export class SGD extends Optimizer<SGDOptions> {
  constructor(params: Params<SGDOptions>, opts: SGDOptions = {}) {
    const o = checkOptions<SGDOptions>(opts, 'gx.optim.SGD', KEYS);
    super('SGD', params, {
      lr: o.lr ?? 1e-3, momentum: o.momentum ?? 0, dampening: o.dampening ?? 0, weightDecay: o.weightDecay ?? 0,
      nesterov: o.nesterov ?? false, maximize: o.maximize ?? false,
    }, KEYS);
  }

  protected checkGroup(fn: string, g: Required<SGDOptions>): void {
    learningRate(fn, g.lr);
    nonNegative(fn, 'momentum', g.momentum, 'Invalid momentum value');
    number(fn, 'dampening', g.dampening);
    weightDecay(fn, g.weightDecay);
    boolean(fn, 'maximize', g.maximize);
    if (boolean(fn, 'nesterov', g.nesterov) && (g.momentum <= 0 || g.dampening !== 0)) {
      throw new RangeError(`${fn}: Nesterov momentum requires a momentum and zero dampening (got momentum ${g.momentum}, dampening ${g.dampening})`);
    }
  }

  protected updateGroup(g: ParamGroup<SGDOptions>): void {
    for (const p of g.params) {
      const grad = p.grad;
      if (grad === null) continue;
      let d: Tensor = g.maximize ? neg(grad) : grad;
      if (g.weightDecay !== 0) d = add(d, mul(p, g.weightDecay));
      if (g.momentum !== 0) {
        const s = this.stateOf(p);
        let buf = s.momentumBuffer as Tensor | undefined;
        if (buf === undefined) {
          buf = own(d.clone());
          s.momentumBuffer = buf;
        } else {
          buf.mul_(g.momentum).add_(mul(d, 1 - g.dampening));
        }
        d = g.nesterov ? add(d, mul(buf, g.momentum)) : buf;
      }
      p.add_(mul(d, -g.lr));
    }
  }
}
