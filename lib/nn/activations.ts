// The activations of the op list as modules, torch.nn's shape: SiLU, Mish,
// SELU, Hardsigmoid, LogSigmoid, and those with number parameters
// (LeakyReLU, ELU, Hardtanh), which keep them as read-only fields and print
// them as torch does. Each forward is the built-in op (its kernel and its
// derivative come from ops/op-list.js); ReLU, GELU, Sigmoid and Tanh are in
// layers.ts.
import { elu, hardsigmoid, hardtanh, leakyRelu, logSigmoid, mish, selu, silu } from '../generated/elementwise';
import { describeValue } from '../core/shape';
import { Elementwise } from './layers';

/** A finite number parameter of a module, checked. */
function numberArg(v: unknown, fn: string, name: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${fn}: ${name} must be a finite number, got ${describeValue(v)}`);
  return v;
}

/** x * sigmoid(x) (torch.nn.SiLU). */
export class SiLU extends Elementwise {
  constructor() { super((x) => silu(x)); }
}
/** x * tanh(softplus(x)) (torch.nn.Mish). */
export class Mish extends Elementwise {
  constructor() { super((x) => mish(x)); }
}
/** scale * (x > 0 ? x : alpha * (e^x - 1)) with torch's constants (torch.nn.SELU). */
export class SELU extends Elementwise {
  constructor() { super((x) => selu(x)); }
}
/** min(max(x + 3, 0), 6) / 6 (torch.nn.Hardsigmoid). */
export class Hardsigmoid extends Elementwise {
  constructor() { super((x) => hardsigmoid(x)); }
}
/** log(sigmoid(x)), stable (torch.nn.LogSigmoid). */
export class LogSigmoid extends Elementwise {
  constructor() { super((x) => logSigmoid(x)); }
}

/**
 * x > 0 ? x : negativeSlope * x (torch.nn.LeakyReLU).
 * @example new gx.nn.LeakyReLU(0.2)
 */
export class LeakyReLU extends Elementwise {
  readonly negativeSlope: number;
  constructor(negativeSlope = 0.01) {
    const slope = numberArg(negativeSlope, 'gx.nn.LeakyReLU', 'negativeSlope');
    super((x) => leakyRelu(x, slope));
    this.negativeSlope = slope;
  }

  override extraRepr(): string {
    return `negativeSlope=${this.negativeSlope}`;
  }
}

/**
 * x > 0 ? x : alpha * (e^x - 1) (torch.nn.ELU).
 * @example new gx.nn.ELU(0.5)
 */
export class ELU extends Elementwise {
  readonly alpha: number;
  constructor(alpha = 1) {
    const a = numberArg(alpha, 'gx.nn.ELU', 'alpha');
    super((x) => elu(x, a));
    this.alpha = a;
  }

  override extraRepr(): string {
    return `alpha=${this.alpha}`;
  }
}

/**
 * min(max(x, minVal), maxVal) (torch.nn.Hardtanh); maxVal must exceed minVal.
 * @example new gx.nn.Hardtanh(-2, 2)
 */
export class Hardtanh extends Elementwise {
  readonly minVal: number;
  readonly maxVal: number;
  constructor(minVal = -1, maxVal = 1) {
    const fn = 'gx.nn.Hardtanh';
    const lo = numberArg(minVal, fn, 'minVal'), hi = numberArg(maxVal, fn, 'maxVal');
    if (!(hi > lo)) throw new RangeError(`${fn}: maxVal must be greater than minVal, got minVal ${lo} and maxVal ${hi}`);
    super((x) => hardtanh(x, lo, hi));
    this.minVal = lo;
    this.maxVal = hi;
  }

  override extraRepr(): string {
    return `minVal=${this.minVal}, maxVal=${this.maxVal}`;
  }
}
