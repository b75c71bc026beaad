// NumPy's .npy format (numpy/lib/format.py), versions 1.0, 2.0 and 3.0: the
// magic "\x93NUMPY", the version (2 bytes), the header length (2 bytes little
// endian in 1.0, 4 bytes in 2.0 and 3.0), then a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
// spaces and a newline so that the data starts at a multiple of 64 bytes,
// then the data. Written as NumPy writes it (1.0 unless the header needs
// 2.0); read in C or Fortran order, either byte order.
import type { FileHandle } from 'fs/promises';

import type { Device } from '../core/device';
import { dtypeInfo, DTYPES, NPY_TYPESTR, type DType } from '../generated/dtypes';
import { formatShape, MAX_DIMS, numelOf, tooLargeReason } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { fileError, type FileContext } from './errors';
import { parsePythonLiteral, type PySequence, type PyValue } from './python-literal';
import { FileRangeReader, type ByteReader } from './readers';
import { FileSink, type ByteSink } from './sinks';
import { LONE_TENSOR_NAME, type NamedSource } from './sources';
import { readTensorData, writeTensorData, type DataSpec } from './tensor-data';
import type { NamedInfo } from './types';

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];  // \x93NUMPY
/** NumPy pads the header so the data is aligned for any dtype (and mmap-friendly). */
const ALIGN = 64;
/** NumPy leaves room to grow the first axis's digits in place (GROWTH_AXIS_MAX_DIGITS). */
const GROWTH_DIGITS = 21;
/** NumPy's max_header_size: a longer header is refused before it is parsed ("may not be safe to load securely"). */
const MAX_HEADER_BYTES = 10000;

/** NumPy's typestr of each gpuext dtype (bfloat16 has none: NumPy has no bfloat16): the dtype list's column. */
const DESCR = NPY_TYPESTR;

/** The dtype of a typestr's kind and size ('f4'). */
const FROM_KIND_SIZE = new Map<string, DType>(DTYPES.filter((d) => DESCR[d] !== undefined).map((d) => [DESCR[d]!.slice(1), d]));

/** NumPy names for typestrs gpuext has no dtype for, to say what the file holds. */
const UNSUPPORTED_KINDS: Record<string, string> = {
  u: 'unsigned integers wider than 8 bits', c: 'complex numbers', O: 'Python objects', U: 'strings', S: 'bytes',
  V: 'raw or structured records (ml_dtypes\' bfloat16 too)', M: 'datetimes', m: 'timedeltas', f: 'floats of that width',
};

/** The .npy header's facts: the data's dtype, shape (C order), byte order and layout, and the header's length. */
export interface NpyHeader extends DataSpec {
  readonly fortranOrder: boolean;
  /** Bytes before the data: magic, version, length and header. */
  readonly headerBytes: number;
}

/** A typestr ('<f4', '>i8', '|b1'), checked against gpuext's dtypes. */
function parseDescr(descr: PyValue, ctx: FileContext): { dtype: DType; bigEndian: boolean } {
  if (isSequence(descr) && descr.kind === 'list') {
    throw fileError(ctx, `the array has a structured dtype (descr ${pyRepr(descr)}); gpuext reads arrays of one numeric dtype`, TypeError);
  }
  if (typeof descr !== 'string') throw fileError(ctx, `descr is not a valid dtype descriptor: ${pyRepr(descr)}`, TypeError);
  const m = /^([<>|=]?)([a-zA-Z])(\d+)$/.exec(descr);
  const dtype = m === null ? undefined : FROM_KIND_SIZE.get(`${m[2]}${m[3]}`);
  if (m === null || dtype === undefined) {
    const kind = m === null ? undefined : UNSUPPORTED_KINDS[m[2]];
    throw fileError(ctx, `dtype '${descr}'${kind !== undefined ? ` (${kind})` : ''} is not supported by gpuext; it reads ` +
      `${[...new Set(Object.values(DESCR))].join(', ')} (and their big-endian forms)`, TypeError);
  }
  return { dtype, bigEndian: m[1] === '>' && dtypeInfo(dtype).itemsize > 1 };
}

function isSequence(v: PyValue): v is PySequence {
  return typeof v === 'object' && v !== null && !(v instanceof Map) && v.kind !== 'bytes';
}

/** A header value as Python's repr() would show it, for errors. */
function pyRepr(v: PyValue): string {
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'bigint' || typeof v === 'number') return String(v);
  if (typeof v === 'string') return `'${v}'`;
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  if (v.kind === 'bytes') return `b'${v.text}'`;
  const inner = v.items.map(pyRepr).join(', ');
  return v.kind === 'list' ? `[${inner}]` : v.kind === 'set' ? `{${inner}}` : v.items.length === 1 ? `(${inner},)` : `(${inner})`;
}

/** The header dict's three fields, checked as NumPy's format._read_array_header checks them (with its messages). */
function headerFields(header: PyValue, text: string, bad: (message: string) => Error): { shape: bigint[]; fortranOrder: boolean; descr: PyValue } {
  if (!(header instanceof Map)) throw bad(`Header is not a dictionary: ${JSON.stringify(text.trim())}`);
  const keys = [...header.keys()].map((k) => (typeof k === 'string' ? k : pyRepr(k))).sort();
  if (keys.join() !== 'descr,fortran_order,shape') throw bad(`Header does not contain the correct keys: [${keys.map((k) => `'${k}'`).join(', ')}]`);
  const shape = header.get('shape')!, fortranOrder = header.get('fortran_order')!;
  // A shape is a tuple of ints: not a list, not floats, not booleans (an int subclass NumPy refuses later).
  if (!isSequence(shape) || shape.kind !== 'tuple' || !shape.items.every((d) => typeof d === 'bigint')) throw bad(`shape is not valid: ${pyRepr(shape)}`);
  const dims = shape.items as bigint[];
  if (dims.some((d) => d < 0n)) throw bad(`negative dimensions are not allowed: shape ${pyRepr(shape)}`);
  if (typeof fortranOrder !== 'boolean') throw bad(`fortran_order is not a valid bool: ${pyRepr(fortranOrder)}`);
  return { shape: dims, fortranOrder, descr: header.get('descr')! };
}

/**
 * Reads and checks a .npy header from the start of `src`; `what` names the
 * array in errors (an .npz entry; '' for an .npy file, which the path names).
 */
export async function readNpyHeader(src: ByteReader, ctx: FileContext, what: string): Promise<NpyHeader> {
  const prefix = what === '' ? '' : `${what}: `;
  const bad = (message: string): Error => fileError(ctx, `${prefix}${message}`);
  const start = new Uint8Array(8);
  await src.readExactly(start, `${prefix}the magic and version`);
  if (!MAGIC.every((b, i) => start[i] === b)) throw bad('not a .npy file (it does not start with the magic "\\x93NUMPY")');
  const [major, minor] = [start[6], start[7]];
  if (![1, 2, 3].includes(major) || minor !== 0) throw bad(`.npy format version ${major}.${minor} is not supported (1.0, 2.0 and 3.0 are)`);
  const lengthBytes = new Uint8Array(major === 1 ? 2 : 4);
  await src.readExactly(lengthBytes, `${prefix}the header length`);
  const view = new DataView(lengthBytes.buffer);
  const length = major === 1 ? view.getUint16(0, true) : view.getUint32(0, true);
  if (length > MAX_HEADER_BYTES) throw bad(`header length ${length} is beyond NumPy's limit of ${MAX_HEADER_BYTES} bytes ("may not be safe to load securely")`);
  const headerBytes = new Uint8Array(length);
  await src.readExactly(headerBytes, `${prefix}the header`);
  // 1.0 and 2.0 headers are latin1, 3.0 UTF-8 (for structured dtypes' field names).
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(headerBytes);
  let header: PyValue;
  try {
    // NumPy reads Python 2's `3L` in 1.0 and 2.0 headers (format._filter_header), not in 3.0.
    header = parsePythonLiteral(text, { allowLong: major < 3 });
  } catch (err) {
    throw bad(`the header is not a Python literal (${(err as Error).message})`);
  }
  const { shape, fortranOrder, descr } = headerFields(header, text, bad);
  if (shape.length > MAX_DIMS) throw bad(`shape [${shape.join(', ')}] has ${shape.length} dimensions; gpuext supports at most ${MAX_DIMS}`);
  const { dtype, bigEndian } = parseDescr(descr, ctx);
  const tooLarge = tooLargeReason(shape, dtypeInfo(dtype).itemsize);
  if (tooLarge !== undefined) {
    throw bad(`array is too big; \`arr.size * arr.dtype.itemsize\` is larger than the maximum possible size (shape (${shape.join(', ')}) of ${dtype}: ${tooLarge})`);
  }
  const dims = shape.map(Number);
  return { shape: dims, dtype, bigEndian, fortranOrder, headerBytes: 8 + lengthBytes.length + length };
}

/** The tensor of a .npy stream of `total` bytes (a file, or an .npz entry), read onto `device`; `what` as readNpyHeader's. */
export async function readNpy(src: ByteReader, total: number, ctx: FileContext, device: Device, what: string): Promise<Tensor> {
  const header = await readNpyHeader(src, ctx, what);
  const { shape, dtype, fortranOrder } = header;
  const need = numelOf(shape) * dtypeInfo(dtype).itemsize;
  const data = what === '' ? 'the data' : `the data of ${what}`;
  if (header.headerBytes + need !== total) {
    throw fileError(ctx, `${what === '' ? '' : `${what}: `}shape ${formatShape(shape)} of ${dtype} needs ${need} bytes of data, but ${total - header.headerBytes} follow the header` +
      `${header.headerBytes + need > total ? '; the file is truncated' : ''}`);
  }
  if (!fortranOrder || shape.length < 2) return readTensorData(src, header, device, data);
  // Fortran order is C order of the reversed shape: read that, then lay it out in C order.
  const reversed = [...shape].reverse();
  const t = await readTensorData(src, { ...header, shape: reversed }, device, data);
  try {
    const strides: number[] = [];
    for (let d = 0, stride = 1; d < shape.length; stride *= shape[d++]) strides.push(stride);
    using view = t.asStrided(shape, strides, 0);
    return view.contiguous();
  } finally {
    t.dispose();
  }
}

/** The .npy header NumPy writes for a C-order array of `dtype` and `shape`. */
export function npyHeader(dtype: DType, shape: readonly number[]): Uint8Array {
  const tuple = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${DESCR[dtype]}', 'fortran_order': False, 'shape': ${tuple}, }`;
  if (shape.length > 0) dict += ' '.repeat(Math.max(0, GROWTH_DIGITS - String(shape[0]).length));
  // Version 1.0 unless its 2-byte length cannot hold the header (then 2.0's 4 bytes).
  for (const [major, lengthBytes] of [[1, 2], [2, 4]]) {
    const unpadded = 8 + lengthBytes + dict.length + 1;  // + '\n'
    const length = dict.length + 1 + (ALIGN - (unpadded % ALIGN)) % ALIGN;
    if (major === 1 && length > 0xffff) continue;
    const out = Buffer.alloc(8 + lengthBytes + length, 0x20);
    out.set(MAGIC);
    out[6] = major;
    out[7] = 0;
    if (major === 1) out.writeUInt16LE(length, 8);
    else out.writeUInt32LE(length, 8);
    out.write(dict, 8 + lengthBytes, 'latin1');
    out[out.length - 1] = 0x0a;
    return out;
  }
  throw new Error('gpuext internal error: no .npy version holds the header');
}

/** Throws unless every source has a NumPy dtype (bfloat16 has none); `fn` and each source's name in the error. */
export function checkNpyDtypes(sources: readonly NamedSource[], fn: string, format: string, single: boolean): void {
  for (const s of sources) {
    if (DESCR[s.dtype] === undefined) {
      throw new TypeError(`${fn}: ${single ? 'the tensor' : `tensor '${s.name}'`} is ${s.dtype}, which NumPy has no dtype for, so ${format} cannot hold it; ` +
        `save x.astype('float32') (exact: every bfloat16 value is a float32), or save to .safetensors, which has BF16`);
    }
  }
}

/** Writes `source` as a .npy stream (header, then data) to `sink`. */
export async function writeNpy(source: NamedSource, sink: ByteSink): Promise<void> {
  await sink.write(npyHeader(source.dtype, source.shape));
  await writeTensorData(source, sink);
}

/** The array of the .npy file open as `fh` (of `size` bytes), read onto `device`, named LONE_TENSOR_NAME. */
export async function* loadNpyFile(fh: FileHandle, size: number, ctx: FileContext, device: Device): AsyncGenerator<[string, Tensor]> {
  yield [LONE_TENSOR_NAME, await readNpy(new FileRangeReader(fh, 0, size, ctx), size, ctx, device, '')];
}

/** The array of the .npy file open as `fh` (of `size` bytes), its dtype and shape only. */
export async function inspectNpyFile(fh: FileHandle, size: number, ctx: FileContext): Promise<NamedInfo[]> {
  const { dtype, shape } = await readNpyHeader(new FileRangeReader(fh, 0, size, ctx), ctx, '');
  return [{ name: LONE_TENSOR_NAME, dtype, shape: shape.slice() }];
}

/** Writes `source` as an .npy file into the empty file `fh`. */
export async function saveNpyFile(fh: FileHandle, source: NamedSource): Promise<void> {
  await writeNpy(source, new FileSink(fh, 0));
}
