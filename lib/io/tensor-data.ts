// A tensor's elements to and from a byte stream, as the file formats store
// them: raw little-endian bytes in C order. Both ways go a bounded chunk at a
// time (NOTE [ Chunked tensor I/O ]).
//
// NOTE [ Chunked tensor I/O ]
// Saving reads each tensor back into one reusable host buffer of at most
// CHUNK.bytes, block after block of its elements in C order (strided views
// of the tensor, so a transposed or sliced tensor is laid out by the readback
// itself, and a GPU tensor is copied a block at a time), and writes each
// block before the next. Loading a stream (an inflated .npz entry, or bytes
// to swap) fills a tensor of at most READ_CHUNK_BYTES from one buffer; a
// larger one is allocated first and filled block by block through a buffer
// of READ_CHUNK_BYTES (not CHUNK.bytes: the core copies each block, and a
// 64 MiB buffer would double a 64 MiB tensor's memory). So a file is never in memory
// twice (nor whole), and a tensor larger than one ArrayBuffer still saves
// and loads. A plain file range skips JS memory altogether: the core reads
// it into the tensor, or through pinned staging to a GPU (NOTE [ File reads ]
// in csrc/base/file_read.cpp).
import { allocate } from '../ops/creation/creation';
import type { Device } from '../core/device';
import { dtypeCode } from '../core/dtype';
import { dtypeInfo, type DType } from '../generated/dtypes';
import { native, type NativeTensor } from '../core/native';
import { stagedView } from '../core/handle-pool';
import { contiguousStrides, numelOf } from '../core/shape';
import { contiguousMeta, Tensor } from '../core/tensor';
import type { ByteReader } from './readers';
import type { ByteSink } from './sinks';

/** @internal The chunk size (bytes) of tensor I/O; tests lower it to take the chunked paths with small tensors. */
export const CHUNK = { bytes: 64 * 1024 * 1024 };

/** The buffer of a load from a stream: the memory a load needs beyond its tensors. */
const READ_CHUNK_BYTES = 4 * 1024 * 1024;

/** A tensor as saving sees it: its own reference to the memory (dispose it), and its layout. */
export interface TensorSource {
  readonly handle: NativeTensor;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  readonly dtype: DType;
}

/** One block of a layout: a strided view's shape, strides, storage offset and element count. */
export interface Block {
  shape: number[];
  strides: number[];
  offset: number;
  numel: number;
}

/**
 * The elements of a layout in C order as consecutive blocks of at most
 * `maxItems` elements (at least one each): runs of whole rows along one axis,
 * the outermost axis whose rows fit, at every index of the axes before it.
 */
export function* cOrderBlocks(shape: readonly number[], strides: readonly number[], offset: number, maxItems: number): Generator<Block> {
  const n = numelOf(shape);
  if (n <= maxItems) {
    yield { shape: shape.slice(), strides: strides.slice(), offset, numel: n };
    return;
  }
  // n > maxItems >= 1, so no axis is 0 and the innermost axis's rows (one element) fit.
  let d = 0, inner = n / shape[0];
  while (inner > maxItems) inner /= shape[++d];
  const rows = Math.floor(maxItems / inner);
  const index = new Array<number>(d).fill(0);
  for (;;) {
    let base = offset;
    for (let k = 0; k < d; k++) base += index[k] * strides[k];
    for (let start = 0; start < shape[d]; start += rows) {
      const len = Math.min(rows, shape[d] - start);
      yield { shape: [len, ...shape.slice(d + 1)], strides: strides.slice(d), offset: base + start * strides[d], numel: len * inner };
    }
    let k = d - 1;
    while (k >= 0 && ++index[k] === shape[k]) index[k--] = 0;
    if (k < 0) return;
  }
}

/** Elements of `itemsize` bytes that one chunk holds. */
function chunkItems(itemsize: number, bytes = CHUNK.bytes): number {
  return Math.max(1, Math.floor(bytes / itemsize));
}

/** The byte length of a tensor's data in a file. */
export function dataBytes(shape: readonly number[], dtype: DType): number {
  return numelOf(shape) * dtypeInfo(dtype).itemsize;
}

/** Writes the elements of `src` (C order, raw bytes) to `sink`. */
export async function writeTensorData(src: TensorSource, sink: ByteSink): Promise<void> {
  const itemsize = dtypeInfo(src.dtype).itemsize;
  const total = dataBytes(src.shape, src.dtype);
  if (total === 0) return;
  const buf = new Uint8Array(Math.min(total, chunkItems(itemsize) * itemsize));
  for (const b of cOrderBlocks(src.shape, src.strides, src.offset, buf.length / itemsize)) {
    const bytes = buf.subarray(0, b.numel * itemsize);
    if (bytes.length === total) {
      await native.read(src.handle, bytes);
    } else {
      const view = stagedView(src.handle, b.shape, b.strides, b.offset);
      try {
        await native.read(view, bytes);
      } finally {
        native.dispose(view);
      }
    }
    await sink.write(bytes);
  }
}

/** Reverses the bytes of each `itemsize`-byte element in place (big-endian data to little-endian). */
function byteSwap(bytes: Uint8Array, itemsize: number): void {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (itemsize === 2) b.swap16();
  else if (itemsize === 4) b.swap32();
  else if (itemsize === 8) b.swap64();
}

/** What a file says of one tensor's data: the elements' type, the shape in C order, and whether they are big-endian. */
export interface DataSpec {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly bigEndian?: boolean;
}

/**
 * A new contiguous tensor on `device` holding the next bytes of `src`
 * (`what` names them in a truncation error).
 */
export async function readTensorData(src: ByteReader, spec: DataSpec, device: Device, what: string): Promise<Tensor> {
  const { shape, dtype } = spec;
  const itemsize = dtypeInfo(dtype).itemsize;
  const n = numelOf(shape), code = dtypeCode(dtype);
  const maxItems = chunkItems(itemsize, Math.min(CHUNK.bytes, READ_CHUNK_BYTES));
  // A bool byte other than 0 or 1 (a file written by other means) is true, as NumPy reads it: stored as 1, since
  // the kernels take a bool's byte as it is (a 2 would sum as 2 and compare unequal to true).
  const bool = dtype === 'bool';
  const fill = async (bytes: Uint8Array): Promise<void> => {
    await src.readExactly(bytes, what);
    if (spec.bigEndian) byteSwap(bytes, itemsize);
    if (bool) for (let i = 0; i < bytes.length; i++) if (bytes[i] > 1) bytes[i] = 1;
  };
  if (src.readIntoTensor !== undefined && !spec.bigEndian && !bool && n > 0) {
    const out = allocate(shape, dtype, device);
    try {
      await src.readIntoTensor(out.handle(), n * itemsize, what);
    } catch (err) {
      out.dispose();
      throw err;
    }
    return out;
  }
  if (n <= maxItems) {
    const bytes = new Uint8Array(n * itemsize);
    await fill(bytes);
    return new Tensor(native.fromBytes(bytes, shape.slice(), code, device.typeCode, device.index), contiguousMeta(shape, dtype, device));
  }
  const out = allocate(shape, dtype, device);
  try {
    const buf = new Uint8Array(maxItems * itemsize);
    for (const b of cOrderBlocks(shape, contiguousStrides(shape), 0, maxItems)) {
      const bytes = buf.subarray(0, b.numel * itemsize);
      await fill(bytes);
      const chunk = native.fromBytes(bytes, b.shape, code, 0, 0);
      const dst = stagedView(out.handle(), b.shape, b.strides, b.offset);
      try {
        native.copy(dst, chunk);
      } finally {
        native.dispose(dst);
        native.dispose(chunk);
      }
    }
    return out;
  } catch (err) {
    out.dispose();
    throw err;
  }
}
