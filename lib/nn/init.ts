// gx.nn.init: fills a tensor in place from a distribution, with torch.nn.init's
// gains and fan rules, under gx.noGrad (a parameter that requires grad is
// filled without recording, as torch's init functions do). Each returns its
// tensor. The draws come from gx.uniform / gx.randn (gx.manualSeed or a
// generator reproduces them).
import { noGrad } from '../tape/mode';
import { checkTensor } from '../ops/common';
import { isFloating } from '../ops/promotion';
import { randn, uniform, type Generator } from '../ops/random/random';
import { checkOptions, optionKeys } from '../core/options';
import { describeValue, formatShape } from '../core/shape';
import { copyValues, type Tensor } from '../core/tensor';

const I = 'gx.nn.init';

/** The nonlinearities calculateGain knows (torch's names, camelCased). */
export type Nonlinearity = 'linear' | 'conv1d' | 'conv2d' | 'conv3d' | 'sigmoid' | 'tanh' | 'relu' | 'leakyRelu' | 'selu';

export interface InitOptions {
  /** Draw from this generator instead of the default one. */
  generator?: Generator;
}
export interface KaimingOptions extends InitOptions {
  /** The negative slope of the leaky ReLU after this layer (default 0). */
  a?: number;
  /** 'fanIn' (default: keeps the forward pass's variance) or 'fanOut' (the backward pass's). */
  mode?: 'fanIn' | 'fanOut';
  /** The nonlinearity after this layer (default 'leakyRelu', with slope a). */
  nonlinearity?: Nonlinearity;
}
const INIT_KEYS = optionKeys<InitOptions>({ generator: true });
const KAIMING_KEYS = optionKeys<KaimingOptions>({ generator: true, a: true, mode: true, nonlinearity: true });

function target(t: unknown, fn: string): Tensor {
  const x = checkTensor(t, fn, 'tensor');
  if (!isFloating(x.dtype)) throw new TypeError(`${fn}: argument 'tensor' must be floating, got ${x.dtype}`);
  return x;
}

function finite(v: unknown, fn: string, name: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${fn}: argument '${name}' must be a finite number, got ${describeValue(v)}`);
  return v;
}

/** Copies a fresh draw into t, without recording. */
function fillFrom(t: Tensor, draw: () => Tensor): Tensor {
  noGrad(() => {
    if (t.numel === 0) return;
    using d = draw();
    copyValues(t, d, 'Tensor.copy_');
  });
  return t;
}

/** The recommended gain for a nonlinearity (torch.nn.init.calculate_gain); `param` is leakyRelu's slope (default 0.01). */
export function calculateGain(nonlinearity: Nonlinearity, param?: number): number {
  const fn = `${I}.calculateGain`;
  switch (nonlinearity) {
    case 'linear': case 'conv1d': case 'conv2d': case 'conv3d': case 'sigmoid': return 1;
    case 'tanh': return 5 / 3;
    case 'relu': return Math.sqrt(2);
    case 'leakyRelu': {
      const slope = param === undefined ? 0.01 : finite(param, fn, 'param');
      return Math.sqrt(2 / (1 + slope * slope));
    }
    case 'selu': return 3 / 4;
    default: throw new TypeError(`${fn}: unknown nonlinearity ${describeValue(nonlinearity)}; expected linear, conv1d, conv2d, conv3d, sigmoid, tanh, relu, leakyRelu or selu`);
  }
}

/** fan in and fan out of a weight [out, in, ...kernel] (torch's _calculate_fan_in_and_fan_out). */
export function fans(t: Tensor, fn: string): { fanIn: number; fanOut: number } {
  if (t.ndim < 2) throw new RangeError(`${fn}: fan in and fan out cannot be computed for a tensor of fewer than 2 dims, got ${formatShape(t.shape)}`);
  const receptive = t.shape.slice(2).reduce((a, b) => a * b, 1);
  return { fanIn: t.shape[1] * receptive, fanOut: t.shape[0] * receptive };
}

/** Fills with U(a, b) (torch.nn.init.uniform_). @example gx.nn.init.uniform_(w, -0.1, 0.1) */
export function uniform_(tensor: Tensor, a = 0, b = 1, opts?: InitOptions): Tensor {
  const fn = `${I}.uniform_`;
  const t = target(tensor, fn);
  const o = checkOptions<InitOptions>(opts, fn, INIT_KEYS);
  const lo = finite(a, fn, 'a'), hi = finite(b, fn, 'b');
  if (lo > hi) throw new RangeError(`${fn}: needs a <= b, got a ${lo}, b ${hi}`);
  if (lo === hi) return constant_(t, lo);
  return fillFrom(t, () => uniform(lo, hi, t.shape, { dtype: t.dtype, device: t.device, generator: o.generator }));
}

/** Fills with N(mean, std^2) (torch.nn.init.normal_). */
export function normal_(tensor: Tensor, mean = 0, std = 1, opts?: InitOptions): Tensor {
  const fn = `${I}.normal_`;
  const t = target(tensor, fn);
  const o = checkOptions<InitOptions>(opts, fn, INIT_KEYS);
  const m = finite(mean, fn, 'mean'), s = finite(std, fn, 'std');
  if (s < 0) throw new RangeError(`${fn}: argument 'std' must be >= 0, got ${s}`);
  return fillFrom(t, () => randn(t.shape, { dtype: t.dtype, device: t.device, generator: o.generator, mean: m, std: s }));
}

/** Fills with `val` (torch.nn.init.constant_). */
export function constant_(tensor: Tensor, val: number): Tensor {
  const fn = `${I}.constant_`;
  const t = target(tensor, fn);
  const v = finite(val, fn, 'val');
  noGrad(() => t.fill_(v, fn));
  return t;
}

/** Fills with 0. */
export function zeros_(tensor: Tensor): Tensor {
  return constant_(tensor, 0);
}

/** Fills with 1. */
export function ones_(tensor: Tensor): Tensor {
  return constant_(tensor, 1);
}

function gainOf(gain: unknown, fn: string): number {
  const g = finite(gain, fn, 'gain');
  if (g < 0) throw new RangeError(`${fn}: argument 'gain' must be >= 0, got ${g}`);
  return g;
}

/** U(-b, b), b = gain sqrt(6 / (fanIn + fanOut)) (Glorot; torch.nn.init.xavier_uniform_). */
export function xavierUniform_(tensor: Tensor, gain = 1, opts?: InitOptions): Tensor {
  const fn = `${I}.xavierUniform_`;
  const t = target(tensor, fn);
  const { fanIn, fanOut } = fans(t, fn);
  const bound = Math.sqrt(3) * gainOf(gain, fn) * Math.sqrt(2 / (fanIn + fanOut));
  return uniform_(t, -bound, bound, opts);
}

/** N(0, std^2), std = gain sqrt(2 / (fanIn + fanOut)) (torch.nn.init.xavier_normal_). */
export function xavierNormal_(tensor: Tensor, gain = 1, opts?: InitOptions): Tensor {
  const fn = `${I}.xavierNormal_`;
  const t = target(tensor, fn);
  const { fanIn, fanOut } = fans(t, fn);
  return normal_(t, 0, gainOf(gain, fn) * Math.sqrt(2 / (fanIn + fanOut)), opts);
}

/** The std of kaiming's rule: gain(nonlinearity, a) / sqrt(fan). */
function kaimingStd(t: Tensor, opts: unknown, fn: string): { std: number; o: Partial<KaimingOptions> } {
  const o = checkOptions<KaimingOptions>(opts, fn, KAIMING_KEYS);
  const mode = o.mode ?? 'fanIn';
  if (mode !== 'fanIn' && mode !== 'fanOut') throw new TypeError(`${fn}: option 'mode' must be 'fanIn' or 'fanOut', got ${describeValue(mode)}`);
  const a = o.a === undefined ? 0 : finite(o.a, fn, 'a');
  const { fanIn, fanOut } = fans(t, fn);
  const fan = mode === 'fanIn' ? fanIn : fanOut;
  if (fan === 0) throw new RangeError(`${fn}: the tensor has no elements along its ${mode === 'fanIn' ? 'input' : 'output'} dims (${formatShape(t.shape)})`);
  return { std: calculateGain(o.nonlinearity ?? 'leakyRelu', a) / Math.sqrt(fan), o };
}

/** U(-b, b), b = sqrt(3) gain / sqrt(fan) (He; torch.nn.init.kaiming_uniform_). */
export function kaimingUniform_(tensor: Tensor, opts?: KaimingOptions): Tensor {
  const fn = `${I}.kaimingUniform_`;
  const t = target(tensor, fn);
  const { std, o } = kaimingStd(t, opts, fn);
  const bound = Math.sqrt(3) * std;
  return uniform_(t, -bound, bound, { generator: o.generator });
}

/** N(0, std^2), std = gain / sqrt(fan) (torch.nn.init.kaiming_normal_). */
export function kaimingNormal_(tensor: Tensor, opts?: KaimingOptions): Tensor {
  const fn = `${I}.kaimingNormal_`;
  const t = target(tensor, fn);
  const { std, o } = kaimingStd(t, opts, fn);
  return normal_(t, 0, std, { generator: o.generator });
}
