// What Tensor.toArray and toArraySync read into: the array type of a
// dtype's values (16-bit floats decoded into a Float32Array), and the
// caller's own `out` array, checked.
import type { Meta } from './tensor';
import { STORAGE_ARRAY, type ValueArrayMap } from '../generated/dtypes';
import type { DType } from './dtype';
import { decodeBFloat16, decodeFloat16 } from './half';
import { checkOptions, optionKeys } from './options';
import { formatShape, numelOf } from './shape';

/** Whether toArray() decodes a dtype's storage (16-bit floats become a Float32Array) rather than viewing it. */
export function isDecoded(dtype: DType): dtype is 'float16' | 'bfloat16' {
  return dtype === 'float16' || dtype === 'bfloat16';
}

/**
 * Raw C-order bytes of `dtype` as the array toArray() returns: a view of
 * them, or for 16-bit floats their values decoded (into `out` when given; an
 * `out` of any other dtype is read into directly, never through here).
 */
export function decodeValues<D extends DType>(bytes: ArrayBuffer, dtype: D, out?: ValueArrayMap[D]): ValueArrayMap[D] {
  if (!isDecoded(dtype)) return new STORAGE_ARRAY[dtype](bytes) as ValueArrayMap[D];
  const bits = new Uint16Array(bytes);
  const values = (out as Float32Array | undefined) ?? new Float32Array(bits.length);
  (dtype === 'float16' ? decodeFloat16 : decodeBFloat16)(bits, values);
  return values as ValueArrayMap[D];
}

/** Options of toArray / toArraySync. */
export interface ReadOptions<D extends DType = DType> {
  /** Fill this array (of the type toArray returns for the dtype, one element per tensor element) and return it. */
  out?: ValueArrayMap[D];
}

const READ_KEYS = optionKeys<ReadOptions>({ out: true });

/** The checked `out` of toArray's options. */
export function readOut<D extends DType>(opts: ReadOptions<D> | undefined, m: Meta, fn: string): ValueArrayMap[D] | undefined {
  if (opts === undefined) return undefined;
  const out: unknown = checkOptions<ReadOptions<D>>(opts, fn, READ_KEYS).out;
  if (out === undefined) return undefined;
  const Want = isDecoded(m.dtype) ? Float32Array : STORAGE_ARRAY[m.dtype];
  if (!(out instanceof Want)) {
    const got = ArrayBuffer.isView(out) ? out.constructor.name : out === null ? 'null' : typeof out;
    throw new TypeError(`${fn}: out must be a ${Want.name} for a ${m.dtype} tensor, got ${got}`);
  }
  const n = numelOf(m.shape);
  if (out.length !== n) {
    throw new RangeError(`${fn}: out has ${out.length} elements, the tensor of shape ${formatShape(m.shape)} ${n}`);
  }
  return out as ValueArrayMap[D];
}
