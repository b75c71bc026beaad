// Seeded random tensors: gx.manualSeed, gx.rand, gx.randn, gx.randint, and
// gx.Generator for independent streams. Draws come from Philox4x32-10
// (ops/random/philox.h), a counter-based generator: element j of a fill is a
// function of (seed, offset, j) alone, so a seeded program draws the same
// numbers run to run, on any device, whatever the launch configuration;
// uniform and integer draws are even the same bits on the CPU and on CUDA.
// Each fill advances its generator's offset past the counters it used (NOTE
// [ Random streams ] in philox.h).
import { allocate, CREATION_FORM } from '../creation/creation';
import { checkDevice } from '../../core/gpus';
import { parseDevice, type DeviceLike } from '../../core/device';
import { parseDType } from '../../core/dtype';
import { FLOAT_DTYPES, INTEGER_RANGE, type DType, type IntegerDType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import type { NativeTensor } from '../../core/native';
import { checkOptions, optionKeys, tooManyArguments } from '../../core/options';
import { numelOf, parseShape, type ShapeLike } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { namedForCaller } from '../library';


/** The seed a process starts with (PyTorch's default too), so unseeded programs are reproducible as well. */
export const DEFAULT_SEED = 67280421310721n;

const U64 = 2n ** 64n;

function toSeed(seed: unknown, fn: string): bigint {
  if (typeof seed === 'bigint' && seed >= 0n && seed < U64) return seed;
  if (typeof seed === 'number' && Number.isSafeInteger(seed) && seed >= 0) return BigInt(seed);
  throw new RangeError(`${fn}: the seed must be an integer in [0, 2^64) (a number up to 2^53, or a bigint), got ${String(seed)}`);
}

/** A stream of random numbers: a seed and how far into its counters it has drawn. */
export class Generator {
  #seed: bigint;
  #offset = 0;

  constructor(seed: number | bigint = DEFAULT_SEED) {
    this.#seed = toSeed(seed, 'gx.Generator');
  }

  /** Restarts the stream from `seed`. */
  manualSeed(seed: number | bigint): this {
    this.#seed = toSeed(seed, 'Generator.manualSeed');
    this.#offset = 0;
    return this;
  }

  get initialSeed(): bigint {
    return this.#seed;
  }

  /** @internal The counters for a fill of `n` elements: (seed, first counter); advances past them. */
  take(n: number): { seed: bigint; offset: number } {
    const offset = this.#offset;
    this.#offset += Math.ceil(n / 2);
    return { seed: this.#seed, offset };
  }
}

/** The generator rand/randn/randint use when none is given. */
export const defaultGenerator = new Generator();

/** Seeds the default generator, like torch.manual_seed. @example gx.manualSeed(0) */
export function manualSeed(seed: number | bigint): void {
  if (arguments.length > 1) tooManyArguments('gx.manualSeed', '(seed)', arguments.length - 1, arguments[1]);
  defaultGenerator.manualSeed(seed);
}

export interface RandomOptions<D extends DType = DType> {
  dtype?: D;
  device?: DeviceLike;
  /** Draw from this generator instead of the default one. */
  generator?: Generator;
}

export interface RandnOptions<D extends DType = DType> extends RandomOptions<D> {
  /** The distribution's mean (default 0). */
  mean?: number;
  /** The distribution's standard deviation (default 1). */
  std?: number;
}

const RANDOM_KEYS = optionKeys<RandomOptions>({ dtype: true, device: true, generator: true });
const RANDN_KEYS = optionKeys<RandnOptions>({ dtype: true, device: true, generator: true, mean: true, std: true });

/** The draw one fill makes: its op and its parameters (the seed, offset and out come from fill). */
type Draw = (fn: string, out: NativeTensor, seed: bigint, offset: number) => void;

/** A new tensor of `shape` filled by `draw` from the generator's stream; `floating`: the dtype must be floating. */
function fill<D extends DType>(fn: string, shape: unknown, opts: RandomOptions | undefined, keys: readonly string[],
  defaultDType: DType, floating: boolean, draw: Draw): Tensor<D> {
  checkOptions(opts, fn, keys, CREATION_FORM);
  const dims = parseShape(shape, fn);
  const device = parseDevice(opts?.device, fn);
  checkDevice(device, fn);
  const dtype = opts?.dtype === undefined ? defaultDType : parseDType(opts.dtype, fn);
  if (floating && !(FLOAT_DTYPES as readonly DType[]).includes(dtype)) {
    throw new TypeError(`${fn}: dtype ${dtype} is not supported; expected a floating dtype (${FLOAT_DTYPES.join(', ')})`);
  }
  if (!floating && dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported; expected a numeric dtype`);
  const gen = opts?.generator ?? defaultGenerator;
  if (!(gen instanceof Generator)) throw new TypeError(`${fn}: generator must be a gx.Generator`);
  const out = allocate(dims, dtype as D, device, undefined, fn);
  try {
    const n = numelOf(dims);
    if (n > 0) {
      const { seed, offset } = gen.take(n);
      draw(fn, out.handle(fn), BigInt.asIntN(64, seed), offset);
    }
    return out;
  } catch (e) {
    out.dispose();
    throw namedForCaller(e, fn);
  }
}

const uniformDraw = (low: number, high: number): Draw => (fn, out, seed, offset) =>
  ops.rand(fn, { out, seed, offset, low, high });

/** Uniform samples in [0, 1) (float32 unless dtype says otherwise). @example gx.rand([2, 3], { device: 'cuda' }) */
export function rand<D extends DType = 'float32'>(shape: ShapeLike, opts?: RandomOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.rand', '(shape, opts?)', arguments.length - 2, arguments[2]);
  return fill<D>('gx.rand', shape, opts, RANDOM_KEYS, 'float32', true, uniformDraw(0, 1));
}

/** Uniform samples in [low, high). @example gx.uniform(-1, 1, [100]) */
export function uniform<D extends DType = 'float32'>(low: number, high: number, shape: ShapeLike, opts?: RandomOptions<D>): Tensor<D> {
  if (arguments.length > 4) tooManyArguments('gx.uniform', '(low, high, shape, opts?)', arguments.length - 4, arguments[4]);
  if (!Number.isFinite(low) || !Number.isFinite(high) || !(low < high)) {
    throw new RangeError(`gx.uniform: needs finite low < high, got [${String(low)}, ${String(high)})`);
  }
  return fill<D>('gx.uniform', shape, opts, RANDOM_KEYS, 'float32', true, uniformDraw(low, high));
}

/** Standard normal samples (mean 0, std 1). @example gx.randn([4096], { dtype: 'float64' }) */
export function randn<D extends DType = 'float32'>(shape: ShapeLike, opts?: RandnOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.randn', '(shape, opts?)', arguments.length - 2, arguments[2]);
  const mean = opts?.mean ?? 0;
  const std = opts?.std ?? 1;
  if (!Number.isFinite(mean) || !Number.isFinite(std) || std < 0) {
    throw new RangeError(`gx.randn: mean must be finite and std finite and >= 0, got mean ${String(mean)}, std ${String(std)}`);
  }
  return fill<D>('gx.randn', shape, opts, RANDN_KEYS, 'float32', true,
    (f, out, seed, offset) => ops.randn(f, { out, seed, offset, mean, std }));
}

function toInt(v: unknown, fn: string, name: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw new TypeError(`${fn}: ${name} must be an integer (a safe-integer number or a bigint), got ${String(v)}`);
}


/**
 * Integers uniform in [low, high) (int64 unless dtype says otherwise), like torch.randint.
 * @example gx.randint(0, 10, [3, 3])
 */
export function randint<D extends DType = 'int64'>(low: number | bigint, high: number | bigint, shape: ShapeLike,
  opts?: RandomOptions<D>): Tensor<D> {
  if (arguments.length > 4) tooManyArguments('gx.randint', '(low, high, shape, opts?)', arguments.length - 4, arguments[4]);
  const fn = 'gx.randint';
  const lo = toInt(low, fn, 'low');
  const hi = toInt(high, fn, 'high');
  if (!(lo < hi)) throw new RangeError(`${fn}: the range [${lo}, ${hi}) is empty; expected low < high`);
  const dtype = opts?.dtype === undefined ? 'int64' : parseDType(opts.dtype, fn);
  const bounds = dtype in INTEGER_RANGE ? INTEGER_RANGE[dtype as IntegerDType] : undefined;
  if (bounds !== undefined && (lo < bounds[0] || hi - 1n > bounds[1])) {
    throw new RangeError(`${fn}: [${lo}, ${hi}) does not fit in ${dtype} (${bounds[0]}..${bounds[1]})`);
  }
  return fill<D>(fn, shape, opts, RANDOM_KEYS, 'int64', false,
    (f, out, seed, offset) => ops.randint(f, { out, seed, offset, low: lo, high: hi }));
}
