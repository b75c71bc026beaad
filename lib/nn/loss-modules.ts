// The losses as modules (torch.nn.MSELoss, CrossEntropyLoss, ...): each keeps
// its options and calls its gx.nn.functional function as `loss.call(input, target)`.
// A weight is a buffer, as torch's (_WeightedLoss registers 'weight',
// BCEWithLogitsLoss 'weight' and 'pos_weight'): to() moves and converts it,
// stateDict() lists it under torch's name, loadStateDict() fills it.
import { checkOptions } from '../core/options';
import { describeValue } from '../core/shape';
import { Tensor } from '../core/tensor';
import { noGrad } from '../tape/mode';
import {
  BCE_KEYS, BCEL_KEYS, CE_KEYS, HUBER_KEYS, LOSS_KEYS, NLL_KEYS, SMOOTH_KEYS, binaryCrossEntropy, binaryCrossEntropyWithLogits, crossEntropy, huberLoss, l1Loss, mseLoss, nllLoss, smoothL1Loss,
  type BceOptions, type BceWithLogitsOptions, type CrossEntropyOptions, type HuberOptions, type LossOptions, type NllOptions,
  type SmoothL1Options,
} from './losses';
import { Module } from './module';

/** The options a loss module keeps as buffers, by option and by buffer name (torch's, the state-dict key). */
const TENSOR_OPTIONS = [['weight', 'weight'], ['posWeight', 'pos_weight']] as const;
type TensorOption = (typeof TENSOR_OPTIONS)[number][0];

/** The options a loss module keeps as options: the others are buffers. */
export type LossModuleOptions<O> = Readonly<Omit<O, TensorOption>>;

/** A loss module over one functional loss and its options. */
class Loss<O extends LossOptions> extends Module<[Tensor, Tensor], Tensor> {
  readonly #f: (input: Tensor, target: Tensor, opts?: O) => Tensor;
  readonly #tensors: (readonly [TensorOption, string])[] = [];
  /** The options other than the weights (those are buffers: `weight`, `posWeight`). */
  readonly options: LossModuleOptions<O>;
  /**
   * `keys`: the options f knows, checked here so that a misspelled one fails when the module is made. A
   * weight is copied into a buffer of the module's own (NOTE [ Module ownership ]: to() and dispose() must
   * not free the caller's tensor; torch's buffer is the tensor itself).
   */
  constructor(f: (input: Tensor, target: Tensor, opts?: O) => Tensor, opts: O | undefined, keys: readonly string[]) {
    super();
    const fn = `gx.nn.${new.target.name}`;
    const o: Record<string, unknown> = { ...checkOptions<O>(opts, fn, keys) };
    this.#f = f;
    for (const [key, name] of TENSOR_OPTIONS) {
      if (!keys.includes(key)) continue;
      const t = o[key];
      delete o[key];
      if (t !== undefined && t !== null && !(t instanceof Tensor)) throw new TypeError(`${fn}: option '${key}' must be a Tensor or null, got ${describeValue(t)}`);
      this.registerBuffer(name, t instanceof Tensor ? noGrad(() => t.clone()) : null);
      this.#tensors.push([key, name]);
    }
    this.options = o as LossModuleOptions<O>;
  }

  override forward(input: Tensor, target: Tensor): Tensor {
    const opts: Record<string, unknown> = { ...this.options };
    for (const [key, name] of this.#tensors) opts[key] = this.buffer(name);
    return this.#f(input, target, opts as O);
  }
}

/** A loss with a class or element weight (torch's _WeightedLoss): the buffer 'weight'. */
class WeightedLoss<O extends LossOptions & { weight?: Tensor | null }> extends Loss<O> {
  /** The weight buffer (null without one). */
  get weight(): Tensor | null {
    return this.buffer('weight');
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
/** gx.nn.functional.nllLoss as a module (torch.nn.NLLLoss); its weight is the buffer 'weight'. */
export class NLLLoss extends WeightedLoss<NllOptions> {
  constructor(opts?: NllOptions) { super(nllLoss, opts, NLL_KEYS); }
}
/**
 * gx.nn.functional.crossEntropy as a module (torch.nn.CrossEntropyLoss); its weight is the buffer 'weight'.
 * @example const loss = new gx.nn.CrossEntropyLoss({ weight: w }).to('cuda'); // the weight moves too
 */
export class CrossEntropyLoss extends WeightedLoss<CrossEntropyOptions> {
  constructor(opts?: CrossEntropyOptions) { super(crossEntropy, opts, CE_KEYS); }
}
/** gx.nn.functional.binaryCrossEntropy as a module (torch.nn.BCELoss); its weight is the buffer 'weight'. */
export class BCELoss extends WeightedLoss<BceOptions> {
  constructor(opts?: BceOptions) { super(binaryCrossEntropy, opts, BCE_KEYS); }
}
/**
 * gx.nn.functional.binaryCrossEntropyWithLogits as a module (torch.nn.BCEWithLogitsLoss); its weights are
 * the buffers 'weight' and 'pos_weight' (torch's names, so torch's state dicts load).
 */
export class BCEWithLogitsLoss extends WeightedLoss<BceWithLogitsOptions> {
  constructor(opts?: BceWithLogitsOptions) { super(binaryCrossEntropyWithLogits, opts, BCEL_KEYS); }

  /** The positive-class weight buffer, 'pos_weight' (null without one). */
  get posWeight(): Tensor | null {
    return this.buffer('pos_weight');
  }
}
