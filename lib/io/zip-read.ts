// Reading a zip file (PKWARE APPNOTE) as strictly as Python's zipfile, which
// NumPy's np.load uses for .npz files, and then some (NOTE [ Strict zip
// reading ]). Entries stored or deflated, ZIP64 sizes and offsets, one disk,
// no encryption; each entry is read as a stream, never whole.
//
// NOTE [ Strict zip reading ]
// A zip file says everything twice (the central directory at the end, a
// local header before each entry's data) and readers that trust one copy
// are fooled by the other. So:
// - the directory is read whole, entry after entry until its byte size is
//   used up, as zipfile does: the end record's entry count is not trusted (a
//   damaged count loads every array, as in NumPy);
// - the directory must fill the bytes from its offset to the end records
//   exactly: bytes left over or an entry running past them are refused
//   (zipfile: "Bad magic number for central directory", "Truncated central
//   directory"); we also refuse the data zipfile tolerates before the archive
//   (it shifts every offset by it), and read no further than zipfile after
//   the end record (the last one found; its comment and disk numbers unread);
// - each entry's local header must repeat its directory entry: the name
//   (zipfile: "File name in directory 'b.npy' and header b'a.npy' differ"),
//   the compression method, and, unless it defers them to a data
//   descriptor, the sizes (zipfile reads them from the directory alone);
// - entries may not overlap one another or the directory (CPython 3.12:
//   "Overlapped entries ... (possible zip bomb)"): without this, 16 entries
//   pointing at one 256 MiB deflated entry made a 262 KB file inflate to 4 GB;
// - a name holding NUL is refused (zipfile cuts it there, so two names could
//   read as one); names are UTF-8 when flagged, else IBM437 (cp437), as the
//   format says and zipfile decodes;
// - a deflated entry cannot inflate to more than 1032 times its size
//   (deflate's limit: a 258-byte match in 2 bits), so a larger declared size
//   is damage; a reader stops at the declared size (readNpz checks that
//   nothing follows), and the declared sizes of a load are bounded by its
//   maxBytes before anything is allocated (NOTE [ Bounded loads ] in npz.ts).
import type { FileHandle } from 'fs/promises';

import { fileError, type FileContext } from './errors';
import { Crc32Reader, FileRangeReader, InflateReader, type ByteReader } from './readers';
import {
  CENTRAL_SIG, DEFLATED, END_SIG, LOCAL_SIG, STORED, ZIP64_END_SIG, ZIP64_EXTRA_ID, ZIP64_LOCATOR_SIG,
} from './zip';

const FLAG_ENCRYPTED = 0x1;
const FLAG_DATA_DESCRIPTOR = 0x8;
/** Flags zipfile refuses: compressed patched data (bit 5) and strong encryption (bit 6). */
const FLAGS_UNSUPPORTED: [number, string][] = [[0x20, 'compressed patched data (flag bit 5)'], [0x40, 'strong encryption (flag bit 6)']];
const FLAG_UTF8 = 0x800;
/** The newest "version needed to extract" read, as Python's zipfile (6.3). */
const MAX_EXTRACT_VERSION = 63;
/** Deflate's largest ratio of inflated to deflated bytes. */
export const DEFLATE_MAX_RATIO = 1032;

/** IBM437's characters for the bytes 0x80-0xFF (0x00-0x7F are ASCII, as Python's cp437 codec has them). */
const CP437_HIGH =
  'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0';

/** `bytes` as IBM437 text (a zip name without the UTF-8 flag). */
export function decodeCp437(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b < 0x80 ? String.fromCharCode(b) : CP437_HIGH[b - 0x80];
  return out;
}

/** One entry of a zip file, its directory entry checked against its local header. */
export interface ZipEntry {
  name: string;
  compressed: boolean;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** Where its (stored or deflated) data starts, after the local header. */
  dataStart: number;
}

/** Reads bytes [start, start + n) of the file; the caller has checked they exist. */
async function readAt(fh: FileHandle, start: number, n: number, ctx: FileContext, what: string): Promise<Buffer> {
  const out = Buffer.alloc(n);
  await new FileRangeReader(fh, start, start + n, ctx).readExactly(out, what);
  return out;
}

function u64(b: Buffer, at: number): number {
  const v = b.readBigUInt64LE(at);
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(v);
}

/** Where the central directory lies, and where it must end (where the end records start). */
interface DirectorySpan {
  offset: number;
  bytes: number;
  end: number;
}

/** The central directory's place, from the end records. */
async function findCentralDirectory(fh: FileHandle, size: number, ctx: FileContext): Promise<DirectorySpan> {
  // The end record is 22 bytes plus a comment of up to 65535: search the tail backwards for its signature.
  const tailLength = Math.min(size, 22 + 0xffff);
  const tail = await readAt(fh, size - tailLength, tailLength, ctx, 'the end of the zip file');
  let at = -1;
  for (let i = tailLength - 22; i >= 0; i--) {
    // The last signature, as zipfile finds it: what follows the record (its comment, or junk) is not read.
    if (tail.readUInt32LE(i) === END_SIG) {
      at = i;
      break;
    }
  }
  if (at < 0) throw fileError(ctx, 'not a zip file (.npz): no end of central directory record; the file is truncated or of another kind');
  // The disk numbers are not read: zipfile ignores them, and a file of several disks fails the checks below.
  let bytes = tail.readUInt32LE(at + 12), offset = tail.readUInt32LE(at + 16), end = size - tailLength + at;
  // A ZIP64 locator right before the end record points at the ZIP64 end record, whose fields are the real ones.
  if (end >= 20) {
    const locator = await readAt(fh, end - 20, 20, ctx, 'the ZIP64 locator');
    if (locator.readUInt32LE(0) === ZIP64_LOCATOR_SIG) {
      const recordAt = u64(locator, 8);
      if (recordAt + 56 > end - 20) throw fileError(ctx, `the ZIP64 end record's offset ${recordAt} lies beyond the file`);
      const record = await readAt(fh, recordAt, 56, ctx, 'the ZIP64 end record');
      if (record.readUInt32LE(0) !== ZIP64_END_SIG) throw fileError(ctx, 'the ZIP64 end record is damaged (wrong signature)');
      [bytes, offset, end] = [u64(record, 40), u64(record, 48), recordAt];
    }
  }
  if (offset + bytes !== end) {
    const where = offset + bytes > end ? `runs ${offset + bytes - end} bytes past` : `ends ${end - (offset + bytes)} bytes before`;
    throw fileError(ctx, `the central directory (${bytes} bytes at offset ${offset}) ${where} the end records at ${end}; the file is damaged`);
  }
  return { offset, bytes, end };
}

/** The ZIP64 extra field's values for the fields that hold 0xFFFFFFFF, in the order the format gives them. */
function zip64Fields(extra: Buffer, wanted: boolean[], ctx: FileContext, name: string): number[] {
  for (let i = 0; i + 4 <= extra.length;) {
    const id = extra.readUInt16LE(i), len = extra.readUInt16LE(i + 2);
    if (id === ZIP64_EXTRA_ID) {
      const out: number[] = [];
      let at = i + 4;
      for (const w of wanted) {
        if (!w) continue;
        if (at + 8 > i + 4 + len || at + 8 > extra.length) throw fileError(ctx, `entry '${name}': its ZIP64 extra field is too short`);
        out.push(u64(extra, at));
        at += 8;
      }
      return out;
    }
    i += 4 + len;
  }
  throw fileError(ctx, `entry '${name}': its sizes say ZIP64 but it has no ZIP64 extra field`);
}

/** A name's text: UTF-8 when flagged (and valid), else IBM437; NUL refused. */
function decodeName(bytes: Buffer, flags: number, ctx: FileContext, k: number | string): string {
  let name: string;
  if (flags & FLAG_UTF8) {
    try {
      name = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw fileError(ctx, `entry ${k}'s name is flagged UTF-8 but is not (bytes ${bytes.toString('hex')})`);
    }
  } else {
    name = decodeCp437(bytes);
  }
  if (name.includes('\0')) throw fileError(ctx, `entry ${k}'s name ${JSON.stringify(name)} holds a NUL character; the file is damaged or crafted`);
  return name;
}

/** A directory entry as the directory states it, before its local header is read. */
interface Listed extends Omit<ZipEntry, 'dataStart'> {
  flags: number;
  method: number;
}

/** The directory's entries, every one of its bytes read. */
function parseDirectory(cd: Buffer, ctx: FileContext): Listed[] {
  const out: Listed[] = [];
  for (let at = 0, k = 0; at < cd.length; k++) {
    if (at + 46 > cd.length) throw fileError(ctx, `the central directory is truncated: entry ${k} needs 46 bytes, ${cd.length - at} are left`);
    if (cd.readUInt32LE(at) !== CENTRAL_SIG) throw fileError(ctx, `the central directory is damaged at entry ${k} (byte ${at}: wrong signature)`);
    const flags = cd.readUInt16LE(at + 8), method = cd.readUInt16LE(at + 10);
    const nameLength = cd.readUInt16LE(at + 28), extraLength = cd.readUInt16LE(at + 30), commentLength = cd.readUInt16LE(at + 32);
    const next = at + 46 + nameLength + extraLength + commentLength;
    if (next > cd.length) throw fileError(ctx, `the central directory is truncated: entry ${k} runs ${next - cd.length} bytes past its end`);
    const nameBytes = cd.subarray(at + 46, at + 46 + nameLength);
    const name = decodeName(nameBytes, flags, ctx, k);
    const extra = cd.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength);
    if (flags & FLAG_ENCRYPTED) throw fileError(ctx, `entry '${name}' is encrypted; encrypted zip files are not supported`);
    for (const [bit, what] of FLAGS_UNSUPPORTED) if (flags & bit) throw fileError(ctx, `entry '${name}' uses ${what}, which is not supported`);
    const needed = cd[at + 6];
    if (needed > MAX_EXTRACT_VERSION) {
      throw fileError(ctx, `entry '${name}' needs zip version ${needed / 10} to extract; versions up to ${MAX_EXTRACT_VERSION / 10} are read (as by zipfile)`);
    }
    if (method !== STORED && method !== DEFLATED) {
      throw fileError(ctx, `entry '${name}' uses compression method ${method}; only stored (0) and deflate (8) are supported`);
    }
    let compressedSize = cd.readUInt32LE(at + 20), size = cd.readUInt32LE(at + 24), localOffset = cd.readUInt32LE(at + 42);
    const wide = [size, compressedSize, localOffset].map((v) => v === 0xffffffff);
    if (wide.some(Boolean)) {
      const values = zip64Fields(extra, wide, ctx, name);
      if (wide[0]) size = values.shift()!;
      if (wide[1]) compressedSize = values.shift()!;
      if (wide[2]) localOffset = values.shift()!;
    }
    out.push({ name, flags, method, compressed: method === DEFLATED, crc: cd.readUInt32LE(at + 16), compressedSize, size, localOffset });
    at = next;
  }
  return out;
}

/** Checks `e`'s local header against its directory entry; returns where its data starts. */
async function checkLocalHeader(fh: FileHandle, e: Listed, dirOffset: number, ctx: FileContext): Promise<number> {
  const bad = (what: string): Error => fileError(ctx, `entry '${e.name}': ${what}`);
  if (e.localOffset + 30 > dirOffset) throw bad(`its local header (offset ${e.localOffset}) lies beyond the data, which ends at the central directory (${dirOffset}); the file is damaged`);
  const local = await readAt(fh, e.localOffset, 30, ctx, `entry '${e.name}'s local header`);
  if (local.readUInt32LE(0) !== LOCAL_SIG) throw bad(`its local header is damaged (wrong signature at offset ${e.localOffset})`);
  const nameLength = local.readUInt16LE(26), extraLength = local.readUInt16LE(28);
  const dataStart = e.localOffset + 30 + nameLength + extraLength;
  if (dataStart > dirOffset) throw bad('its local header runs into the central directory; the file is damaged');
  const more = await readAt(fh, e.localOffset + 30, nameLength + extraLength, ctx, `entry '${e.name}'s local header`);
  const flags = local.readUInt16LE(6), method = local.readUInt16LE(8);
  // Compared as text, each name decoded by its own header's flag, as zipfile compares them.
  const localName = decodeName(more.subarray(0, nameLength), flags, ctx, `'${e.name}' (its local header)`);
  if (localName !== e.name) {
    throw bad(`the name in the directory and in its local header (${JSON.stringify(localName)}) differ; the file is damaged or crafted`);
  }
  if (method !== e.method) throw bad(`its local header says compression method ${method}, the directory ${e.method}`);
  if (flags & FLAG_ENCRYPTED) throw bad('its local header says it is encrypted; encrypted zip files are not supported');
  if (!(flags & FLAG_DATA_DESCRIPTOR)) {
    let compressedSize = local.readUInt32LE(18), size = local.readUInt32LE(22);
    const wide = [size, compressedSize].map((v) => v === 0xffffffff);
    if (wide.some(Boolean)) {
      const values = zip64Fields(more.subarray(nameLength), wide, ctx, e.name);
      if (wide[0]) size = values.shift()!;
      if (wide[1]) compressedSize = values.shift()!;
    }
    if (size !== e.size || compressedSize !== e.compressedSize) {
      throw bad(`its local header says ${compressedSize} bytes (${size} uncompressed), the directory ${e.compressedSize} (${e.size}); the file is damaged`);
    }
  }
  return dataStart;
}

/** Checks an entry's own sizes: its data in the file, stored sizes equal, a deflated size deflate can reach. */
function checkSizes(e: ZipEntry, dirOffset: number, ctx: FileContext): void {
  const bad = (what: string): Error => fileError(ctx, `entry '${e.name}' ${what}`);
  if (e.dataStart + e.compressedSize > dirOffset) throw bad(`has ${e.compressedSize} bytes of data at offset ${e.dataStart}, past the central directory (${dirOffset}); the file is truncated or damaged`);
  if (!e.compressed && e.compressedSize !== e.size) throw bad(`is stored but its sizes differ (${e.compressedSize} and ${e.size}); the directory is damaged`);
  if (e.compressed && e.compressedSize === 0) throw bad('is deflated but has no data; the directory is damaged');
  if (e.compressed && e.size > e.compressedSize * DEFLATE_MAX_RATIO) {
    throw bad(`says it inflates to ${e.size} bytes from ${e.compressedSize}, beyond deflate's ${DEFLATE_MAX_RATIO}:1; the directory is damaged`);
  }
}

/** Refuses entries whose bytes (local header to end of data) overlap. */
function checkOverlaps(entries: readonly ZipEntry[], ctx: FileContext): void {
  const sorted = [...entries].sort((a, b) => a.localOffset - b.localOffset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1], e = sorted[i];
    if (e.localOffset < prev.dataStart + prev.compressedSize) {
      throw fileError(ctx, `entries '${prev.name}' and '${e.name}' overlap (bytes ${prev.localOffset}-${prev.dataStart + prev.compressedSize} ` +
        `and from ${e.localOffset}); the file is damaged or crafted (a zip bomb)`);
    }
  }
}

/** The entries of the zip file open as `fh` (of `size` bytes), in directory order, checked (NOTE [ Strict zip reading ]). */
export async function readZipDirectory(fh: FileHandle, size: number, ctx: FileContext): Promise<ZipEntry[]> {
  const dir = await findCentralDirectory(fh, size, ctx);
  const cd = await readAt(fh, dir.offset, dir.bytes, ctx, 'the central directory');
  const entries: ZipEntry[] = [];
  for (const l of parseDirectory(cd, ctx)) {
    const e: ZipEntry = {
      name: l.name, compressed: l.compressed, crc: l.crc, compressedSize: l.compressedSize, size: l.size, localOffset: l.localOffset,
      dataStart: await checkLocalHeader(fh, l, dir.offset, ctx),
    };
    checkSizes(e, dir.offset, ctx);
    entries.push(e);
  }
  checkOverlaps(entries, ctx);
  return entries;
}

/** A reader of an entry's uncompressed bytes, with their CRC-32 (check it once all are read); close() when done. */
export interface EntryReader extends ByteReader {
  readonly crc: number;
  close(): void;
}

/** Opens entry `e` (of readZipDirectory) of the zip file open as `fh` for reading. */
export function openZipEntry(fh: FileHandle, e: ZipEntry, ctx: FileContext): EntryReader {
  const end = e.dataStart + e.compressedSize;
  const inflater = e.compressed ? new InflateReader(fh, e.dataStart, end, ctx) : undefined;
  const reader = new Crc32Reader(inflater ?? new FileRangeReader(fh, e.dataStart, end, ctx));
  return {
    get crc() {
      return reader.crc;
    },
    readExactly: (dst, what) => reader.readExactly(dst, what),
    atEnd: () => reader.atEnd(),
    close: () => inflater?.close(),
  };
}
