// The layers of gx.nn, as torch.nn's: Linear, Embedding, LayerNorm, Dropout,
// the activations, and the containers Sequential and ModuleList. Each holds
// its tensors in the Module's tables (NOTE [ Module ownership ]) and
// computes with gx.nn.functional.
import { noGrad } from '../tape/mode';
import { type DeviceLike } from '../core/device';
import { type DType } from '../core/dtype';
import { empty } from '../ops/creation/creation';
import { gelu, relu, sigmoid, tanh } from '../generated/elementwise';
import * as E from '../generated/elementwise';
import { logSoftmax, softmax } from '../ops/softmax/softmax';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { dropout, embedding, layerNorm, linear, paddingIndex } from './functional';
import { kaimingUniform_, normal_, ones_, uniform_, zeros_, fans } from './init';
import { Module, type AnyModule } from './module';

/** Where a layer's parameters are made (torch's factory kwargs). */
export interface FactoryOptions {
  device?: DeviceLike;
  /** A floating dtype (default float32). */
  dtype?: DType;
}

/** A size argument, an integer >= min. */
export function size(v: unknown, fn: string, name: string, min = 1): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new TypeError(`${fn}: argument '${name}' must be an integer >= ${min}, got ${describeValue(v)}`);
  return v;
}

/** An uninitialized parameter of `shape` where the factory options say. */
export function param(shape: number[], o: FactoryOptions): Tensor {
  return empty(shape, { dtype: o.dtype ?? 'float32', device: o.device });
}

export interface LinearOptions extends FactoryOptions {
  /** Learn an additive bias (default true). */
  bias?: boolean;
}
const LINEAR_KEYS = optionKeys<LinearOptions>({ bias: true, device: true, dtype: true });

/**
 * torch's reset_parameters of Linear and the convolutions: the weight from
 * kaiming_uniform_(a = sqrt(5)), the bias from U(-1/sqrt(fanIn), 1/sqrt(fanIn)).
 * @internal
 */
export function resetWeightAndBias_(weight: Tensor, bias: Tensor | null, fn: string): void {
  kaimingUniform_(weight, { a: Math.sqrt(5) });
  if (bias === null) return;
  const { fanIn } = fans(weight, fn);
  const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
  uniform_(bias, -bound, bound);
}

/**
 * A layer whose parameters are a `weight` and an optional `bias` (Linear,
 * Bilinear, the convolutions): registered under torch's names, so state
 * dicts carry them as torch's do, and read back by name.
 * @internal
 */
export abstract class WeightAndBias<In extends unknown[] = [Tensor], Out = Tensor> extends Module<In, Out> {
  /** Registers `weight` and `bias` (null: the layer has none). */
  protected registerWeightAndBias(weight: Tensor, bias: Tensor | null): void {
    this.registerParameter('weight', weight);
    this.registerParameter('bias', bias);
  }

  get weight(): Tensor {
    return this.param('weight') as Tensor;
  }

  get bias(): Tensor | null {
    return this.param('bias');
  }
}

/**
 * y = x W^T + b (torch.nn.Linear): weight [out, in] from kaimingUniform_ with a = sqrt(5) (so
 * U(-1/sqrt(in), 1/sqrt(in))), bias from U(-1/sqrt(in), 1/sqrt(in)), as torch initializes it.
 * @example const fc = new gx.nn.Linear(784, 10); const y = fc.call(x);
 */
export class Linear extends WeightAndBias {
  readonly inFeatures: number;
  readonly outFeatures: number;
  constructor(inFeatures: number, outFeatures: number, opts?: LinearOptions) {
    super();
    const fn = 'gx.nn.Linear';
    const o = checkOptions<LinearOptions>(opts, fn, LINEAR_KEYS);
    this.inFeatures = size(inFeatures, fn, 'inFeatures', 0);
    this.outFeatures = size(outFeatures, fn, 'outFeatures', 0);
    this.registerWeightAndBias(param([this.outFeatures, this.inFeatures], o), booleanOption(fn, 'bias', o.bias, true) ? param([this.outFeatures], o) : null);
    this.resetParameters();
  }

  /** torch's reset_parameters. */
  resetParameters(): void {
    resetWeightAndBias_(this.weight, this.bias, 'Linear.resetParameters');
  }

  override forward(x: Tensor): Tensor {
    return linear(x, this.weight, this.bias);
  }

  override extraRepr(): string {
    return `inFeatures=${this.inFeatures}, outFeatures=${this.outFeatures}, bias=${this.bias !== null}`;
  }
}

export interface EmbeddingLayerOptions extends FactoryOptions {
  /** This index's row starts at zeros and gets no gradient. */
  paddingIdx?: number | null;
}
const EMBEDDING_KEYS = optionKeys<EmbeddingLayerOptions>({ paddingIdx: true, device: true, dtype: true });

/** A table of numEmbeddings vectors looked up by integer index (torch.nn.Embedding; weight from N(0, 1)). */
export class Embedding extends Module {
  readonly numEmbeddings: number;
  readonly embeddingDim: number;
  readonly paddingIdx: number | null;
  constructor(numEmbeddings: number, embeddingDim: number, opts?: EmbeddingLayerOptions) {
    super();
    const fn = 'gx.nn.Embedding';
    const o = checkOptions<EmbeddingLayerOptions>(opts, fn, EMBEDDING_KEYS);
    this.numEmbeddings = size(numEmbeddings, fn, 'numEmbeddings');
    this.embeddingDim = size(embeddingDim, fn, 'embeddingDim');
    this.paddingIdx = paddingIndex(o.paddingIdx, this.numEmbeddings, fn);
    this.registerParameter('weight', param([this.numEmbeddings, this.embeddingDim], o));
    this.resetParameters();
  }

  get weight(): Tensor {
    return this.param('weight') as Tensor;
  }

  resetParameters(): void {
    normal_(this.weight);
    const pad = this.paddingIdx;
    if (pad !== null) {
      noGrad(() => {
        using row = this.weight.get(String(pad));
        zeros_(row);
      });
    }
  }

  override forward(indices: Tensor): Tensor {
    return embedding(indices, this.weight, { paddingIdx: this.paddingIdx });
  }

  override extraRepr(): string {
    return `${this.numEmbeddings}, ${this.embeddingDim}${this.paddingIdx === null ? '' : `, paddingIdx=${this.paddingIdx}`}`;
  }
}

export interface LayerNormOptions extends FactoryOptions {
  eps?: number;
  /** Learn a weight (ones) and a bias (zeros) of normalizedShape (default true). */
  elementwiseAffine?: boolean;
  /** With elementwiseAffine, learn the bias too (default true). */
  bias?: boolean;
}
const LAYERNORM_KEYS = optionKeys<LayerNormOptions>({ eps: true, elementwiseAffine: true, bias: true, device: true, dtype: true });

/** Normalizes over the last dims (torch.nn.LayerNorm). @example new gx.nn.LayerNorm(512) */
export class LayerNorm extends Module {
  readonly normalizedShape: number[];
  readonly eps: number;
  constructor(normalizedShape: number | readonly number[], opts?: LayerNormOptions) {
    super();
    const fn = 'gx.nn.LayerNorm';
    const o = checkOptions<LayerNormOptions>(opts, fn, LAYERNORM_KEYS);
    const shape = typeof normalizedShape === 'number' ? [normalizedShape] : Array.isArray(normalizedShape) ? [...normalizedShape] : null;
    if (shape === null || shape.length === 0) throw new TypeError(`${fn}: argument 'normalizedShape' must be a size or a non-empty list of sizes, got ${describeValue(normalizedShape)}`);
    shape.forEach((s) => size(s, fn, 'normalizedShape'));
    this.normalizedShape = shape;
    this.eps = o.eps ?? 1e-5;
    const affine = booleanOption(fn, 'elementwiseAffine', o.elementwiseAffine, true), bias = booleanOption(fn, 'bias', o.bias, true);
    this.registerParameter('weight', affine ? ones_(param(shape, o)) : null);
    this.registerParameter('bias', affine && bias ? zeros_(param(shape, o)) : null);
  }

  get weight(): Tensor | null {
    return this.param('weight');
  }

  get bias(): Tensor | null {
    return this.param('bias');
  }

  override forward(x: Tensor): Tensor {
    return layerNorm(x, this.normalizedShape, this.weight, this.bias, this.eps);
  }

  override extraRepr(): string {
    return `[${this.normalizedShape.join(', ')}], eps=${this.eps}, elementwiseAffine=${this.weight !== null}`;
  }
}

/** Zeroes elements with probability p while training, scaling the rest by 1 / (1 - p) (torch.nn.Dropout). */
export class Dropout extends Module {
  readonly p: number;
  constructor(p = 0.5) {
    super();
    if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new RangeError(`gx.nn.Dropout: argument 'p' must be a probability in [0, 1], got ${describeValue(p)}`);
    this.p = p;
  }

  override forward(x: Tensor): Tensor {
    return dropout(x, this.p, this.training);
  }

  override extraRepr(): string {
    return `p=${this.p}`;
  }
}

/** A module of one elementwise function (the activations; activations.ts has more). @internal */
export class Elementwise extends Module {
  readonly #f: (x: Tensor) => Tensor;
  constructor(f: (x: Tensor) => Tensor) {
    super();
    this.#f = f;
  }

  override forward(x: Tensor): Tensor {
    return this.#f(x);
  }
}

/** max(x, 0) (torch.nn.ReLU). */
export class ReLU extends Elementwise {
  constructor() { super((x) => relu(x)); }
}
export interface GELUOptions {
  /** 'none' (default): the exact erf form; 'tanh': 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). */
  approximate?: 'none' | 'tanh';
}
const GELU_KEYS = optionKeys<GELUOptions>({ approximate: true });

/** GELU (torch.nn.GELU): the exact (erf) form, or with { approximate: 'tanh' } torch's tanh approximation. */
export class GELU extends Elementwise {
  constructor(opts: GELUOptions = {}) {
    // The options were ignored: GELU({ approximate: 'tanh' }) computed the exact form.
    const { approximate = 'none' } = checkOptions<GELUOptions>(opts, 'nn.GELU', GELU_KEYS);
    if (approximate !== 'none' && approximate !== 'tanh') {
      throw new TypeError(`nn.GELU: approximate must be 'none' or 'tanh', got ${describeValue(approximate)}`);
    }
    super(approximate === 'tanh' ? geluTanh : (x) => gelu(x));
  }
}

/** torch's gelu(approximate='tanh'), of recorded ops (its gradient is theirs). */
function geluTanh(x: Tensor): Tensor {
  const inner = E.mul(E.add(x, E.mul(E.mul(E.mul(x, x), x), 0.044715)), Math.sqrt(2 / Math.PI));
  return E.mul(E.mul(x, 0.5), E.add(E.tanh(inner), 1));
}
/** 1 / (1 + exp(-x)) (torch.nn.Sigmoid). */
export class Sigmoid extends Elementwise {
  constructor() { super((x) => sigmoid(x)); }
}
/** tanh(x) (torch.nn.Tanh). */
export class Tanh extends Elementwise {
  constructor() { super((x) => tanh(x)); }
}
/** Softmax along `axis` (torch.nn.Softmax(dim)). */
export class Softmax extends Elementwise {
  constructor(readonly axis: number) { super((x) => softmax(x, axis)); }
}
/** log(softmax) along `axis` (torch.nn.LogSoftmax(dim)). */
export class LogSoftmax extends Elementwise {
  constructor(readonly axis: number) { super((x) => logSoftmax(x, axis)); }
}

function checkModules(mods: unknown[], fn: string): AnyModule[] {
  mods.forEach((m, i) => {
    if (!(m instanceof Module)) throw new TypeError(`${fn}: argument ${i} must be a gx.nn.Module, got ${describeValue(m)}`);
  });
  return mods as AnyModule[];
}

/** Modules applied in order, each to the previous one's output (torch.nn.Sequential); named '0', '1', .... */
export class Sequential extends Module {
  constructor(...modules: AnyModule[]) {
    super();
    checkModules(modules, 'gx.nn.Sequential').forEach((m, i) => this.registerModule(String(i), m));
  }

  /** The i-th module (negative counts from the end). */
  at(i: number): AnyModule {
    const kids = this.children();
    const j = i < 0 ? i + kids.length : i;
    if (!Number.isInteger(j) || j < 0 || j >= kids.length) throw new RangeError(`Sequential.at: index ${i} is out of range for ${kids.length} modules`);
    return kids[j];
  }

  get length(): number {
    return this.children().length;
  }

  /**
   * Runs the modules in order. The intermediate outputs are freed as soon as the next module has used them
   * (autograd keeps what backward needs), so a Sequential leaves only its output behind.
   */
  override forward(x: Tensor): Tensor {
    let y = x;
    for (const m of this.children()) {
      const next = m.call(y) as Tensor;
      if (y !== x && next !== y) y.dispose();
      y = next;
    }
    return y;
  }
}

/** A list of modules, registered as submodules (torch.nn.ModuleList); it has no forward of its own. */
export class ModuleList extends Module<never[], never> {
  constructor(modules: AnyModule[] = []) {
    super();
    if (!Array.isArray(modules)) throw new TypeError(`gx.nn.ModuleList: argument 'modules' must be a list of modules, got ${describeValue(modules)}`);
    checkModules(modules, 'gx.nn.ModuleList').forEach((m) => this.append(m));
  }

  /** Adds a module at the end; returns this. */
  append(m: AnyModule): this {
    checkModules([m], 'ModuleList.append');
    this.registerModule(String(this.length), m);
    return this;
  }

  /** The i-th module (negative counts from the end). */
  at(i: number): AnyModule {
    const kids = this.children();
    const j = i < 0 ? i + kids.length : i;
    if (!Number.isInteger(j) || j < 0 || j >= kids.length) throw new RangeError(`ModuleList.at: index ${i} is out of range for ${kids.length} modules`);
    return kids[j];
  }

  get length(): number {
    return this.children().length;
  }

  [Symbol.iterator](): Iterator<AnyModule> {
    return this.children()[Symbol.iterator]();
  }
}
