// RMSNorm and Bilinear (torch.nn.RMSNorm, torch.nn.Bilinear): their
// parameters in the Module's tables, initialized as torch's, computed by
// gx.nn.functional.rmsNorm and bilinear.
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { bilinear, rmsNorm } from './functional-norms';
import { ones_, uniform_ } from './init';
import { param, size, WeightAndBias, type FactoryOptions } from './layers';
import { Module } from './module';

export interface RMSNormOptions extends FactoryOptions {
  /** Added to the mean square (default null: the machine epsilon of the input's dtype, torch.finfo(dtype).eps). */
  eps?: number | null;
  /** Learn a weight of normalizedShape, starting at ones (default true). */
  elementwiseAffine?: boolean;
}
const RMSNORM_KEYS = optionKeys<RMSNormOptions>({ eps: true, elementwiseAffine: true, device: true, dtype: true });

/** x / sqrt(mean(x^2) + eps) * weight over the last dims (torch.nn.RMSNorm). @example new gx.nn.RMSNorm(512) */
export class RMSNorm extends Module {
  readonly normalizedShape: number[];
  readonly eps: number | null;
  constructor(normalizedShape: number | readonly number[], opts?: RMSNormOptions) {
    super();
    const fn = 'gx.nn.RMSNorm';
    const o = checkOptions<RMSNormOptions>(opts, fn, RMSNORM_KEYS);
    const shape = typeof normalizedShape === 'number' ? [normalizedShape] : Array.isArray(normalizedShape) ? [...normalizedShape] : null;
    if (shape === null || shape.length === 0) throw new TypeError(`${fn}: argument 'normalizedShape' must be a size or a non-empty list of sizes, got ${describeValue(normalizedShape)}`);
    shape.forEach((s) => size(s, fn, 'normalizedShape'));
    this.normalizedShape = shape;
    const eps = o.eps ?? null;
    if (eps !== null && (typeof eps !== 'number' || !(eps >= 0))) throw new RangeError(`${fn}: option 'eps' must be a number >= 0 or null, got ${describeValue(eps)}`);
    this.eps = eps;
    this.registerParameter('weight', booleanOption(fn, 'elementwiseAffine', o.elementwiseAffine, true) ? ones_(param(shape, o)) : null);
  }

  get weight(): Tensor | null {
    return this.param('weight');
  }

  override forward(x: Tensor): Tensor {
    return rmsNorm(x, this.normalizedShape, this.weight, this.eps);
  }

  override extraRepr(): string {
    return `[${this.normalizedShape.join(', ')}], eps=${this.eps}, elementwiseAffine=${this.weight !== null}`;
  }
}

export interface BilinearOptions extends FactoryOptions {
  /** Learn an additive bias (default true). */
  bias?: boolean;
}
const BILINEAR_KEYS = optionKeys<BilinearOptions>({ bias: true, device: true, dtype: true });

/**
 * y = x1^T A x2 + b per output feature (torch.nn.Bilinear): weight [out, in1, in2] and bias [out],
 * both from U(-1/sqrt(in1), 1/sqrt(in1)) as torch initializes them.
 * @example const b = new gx.nn.Bilinear(20, 30, 40); b.call(x1, x2)
 */
export class Bilinear extends WeightAndBias<[Tensor, Tensor]> {
  readonly in1Features: number;
  readonly in2Features: number;
  readonly outFeatures: number;
  constructor(in1Features: number, in2Features: number, outFeatures: number, opts?: BilinearOptions) {
    super();
    const fn = 'gx.nn.Bilinear';
    const o = checkOptions<BilinearOptions>(opts, fn, BILINEAR_KEYS);
    this.in1Features = size(in1Features, fn, 'in1Features');
    this.in2Features = size(in2Features, fn, 'in2Features');
    this.outFeatures = size(outFeatures, fn, 'outFeatures');
    this.registerWeightAndBias(param([this.outFeatures, this.in1Features, this.in2Features], o), booleanOption(fn, 'bias', o.bias, true) ? param([this.outFeatures], o) : null);
    this.resetParameters();
  }

  /** torch's reset_parameters: every parameter from U(-b, b), b = 1 / sqrt(in1Features). */
  resetParameters(): void {
    const bound = 1 / Math.sqrt(this.in1Features);
    uniform_(this.weight, -bound, bound);
    const b = this.bias;
    if (b !== null) uniform_(b, -bound, bound);
  }

  override forward(x1: Tensor, x2: Tensor): Tensor {
    return bilinear(x1, x2, this.weight, this.bias);
  }

  override extraRepr(): string {
    return `in1Features=${this.in1Features}, in2Features=${this.in2Features}, outFeatures=${this.outFeatures}, bias=${this.bias !== null}`;
  }
}
