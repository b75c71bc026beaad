// What the built-in ops' wrappers share: checking operands, broadcasting
// shapes, describing operands in errors, `out` and in-place targets.
import { allocate } from './creation/creation';
import { resultHandle, spentResult, lastSerial, stageResult } from '../core/handle-pool';
import type { DType } from '../generated/dtypes';
import { dtypeCode } from '../core/dtype';
import type { Device } from '../core/device';
import {
  broadcastShapes as broadcastShapeList, describeValue, equalShapes, formatShape, overlapsItself, overlapsItselfError,
} from '../core/shape';
import { bumpVersion, inPlaceRefusal, recorders, writeInGraph } from '../tape/graph';
import { contiguousMeta, copyValues, Tensor } from '../core/tensor';
import { checkOptions, optionKeys, tooManyArguments } from '../core/options';
import { namedForCaller } from './library';
import { overlapsInputs } from './overlap';
import { canCast, type Operand } from './promotion';

/** `{ out }`: write the result into this tensor (its shape must be the result's; its dtype one the result casts to). */
export interface OutOptions<D extends DType = DType> {
  out?: Tensor<D>;
}

/** How an operand shows in messages: `float32 [2, 3]`, `number 2.5`. */
export function describeOperand(x: unknown): string {
  if (x instanceof Tensor) return x.isDisposed ? 'a disposed tensor' : `${x.dtype} ${formatShape(x.shape)}`;
  if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') return `${typeof x} ${String(x)}`;
  return describeValue(x);
}

export function checkTensor(x: unknown, fn: string, name: string): Tensor {
  if (x instanceof Tensor) {
    x.handle(fn);
    return x;
  }
  throw new TypeError(`${fn}: argument '${name}' must be a Tensor, got ${describeValue(x)}`);
}

export function checkOperand(x: unknown, fn: string, name: string): Operand {
  if (x instanceof Tensor) {
    x.handle(fn);
    return x;
  }
  if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') return x;
  throw new TypeError(`${fn}: argument '${name}' must be a Tensor, number, bigint or boolean, got ${describeValue(x)}`);
}

/** NumPy broadcasting of the tensors' shapes; an Error naming `fn` and every shape when they do not broadcast. */
export function broadcastShapes(tensors: readonly Tensor[], fn: string): readonly number[] {
  if (tensors.length === 1) return tensors[0].shape;
  if (tensors.length === 2 && equalShapes(tensors[0].shape, tensors[1].shape)) return tensors[0].shape;
  return broadcastShapeList(tensors.map((t) => t.shape), fn);
}

/** The device all tensors share; an Error naming `fn` when they differ. */
export function commonDevice(tensors: readonly Tensor[], names: readonly string[], fn: string): Device {
  const d = tensors[0].device;
  for (let i = 1; i < tensors.length; i++) {
    const o = tensors[i].device;
    if (!o.equals(d)) {
      throw new Error(`${fn}: argument '${names[i]}' is on ${o} but '${names[0]}' is on ${d}; move it with .to('${d}')`);
    }
  }
  return d;
}


/** Where a result given to the op goes, checked: self (in place) or the caller's `out` (computeResult's). */
function targetOf(shape: readonly number[], dtype: DType, device: Device, fn: string, opts: { out?: unknown; inplace?: Tensor }): Tensor {
  const self = opts.inplace;
  if (self !== undefined) {
    if (!equalShapes(self.shape, shape)) {
      throw new Error(`${fn}: the result has shape ${formatShape(shape)}, which in-place ops cannot write into ` +
        `self of shape ${formatShape(self.shape)} (in place, self keeps its shape)`);
    }
    if (!canCast(dtype, self.dtype)) {
      throw new TypeError(`${fn}: the result's dtype ${dtype} cannot be stored in self of dtype ${self.dtype} ` +
        '(in place, self keeps its dtype; use the out-of-place op)');
    }
    if (overlapsItself(self.shape, self.strides)) throw overlapsItselfError(fn, 'self', self.shape, self.strides);
    return self;
  }
  const out = opts.out;
  if (!(out instanceof Tensor)) throw new TypeError(`${fn}: options.out must be a Tensor, got ${describeValue(out)}`);
  out.handle(fn);
  if (!equalShapes(out.shape, shape)) {
    throw new Error(`${fn}: out has shape ${formatShape(out.shape)} but the result has shape ${formatShape(shape)}`);
  }
  if (!canCast(dtype, out.dtype)) {
    throw new TypeError(`${fn}: the result's dtype ${dtype} cannot be written into out of dtype ${out.dtype}`);
  }
  if (!out.device.equals(device)) throw new Error(`${fn}: out is on ${out.device} but the inputs are on ${device}`);
  if (overlapsItself(out.shape, out.strides)) throw overlapsItselfError(fn, 'out', out.shape, out.strides);
  return out;
}


/** After the op call: the pooled handle of a pending result holds the new tensor, whose address the call staged. */
function settle(t: Tensor, fn: string): void {
  const address = spentResult();
  if (address === undefined) throw new Error(`${fn}: internal error: the op call did not allocate its result`);
  t.knownAddress(address, lastSerial());
}

/**
 * The op call's allocation of the result failing (the core's words, which
 * know no caller) named for `fn`, as allocate() names it; an op's own errors
 * already name it.
 */
function outOfMemoryNamed(e: unknown, fn: string): void {
  if (e instanceof Error && (e as Error & { code?: string }).code === 'GX_OUT_OF_MEMORY' && !/^gx_ops::/.test(e.message)) {
    e.message = `${fn}: ${e.message}`;
  }
}

/** Where an op writes and what it reads, for computeResult. */
export interface ResultOptions {
  out?: unknown;
  inplace?: Tensor;
  /** The op's operands (JS scalars are skipped): a target sharing memory with one is written through a temporary. */
  inputs: readonly unknown[];
  /** Whether element i of the result depends only on element i of each input (then full overlap is safe). */
  elementwise: boolean;
  /**
   * In place: the op out of place, from a stand-in for self (its values before the write). Given, an in-place
   * write autograd must see records (NOTE [ Autograd and in-place ops ]); absent, it is refused.
   */
  outOfPlace?: (self: Tensor) => Tensor;
}

/**
 * Runs `compute(dst)` with dst the result (self, the caller's `out` or a new
 * tensor) and returns the result. A result that shares memory with an input
 * (NOTE [ Overlapping outputs ] in overlap.ts) is computed into a temporary
 * and copied over; a new result is disposed when `compute` throws. An
 * in-place write autograd must follow is opts.outOfPlace, recorded, copied
 * into self instead: the caller records nothing more.
 */
export function computeResult(shape: readonly number[], dtype: DType, device: Device, fn: string, opts: ResultOptions,
  compute: (dst: Tensor) => void): Tensor {
  if (writesNewResult(opts.out, opts.inplace !== undefined)) return computeNew(shape, dtype, device, fn, compute);
  const t = targetOf(shape, dtype, device, fn, opts);
  if (writeInGraph(t, opts.inputs)) {  // NOTE [ Autograd and in-place ops ]
    if (opts.inplace === undefined || opts.outOfPlace === undefined || recorders.inPlace === undefined) throw inPlaceRefusal(fn);
    recorders.inPlace(fn, t, opts.outOfPlace);
    return t;
  }
  bumpVersion(t);
  const viaTemporary = overlapsInputs(t, opts.inputs, opts.elementwise);
  const dst = viaTemporary ? allocate(shape, t.dtype, device, undefined, fn) : t;
  try {
    compute(dst);
    if (viaTemporary) copyValues(t, dst, fn);
  } catch (e) {
    throw namedForCaller(e, fn);
  } finally {
    if (viaTemporary) dst.dispose();
  }
  return t;
}

/**
 * Whether a call's result is a new tensor: no `out` (absent or null) and not in place. computeResult asks it
 * first; an op on the hot path asks it before building computeResult's target, and calls computeNew when so.
 */
export const writesNewResult = (out: unknown, inplace: boolean): boolean => !inplace && (out === undefined || out === null);

/**
 * computeResult's new result: `compute(t)` with t a new tensor, allocated by
 * the op call itself from a staged request into a pooled handle when one is
 * free (NOTE [ Recycled handles ]: one native call, no new handle), else
 * allocated first; disposed when `compute` throws.
 */
export function computeNew(shape: readonly number[], dtype: DType, device: Device, fn: string, compute: (dst: Tensor) => void): Tensor {
  const h = resultHandle();
  const pending = h !== undefined;
  const t = pending ? new Tensor(h, contiguousMeta(shape, dtype, device)) : allocate(shape, dtype, device, undefined, fn);
  try {
    if (pending) stageResult(shape, dtypeCode(dtype), device);
    compute(t);
    if (pending) settle(t, fn);
  } catch (e) {
    if (pending) {
      spentResult();
      outOfMemoryNamed(e, fn);
    }
    t.dispose();
    throw namedForCaller(e, fn);
  }
  return t;
}

/** What optionsOf gives for no options (frozen: shared by every call). */
const NO_OPTIONS: object = Object.freeze({});

/** The keys of OutOptions. */
export const OUT_KEYS = optionKeys<OutOptions>({ out: true });

/**
 * The options object of an op, checked: an object (not a Tensor: a tensor in
 * the options' place is a missing argument), with only the keys in `known`
 * (lib/core/options.ts: an unknown key is a TypeError naming the closest known one).
 */
export function optionsOf<T extends object>(opts: unknown, fn: string, known: readonly string[]): Partial<T> {
  if (opts === undefined) return NO_OPTIONS as Partial<T>;  // the common call: no object to make
  if (opts instanceof Tensor) throw new TypeError(`${fn}: options must be an object, got ${describeValue(opts)}`);
  return checkOptions<T>(opts, fn, known);
}
