// A minimal zip reader and writer (PKWARE APPNOTE), enough for .npz files:
// entries stored or deflated, ZIP64 sizes and offsets, one disk, no
// encryption. Entries are read and written as streams, never whole.
//
// The reader trusts the central directory at the end of the file (as Python's
// zipfile does): it lists the entries with their sizes and CRC-32, and the
// local header only says where the data starts. The writer writes each
// entry's local header with placeholders, streams the data while counting it
// and its CRC-32, then fills the header in (the file is seekable: no data
// descriptors needed), and ends with the central directory.
import type { FileHandle } from 'fs/promises';

import { fileError, type FileContext } from './errors';
import { Crc32Reader, FileRangeReader, InflateReader, type ByteReader } from './readers';
import { Crc32Sink, DeflateSink, FileSink, type ByteSink } from './sinks';

const LOCAL_SIG = 0x04034b50;
const CENTRAL_SIG = 0x02014b50;
const END_SIG = 0x06054b50;
const ZIP64_END_SIG = 0x06064b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
const ZIP64_EXTRA_ID = 0x0001;
const STORED = 0;
const DEFLATED = 8;
/** Python's zipfile goes to ZIP64 past 2^31 - 1 (some readers take 32-bit fields as signed); so do we. */
const ZIP64_LIMIT = 0x7fffffff;
const FLAG_ENCRYPTED = 0x1;
const FLAG_UTF8 = 0x800;
/** Versions needed to extract: 2.0 (deflate), 4.5 (ZIP64). Made by Unix (3) so the attributes read as a mode. */
const VERSION = 20;
const VERSION_ZIP64 = 45;
const MADE_BY_UNIX = 3 << 8;
/** Regular file, rw-r--r--, in the high half of the external attributes (Unix). */
const FILE_ATTRIBUTES = (0o100644 << 16) >>> 0;

/** One entry of a zip file, as its central directory records it. */
export interface ZipEntry {
  name: string;
  compressed: boolean;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
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

/** Where the central directory lies and how many entries it has, from the end records. */
async function findCentralDirectory(fh: FileHandle, size: number, ctx: FileContext): Promise<{ offset: number; bytes: number; count: number }> {
  // The end record is 22 bytes plus a comment of up to 65535: search the tail backwards for its signature.
  const tailLength = Math.min(size, 22 + 0xffff);
  const tail = await readAt(fh, size - tailLength, tailLength, ctx, 'the end of the zip file');
  let at = -1;
  for (let i = tailLength - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === END_SIG && i + 22 + tail.readUInt16LE(i + 20) === tailLength) {
      at = i;
      break;
    }
  }
  if (at < 0) throw fileError(ctx, 'not a zip file (.npz): no end of central directory record; the file is truncated or of another kind');
  if (tail.readUInt16LE(at + 4) !== 0 || tail.readUInt16LE(at + 6) !== 0) throw fileError(ctx, 'a zip file spanning several disks is not supported');
  let count = tail.readUInt16LE(at + 10), bytes = tail.readUInt32LE(at + 12), offset = tail.readUInt32LE(at + 16);
  const endAt = size - tailLength + at;
  // A ZIP64 locator right before the end record points at the ZIP64 end record, whose fields are the real ones.
  if (endAt >= 20) {
    const locator = await readAt(fh, endAt - 20, 20, ctx, 'the ZIP64 locator');
    if (locator.readUInt32LE(0) === ZIP64_LOCATOR_SIG) {
      const recordAt = u64(locator, 8);
      if (recordAt + 56 > endAt) throw fileError(ctx, `the ZIP64 end record's offset ${recordAt} lies beyond the file`);
      const record = await readAt(fh, recordAt, 56, ctx, 'the ZIP64 end record');
      if (record.readUInt32LE(0) !== ZIP64_END_SIG) throw fileError(ctx, 'the ZIP64 end record is damaged (wrong signature)');
      [count, bytes, offset] = [u64(record, 32), u64(record, 40), u64(record, 48)];
    }
  }
  if (offset + bytes > endAt) {
    throw fileError(ctx, `the central directory (${bytes} bytes at offset ${offset}) lies beyond the file's ${endAt} bytes before its end record; the file is truncated or damaged`);
  }
  return { offset, bytes, count };
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
        if (at + 8 > i + 4 + len) throw fileError(ctx, `entry '${name}': its ZIP64 extra field is too short`);
        out.push(u64(extra, at));
        at += 8;
      }
      return out;
    }
    i += 4 + len;
  }
  throw fileError(ctx, `entry '${name}': its sizes say ZIP64 but it has no ZIP64 extra field`);
}

/** The entries of the zip file open as `fh` (of `size` bytes), in directory order. */
export async function readZipDirectory(fh: FileHandle, size: number, ctx: FileContext): Promise<ZipEntry[]> {
  const dir = await findCentralDirectory(fh, size, ctx);
  const cd = await readAt(fh, dir.offset, dir.bytes, ctx, 'the central directory');
  const entries: ZipEntry[] = [];
  let at = 0;
  for (let k = 0; k < dir.count; k++) {
    if (at + 46 > cd.length || cd.readUInt32LE(at) !== CENTRAL_SIG) throw fileError(ctx, `the central directory is damaged at entry ${k}`);
    const flags = cd.readUInt16LE(at + 8), method = cd.readUInt16LE(at + 10);
    const nameLength = cd.readUInt16LE(at + 28), extraLength = cd.readUInt16LE(at + 30), commentLength = cd.readUInt16LE(at + 32);
    const nameBytes = cd.subarray(at + 46, at + 46 + nameLength);
    // Names are UTF-8 when flagged, else IBM437; NumPy's are ASCII, the same in both.
    const name = nameBytes.toString(flags & FLAG_UTF8 ? 'utf8' : 'latin1');
    const extra = cd.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength);
    if (flags & FLAG_ENCRYPTED) throw fileError(ctx, `entry '${name}' is encrypted; encrypted zip files are not supported`);
    if (method !== STORED && method !== DEFLATED) {
      throw fileError(ctx, `entry '${name}' uses compression method ${method}; only stored (0) and deflate (8) are supported`);
    }
    let compressedSize = cd.readUInt32LE(at + 20), entrySize = cd.readUInt32LE(at + 24), localOffset = cd.readUInt32LE(at + 42);
    const wide = [entrySize, compressedSize, localOffset].map((v) => v === 0xffffffff);
    if (wide.some(Boolean)) {
      const values = zip64Fields(extra, wide, ctx, name);
      if (wide[0]) entrySize = values.shift()!;
      if (wide[1]) compressedSize = values.shift()!;
      if (wide[2]) localOffset = values.shift()!;
    }
    entries.push({ name, compressed: method === DEFLATED, crc: cd.readUInt32LE(at + 16), compressedSize, size: entrySize, localOffset });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** A reader of an entry's uncompressed bytes, with their CRC-32 (check it once all are read); close() when done. */
export interface EntryReader extends ByteReader {
  readonly crc: number;
  close(): void;
}

/** Opens entry `e` of the zip file open as `fh` (of `size` bytes) for reading. */
export async function openZipEntry(fh: FileHandle, e: ZipEntry, size: number, ctx: FileContext): Promise<EntryReader> {
  if (e.localOffset + 30 > size) throw fileError(ctx, `entry '${e.name}': its local header lies beyond the file; the file is truncated`);
  const local = await readAt(fh, e.localOffset, 30, ctx, `entry '${e.name}'s local header`);
  if (local.readUInt32LE(0) !== LOCAL_SIG) throw fileError(ctx, `entry '${e.name}': its local header is damaged (wrong signature)`);
  const start = e.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  const end = start + e.compressedSize;
  if (end > size) throw fileError(ctx, `entry '${e.name}': its ${e.compressedSize} bytes of data run past the end of the file; the file is truncated`);
  if (!e.compressed && e.compressedSize !== e.size) {
    throw fileError(ctx, `entry '${e.name}' is stored but its sizes differ (${e.compressedSize} and ${e.size}); the directory is damaged`);
  }
  if (e.compressed && e.compressedSize === 0) throw fileError(ctx, `entry '${e.name}' is deflated but has no data; the directory is damaged`);
  const inflater = e.compressed ? new InflateReader(fh, start, end, ctx) : undefined;
  const reader = new Crc32Reader(inflater ?? new FileRangeReader(fh, start, end, ctx));
  return {
    get crc() {
      return reader.crc;
    },
    readExactly: (dst, what) => reader.readExactly(dst, what),
    atEnd: () => reader.atEnd(),
    close: () => inflater?.close(),
  };
}

/** MS-DOS date and time (local, 2-second resolution) of `d`, as zip headers record them. */
function dosDateTime(d: Date): [date: number, time: number] {
  const year = Math.min(Math.max(d.getFullYear(), 1980), 2107);
  return [((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(), (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1)];
}

interface Written extends ZipEntry {
  zip64: boolean;
  flags: number;
  nameBytes: Buffer;
}

/** Writes a zip file into the empty file `fh`, entry after entry, then finish(). */
export class ZipWriter {
  readonly #sink: FileSink;
  readonly #entries: Written[] = [];
  readonly #date: number;
  readonly #time: number;

  /** forceZip64: ZIP64 records even where the sizes do not need them (tests reach those paths with small files). */
  constructor(fh: FileHandle, private readonly forceZip64 = false) {
    this.#sink = new FileSink(fh, 0);
    [this.#date, this.#time] = dosDateTime(new Date());
  }

  /**
   * Adds entry `name` of `size` bytes, which `write` writes to the sink it is
   * given, deflated when `compress`. Throws if it writes another count.
   */
  async add(name: string, size: number, compress: boolean, write: (sink: ByteSink) => Promise<void>): Promise<void> {
    const file = this.#sink;
    const localOffset = file.position;
    const nameBytes = Buffer.from(name, 'utf8');
    const flags = /^[\x20-\x7e]*$/.test(name) ? 0 : FLAG_UTF8;
    // Whether the local header needs ZIP64 sizes is decided before the data is written: beyond the limit, or
    // near it (deflate can grow incompressible data a little).
    const zip64 = this.forceZip64 || size + size / 256 + 4096 > ZIP64_LIMIT;
    const header = Buffer.alloc(30 + nameBytes.length + (zip64 ? 20 : 0));
    header.writeUInt32LE(LOCAL_SIG, 0);
    header.writeUInt16LE(zip64 ? VERSION_ZIP64 : VERSION, 4);
    header.writeUInt16LE(flags, 6);
    header.writeUInt16LE(compress ? DEFLATED : STORED, 8);
    header.writeUInt16LE(this.#time, 10);
    header.writeUInt16LE(this.#date, 12);
    header.writeUInt16LE(nameBytes.length, 26);
    header.writeUInt16LE(zip64 ? 20 : 0, 28);
    nameBytes.copy(header, 30);
    if (zip64) {
      header.writeUInt16LE(ZIP64_EXTRA_ID, 30 + nameBytes.length);
      header.writeUInt16LE(16, 32 + nameBytes.length);
    }
    await file.write(header);  // sizes and CRC-32 filled in below
    const dataStart = file.position;
    const deflate = compress ? new DeflateSink(file) : undefined;
    const counted = new Crc32Sink(deflate ?? file);
    await write(counted);
    await deflate?.finish();
    if (counted.size !== size) throw new Error(`gpuext internal error: zip entry '${name}' was declared ${size} bytes but ${counted.size} were written`);
    const compressedSize = file.position - dataStart;
    header.writeUInt32LE(counted.crc, 14);
    if (zip64) {
      header.writeUInt32LE(0xffffffff, 18);
      header.writeUInt32LE(0xffffffff, 22);
      header.writeBigUInt64LE(BigInt(size), 34 + nameBytes.length);
      header.writeBigUInt64LE(BigInt(compressedSize), 42 + nameBytes.length);
    } else {
      header.writeUInt32LE(compressedSize, 18);
      header.writeUInt32LE(size, 22);
    }
    const end = file.position;
    file.position = localOffset;
    await file.write(header);
    file.position = end;
    this.#entries.push({ name, nameBytes, flags, zip64, compressed: compress, crc: counted.crc, compressedSize, size, localOffset });
  }

  /** Writes the central directory and the end records. */
  async finish(): Promise<void> {
    const file = this.#sink;
    const cdOffset = file.position;
    for (const e of this.#entries) {
      // The ZIP64 extra holds, in this order, the fields too large for 32 bits (all of them when forced).
      const wide = [e.size, e.compressedSize, e.localOffset].map((v) => this.forceZip64 || v > ZIP64_LIMIT);
      const extraLength = wide.some(Boolean) ? 4 + 8 * wide.filter(Boolean).length : 0;
      const b = Buffer.alloc(46 + e.nameBytes.length + extraLength);
      const version = e.zip64 || extraLength > 0 ? VERSION_ZIP64 : VERSION;
      b.writeUInt32LE(CENTRAL_SIG, 0);
      b.writeUInt16LE(MADE_BY_UNIX | version, 4);
      b.writeUInt16LE(version, 6);
      b.writeUInt16LE(e.flags, 8);
      b.writeUInt16LE(e.compressed ? DEFLATED : STORED, 10);
      b.writeUInt16LE(this.#time, 12);
      b.writeUInt16LE(this.#date, 14);
      b.writeUInt32LE(e.crc, 16);
      b.writeUInt32LE(wide[1] ? 0xffffffff : e.compressedSize, 20);
      b.writeUInt32LE(wide[0] ? 0xffffffff : e.size, 24);
      b.writeUInt16LE(e.nameBytes.length, 28);
      b.writeUInt16LE(extraLength, 30);
      b.writeUInt32LE(FILE_ATTRIBUTES, 38);
      b.writeUInt32LE(wide[2] ? 0xffffffff : e.localOffset, 42);
      e.nameBytes.copy(b, 46);
      if (extraLength > 0) {
        let at = 46 + e.nameBytes.length;
        b.writeUInt16LE(ZIP64_EXTRA_ID, at);
        b.writeUInt16LE(extraLength - 4, at + 2);
        at += 4;
        [e.size, e.compressedSize, e.localOffset].forEach((v, i) => {
          if (wide[i]) at = b.writeBigUInt64LE(BigInt(v), at);
        });
      }
      await file.write(b);
    }
    const cdBytes = file.position - cdOffset;
    const count = this.#entries.length;
    if (this.forceZip64 || count > 0xffff || cdOffset > ZIP64_LIMIT || cdBytes > ZIP64_LIMIT) {
      const recordAt = file.position;
      const record = Buffer.alloc(56 + 20);
      record.writeUInt32LE(ZIP64_END_SIG, 0);
      record.writeBigUInt64LE(44n, 4);  // the record's size after this field
      record.writeUInt16LE(MADE_BY_UNIX | VERSION_ZIP64, 12);
      record.writeUInt16LE(VERSION_ZIP64, 14);
      record.writeBigUInt64LE(BigInt(count), 24);
      record.writeBigUInt64LE(BigInt(count), 32);
      record.writeBigUInt64LE(BigInt(cdBytes), 40);
      record.writeBigUInt64LE(BigInt(cdOffset), 48);
      record.writeUInt32LE(ZIP64_LOCATOR_SIG, 56);
      record.writeBigUInt64LE(BigInt(recordAt), 64);
      record.writeUInt32LE(1, 72);  // disks in all
      await file.write(record);
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(END_SIG, 0);
    end.writeUInt16LE(Math.min(count, 0xffff), 8);
    end.writeUInt16LE(Math.min(count, 0xffff), 10);
    end.writeUInt32LE(Math.min(cdBytes, 0xffffffff), 12);
    end.writeUInt32LE(Math.min(cdOffset, 0xffffffff), 16);
    await file.write(end);
  }
}
