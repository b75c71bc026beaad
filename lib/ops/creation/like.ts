// Creation functions shaped after an existing tensor (zerosLike, onesLike,
// fullLike, emptyLike, randLike, randnLike, as torch's *_like: the tensor's
// shape, dtype and device unless the options say otherwise), and eye.
import { empty, full, zeros, CREATION_FORM, type EmptyOptions, type TensorOptions } from './creation';
import { DEFAULT_FLOAT, type DType, type Scalar } from '../../core/dtype';
import { FLOAT_DTYPES } from '../../generated/dtypes';
import { checkOptions, optionKeys, tooManyArguments } from '../../core/options';
import { checkTensor } from '../common';
import { rand, randn, type RandnOptions, type RandomOptions } from '../random/random';
import { describeValue } from '../../core/shape';
import type { Tensor } from '../../core/tensor';

const LIKE_KEYS = optionKeys<TensorOptions>({ dtype: true, device: true });
const RAND_LIKE_KEYS = optionKeys<RandomOptions>({ dtype: true, device: true, generator: true });
const RANDN_LIKE_KEYS = optionKeys<RandnOptions>({ dtype: true, device: true, generator: true, mean: true, std: true });

/** `opts` checked against `keys`, with dtype and device defaulting to x's. */
function likeOptions<O extends TensorOptions>(x: unknown, opts: unknown, fn: string, keys: readonly string[]): { x: Tensor; o: O } {
  const t = checkTensor(x, fn, 'input');
  const o = checkOptions<O>(opts, fn, keys, CREATION_FORM);
  return { x: t, o: { ...o, dtype: o.dtype ?? t.dtype, device: o.device ?? t.device } as O };
}

/** An uninitialized tensor of x's shape (dtype and device x's unless given). @example gx.emptyLike(x) */
export function emptyLike<D extends DType = DType>(x: Tensor, opts?: TensorOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.emptyLike', '(x, options?)', arguments.length - 2, arguments[2]);
  const { x: t, o } = likeOptions<EmptyOptions<D>>(x, opts, 'gx.emptyLike', LIKE_KEYS);
  return empty<D>(t.shape, o);
}

/** Zeros of x's shape (dtype and device x's unless given). @example gx.zerosLike(x, { dtype: 'float64' }) */
export function zerosLike<D extends DType = DType>(x: Tensor, opts?: TensorOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.zerosLike', '(x, options?)', arguments.length - 2, arguments[2]);
  const { x: t, o } = likeOptions<EmptyOptions<D>>(x, opts, 'gx.zerosLike', LIKE_KEYS);
  return zeros<D>(t.shape, o);
}

/** Ones of x's shape (dtype and device x's unless given). @example gx.onesLike(x) */
export function onesLike<D extends DType = DType>(x: Tensor, opts?: TensorOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.onesLike', '(x, options?)', arguments.length - 2, arguments[2]);
  const { x: t, o } = likeOptions<EmptyOptions<D>>(x, opts, 'gx.onesLike', LIKE_KEYS);
  return full<D>(t.shape, 1, o);
}

/** `value` everywhere, in x's shape (dtype and device x's unless given, as torch.full_like). @example gx.fullLike(x, -1) */
export function fullLike<D extends DType = DType>(x: Tensor, value: Scalar, opts?: TensorOptions<D>): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.fullLike', '(x, value, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.fullLike';
  const { x: t, o } = likeOptions<EmptyOptions<D>>(x, opts, fn, LIKE_KEYS);
  if (typeof value !== 'number' && typeof value !== 'bigint' && typeof value !== 'boolean') {
    throw new TypeError(`${fn}: value must be a number, bigint or boolean, got ${describeValue(value)}`);
  }
  return full<D>(t.shape, value, o);
}

function checkFloating(dtype: DType | undefined, fn: string): void {
  if (dtype !== undefined && !(FLOAT_DTYPES as readonly DType[]).includes(dtype)) {
    throw new TypeError(`${fn}: the result would be ${dtype}; random samples need a floating dtype: pass { dtype: 'float32' }`);
  }
}

/** Uniform samples in [0, 1) of x's shape (dtype and device x's unless given; x must be floating or dtype given). @example gx.randLike(x) */
export function randLike<D extends DType = DType>(x: Tensor, opts?: RandomOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.randLike', '(x, options?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.randLike';
  const { x: t, o } = likeOptions<RandomOptions<D>>(x, opts, fn, RAND_LIKE_KEYS);
  checkFloating(o.dtype, fn);
  return rand<D>(t.shape, o);
}

/** Standard normal samples of x's shape (dtype and device x's unless given). @example gx.randnLike(x, { std: 0.02 }) */
export function randnLike<D extends DType = DType>(x: Tensor, opts?: RandnOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.randnLike', '(x, options?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.randnLike';
  const { x: t, o } = likeOptions<RandnOptions<D>>(x, opts, fn, RANDN_LIKE_KEYS);
  checkFloating(o.dtype, fn);
  return randn<D>(t.shape, o);
}

function checkSize(v: unknown, fn: string, name: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new RangeError(`${fn}: ${name} must be a non-negative integer, got ${describeValue(v)}`);
  }
  return v;
}

/**
 * The n x m identity (m defaults to n): ones on the main diagonal, zeros
 * elsewhere; float32 unless dtype says otherwise.
 * @example gx.eye(3); gx.eye(2, 4, { dtype: 'int32', device: 'cuda' })
 */
export function eye<D extends DType = 'float32'>(n: number, m?: number | TensorOptions<D>, opts?: TensorOptions<D>): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.eye', '(n, m?, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.eye';
  const [cols, o] = typeof m === 'number' || m === undefined ? [m ?? n, opts] : [n, m];
  checkSize(n, fn, 'n');
  checkSize(cols, fn, 'm');
  const checked = checkOptions<TensorOptions<D>>(o, fn, LIKE_KEYS, CREATION_FORM);
  const out = zeros<D>([n, cols], { dtype: (checked.dtype ?? DEFAULT_FLOAT) as D, device: checked.device });
  // The diagonal is a strided view (stride m + 1) of the zeros: one fill, on any device.
  using diagonal = out.asStrided([Math.min(n, cols)], [cols + 1], 0);
  diagonal.fill_(1);
  return out;
}
