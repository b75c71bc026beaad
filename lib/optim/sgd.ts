// gx.optim.SGD: stochastic gradient descent, with momentum, dampening,
// Nesterov momentum and L2 weight decay, step for step as torch.optim.SGD:
//   g = grad (-grad with maximize) + weightDecay * p
//   b = g on the first step, else momentum * b + (1 - dampening) * g
//   g = nesterov ? g + momentum * b : b            (with momentum)
//   p -= lr * g
import { emptyLike } from '../ops/creation/like';
import { add, mul, neg } from '../generated/elementwise';
import * as ops from '../generated/ops';
import type { Tensor } from '../core/tensor';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { Buckets, checkForeach, checkNotCapturing, foreachable, handles, useForeach, written, type ForeachOptions } from './foreach';
import { learningRate, nonNegative, number, weightDecay } from './hyper';
import { Optimizer, own, withDefaults, type ParamGroup } from './optimizer';
import type { Params } from './params';
import type { StateSpec } from './state-check';

export interface SGDOptions extends ForeachOptions {
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

const KEYS = optionKeys<SGDOptions>({
  lr: true, momentum: true, dampening: true, weightDecay: true, nesterov: true, maximize: true, foreach: true, fused: true,
});

const SGD_DEFAULTS: Required<SGDOptions> = {
  lr: 1e-3, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false, foreach: null, fused: null,
};

const SGD_STATE: StateSpec = { momentumBuffer: { kind: 'param' } };

/**
 * Stochastic gradient descent (torch.optim.SGD). State: `momentumBuffer`
 * per parameter, when momentum is on. `foreach` (default: when every
 * parameter is on a GPU) updates the group with a few multi-tensor kernels
 * (NOTE [ Multi-tensor steps ] in lib/optim/foreach.ts), with the same results.
 * @example
 * const opt = new gx.optim.SGD([w, b], { lr: 0.1, momentum: 0.9 });
 * opt.zeroGrad(); loss().backward(); opt.step();
 */
export class SGD extends Optimizer<SGDOptions> {
  constructor(params: Params<SGDOptions>, opts: SGDOptions = {}) {
    const o = checkOptions<SGDOptions>(opts, 'gx.optim.SGD', KEYS);
    super('SGD', params, withDefaults(o, SGD_DEFAULTS), KEYS);
  }

  protected checkGroup(fn: string, g: Required<SGDOptions>): void {
    learningRate(fn, g.lr);
    nonNegative(fn, 'momentum', g.momentum, 'Invalid momentum value');
    number(fn, 'dampening', g.dampening);
    weightDecay(fn, g.weightDecay);
    booleanOption(fn, 'maximize', g.maximize);
    checkForeach(fn, g);
    if (booleanOption(fn, 'nesterov', g.nesterov) && (g.momentum <= 0 || g.dampening !== 0)) {
      throw new RangeError(`${fn}: Nesterov momentum requires a momentum and zero dampening (got momentum ${g.momentum}, dampening ${g.dampening})`);
    }
  }

  protected override stateSpec(): StateSpec {
    return SGD_STATE;
  }

  protected updateGroup(g: ParamGroup<SGDOptions>, fn: string): void {
    if (!useForeach(g)) {
      for (const p of g.params) if (p.grad !== null) this.#updateOne(fn, p, p.grad, g);
      return;
    }
    // Bucketed by whether the momentum buffer exists yet (the first step sets it to the gradient).
    const buckets = new Buckets<[Tensor, Tensor]>();
    for (const p of g.params) {
      const grad = p.grad;
      if (grad === null) continue;
      if (!foreachable(p, grad)) this.#updateOne(fn, p, grad, g);
      else buckets.add(p, g.momentum !== 0 && this.stateOf(p).momentumBuffer === undefined ? 'first' : 'next', [p, grad]);
    }
    for (const list of buckets.lists) this.#updateForeach(fn, list, g);
  }

  /** One multi-tensor step of parameters in one bucket (NOTE [ Multi-tensor steps ]). */
  #updateForeach(fn: string, list: readonly [Tensor, Tensor][], g: ParamGroup<SGDOptions>): void {
    const params = list.map(([p]) => p);
    let first = false;
    const buffers: Tensor[] = [];
    if (g.momentum !== 0) {
      for (const p of params) {
        const s = this.stateOf(p);
        let buf = s.momentumBuffer as Tensor | undefined;
        if (buf === undefined) {
          checkNotCapturing(fn, p);
          first = true;
          buf = own(emptyLike(p));  // written with the gradient by the kernel
          s.momentumBuffer = buf;
        }
        buffers.push(buf);
      }
    }
    ops.foreachSgd(fn, {
      params: handles(fn, params), grads: handles(fn, list.map(([, d]) => d)), momentumBuffers: handles(fn, buffers),
      lr: g.lr, momentum: g.momentum, dampening: g.dampening, weightDecay: g.weightDecay, nesterov: g.nesterov,
      maximize: g.maximize, first,
    });
    written(params, buffers);
  }

  /** The per-parameter step: a chain of elementwise ops. */
  #updateOne(fn: string, p: Tensor, grad: Tensor, g: ParamGroup<SGDOptions>): void {
    let d: Tensor = g.maximize ? neg(grad) : grad;
    if (g.weightDecay !== 0) d = add(d, mul(p, g.weightDecay));
    if (g.momentum !== 0) {
      const s = this.stateOf(p);
      let buf = s.momentumBuffer as Tensor | undefined;
      if (buf === undefined) {
        checkNotCapturing(fn, p);
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
