// The losses as modules (torch.nn.MSELoss, CrossEntropyLoss, ...): each keeps
// its options and calls its gx.nn.functional function as `loss.call(input, target)`.
import { checkOptions } from '../core/options';
import type { Tensor } from '../core/tensor';
import {
  BCE_KEYS, BCEL_KEYS, CE_KEYS, HUBER_KEYS, LOSS_KEYS, NLL_KEYS, SMOOTH_KEYS, binaryCrossEntropy, binaryCrossEntropyWithLogits, crossEntropy, huberLoss, l1Loss, mseLoss, nllLoss, smoothL1Loss,
  type BceOptions, type BceWithLogitsOptions, type CrossEntropyOptions, type HuberOptions, type LossOptions, type NllOptions,
  type SmoothL1Options,
} from './losses';
import { Module } from './module';

/** A loss module over one functional loss and its options. */
class Loss<O extends LossOptions> extends Module<[Tensor, Tensor], Tensor> {
  readonly #f: (input: Tensor, target: Tensor, opts?: O) => Tensor;
  readonly options: Readonly<O>;
  /** `keys`: the options f knows, checked here so that a misspelled one fails when the module is made. */
  constructor(f: (input: Tensor, target: Tensor, opts?: O) => Tensor, opts: O | undefined, keys: readonly string[]) {
    super();
    this.#f = f;
    this.options = { ...checkOptions<O>(opts, `gx.nn.${new.target.name}`, keys) } as O;
  }

  override forward(input: Tensor, target: Tensor): Tensor {
    return this.#f(input, target, this.options);
  }
}

/** gx.nn.functional.mseLoss as a module (torch.nn.MSELoss). @example new gx.nn.MSELoss().call(pred, y) */
export class MSELoss extends Loss<LossOptions> {
  constructor(opts?: LossOptions) { super(mseLoss, opts, LOSS_KEYS); }
}
/** gx.nn.functional.l1Loss as a module (torch.nn.L1Loss). */
export class L1Loss extends Loss<LossOptions> {
  constructor(opts?: LossOptions) { super(l1Loss, opts, LOSS_KEYS); }
}
/** gx.nn.functional.smoothL1Loss as a module (torch.nn.SmoothL1Loss). */
export class SmoothL1Loss extends Loss<SmoothL1Options> {
  constructor(opts?: SmoothL1Options) { super(smoothL1Loss, opts, SMOOTH_KEYS); }
}
/** gx.nn.functional.huberLoss as a module (torch.nn.HuberLoss). */
export class HuberLoss extends Loss<HuberOptions> {
  constructor(opts?: HuberOptions) { super(huberLoss, opts, HUBER_KEYS); }
}
/** gx.nn.functional.nllLoss as a module (torch.nn.NLLLoss). */
export class NLLLoss extends Loss<NllOptions> {
  constructor(opts?: NllOptions) { super(nllLoss, opts, NLL_KEYS); }
}
/** gx.nn.functional.crossEntropy as a module (torch.nn.CrossEntropyLoss). */
export class CrossEntropyLoss extends Loss<CrossEntropyOptions> {
  constructor(opts?: CrossEntropyOptions) { super(crossEntropy, opts, CE_KEYS); }
}
/** gx.nn.functional.binaryCrossEntropy as a module (torch.nn.BCELoss). */
export class BCELoss extends Loss<BceOptions> {
  constructor(opts?: BceOptions) { super(binaryCrossEntropy, opts, BCE_KEYS); }
}
/** gx.nn.functional.binaryCrossEntropyWithLogits as a module (torch.nn.BCEWithLogitsLoss). */
export class BCEWithLogitsLoss extends Loss<BceWithLogitsOptions> {
  constructor(opts?: BceWithLogitsOptions) { super(binaryCrossEntropyWithLogits, opts, BCEL_KEYS); }
}
