// Writing a zip file (PKWARE APPNOTE), enough for .npz files: entries
// stored or deflated, ZIP64 sizes and offsets, one disk. Each entry's local
// header is written with placeholders, the data streamed while counted with
// its CRC-32, then the header filled in (the file is seekable: no data
// descriptors needed); the central directory ends the file. The reader is
// ./zip-read.ts; the format's constants are here.
import type { FileHandle } from 'fs/promises';

import { Crc32Sink, DeflateSink, FileSink, type ByteSink } from './sinks';

export const LOCAL_SIG = 0x04034b50;
export const CENTRAL_SIG = 0x02014b50;
export const END_SIG = 0x06054b50;
export const ZIP64_END_SIG = 0x06064b50;
export const ZIP64_LOCATOR_SIG = 0x07064b50;
export const ZIP64_EXTRA_ID = 0x0001;
export const STORED = 0;
export const DEFLATED = 8;
/** Python's zipfile goes to ZIP64 past 2^31 - 1 (some readers take 32-bit fields as signed); so do we. */
const ZIP64_LIMIT = 0x7fffffff;
const FLAG_UTF8 = 0x800;
/** Versions needed to extract: 2.0 (deflate), 4.5 (ZIP64). Made by Unix (3) so the attributes read as a mode. */
const VERSION = 20;
const VERSION_ZIP64 = 45;
const MADE_BY_UNIX = 3 << 8;
/** Regular file, rw-r--r--, in the high half of the external attributes (Unix). */
const FILE_ATTRIBUTES = (0o100644 << 16) >>> 0;

/** MS-DOS date and time (local, 2-second resolution) of `d`, as zip headers record them. */
function dosDateTime(d: Date): [date: number, time: number] {
  const year = Math.min(Math.max(d.getFullYear(), 1980), 2107);
  return [((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(), (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1)];
}

interface Written {
  name: string;
  compressed: boolean;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
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
