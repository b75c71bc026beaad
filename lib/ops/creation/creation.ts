// Creating tensors: from JS data (tensor), and filled ones (empty, zeros,
// ones, full, arange, linspace) on any device.
import { parseDevice, type Device, type DeviceLike } from '../../core/device';
import {
  checkConvertible, dtypeCode, dtypeOfScalar, dtypeOfTypedArray, isTypedArray, parseDType, toStorageArray,
  DEFAULT_FLOAT, type AnyTypedArray, type DType, type Scalar,
} from '../../core/dtype';
import { dtypeInfo, INTEGER_RANGE } from '../../generated/dtypes';
import { checkDevice } from '../../core/gpus';
import { lastSerial, resultHandle, stageReplace } from '../../core/handle-pool';
import { native } from '../../core/native';
import { flattenNested } from '../../core/nested';
import { checkOptions, optionKeys, type OptionsForm, tooManyArguments } from '../../core/options';
import { STAGED_EMPTY, STAGED_LAST_ADDRESS, STAGED_SHAPE, stagingArea } from '../../core/staging';
import { formatShape, MAX_DIMS, numelOf, parseShape, tooLargeReason, type ShapeLike } from '../../core/shape';
import { contiguousMeta, Tensor } from '../../core/tensor';

export interface TensorOptions<D extends DType = DType> {
  /** Element type; inferred from the data when omitted. */
  dtype?: D;
  /** 'cpu' (default), 'cuda', 'cuda:N' or a Device. */
  device?: DeviceLike;
}

export interface EmptyOptions<D extends DType = DType> extends TensorOptions<D> {
  /** Page-locked host memory (cpu only): faster, asynchronous copies to the GPU. */
  pinned?: boolean;
}

/** Data gx.tensor accepts: a scalar, a (nested) array of scalars, or a typed array. */
export type TensorData = Scalar | readonly unknown[] | AnyTypedArray;

/** The dtype a typed array gives when no dtype is asked for. */
type DTypeOfData<T> = T extends Float32Array ? 'float32'
  : T extends Float64Array ? 'float64'
  : T extends Int8Array ? 'int8'
  : T extends Int16Array ? 'int16'
  : T extends Int32Array ? 'int32'
  : T extends BigInt64Array ? 'int64'
  : T extends Uint8Array | Uint8ClampedArray ? 'uint8'
  : Leaf<T> extends bigint ? 'int64'
  : Leaf<T> extends boolean ? 'bool'
  : Leaf<T> extends number ? 'float32'
  : DType;

/** The element type of a (nested) array. */
type Leaf<T> = T extends readonly (infer E)[] ? Leaf<E> : T;

/** What creation and random functions say an options argument looks like (null is refused, not read as none). */
export const CREATION_FORM: OptionsForm = { like: "{ dtype: 'float32', device: 'cuda' }", nullIsEmpty: false };

/** The option keys of each kind of creation function. */
const TENSOR_KEYS = optionKeys<TensorOptions & { shape?: readonly number[] }>({ dtype: true, device: true, shape: true });
const EMPTY_KEYS = optionKeys<EmptyOptions>({ dtype: true, device: true, pinned: true });
const RANGE_KEYS = optionKeys<TensorOptions>({ dtype: true, device: true });

function options<D extends DType>(opts: unknown, fn: string, known: readonly string[]): { dtype?: D; device: Device; pinned: boolean } {
  if (opts === undefined) return { device: parseDevice(undefined, fn), pinned: false };
  const o: EmptyOptions<D> = checkOptions(opts, fn, known, CREATION_FORM);
  const device = parseDevice(o.device, fn);
  checkDevice(device, fn);
  if (o.pinned && device.type !== 'cpu') {
    throw new TypeError(`${fn}: pinned memory is host memory; it needs device 'cpu', not '${device}'`);
  }
  return { dtype: o.dtype === undefined ? undefined : (parseDType(o.dtype, fn) as D), device, pinned: Boolean(o.pinned) };
}

/**
 * A tensor holding a copy of `data`: a number, bigint or boolean (0-d), a
 * nested array (its nesting gives the shape), or a typed array (1-d, or the
 * shape given in options). Numbers default to float32, bigints to int64,
 * booleans to bool, typed arrays to their own type.
 * @example
 * const a = gx.tensor([[1, 2], [3, 4]], { device: 'cuda' });
 * const b = gx.tensor(new Float64Array([1, 2, 3]));
 * const c = gx.tensor(new BigInt64Array([1n, 2n]), { shape: [2, 1] });
 */
export function tensor<T extends TensorData, D extends DType = DTypeOfData<T>>(
  data: T,
  opts?: TensorOptions<D> & { shape?: readonly number[] },
): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.tensor', '(data, opts?)', arguments.length - 2, arguments[2]);
  const fn = 'gx.tensor';
  const { dtype: asked, device } = options<D>(opts, fn, TENSOR_KEYS);
  let shape: number[];
  let dtype: DType;
  let bytes: ArrayBufferView;
  if (isTypedArray(data)) {
    const own = dtypeOfTypedArray(data);
    if (own === undefined && asked === undefined) {
      throw new TypeError(`${fn}: a ${data.constructor.name} has no matching dtype; pass { dtype } to convert it`);
    }
    dtype = asked ?? (own as DType);
    // Values convert to the dtype, a Uint16Array's for float16 and bfloat16 too (its numbers were read as the raw
    // bits, where every other dtype took the values: NumPy's np.array(u16, dtype=float16) converts as well).
    bytes = dtype === own ? data : toStorageArray(data as ArrayLike<number | bigint>, dtype, fn);
    const n = data.length;
    shape = opts?.shape === undefined ? [n] : parseShape(opts.shape, fn, 'options.shape');
    if (numelOf(shape) !== n) {
      throw new RangeError(`${fn}: data has ${n} elements but shape ${formatShape(shape)} needs ${numelOf(shape)}`);
    }
  } else {
    const flat = flattenNested(data, fn);
    dtype = asked ?? (flat.kind === 'empty' ? DEFAULT_FLOAT : dtypeOfScalar(flat.values[0]));
    shape = flat.shape;
    if (opts?.shape !== undefined) {
      const want = parseShape(opts.shape, fn, 'options.shape');
      if (numelOf(want) !== flat.values.length) {
        throw new RangeError(`${fn}: data has ${flat.values.length} elements but shape ${formatShape(want)} needs ${numelOf(want)}`);
      }
      shape = want;
    }
    bytes = toStorageArray(flat.values, dtype, fn);
  }
  // N-API cannot hand out a SharedArrayBuffer's memory: such data is copied first.
  if (bytes.buffer instanceof SharedArrayBuffer) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice();
  return new Tensor<D>(native.fromBytes(bytes, shape, dtypeCode(dtype), device.typeCode, device.index), contiguousMeta(shape, dtype, device));
}

/**
 * A tensor with uninitialized memory.
 * @example const buf = gx.empty([1024, 1024], { device: 'cuda' });
 */
export function empty<D extends DType = 'float32'>(shape: ShapeLike, opts?: EmptyOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.empty', '(shape, opts?)', arguments.length - 2, arguments[2]);
  return emptyImpl<D>(shape, opts, 'gx.empty');
}

/**
 * @internal A new contiguous tensor for code that has validated `shape`
 * (non-negative integers) and `device` already: ops and generated kernels
 * allocating outputs, where gx.empty's argument parsing would dominate.
 * `like`: an operand whose shape array `shape` may be (its metadata is reused).
 */
export function allocate<D extends DType>(shape: readonly number[], dtype: D, device: Device, like?: Tensor, fn?: string): Tensor<D> {
  // A contiguous `like` of this very shape array lends its frozen shape and strides (no copies to make and freeze).
  const meta = like !== undefined && like.shape === shape && like.isContiguous()
    ? { shape, strides: like.strides, offset: 0, dtype, device, contiguous: true }
    : contiguousMeta(shape, dtype, device);
  // The request goes through the staging area (no array or number to read through N-API), and the core
  // leaves the new tensor's address there: kernels launched on it need no call to ask (lib/core/staging.ts).
  const st = stagingArea();
  const ndim = shape.length;
  st[STAGED_EMPTY] = ndim;
  st[STAGED_EMPTY + 1] = dtypeCode(dtype);
  st[STAGED_EMPTY + 2] = device.typeCode;
  st[STAGED_EMPTY + 3] = device.index;
  for (let d = 0; d < ndim && d < MAX_DIMS; d++) st[STAGED_SHAPE + d] = shape[d];
  // A disposed tensor's handle takes the new tensor when one is pooled (NOTE [ Recycled handles ]); one whose
  // disposal was deferred is disposed by the same call (NOTE [ Deferred disposal ]).
  const spare = resultHandle();
  if (spare !== undefined) stageReplace();
  const h = spare === undefined ? callerNamed(fn, native.emptyStaged) : callerNamed(fn, () => native.emptyStaged(spare));
  return new Tensor<D>(h, meta, st[STAGED_LAST_ADDRESS], lastSerial());
}

/**
 * `alloc()`, whose out-of-memory error (the core's, which says the size and
 * the device but knows no caller) names `fn` when given.
 */
function callerNamed<T>(fn: string | undefined, alloc: () => T): T {
  try {
    return alloc();
  } catch (e) {
    if (fn !== undefined && e instanceof Error && (e as Error & { code?: string }).code === 'GX_OUT_OF_MEMORY') e.message = `${fn}: ${e.message}`;
    throw e;
  }
}

function emptyImpl<D extends DType>(shape: unknown, opts: unknown, fn: string, defaultDType: DType = DEFAULT_FLOAT): Tensor<D> {
  const dims = parseShape(shape, fn);
  const o = options<D>(opts, fn, EMPTY_KEYS);
  const dtype = o.dtype ?? defaultDType;
  const tooLarge = tooLargeReason(dims, dtypeInfo(dtype).itemsize);
  if (tooLarge !== undefined) throw new RangeError(`${fn}: shape ${formatShape(dims)} of ${dtype} is too large: ${tooLarge}`);
  if (!o.pinned) return allocate(dims, dtype, o.device, undefined, fn) as Tensor<D>;
  return new Tensor<D>(callerNamed(fn, () => native.empty(dims, dtypeCode(dtype), o.device.typeCode, o.device.index, true)),
    contiguousMeta(dims, dtype, o.device));
}

function filled<D extends DType>(shape: unknown, value: Scalar, opts: unknown, fn: string, defaultDType: DType): Tensor<D> {
  const t = emptyImpl<D>(shape, opts, fn, defaultDType);
  try {
    return t.fill_(value, fn);
  } catch (err) {
    t.dispose();
    throw err;
  }
}

/** A tensor of zeros. @example gx.zeros([2, 3], { dtype: 'int32' }) */
export function zeros<D extends DType = 'float32'>(shape: ShapeLike, opts?: EmptyOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.zeros', '(shape, opts?)', arguments.length - 2, arguments[2]);
  return filled<D>(shape, 0, opts, 'gx.zeros', DEFAULT_FLOAT);
}

/** A tensor of ones. @example gx.ones(4, { device: 'cuda' }) */
export function ones<D extends DType = 'float32'>(shape: ShapeLike, opts?: EmptyOptions<D>): Tensor<D> {
  if (arguments.length > 2) tooManyArguments('gx.ones', '(shape, opts?)', arguments.length - 2, arguments[2]);
  return filled<D>(shape, 1, opts, 'gx.ones', DEFAULT_FLOAT);
}

/**
 * A tensor with every element `value`; the dtype defaults to the value's
 * (float32 for numbers, int64 for bigints, bool for booleans).
 * @example gx.full([2, 2], 7n)
 */
export function full<D extends DType = DType>(shape: ShapeLike, value: Scalar, opts?: EmptyOptions<D>): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.full', '(shape, value, opts?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.full';
  if (typeof value !== 'number' && typeof value !== 'bigint' && typeof value !== 'boolean') {
    throw new TypeError(`${fn}: value must be a number, bigint or boolean, got ${typeof value}`);
  }
  return filled<D>(shape, value, opts, fn, dtypeOfScalar(value));
}

/** A positional argument of arange rather than its options: anything but an object, null or undefined. */
const isRangeNumber = (v: unknown): boolean => v !== null && v !== undefined && typeof v !== 'object';

function checkFinite(fn: string, name: string, v: unknown): number {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${typeof v}`);
  if (!Number.isFinite(v)) throw new RangeError(`${fn}: ${name} must be finite, got ${v}`);
  return v;
}

/**
 * Values from start (inclusive) to end (exclusive) by step, as torch.arange:
 * int64 when start, end and step are integers, else float32. With an integer
 * dtype the arguments are truncated to integers as torch's are (NOTE
 * [ Integer aranges ]): gx.arange(0, 3, 1.5, { dtype: 'int64' }) is [0, 1, 2].
 * Not for bool (torch has no bool arange).
 * @example gx.arange(5); gx.arange(1, 2, 0.25, { device: 'cuda' })
 */
export function arange<D extends DType = DType>(end: number, opts?: TensorOptions<D>): Tensor<D>;
export function arange<D extends DType = DType>(start: number, end: number, opts?: TensorOptions<D>): Tensor<D>;
export function arange<D extends DType = DType>(start: number, end: number, step?: number, opts?: TensorOptions<D>): Tensor<D>;
export function arange<D extends DType = DType>(...args: unknown[]): Tensor<D> {
  const fn = 'gx.arange';
  // The options object may follow any number of the numbers, as torch's keywords do (arange(10, 20, { device })).
  const last = args.length > 0 && !isRangeNumber(args[args.length - 1]) ? args.length - 1 : args.length;
  const opts = last < args.length ? args[last] : undefined;
  if (last < 1 || last > 3) {
    throw new TypeError(`${fn}: expected (end), (start, end) or (start, end, step), then options; got ${last} numbers`);
  }
  const nums = args.slice(0, last);
  let start = last === 1 ? 0 : checkFinite(fn, 'start', nums[0]);
  let end = checkFinite(fn, 'end', nums[last === 1 ? 0 : 1]);
  let step = last === 3 && nums[2] !== undefined ? checkFinite(fn, 'step', nums[2]) : 1;
  const o = options<D>(opts, fn, RANGE_KEYS);
  const integral = Number.isInteger(start) && Number.isInteger(end) && Number.isInteger(step);
  const dtype = o.dtype ?? (integral ? 'int64' : DEFAULT_FLOAT);
  if (dtype === 'bool') throw new TypeError(`${fn}: dtype bool is not supported (torch.arange has no bool kernel); arange in uint8 and compare with 0`);
  // NOTE [ Integer aranges ]
  // torch.arange converts start, end and step to the result's accumulate type before anything else: an integer
  // dtype truncates them (toward zero). For int64 the count comes from the truncated values too, and a step that
  // truncates to 0 is refused; the narrower integer dtypes count with the untruncated values
  // (ceil((end - start) / step) in doubles) and then step by the truncated ones, so that
  // torch.arange(1, 2.5, 0.5, dtype=torch.int32) is [1, 1, 1] and torch.arange(0, 3, 1.5, dtype=torch.int32) is [0, 1].
  if (dtype === 'int64') {
    [start, end, step] = [Math.trunc(start), Math.trunc(end), Math.trunc(step)];
    if (step === 0 && !Object.is(nums[2], 0)) throw new RangeError(`${fn}: step must be nonzero (${String(nums[2])} truncates to 0 for int64)`);
  }
  if (step === 0) throw new RangeError(`${fn}: step must be nonzero`);
  if ((end - start) * step < 0) {
    throw new RangeError(`${fn}: end (${end}) is not reachable from start (${start}) with step ${step}`);
  }
  const n = Math.ceil((end - start) / step) + 0;  // + 0: not -0
  // The narrower integer dtypes step by the truncated start and step (after counting with the untruncated ones).
  if (dtypeInfo(dtype).kind !== 'f' && dtype !== 'int64') [start, step] = [Math.trunc(start), Math.trunc(step)];
  if (!Number.isSafeInteger(n)) throw new RangeError(`${fn}: the range holds ${n} elements, more than a tensor can`);
  const integer = dtypeInfo(dtype).kind !== 'f';
  if (integer && n > 0) {
    // The core counts such a range in int64 (exact past 2^53); its values must fit.
    const [lo, hi] = INTEGER_RANGE.int64;
    const last = BigInt(start) + BigInt(n - 1) * BigInt(step);
    for (const [name, v] of [['start', BigInt(start)], ['the last value', last]] as const) {
      if (v < lo || v > hi) throw new RangeError(`${fn}: ${name} (${v}) is beyond int64`);
    }
  }
  if (!integer || dtype === 'int64') {
    const t = allocate([n], dtype as D, o.device, undefined, fn);
    native.arange(t.handle(), start, step);
    return t;
  }
  // A narrower integer dtype takes the int64 values converted, as torch's (int64 accumulate, then the dtype: a
  // uint8 arange(-2, 2) starts at 254). Converting each value from a double in the kernel was undefined past the
  // dtype's range, and the CPU wrapped where CUDA saturated.
  const wide = allocate([n], 'int64', o.device, undefined, fn);
  try {
    native.arange(wide.handle(), start, step);
    return wide.astype(dtype) as Tensor<D>;
  } finally {
    wide.dispose();
  }
}


/**
 * The bounds linspace or logspace interpolates between: each converted to `dtype` as torch's checked conversion
 * does (checkConvertible: 70000 is refused for float16, 127.5 for int8; an integer dtype takes the truncated value,
 * and -1 is uint8's 255 as NOTE [ Integers into integer dtypes ] in lib/core/dtype.ts says), a floating bound as it
 * is. torch converts the bounds it uses: none for no steps, start alone for one (where its float16 and uint8 fills
 * give inf and wrap instead, we refuse too); a bound it does not use comes back as given.
 */
export function spacedBounds(start: number, end: number, steps: number, dtype: DType, fn: string): [number, number] {
  return [steps >= 1 ? checkConvertible(start, dtype, fn, 'start') : start, steps >= 2 ? checkConvertible(end, dtype, fn, 'end') : end];
}
/**
 * `steps` evenly spaced values from start to end inclusive (float32 by default), as
 * torch.linspace: an integer dtype truncates start and end first (a negative
 * integer into uint8 wraps: -1 is 255); a bound the dtype cannot hold is refused
 * (70000 for float16, 127.5 for int8, -256 for uint8); not for bool.
 * @example gx.linspace(0, 1, 5) // [0, 0.25, 0.5, 0.75, 1]
 */
export function linspace<D extends DType = 'float32'>(start: number, end: number, steps: number, opts?: TensorOptions<D>): Tensor<D> {
  if (arguments.length > 4) tooManyArguments('gx.linspace', '(start, end, steps, opts?)', arguments.length - 4, arguments[4]);
  const fn = 'gx.linspace';
  checkFinite(fn, 'start', start);
  checkFinite(fn, 'end', end);
  if (typeof steps !== 'number' || !Number.isSafeInteger(steps) || steps < 0) {
    throw new RangeError(`${fn}: steps must be a non-negative integer, got ${String(steps)}`);
  }
  const o = options<D>(opts, fn, RANGE_KEYS);
  const dtype = o.dtype ?? DEFAULT_FLOAT;
  if (dtype === 'bool' && steps > 1) throw new TypeError(`${fn}: dtype bool is not supported (torch.linspace has no bool kernel)`);
  // An integer dtype converts start and end first and interpolates between those, as torch.linspace:
  // linspace(0.5, 3.7, 3, dtype=int64) is [0, 1, 3], linspace(-1, 0, 3, dtype=uint8) [255, 127, 0].
  const [first, last] = spacedBounds(start, end, steps, dtype, fn);
  const t = allocate([steps], dtype as D, o.device, undefined, fn);
  native.linspace(t.handle(), first, last);
  return t;
}
