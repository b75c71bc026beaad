// The safetensors format (https://github.com/huggingface/safetensors): an
// 8-byte little-endian header length N, N bytes of JSON header
// { name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__"?: { str: str } }
// padded with spaces to a multiple of 8, then the raw little-endian data in C
// order, offsets relative to its start, packed with no holes or overlap.
// Files are written as the reference implementation writes them (tensors
// ordered by dtype, widest first, then by name: each tensor's data is then
// aligned to its element size) and read with its checks.
import type { FileHandle } from 'fs/promises';

import type { Device } from '../core/device';
import { dtypeInfo, DTYPES, SAFETENSORS_NAME, type DType } from '../generated/dtypes';
import { describeValue, formatShape, MAX_DIMS, numelOf, tooLargeReason } from '../core/shape';
import type { Tensor } from '../core/tensor';
import { fileError, type FileContext } from './errors';
import { FileRangeReader } from './readers';
import { FileSink } from './sinks';
import type { NamedSource } from './sources';
import { readTensorData, writeTensorData } from './tensor-data';
import type { NamedInfo } from './types';

/** safetensors' name of each gpuext dtype: the dtype list's column. */
const DTYPE_NAMES = SAFETENSORS_NAME;
const FROM_NAME = new Map<string, DType>(DTYPES.map((d) => [DTYPE_NAMES[d], d]));

/**
 * safetensors' dtypes in the order of its Dtype enum (increasing alignment),
 * which its writer sorts by: ours sorts the same way, so that a file says the
 * same bytes whichever wrote it.
 */
const ENUM_ORDER = ['BOOL', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32', 'F64', 'I64', 'U64'];

/** The reference reader's limit on the header. */
const MAX_HEADER_BYTES = 100_000_000;
/** serde_json's recursion limit, which the reference reader parses the header with. */
const MAX_NESTING = 128;
/**
 * The most entries a header may have: files of the largest models hold a few
 * thousand tensors; a million entries took 10.7 s and 1.9 GB to parse.
 */
export const MAX_ENTRIES = 1 << 17;
const METADATA_KEY = '__metadata__';

/** A tensor of a safetensors file: where its data lies, relative to the data section. */
interface Entry extends NamedInfo {
  begin: number;
  end: number;
}

/** A parsed header: the tensors in data order, the metadata, and where the data section starts. */
export interface SafetensorsHeader {
  entries: Entry[];
  metadata: Record<string, string>;
  dataStart: number;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** One tensor's header entry, checked. */
function parseEntry(name: string, v: unknown, ctx: FileContext): Entry {
  const bad = (what: string): Error => fileError(ctx, `tensor '${name}' in the header: ${what}`);
  if (!isRecord(v)) throw bad(`expected an object { dtype, shape, data_offsets }, got ${JSON.stringify(v)}`);
  const { dtype: dtypeName, shape, data_offsets: offsets } = v;
  if (typeof dtypeName !== 'string') throw bad(`dtype must be a string, got ${JSON.stringify(dtypeName)}`);
  const dtype = FROM_NAME.get(dtypeName);
  if (dtype === undefined) {
    throw fileError(ctx, `tensor '${name}' has dtype ${JSON.stringify(dtypeName)}, which gpuext does not support ` +
      `(supported: ${DTYPES.map((d) => DTYPE_NAMES[d]).join(', ')})`, TypeError);
  }
  if (!Array.isArray(shape) || !shape.every(isCount)) throw bad(`shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
  if (shape.length > MAX_DIMS) throw bad(`shape ${formatShape(shape)} has ${shape.length} dimensions; gpuext supports at most ${MAX_DIMS}`);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount) || offsets[0] > offsets[1]) {
    throw bad(`data_offsets must be [begin, end] with 0 <= begin <= end, got ${JSON.stringify(offsets)}`);
  }
  const tooLarge = tooLargeReason(shape, dtypeInfo(dtype).itemsize);
  if (tooLarge !== undefined) throw bad(`shape ${formatShape(shape)} of ${dtypeName} is too large (the reference reader: ValidationOverflow): ${tooLarge}`);
  const bytes = numelOf(shape) * dtypeInfo(dtype).itemsize;
  if (!Number.isSafeInteger(bytes) || bytes !== offsets[1] - offsets[0]) {
    throw bad(`shape ${formatShape(shape)} of ${dtypeName} needs ${bytes} bytes but data_offsets ${JSON.stringify(offsets)} span ${offsets[1] - offsets[0]}`);
  }
  return { name, dtype, shape: shape.slice(), begin: offsets[0], end: offsets[1] };
}

/** The "__metadata__" entry, checked: strings to strings; null is none (the reference reader's Option). */
function parseMetadata(v: unknown, ctx: FileContext): Record<string, string> {
  if (v === null) return {};
  if (!isRecord(v) || !Object.values(v).every((s) => typeof s === 'string')) {
    throw fileError(ctx, `"${METADATA_KEY}" in the header must map strings to strings, got ${JSON.stringify(v)}`);
  }
  return { ...(v as Record<string, string>) };
}

/** The reference reader's InvalidHeaderStart: a header is an object, so its first byte is '{'. */
function checkStart(first: Uint8Array, ctx: FileContext): void {
  if (first[0] !== 0x7b) {
    const got = first.length === 0 ? 'an empty header' : `byte 0x${first[0].toString(16).padStart(2, '0')} (${JSON.stringify(String.fromCharCode(first[0]))})`;
    throw fileError(ctx, `the header must start with '{' (a JSON object), got ${got}; this is not a safetensors file, or it is damaged`);
  }
}

/** Where a key appears twice, for the error: a tensor's name, a field of one, or a key of the metadata. */
function duplicateKey(key: string, depth: number, outer: string | undefined): string {
  if (depth === 1) return `${key === METADATA_KEY ? `"${METADATA_KEY}"` : `tensor '${key}'`} appears twice in the header`;
  const owner = outer === METADATA_KEY ? `"${METADATA_KEY}"` : `tensor '${outer}'`;
  return `key '${key}' appears twice in ${depth === 2 ? owner : `an object inside ${owner}`}`;
}

/**
 * Checks the header's text before JSON.parse sees it, in one pass: it nests
 * no deeper than serde_json's limit (which the reference reader parses
 * with), has at most MAX_ENTRIES entries, and no object in it has a key
 * twice. JSON.parse keeps the last of two silently, so the first tensor of a
 * name vanished and the error was a gap in the data; the reference reader
 * refuses such a file too (through its check of the offsets).
 */
function scanHeader(text: string, ctx: FileContext): void {
  // Per open bracket: an object's keys so far, or null for an array. keyNext: just after an object's '{' or ','.
  const open: (Set<string> | null)[] = [];
  let entries = 0, inString = false, keyNext = false, keyStart = -1, topKey: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;  // backslash: the next character is escaped
      else if (c === 0x22) {
        inString = false;
        if (keyStart >= 0) topKey = checkKey(text.slice(keyStart, i + 1), open, topKey, ctx);
      }
      continue;
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    const depth = open.length;
    keyStart = -1;
    if (c === 0x22) {
      inString = true;
      if (keyNext) keyStart = i;
      if (keyNext && depth === 1 && ++entries > MAX_ENTRIES) {
        throw fileError(ctx, `the header has more than ${MAX_ENTRIES} entries; this is not a file gpuext reads (a damaged or crafted header)`);
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (depth + 1 > MAX_NESTING) throw fileError(ctx, `the header nests more than ${MAX_NESTING} deep (the reference reader's JSON limit); this is not a safetensors file, or it is damaged`);
      open.push(c === 0x7b ? new Set() : null);
    } else if (c === 0x7d || c === 0x5d) {
      open.pop();
    }
    keyNext = (c === 0x7b || c === 0x2c) && open.length > 0 && open[open.length - 1] !== null;
  }
}

/** Records a key (its JSON text) in the innermost open object, refusing one it has already; gives the header's key in force. */
function checkKey(literal: string, open: readonly (Set<string> | null)[], topKey: string | undefined, ctx: FileContext): string | undefined {
  let key: string;
  try {
    key = JSON.parse(literal) as string;  // "a" and "\u0061" are one key
  } catch {
    return topKey;  // a bad string: JSON.parse refuses the header next
  }
  const keys = open[open.length - 1] as Set<string>;
  if (keys.has(key)) throw fileError(ctx, `${duplicateKey(key, open.length, topKey)}; this is not a safetensors file, or it is damaged`);
  keys.add(key);
  return open.length === 1 ? key : topKey;
}

/** Reads and checks the header of the safetensors file open as `fh` (of `size` bytes). */
export async function readSafetensorsHeader(fh: FileHandle, size: number, ctx: FileContext): Promise<SafetensorsHeader> {
  if (size < 8) throw fileError(ctx, `the file has ${size} bytes, too few for a safetensors file (it starts with an 8-byte header length)`);
  const lengthBytes = new Uint8Array(8);
  const reader = new FileRangeReader(fh, 0, size, ctx);
  await reader.readExactly(lengthBytes, 'the header length');
  const n = Buffer.from(lengthBytes.buffer).readBigUInt64LE(0);
  if (n > BigInt(MAX_HEADER_BYTES)) {
    throw fileError(ctx, `header length ${n} exceeds ${n + 8n > BigInt(size) ? `the file size ${size}` : `the limit of ${MAX_HEADER_BYTES} bytes`}; ` +
      'this is not a safetensors file, or it is damaged');
  }
  const headerLength = Number(n);
  if (8 + headerLength > size) throw fileError(ctx, `header length ${headerLength} exceeds the file size ${size}; the file is truncated or not a safetensors file`);
  // The first byte first: a header of 100 MB of '[' is refused before it is read.
  const headerBytes = new Uint8Array(headerLength);
  await reader.readExactly(headerBytes.subarray(0, Math.min(1, headerLength)), 'the header');
  checkStart(headerBytes.subarray(0, 1), ctx);
  await reader.readExactly(headerBytes.subarray(1), 'the header');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
  } catch {
    throw fileError(ctx, 'the header is not UTF-8 text; this is not a safetensors file, or it is damaged');
  }
  scanHeader(text, ctx);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw fileError(ctx, `the header is not valid JSON (${(err as Error).message}): ${JSON.stringify(text.slice(0, 80))}`);
  }
  if (!isRecord(json)) throw fileError(ctx, `the header must be a JSON object, got ${JSON.stringify(text.slice(0, 80))}`);
  let metadata: Record<string, string> = {};
  const entries: Entry[] = [];
  for (const [name, v] of Object.entries(json)) {
    if (name === METADATA_KEY) metadata = parseMetadata(v, ctx);
    else entries.push(parseEntry(name, v, ctx));
  }
  const dataStart = 8 + headerLength;
  checkPacked(entries, size - dataStart, ctx);
  return { entries, metadata, dataStart };
}

/** Sorts the entries by data offset and checks that they tile the data section exactly. */
function checkPacked(entries: Entry[], dataBytes: number, ctx: FileContext): void {
  const range = (e: Entry): string => `'${e.name}' (data_offsets [${e.begin}, ${e.end}])`;
  for (const e of entries) {
    if (e.end > dataBytes) throw fileError(ctx, `tensor ${range(e)} lies beyond the data, which has ${dataBytes} bytes; the file is truncated`);
  }
  entries.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  entries.forEach((e, i) => {
    if (e.begin < at) throw fileError(ctx, `tensor ${range(e)} overlaps tensor ${range(entries[i - 1])}`);
    if (e.begin > at) throw fileError(ctx, `a gap of ${e.begin - at} bytes before tensor ${range(e)}; tensors' data must be packed`);
    at = e.end;
  });
  if (at !== dataBytes) throw fileError(ctx, `the data section has ${dataBytes} bytes but the tensors cover ${at}`);
}

/** The tensors of a safetensors file, read in data order onto `device`. */
export async function* loadSafetensors(fh: FileHandle, size: number, ctx: FileContext, device: Device): AsyncGenerator<[string, Tensor]> {
  const { entries, dataStart } = await readSafetensorsHeader(fh, size, ctx);
  for (const e of entries) {
    const reader = new FileRangeReader(fh, dataStart + e.begin, dataStart + e.end, ctx);
    yield [e.name, await readTensorData(reader, e, device, `the data of tensor '${e.name}'`)];
  }
}

/** `a` before `b` in Rust's String order (UTF-8 bytes), as the reference writer sorts names. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The header bytes (length first, then the JSON padded to a multiple of 8) for `sources`, in the order given. */
function headerOf(sources: readonly NamedSource[], metadata: Record<string, string> | undefined): Uint8Array {
  const header: Record<string, unknown> = {};
  // defineProperty: a tensor named "__proto__" is a key like any other.
  const put = (key: string, value: unknown): void => {
    Object.defineProperty(header, key, { value, enumerable: true, writable: true, configurable: true });
  };
  if (metadata !== undefined) put(METADATA_KEY, metadata);
  let offset = 0;
  for (const s of sources) {
    const n = numelOf(s.shape) * dtypeInfo(s.dtype).itemsize;
    put(s.name, { dtype: DTYPE_NAMES[s.dtype], shape: s.shape, data_offsets: [offset, offset + n] });
    offset += n;
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const padded = Math.ceil(json.length / 8) * 8;
  const out = Buffer.alloc(8 + padded, 0x20);
  out.writeBigUInt64LE(BigInt(padded), 0);
  json.copy(out, 8);
  return out;
}

/** Checks what saveSafetensors is given, before any file is made: the names, and metadata of strings to strings. */
export function checkSafetensors(sources: readonly NamedSource[], metadata: unknown, fn: string): Record<string, string> | undefined {
  if (sources.some((s) => s.name === METADATA_KEY)) {
    throw new TypeError(`${fn}: '${METADATA_KEY}' cannot name a tensor in a safetensors file (the format keeps it for the metadata)`);
  }
  if (metadata === undefined) return undefined;
  // A plain object's own keys, or a Map's entries: a Map, a Date or another class instance has no own keys, and saved as {}.
  const proto: unknown = isRecord(metadata) ? Object.getPrototypeOf(metadata) : undefined;
  if (!(metadata instanceof Map) && (!isRecord(metadata) || (proto !== Object.prototype && proto !== null))) {
    throw new TypeError(`${fn}: options.metadata must be an object of strings ({ key: 'value' }) or a Map of them, got ${describeValue(metadata)}`);
  }
  const out: Record<string, string> = {};
  for (const [key, value] of metadata instanceof Map ? metadata.entries() : Object.entries(metadata)) {
    if (typeof key !== 'string') throw new TypeError(`${fn}: options.metadata has the key ${describeValue(key)}; safetensors metadata maps strings to strings`);
    if (typeof value !== 'string') {
      throw new TypeError(`${fn}: options.metadata['${key}'] must be a string (safetensors metadata maps strings to strings), got ${describeValue(value)}`);
    }
    // defineProperty: a key "__proto__" is a key like any other.
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Writes `sources` (checked by checkSafetensors) and `metadata` as a safetensors file into the empty file `fh`. */
export async function saveSafetensors(fh: FileHandle, sources: readonly NamedSource[], metadata: Record<string, string> | undefined): Promise<void> {
  const rank = (s: NamedSource): number => ENUM_ORDER.indexOf(DTYPE_NAMES[s.dtype]);
  const ordered = [...sources].sort((a, b) => rank(b) - rank(a) || compareUtf8(a.name, b.name));
  const sink = new FileSink(fh, 0);
  await sink.write(headerOf(ordered, metadata));
  for (const s of ordered) await writeTensorData(s, sink);
}

/** The tensors of the safetensors file open as `fh`, their dtypes and shapes only, and its metadata. */
export async function inspectSafetensors(fh: FileHandle, size: number, ctx: FileContext): Promise<{ tensors: NamedInfo[]; metadata: Record<string, string> }> {
  const { entries, metadata } = await readSafetensorsHeader(fh, size, ctx);
  return { tensors: entries.map(({ name, dtype, shape }) => ({ name, dtype, shape })), metadata };
}
