// Tensor.to: the same data on another device and/or as another dtype, with
// torch.Tensor.to's overloads: to(dtype), to(device), to(device, dtype),
// to({ device, dtype }) and to(other) (other's device and dtype). It lives
// apart from tensor.ts because converting a dtype is an op (ops/ builds on
// tensor.ts, not the other way round); lib/index.ts installs it.
import { checkDevice } from '../../core/gpus';
import { Device, parseDevice, type DeviceLike } from '../../core/device';
import { isDType, type DType } from '../../core/dtype';
import { DTYPES } from '../../generated/dtypes';
import { astypeOp } from '../elementwise/elementwise';
import type { TensorMethods } from '../install';
import { checkOptions, closestKey, optionKeys, tooManyArguments } from '../../core/options';
import { describeValue } from '../../core/shape';
import { Tensor } from '../../core/tensor';

/** How Tensor.to copies. */
export interface ToOptions {
  /**
   * A copy between the CPU and a GPU returns before it is done (pinned host
   * memory): synchronize the stream (or await stream.done()) before reading.
   */
  nonBlocking?: boolean;
  /** Always a new copy, even when device and dtype already match (torch's copy=True). */
  copy?: boolean;
}

/** Tensor.to's single-object form: where and what to convert to. */
export interface ToTarget<E extends DType = DType> extends ToOptions {
  device?: DeviceLike;
  dtype?: E;
}

declare module '../../core/tensor' {
  interface Tensor<D extends DType = DType> {
    /**
     * A copy converted to `dtype`, on this tensor's device.
     * @example gx.arange(4).to('float64')
     */
    to<E extends DType>(dtype: E, opts?: ToOptions): Tensor<E>;
    /**
     * The same data on `device` ('cpu', 'cuda', 'cuda:N' or a Device).
     * @example const g = gx.arange(4).to('cuda');
     */
    to(device: DeviceLike, opts?: ToOptions): Tensor<D>;
    /** On `device`, converted to `dtype`. @example x.to('cuda', 'float16') */
    to<E extends DType>(device: DeviceLike, dtype: E, opts?: ToOptions): Tensor<E>;
    /** On `other`'s device, as `other`'s dtype. */
    to<E extends DType>(other: Tensor<E>, opts?: ToOptions): Tensor<E>;
    /** Device and dtype by name (either may be left out). @example x.to({ device: 'cuda', dtype: 'float16', nonBlocking: true }) */
    to<E extends DType = D>(target: ToTarget<E>): Tensor<E>;
    /** this.to('float32') (torch's x.float()). */
    float(): Tensor<'float32'>;
    /** this.to('float64') (torch's x.double()). */
    double(): Tensor<'float64'>;
    /** this.to('float16') (torch's x.half()). */
    half(): Tensor<'float16'>;
  }
}

const FN = 'Tensor.to';
const OPTION_KEYS = optionKeys<ToOptions>({ nonBlocking: true, copy: true });
const TARGET_KEYS = optionKeys<ToTarget>({ device: true, dtype: true, nonBlocking: true, copy: true });

function isPlainObject(x: unknown): x is object {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A string that is neither a device nor a dtype: a TypeError that says which of the two it resembles. */
function neither(s: string): TypeError {
  const guess = closestKey(s, [...DTYPES, 'cpu', 'cuda']);
  return new TypeError(`${FN}: ${JSON.stringify(s)} is neither a device ('cpu', 'cuda', 'cuda:N') nor a dtype ` +
    `(${DTYPES.join(', ')})${guess !== undefined ? `; did you mean '${guess}'?` : ''}`);
}

function parseTarget(args: unknown[]): { device?: Device; dtype?: DType; opts: ToOptions } {
  const [first, second, third] = args;
  let device: Device | undefined, dtype: DType | undefined, rest: unknown;
  if (first instanceof Tensor) {
    [device, dtype, rest] = [first.device, first.dtype, second];
  } else if (isPlainObject(first)) {
    if (args.length > 1) throw new TypeError(`${FN}: the { device, dtype } form takes no further arguments`);
    const t = checkOptions<ToTarget>(first, FN, TARGET_KEYS);
    device = t.device === undefined ? undefined : parseDevice(t.device, FN);
    if (t.dtype !== undefined && !isDType(t.dtype)) {
      throw new TypeError(`${FN}: unknown dtype ${describeValue(t.dtype)}; expected one of ${DTYPES.join(', ')}`);
    }
    return { device, dtype: t.dtype, opts: t };
  } else if (isDType(first)) {
    [dtype, rest] = [first, second];
  } else {
    if (typeof first === 'string' && !/^(cpu|cuda(:.*)?)$/.test(first)) throw neither(first);
    device = parseDevice(first, FN);
    if (typeof second === 'string') {
      if (!isDType(second)) throw new TypeError(`${FN}: unknown dtype ${JSON.stringify(second)}; expected one of ${DTYPES.join(', ')}`);
      [dtype, rest] = [second, third];
    } else {
      rest = second;
    }
  }
  // The options are the last argument each form takes: anything after them was dropped.
  const takes = first instanceof Tensor || isDType(first) || typeof second !== 'string' ? 2 : 3;
  if (args.length > takes) tooManyArguments(FN, '(device?, dtype?, options?)', args.length - takes, args[takes]);
  return { device, dtype, opts: checkOptions<ToOptions>(rest, FN, OPTION_KEYS) };
}

function to(this: Tensor, ...args: unknown[]): Tensor {
  this.handle(FN);
  const { device: asked, dtype: askedDType, opts } = parseTarget(args);
  const device = asked ?? this.device;
  checkDevice(device, FN);
  const dtype = askedDType ?? this.dtype;
  const sameDevice = device.equals(this.device);
  const nonBlocking = Boolean(opts.nonBlocking);
  if (dtype === this.dtype) {
    if (sameDevice && opts.copy === true) return this.clone();
    return this.toDevice(device, nonBlocking, FN);
  }
  if (sameDevice) return astypeOp(this, dtype, FN);
  // The conversion runs on the GPU side of a copy: fast there, and a temporary freed on the GPU is
  // stream-ordered (one on the host could be freed while a non-blocking copy still reads it).
  if (this.device.type === 'cuda') {
    using converted = astypeOp(this, dtype, FN);
    return converted.toDevice(device, nonBlocking, FN);
  }
  using moved = this.toDevice(device, nonBlocking, FN);
  return astypeOp(moved, dtype, FN);
}

// The dtype shorthands are to(dtype) under their own names, so errors and autograd's records name them.
const convertTo = (dtype: DType, fn: string) => function (this: Tensor): Tensor {
  if (arguments.length > 0) tooManyArguments(fn, '()', arguments.length, arguments[0]);
  this.handle(fn);
  return dtype === this.dtype ? this.toDevice(this.device, false, fn) : astypeOp(this, dtype, fn);
};

export const TO_METHODS: TensorMethods = {
  to,
  float: convertTo('float32', 'Tensor.float'),
  double: convertTo('float64', 'Tensor.double'),
  half: convertTo('float16', 'Tensor.half'),
};
