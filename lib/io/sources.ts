// The tensors a save is asked to write: a lone tensor (under a default name)
// or a record of them, each checked and held by a reference of its own for
// the length of the save (a tensor disposed by the caller while the file is
// being written is still written whole).
import { native, type NativeTensor } from '../core/native';
import { stagedView } from '../core/handle-pool';
import { describeValue } from '../core/shape';
import { Tensor } from '../core/tensor';
import type { TensorSource } from './tensor-data';

/** The name of a lone tensor saved to safetensors, and of an .npy file's array when loaded as a record. */
export const LONE_TENSOR_NAME = 'tensor';

/** A tensor to save, with its name in the file. */
export interface NamedSource extends TensorSource {
  readonly name: string;
}

function disposedError(fn: string, what: string): Error {
  const err = new Error(`${fn}: ${what} was disposed; save it before dispose()`);
  (err as Error & { code: string }).code = 'GX_DISPOSED';
  return err;
}

/** One tensor argument, checked (`what` names it in errors), with a reference of its own. */
function takeSource(value: unknown, name: string, fn: string, what: string): NamedSource {
  if (!(value instanceof Tensor)) throw new TypeError(`${fn}: ${what} must be a gx.Tensor, got ${describeValue(value)}`);
  let handle: NativeTensor;
  try {
    handle = value.handle(fn);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'GX_DISPOSED') throw disposedError(fn, what);
    throw err;
  }
  const { shape, strides, storageOffset: offset, dtype } = value;
  return { name, handle: stagedView(handle, shape, strides, offset), shape, strides, offset, dtype };
}

/**
 * The entries of a record of tensors: a plain object's own keys, or a Map's
 * string keys. Anything else is refused: a Promise (a load not awaited) or a
 * class instance has no entries of its own, and would save as nothing.
 */
function recordEntries(data: unknown, fn: string): [string, unknown][] {
  const expected = 'data must be a gx.Tensor or a record of them ({ name: tensor }, or a Map of names to tensors)';
  if (data instanceof Map) {
    const entries = [...data.entries()];
    const bad = entries.find(([k]) => typeof k !== 'string');
    if (bad !== undefined) throw new TypeError(`${fn}: ${expected}; the Map has the key ${describeValue(bad[0])}, not a string`);
    return entries as [string, unknown][];
  }
  if (data instanceof Promise) throw new TypeError(`${fn}: ${expected}, got a Promise (await the tensor first)`);
  const proto: unknown = data === null || typeof data !== 'object' ? undefined : Object.getPrototypeOf(data);
  if (Array.isArray(data) || (proto !== Object.prototype && proto !== null)) throw new TypeError(`${fn}: ${expected}, got ${describeValue(data)}`);
  return Object.entries(data as object);
}

/**
 * The tensors of `data`: a Tensor (named `defaultName`) or a record of
 * tensors (in its key order). Drop them with releaseSources.
 */
export function takeSources(data: unknown, fn: string, defaultName: string): NamedSource[] {
  if (data instanceof Tensor) return [takeSource(data, defaultName, fn, 'the tensor')];
  const entries = recordEntries(data, fn);
  const out: NamedSource[] = [];
  try {
    for (const [name, value] of entries) out.push(takeSource(value, name, fn, `tensor '${name}'`));
  } catch (err) {
    releaseSources(out);
    throw err;
  }
  return out;
}

/** Drops the references takeSources took. */
export function releaseSources(sources: readonly NamedSource[]): void {
  for (const s of sources) native.dispose(s.handle);
}
