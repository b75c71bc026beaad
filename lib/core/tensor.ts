// Tensor: the JS face of a core TensorImpl (csrc/core/tensor.h).
//
// NOTE [ Tensor lifetime ]
// A Tensor owns one reference to its native tensor. dispose() (or `using`)
// drops it at once and is the way to free memory promptly; the native
// handle's finalizer frees forgotten tensors too, but only when the garbage
// collector gets to them, which may be late. Views share storage with their
// base: the memory goes when the last of them is disposed or collected.
// Using a disposed tensor, or disposing it twice, throws. A disposed
// tensor's native handle carries a later result (NOTE [ Recycled handles ]).
//
// NOTE [ Self-sufficient declarations ]
// The emitted .d.ts must compile in a consumer with no @types/node and any
// TypeScript from 5.2 on (6 and later load no @types on their own, and their
// default lib has no Disposable): `using` needs lib esnext.disposable, which
// this directive brings along (preserve: TypeScript keeps it in the .d.ts),
// and no public type names a Node module (see Tensor's inspect hook).
/// <reference lib="esnext.disposable" preserve="true" />
import { constants as bufferConstants } from 'buffer';

import { Stream } from './stream';
import { Device, deviceOf } from './device';
import { dtypeCode, dtypeFromCode, fillBits, type DType, type Scalar } from './dtype';
import { DEFAULT_FORMAT_OPTIONS, formatTensor } from './format';
import { shownValues } from './shown-values';
import { dtypeInfo, type ValueArrayMap } from '../generated/dtypes';
import { decodeValues, isDecoded, readOut, type ReadOptions } from './tensor-read';
import { native, type NativeTensor } from './native';
import { checkOptions, optionKeys, tooManyArguments } from './options';
import { track } from './tidy';
import { deferDisposal, recycle, stagedView } from './handle-pool';
import { contiguousStrides, formatShape, inferShape, numelOf, viewStrides } from './shape';
import { copyRaw } from './copy';

/**
 * What item() returns for a dtype: boolean for bool, else number (int64 too,
 * as torch's item() gives a Python int: `x.sum().item() + 1` works; a value
 * beyond 2^53 - 1 throws, and itemBigInt() gives it exactly).
 */
export type ItemOf<D extends DType> = D extends 'bool' ? boolean : number;

/** @internal What a Tensor knows about its layout without asking the core. */
export interface Meta {
  shape: readonly number[];
  strides: readonly number[];
  offset: number;
  dtype: DType;
  device: Device;
  /** isContiguous(), once asked (the layout never changes). */
  contiguous?: boolean;
}

/** @internal Metadata of a new contiguous tensor (creation functions know it all). */
export function contiguousMeta(shape: readonly number[], dtype: DType, device: Device): Meta {
  // Another tensor's shape (an op's result shaped as an operand) is shared with its C-order strides. The lookup
  // comes first: a WeakMap's get is a stub call, Object.isFrozen (each op paid it) a call into V8's runtime.
  let strides = cStridesOf.get(shape);
  if (strides === undefined) {
    if (!Object.isFrozen(shape)) {
      return { shape: Object.freeze(shape.slice()), strides: Object.freeze(contiguousStrides(shape)), offset: 0, dtype, device, contiguous: true };
    }
    strides = shape.length <= 1 ? SHORT_STRIDES[shape.length] : Object.freeze(contiguousStrides(shape));
    cStridesOf.set(shape, strides);
  }
  return { shape, strides, offset: 0, dtype, device, contiguous: true };
}

/** The C-order strides of frozen shape arrays (tensors' own), found by the array. */
const cStridesOf = new WeakMap<readonly number[], readonly number[]>();
const SHORT_STRIDES: readonly (readonly number[])[] = [Object.freeze([]), Object.freeze([1])];

/** The options copy_ takes. */
const COPY_KEYS = optionKeys<{ nonBlocking?: boolean }>({ nonBlocking: true });

// NOTE [ Tensors and postMessage ]
// A tensor's memory belongs to this thread's core, so a Tensor cannot be
// structured-cloned into a worker: it would arrive as `{}`. Structured clone
// copies own enumerable properties and throws DataCloneError on a symbol, so
// every Tensor carries this symbol, whose description is the explanation the
// error shows. (An own getter that throws would do the same at ~450 ns per
// tensor; a field costs nothing measurable.)
const NOT_CLONEABLE = Symbol('a gx.Tensor cannot be posted to another thread (its memory belongs to this one): ' +
  'post its data, await t.toArray(), and rebuild it there with gx.tensor(data, { dtype, device }).reshape(shape)');

/** @internal What autograd keeps on a tensor (lib/tape/graph.ts). */
export interface AutogradMeta {
  requiresGrad: boolean;
  grad: Tensor | null;
  /** The node that made this tensor (null for a leaf). */
  node: { release(): void } | null;
  /** Which of the node's outputs this tensor is. */
  index: number;
  /** What the nodes that saved this very tensor hold of it, kept alive when it is disposed (lib/tape/graph.ts). */
  savedIn?: { keep(): void };
  /** True for a saved alias, which names its node without holding it (NOTE [ Saved aliases in the graph ] in lib/tape/graph.ts). */
  unheld?: true;
}

/** @internal Set by lib/autograd: called when a tensor autograd knows is disposed. */
export const autogradHooks: {
  disposed?: (t: Tensor) => void;
  /** Before a tensor autograd saved is disposed (its handle still valid). */
  disposing?: (t: Tensor) => void;
  /** A view, reshape, contiguous() or clone() of a tensor autograd knows: `out` has `t`'s values. */
  sameValues?: (name: string, t: Tensor, out: Tensor) => void;
  /** `out` is `t` copied to another device (to(), cpu(), cuda()): its gradient goes back to t's device. */
  moved?: (t: Tensor, out: Tensor) => void;
  /** Before an in-place write of `t` (NOTE [ Autograd and in-place ops ]). */
  inPlace?: (fn: string, t: Tensor, inputs: readonly unknown[]) => void;
  /** Tensor.copy_: writes src into dst (through copyRaw), recorded when either takes part in autograd. */
  copy?: (fn: string, dst: Tensor, src: Tensor, nonBlocking: boolean) => void;
  /** Tensor.fill_ (and zero_): a copy of the value, when autograd takes part or it is a tensor; false: fill_ writes it. */
  fill?: (fn: string, dst: Tensor, value: Scalar | Tensor) => boolean;
} = {};

export class Tensor<D extends DType = DType> implements Disposable {
  /** @internal See NOTE [ Tensors and postMessage ]. */
  readonly cloneGuard: symbol = NOT_CLONEABLE;
  /** @internal The gx.tidy scope holding this tensor, if any (NOTE [ Tidy scopes are arrays ] in lib/core/tidy.ts). */
  tidyScope: object | undefined = undefined;
  /** @internal Autograd's state; undefined for tensors autograd never saw. */
  ag: AutogradMeta | undefined = undefined;
  /**
   * @internal For a view, the tensor whose storage it views (never itself a view), and that tensor's
   * `epoch` when this view's history was last made; for any other tensor, how many times copy_ wrote
   * it, or a view of it, recording (NOTE [ copy_ into views ] in lib/tape/graph.ts).
   */
  viewBase: Tensor | undefined = undefined;
  /** @internal See viewBase. */
  epoch = 0;
  #handle: NativeTensor | null;
  #meta: Meta | undefined;
  #address: number | undefined;
  /** NOTE [ Deferred disposal ] in csrc/binding/tensor_handle.h: nonzero, dispose() may leave the work to the next op call. */
  #serial = 0;

  /**
   * @internal Tensors are made by gx.tensor, gx.empty and the other creation
   * functions. `address`: the data address when the maker knows it (NaN: unknown); `serial`, knownAddress's.
   */
  constructor(handle: NativeTensor, meta?: Meta, address?: number, serial = 0) {
    this.#handle = handle;
    this.#meta = meta;
    if (address === address) this.#address = address;  // not NaN
    this.#serial = serial;
    track(this);
  }

  /** @internal The native handle; throws when disposed. `fn` names the caller in the error. */
  handle(fn = 'Tensor'): NativeTensor {
    if (!(#handle in this)) {
      throw new TypeError(`${fn}: this object is not a gx.Tensor made by gpuext (it has Tensor's prototype but no tensor ` +
        'behind it); make tensors with gx.tensor, gx.empty and the other creation functions');
    }
    if (this.#handle === null) {
      const err = new Error(`${fn}: this tensor was disposed; it cannot be used after dispose()`);
      (err as Error & { code: string }).code = 'GX_DISPOSED';
      throw err;
    }
    return this.#handle;
  }

  /**
   * @internal The address of the first element, as a number (asked once; a
   * tensor's memory never moves). For kernel arguments passed by address
   * (NOTE [ Argument slots ] in csrc/binding/rtc_launch.cpp); throws when disposed.
   */
  address(fn = 'Tensor'): number {
    const h = this.handle(fn);
    return (this.#address ??= native.dataAddress(h));
  }
  /** @internal The address, learned by whoever filled the handle (NaN: unknown), and the core's serial of the tensor. */
  knownAddress(address: number, serial = 0): void {
    if (address === address) this.#address = address;
    this.#serial = serial;
  }

  #info(fn: string): Meta {
    const h = this.handle(fn);
    if (this.#meta === undefined) {
      const d = native.describe(h);
      this.#meta = {
        shape: Object.freeze(d.shape),
        strides: Object.freeze(d.strides),
        offset: d.offset,
        dtype: dtypeFromCode(d.dtype),
        device: deviceOf(d.deviceType, d.deviceIndex),
      };
    }
    return this.#meta;
  }

  /** Sizes of each dimension. */
  get shape(): readonly number[] {
    return this.#info('Tensor.shape').shape;
  }
  /** Element strides of each dimension. */
  get strides(): readonly number[] {
    return this.#info('Tensor.strides').strides;
  }
  get dtype(): D {
    return this.#info('Tensor.dtype').dtype as D;
  }
  get device(): Device {
    return this.#info('Tensor.device').device;
  }
  /** Where the first element sits in the storage, in elements. */
  get storageOffset(): number {
    return this.#info('Tensor.storageOffset').offset;
  }
  get ndim(): number {
    return this.#info('Tensor.ndim').shape.length;
  }
  get numel(): number {
    return numelOf(this.#info('Tensor.numel').shape);
  }
  /** True once dispose() ran. */
  get isDisposed(): boolean {
    return this.#handle === null;
  }

  /** True when elements are laid out in C order with no gaps. */
  isContiguous(): boolean {
    if (arguments.length > 0) tooManyArguments('Tensor.isContiguous', '()', arguments.length, arguments[0]);
    const m = this.#info('Tensor.isContiguous');
    if (m.contiguous === undefined) {
      const expected = contiguousStrides(m.shape);
      m.contiguous = m.shape.includes(0) || m.shape.every((s, i) => s === 1 || m.strides[i] === expected[i]);
    }
    return m.contiguous;
  }

  /**
   * @internal The same data on `target` (checked by the caller), for to() (lib/ops/creation/tensor-to.ts); on its own
   * device a view sharing the storage (as torch's `to` returns self), still a separate Tensor to dispose.
   */
  toDevice(target: Device, nonBlocking: boolean, fn: string): Tensor<D> {
    const h = this.handle(fn);
    const m = this.#info(fn);
    const same = target.equals(m.device);
    // nonBlocking to the cpu lands in pinned memory and returns before the
    // copy is done: synchronize the stream (or await stream.done()) first.
    const out = same ? this.#viewOf(new Tensor<D>(stagedView(h, m.shape, m.strides, m.offset), m))
      : new Tensor<D>(native.toDevice(h, target.typeCode, target.index, nonBlocking), contiguousMeta(m.shape, m.dtype, target));
    if (this.#inGraph()) (same ? autogradHooks.sameValues?.('to', this, out) : autogradHooks.moved?.(this, out));
    return out;
  }

  /**
   * Declares that work on `stream` (not the stream this tensor's memory was
   * allocated on) uses it, so the allocator does not reuse the memory before
   * that work is done, even after dispose(). See NOTE [ Stream semantics ].
   */
  recordStream(stream: Stream): void {
    if (!(stream instanceof Stream)) throw new TypeError('Tensor.recordStream: argument \'stream\' must be a gx.Stream');
    native.recordStream(this.handle('Tensor.recordStream'), stream.native);
  }

  /** Same as to('cpu'). */
  cpu(): Tensor<D> {
    if (arguments.length > 0) tooManyArguments('Tensor.cpu', '()', arguments.length, arguments[0]);
    return this.to('cpu');
  }

  /** Same as to(`cuda:${index}`); with no index, to('cuda'): the current device (gx.cuda.setDevice). */
  cuda(index?: number): Tensor<D> {
    return this.to(index === undefined ? 'cuda' : new Device('cuda', index));
  }

  /**
   * The elements in C order as a typed array (float16/bfloat16 decoded to
   * Float32Array, int64 as BigInt64Array, bool as Uint8Array). For a CUDA
   * tensor the copy is awaited off the event loop; timers keep running.
   * `out`: an array of that type and length to fill and return instead of a
   * new one (reading the same tensor shape again and again allocates nothing,
   * and skips the page faults of fresh memory).
   */
  async toArray(opts?: ReadOptions<D>): Promise<ValueArrayMap[D]> {
    if (arguments.length > 1) tooManyArguments('Tensor.toArray', '(opts?)', arguments.length - 1, arguments[1]);
    const fn = 'Tensor.toArray';
    const h = this.handle(fn);
    const m = this.#info(fn);
    const out = readOut(opts, m, fn);
    if (out !== undefined && !isDecoded(m.dtype)) return native.read(h, out);
    const bytes = await native.read(h, readbackBuffer(m, fn));
    return decodeValues(bytes, m.dtype as D, out);
  }

  /** toArray() that blocks until the data is on the host. For scripts and tests. */
  toArraySync(opts?: ReadOptions<D>): ValueArrayMap[D] {
    if (arguments.length > 1) tooManyArguments('Tensor.toArraySync', '(opts?)', arguments.length - 1, arguments[1]);
    const fn = 'Tensor.toArraySync';
    const h = this.handle(fn);
    const m = this.#info(fn);
    const out = readOut(opts, m, fn);
    if (out !== undefined && !isDecoded(m.dtype)) {
      native.readSync(h, out);
      return out;
    }
    const bytes = readbackBuffer(m, fn);
    native.readSync(h, bytes);
    return decodeValues(bytes, m.dtype as D, out);
  }

  /**
   * The value of a one-element tensor: a number (a boolean for bool). An
   * int64 value beyond ±(2^53 - 1) has no exact number and is a RangeError:
   * itemBigInt() reads it.
   * @example gx.arange(5).sum().item() + 1 // 11
   */
  item(): ItemOf<D> {
    if (arguments.length > 0) tooManyArguments('Tensor.item', '()', arguments.length, arguments[0]);
    const v = this.#oneValue('Tensor.item');
    if (typeof v === 'bigint') {
      if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) {
        throw new RangeError(`Tensor.item: the value ${v} (${this.dtype}) is beyond ±(2^53 - 1), where a number is exact; ` +
          'read it as a bigint with itemBigInt()');
      }
      return Number(v) as ItemOf<D>;
    }
    return (this.dtype === 'bool' ? v !== 0 : v) as ItemOf<D>;
  }

  /**
   * The value of a one-element integer (or bool) tensor as a bigint, exact
   * for every int64. Floating tensors are a TypeError: use item().
   * @example gx.tensor(2n ** 60n).itemBigInt() // 1152921504606846976n
   */
  itemBigInt(): bigint {
    if (arguments.length > 0) tooManyArguments('Tensor.itemBigInt', '()', arguments.length, arguments[0]);
    const fn = 'Tensor.itemBigInt';
    const kind = dtypeInfo(this.#info(fn).dtype).kind;
    if (kind === 'f') throw new TypeError(`${fn}: the tensor is ${this.dtype}, not an integer dtype; use item()`);
    const v = this.#oneValue(fn);
    return typeof v === 'bigint' ? v : BigInt(v);
  }

  /** The one element's raw value (a bigint for int64); a RangeError naming `fn` unless there is exactly one. */
  #oneValue(fn: string): number | bigint {
    const n = numelOf(this.#info(fn).shape);
    if (n !== 1) {
      throw new RangeError(`${fn}: only a one-element tensor has an item; this one has shape ${formatShape(this.shape)} (${n} elements)`);
    }
    return this.toArraySync()[0];
  }

  /**
   * The same data with another shape, without copying; one dimension may be
   * -1. Throws when the strides do not allow it (use reshape()).
   * @example gx.arange(6).view(2, 3)
   */
  view(...shape: number[] | [readonly number[]]): Tensor<D> {
    const m = this.#info('Tensor.view');
    const target = inferShape(flatShape(shape, 'Tensor.view'), numelOf(m.shape), m.shape, 'Tensor.view');
    const strides = viewStrides(m.shape, m.strides, target);
    if (strides === undefined) {
      throw new Error(
        `Tensor.view: a tensor of shape ${formatShape(m.shape)} and strides ${formatShape(m.strides)} ` +
          `cannot be viewed as ${formatShape(target)} without copying; use reshape(), or contiguous() first`,
      );
    }
    const out = this.#viewAs(target, strides, m.offset);
    if (this.#inGraph()) autogradHooks.sameValues?.('view', this, out);
    return out;
  }

  /** view() when possible, else a contiguous copy with the new shape. */
  reshape(...shape: number[] | [readonly number[]]): Tensor<D> {
    const m = this.#info('Tensor.reshape');
    const target = inferShape(flatShape(shape, 'Tensor.reshape'), numelOf(m.shape), m.shape, 'Tensor.reshape');
    const strides = viewStrides(m.shape, m.strides, target);
    let out: Tensor<D>;
    if (strides !== undefined) {
      out = this.#viewAs(target, strides, m.offset);
    } else {
      using c = new Tensor<D>(native.contiguous(this.handle('Tensor.reshape')));  // not recorded: reshape records itself
      out = c.#viewAs(target, contiguousStrides(target), 0);
    }
    if (this.#inGraph()) autogradHooks.sameValues?.('reshape', this, out);
    return out;
  }

  /** @internal A view with explicit layout (checked against the storage by the core). */
  asStrided(shape: readonly number[], strides: readonly number[], offset: number): Tensor<D> {
    if (arguments.length > 3) tooManyArguments('Tensor.asStrided', '(shape, strides, offset)', arguments.length - 3, arguments[3]);
    return this.#viewAs(shape.slice(), strides.slice(), offset);
  }

  /** @internal Shape, strides, offset, dtype and device in one (frozen arrays; never changes). */
  info(): Readonly<Meta> {
    return this.#info('Tensor');
  }

  /** @internal A view of all of this tensor (its layout shared, not copied), not recorded by autograd. */
  alias(): Tensor<D> {
    if (arguments.length > 0) tooManyArguments('Tensor.alias', '()', arguments.length, arguments[0]);
    const h = native.alias(this.handle('Tensor.alias'));
    return new Tensor<D>(h, this.#meta, this.#address);
  }

  #viewAs(shape: number[], strides: number[], offset: number): Tensor<D> {
    const m = this.#info('Tensor.view');
    const h = stagedView(this.handle('Tensor.view'), shape, strides, offset);
    return this.#viewOf(new Tensor<D>(h, { shape: Object.freeze(shape), strides: Object.freeze(strides), offset, dtype: m.dtype, device: m.device }));
  }

  /** `out`, which shares this tensor's storage, marked as a view of its base (NOTE [ copy_ into views ]). */
  #viewOf<T extends Tensor>(out: T): T {
    const base = this.viewBase ?? this;
    out.viewBase = base;
    out.epoch = base.epoch;
    return out;
  }

  /** Whether autograd may know this tensor: it has autograd state, or is a view whose base copy_ wrote since. */
  #inGraph(): boolean {
    return this.ag !== undefined || (this.viewBase !== undefined && this.viewBase.epoch !== this.epoch);
  }

  /** This tensor's data in C order: shares storage when already contiguous, else copies. */
  contiguous(): Tensor<D> {
    if (arguments.length > 0) tooManyArguments('Tensor.contiguous', '()', arguments.length, arguments[0]);
    const h = this.handle('Tensor.contiguous');
    const shared = this.isContiguous();  // the core returns this very tensor then
    const out = new Tensor<D>(native.contiguous(h));
    if (shared) this.#viewOf(out);
    if (this.#inGraph()) autogradHooks.sameValues?.('contiguous', this, out);
    return out;
  }

  /** A contiguous copy with its own storage. */
  clone(): Tensor<D> {
    if (arguments.length > 0) tooManyArguments('Tensor.clone', '()', arguments.length, arguments[0]);
    const m = this.#info('Tensor.clone');
    const out = new Tensor<D>(native.empty(m.shape.slice(), dtypeCode(m.dtype), m.device.typeCode, m.device.index, false),
      contiguousMeta(m.shape, m.dtype, m.device));
    native.copy(out.handle(), this.handle('Tensor.clone'));
    if (this.#inGraph()) autogradHooks.sameValues?.('clone', this, out);
    return out;
  }

  /**
   * Sets every element to `value` (a number, or a 0-d tensor, as torch's fill_), in place; returns this.
   * Autograd records it on a tensor in the graph: what it held gets zero gradient, a tensor value the sum
   * of the gradient of the elements written; refused on a leaf that requires grad (NOTE [ copy_ into views ]
   * in lib/tape/graph.ts). (`fn`: @internal, the caller named in errors.)
   * @example const v = gx.tensor(0.5).requiresGrad_(); gx.mul(x, 2).narrow(1, 0, 2).fill_(v)
   */
  fill_(value: Scalar | Tensor, fn = 'Tensor.fill_'): this {
    // (The library passes its own name as fn; a caller's second argument is refused.)
    if (arguments.length > 2 || typeof fn !== 'string') tooManyArguments('Tensor.fill_', '(value)', arguments.length - 1, arguments[1]);
    if (autogradHooks.fill?.(fn, this, value) === true) return this;
    if (value instanceof Tensor) throw new TypeError(`${fn}: a tensor value is copied by autograd's hook, which is not installed (load gpuext whole)`);
    autogradHooks.inPlace?.(fn, this, []);
    native.fill(this.handle(fn), fillBits(value, this.#info(fn).dtype, fn));
    return this;
  }

  /**
   * Copies `src` (same shape and dtype, any device) into this tensor, in place; returns this. With nonBlocking, a
   * copy from the GPU into pinned memory returns before the data has arrived (synchronize first). Autograd records
   * it: the gradient of the elements written goes to src (NOTE [ copy_ into views ] in lib/tape/graph.ts).
   * @example const buf = gx.zeros([2, 3]); buf.get('1').copy_(x); // x's gradient is that of buf's row 1
   */
  copy_(src: Tensor, opts: { nonBlocking?: boolean } = {}): this {
    const fn = 'Tensor.copy_';
    opts = checkOptions<{ nonBlocking?: boolean }>(opts, fn, COPY_KEYS);
    if (!(src instanceof Tensor)) throw new TypeError(`${fn}: argument 'src' must be a Tensor`);
    if (autogradHooks.copy !== undefined) autogradHooks.copy(fn, this, src, Boolean(opts.nonBlocking));
    else copyRaw(this, src, fn, Boolean(opts.nonBlocking));
    return this;
  }

  /** Frees this tensor's reference to its memory now. Throws if already disposed. */
  dispose(): void {
    if (arguments.length > 0) tooManyArguments('Tensor.dispose', '()', arguments.length, arguments[0]);
    const h = this.handle('Tensor.dispose');
    if (this.ag?.savedIn !== undefined) autogradHooks.disposing?.(this);
    this.#handle = null;
    this.viewBase = undefined;  // what the base holds (its graph among it) is not kept alive by a disposed view
    if (this.#serial === 0 || !deferDisposal(h, this.#serial)) {
      native.dispose(h);
      recycle(h);  // NOTE [ Recycled handles ]: no other object holds h
    }
    if (this.ag !== undefined) autogradHooks.disposed?.(this);
  }

  /** `using t = ...` disposes at the end of the scope (no-op if already disposed). */
  [Symbol.dispose](): void {
    if (this.#handle !== null) this.dispose();
  }

  /**
   * PyTorch-style printout: values, shape, dtype, device. A large tensor is
   * summarized (`...`), and only the elements shown are read.
   */
  toString(): string {
    if (arguments.length > 0) tooManyArguments('Tensor.toString', '()', arguments.length, arguments[0]);
    if (this.#handle === null) return 'tensor(<disposed>)';
    const m = this.#info('Tensor.toString');
    const { values, shownOnly } = shownValues(this, m, DEFAULT_FORMAT_OPTIONS);
    return formatTensor({ values, shape: m.shape, dtype: m.dtype, device: m.device.toString(), shownOnly });
  }
}

// util.inspect (console.log) prints the toString() form. Keyed by the symbol's
// registry name and defined outside the class, so that Tensor's declaration
// names nothing of Node's types (NOTE [ Self-sufficient declarations ]).
Object.defineProperty(Tensor.prototype, Symbol.for('nodejs.util.inspect.custom'), {
  value(this: Tensor): string {
    return this.toString();
  },
  writable: true, configurable: true, enumerable: false,
});

/**
 * @internal The library's own copy of values (cat's parts, a scatter's starting values, an `out` through a
 * temporary, a backward's embedding): Tensor.copy_'s checks and in-place rule (a dst that requires grad is
 * refused while recording; its version is counted), never recorded, so no gradient flows from src through it
 * (the op calling it records its own). `fn` names the caller in errors.
 */
export function copyValues<T extends Tensor>(dst: T, src: Tensor, fn: string, nonBlocking = false): T {
  autogradHooks.inPlace?.(fn, dst, []);
  copyRaw(dst, src, fn, nonBlocking);
  return dst;
}

// One ArrayBuffer's limit here (Node 20: 4 GiB; later versions allow more).
const MAX_READBACK_BYTES = bufferConstants.MAX_LENGTH;

/**
 * The ArrayBuffer a readback of `m` goes into (NOTE [ Readback buffers ] in
 * csrc/binding/tensor_functions.cpp): a RangeError naming `fn` when no
 * ArrayBuffer can hold it, or when the memory cannot be had, never a process
 * abort. float16/bfloat16 are decoded into a Float32Array twice the size.
 */
function readbackBuffer(m: Meta, fn: string): ArrayBuffer {
  const n = numelOf(m.shape);
  const itemsize = dtypeInfo(m.dtype).itemsize;
  const decoded = m.dtype === 'float16' || m.dtype === 'bfloat16' ? 4 : itemsize;
  const advice = `read part of it instead, e.g. t.narrow(0, 0, k).toArray(), or reduce it on the device first`;
  if (n * decoded > MAX_READBACK_BYTES) {
    throw new RangeError(`${fn}: a tensor of shape ${formatShape(m.shape)} (${n} ${m.dtype} elements, ` +
      `${n * decoded} bytes as a typed array) does not fit in one ArrayBuffer (at most ${MAX_READBACK_BYTES} bytes); ${advice}`);
  }
  try {
    return new ArrayBuffer(n * itemsize);
  } catch (e) {
    throw new RangeError(`${fn}: could not allocate ${n * itemsize} bytes for a tensor of shape ${formatShape(m.shape)} ` +
      `(${e instanceof Error ? e.message : String(e)}); ${advice}`);
  }
}

/** Accepts view(2, 3) and view([2, 3]). */
function flatShape(args: number[] | [readonly number[]], fn: string): number[] {
  // No argument at all is refused, as torch's view() / reshape(): it read as [], a 0-d result, with no word.
  if (args.length === 0) throw new TypeError(`${fn}: takes the new shape, each size as an argument or as a list (x.view(2, 3), x.view([2, 3]); [] for 0-d)`);
  return args.length === 1 && Array.isArray(args[0]) ? (args[0] as number[]).slice() : (args as number[]);
}
