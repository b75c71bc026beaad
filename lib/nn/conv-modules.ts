// The convolution and pooling layers of gx.nn (torch.nn's Conv1d, Conv2d,
// MaxPool1d/2d, AvgPool1d/2d) and Flatten. The convolutions initialize as
// torch's reset_parameters: weight by kaimingUniform_ with a = sqrt(5), bias
// from U(-1/sqrt(fanIn), 1/sqrt(fanIn)).
import { flatten } from '../ops/layout/layout';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { conv1d, conv2d, type ConvOptions } from './conv';
import { param, resetWeightAndBias_, WeightAndBias, type FactoryOptions } from './layers';
import { Module } from './module';
import { avgPool1d, avgPool2d, maxPool1d, maxPool2d, type AvgPoolOptions, type PoolOptions } from './pooling';

export interface ConvLayerOptions extends ConvOptions, FactoryOptions {
  /** Learn an additive bias per output channel (default true). */
  bias?: boolean;
  /** Only 'zeros' (torch's default) is supported. */
  paddingMode?: 'zeros';
}
const CONV_LAYER_KEYS = optionKeys<ConvLayerOptions>({
  stride: true, padding: true, dilation: true, groups: true, bias: true, paddingMode: true, device: true, dtype: true,
});

function channels(v: unknown, fn: string, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new TypeError(`${fn}: argument '${name}' must be a positive integer, got ${describeValue(v)}`);
  return v;
}

/** What Conv1d and Conv2d share: the parameters, their initialization and the checks torch makes at construction. */
abstract class ConvNd extends WeightAndBias {
  readonly inChannels: number;
  readonly outChannels: number;
  readonly kernelSize: number[];
  readonly options: ConvOptions;

  constructor(inChannels: number, outChannels: number, kernelSize: number | number[], opts: ConvLayerOptions | undefined, spatial: number, fn: string) {
    super();
    const o = checkOptions<ConvLayerOptions>(opts, fn, CONV_LAYER_KEYS);
    this.inChannels = channels(inChannels, fn, 'inChannels');
    this.outChannels = channels(outChannels, fn, 'outChannels');
    const groups = o.groups ?? 1;
    if (typeof groups !== 'number' || !Number.isInteger(groups) || groups < 1) throw new RangeError(`${fn}: argument 'groups' must be a positive integer, got ${describeValue(groups)}`);
    if (this.inChannels % groups !== 0) throw new RangeError(`${fn}: inChannels (${this.inChannels}) must be divisible by groups (${groups})`);
    if (this.outChannels % groups !== 0) throw new RangeError(`${fn}: outChannels (${this.outChannels}) must be divisible by groups (${groups})`);
    if (o.paddingMode !== undefined && o.paddingMode !== 'zeros') throw new RangeError(`${fn}: argument 'paddingMode' must be 'zeros', got ${describeValue(o.paddingMode)}`);
    const k = typeof kernelSize === 'number' ? Array<number>(spatial).fill(kernelSize) : kernelSize;
    if (!Array.isArray(k) || k.length !== spatial || !k.every((v) => Number.isInteger(v) && v >= 1)) {
      throw new TypeError(`${fn}: argument 'kernelSize' must be a positive integer or ${spatial} of them, got ${describeValue(kernelSize)}`);
    }
    const stride = o.stride ?? 1;
    if (o.padding === 'same' && (Array.isArray(stride) ? stride : [stride]).some((v) => v !== 1)) {
      throw new RangeError(`${fn}: padding 'same' is not supported for strided convolutions`);
    }
    this.kernelSize = [...k];
    this.options = { stride, padding: o.padding ?? 0, dilation: o.dilation ?? 1, groups };
    this.registerWeightAndBias(param([this.outChannels, this.inChannels / groups, ...k], o), booleanOption(fn, 'bias', o.bias, true) ? param([this.outChannels], o) : null);
    this.resetParameters();
  }

  /** torch's reset_parameters. */
  resetParameters(): void {
    resetWeightAndBias_(this.weight, this.bias, `${this.name}.resetParameters`);
  }

  override extraRepr(): string {
    const o = this.options;
    return `${this.inChannels}, ${this.outChannels}, kernelSize=[${this.kernelSize.join(', ')}], stride=${JSON.stringify(o.stride)}, ` +
      `padding=${JSON.stringify(o.padding)}, dilation=${JSON.stringify(o.dilation)}, groups=${o.groups}, bias=${this.bias !== null}`;
  }
}

/** A 1-d convolution layer (torch.nn.Conv1d): (N, inChannels, L) to (N, outChannels, L'). @example new gx.nn.Conv1d(4, 8, 3, { padding: 1 }) */
export class Conv1d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: number | number[], opts?: ConvLayerOptions) {
    super(inChannels, outChannels, kernelSize, opts, 1, 'gx.nn.Conv1d');
  }

  override forward(x: Tensor): Tensor {
    return conv1d(x, this.weight, this.bias, this.options);
  }
}

/** A 2-d convolution layer (torch.nn.Conv2d): (N, inChannels, H, W) to (N, outChannels, H', W'). @example new gx.nn.Conv2d(3, 64, 7, { stride: 2, padding: 3 }) */
export class Conv2d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: number | number[], opts?: ConvLayerOptions) {
    super(inChannels, outChannels, kernelSize, opts, 2, 'gx.nn.Conv2d');
  }

  override forward(x: Tensor): Tensor {
    return conv2d(x, this.weight, this.bias, this.options);
  }
}

export interface MaxPoolLayerOptions extends PoolOptions {
  /** Spacing between a window's elements (default 1). */
  dilation?: number | number[];
}
const MAX_LAYER_KEYS = optionKeys<MaxPoolLayerOptions>({ stride: true, padding: true, dilation: true, ceilMode: true });
const AVG_LAYER_KEYS = optionKeys<AvgPoolOptions>({ stride: true, padding: true, ceilMode: true, countIncludePad: true, divisorOverride: true });

/**
 * 1-d max pooling (torch.nn.MaxPool1d; for the indices of the maxima call
 * gx.nn.functional.maxPool1d with returnIndices). @example new gx.nn.MaxPool1d(2)
 */
export class MaxPool1d extends Module {
  readonly kernelSize: number | number[];
  readonly options: MaxPoolLayerOptions;
  constructor(kernelSize: number | number[], opts?: MaxPoolLayerOptions) {
    super();
    this.kernelSize = kernelSize;
    this.options = checkOptions<MaxPoolLayerOptions>(opts, 'gx.nn.MaxPool1d', MAX_LAYER_KEYS);
  }

  override forward(x: Tensor): Tensor {
    return maxPool1d(x, this.kernelSize, this.options);
  }
}

/** 2-d max pooling (torch.nn.MaxPool2d). @example new gx.nn.MaxPool2d(2) */
export class MaxPool2d extends Module {
  readonly kernelSize: number | number[];
  readonly options: MaxPoolLayerOptions;
  constructor(kernelSize: number | number[], opts?: MaxPoolLayerOptions) {
    super();
    this.kernelSize = kernelSize;
    this.options = checkOptions<MaxPoolLayerOptions>(opts, 'gx.nn.MaxPool2d', MAX_LAYER_KEYS);
  }

  override forward(x: Tensor): Tensor {
    return maxPool2d(x, this.kernelSize, this.options);
  }
}

/** 1-d average pooling (torch.nn.AvgPool1d). @example new gx.nn.AvgPool1d(2) */
export class AvgPool1d extends Module {
  readonly kernelSize: number | number[];
  readonly options: AvgPoolOptions;
  constructor(kernelSize: number | number[], opts?: AvgPoolOptions) {
    super();
    this.kernelSize = kernelSize;
    this.options = checkOptions<AvgPoolOptions>(opts, 'gx.nn.AvgPool1d', AVG_LAYER_KEYS);
  }

  override forward(x: Tensor): Tensor {
    return avgPool1d(x, this.kernelSize, this.options);
  }
}

/** 2-d average pooling (torch.nn.AvgPool2d). @example new gx.nn.AvgPool2d(2) */
export class AvgPool2d extends Module {
  readonly kernelSize: number | number[];
  readonly options: AvgPoolOptions;
  constructor(kernelSize: number | number[], opts?: AvgPoolOptions) {
    super();
    this.kernelSize = kernelSize;
    this.options = checkOptions<AvgPoolOptions>(opts, 'gx.nn.AvgPool2d', AVG_LAYER_KEYS);
  }

  override forward(x: Tensor): Tensor {
    return avgPool2d(x, this.kernelSize, this.options);
  }
}

/** Flattens dims startDim..endDim into one (torch.nn.Flatten; default 1..-1, keeping the batch). @example new gx.nn.Flatten() */
export class Flatten extends Module {
  readonly startDim: number;
  readonly endDim: number;
  constructor(startDim = 1, endDim = -1) {
    super();
    this.startDim = startDim;
    this.endDim = endDim;
  }

  override forward(x: Tensor): Tensor {
    return flatten(x, this.startDim, this.endDim);
  }
}
