// Building zip files byte by byte for the tests of the strict .npz reader
// (test/io-strict.test.ts, test/io-bomb-child.ts): entries whose directory
// and local headers say whatever the test wants, which no zip writer would.
import * as zlib from 'zlib';

/** One entry: its name, the bytes stored (already deflated when `deflated`), and the sizes and CRC-32 to claim. */
export interface RawEntry {
  name: string;
  data: Buffer;
  deflated: boolean;
  size: number;
  crc?: number;
  /** Where the directory says the entry's local header is: another entry's (by index) for an overlap. */
  localOf?: number;
}

/** A .npy header (version 1.0) of a C-order array. */
export function npyHeader(descr: string, shape: readonly number[]): Buffer {
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  dict += ' '.repeat((64 - ((10 + dict.length + 1) % 64)) % 64) + '\n';
  const out = Buffer.alloc(10 + dict.length);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(out);
  out.writeUInt16LE(dict.length, 8);
  out.write(dict, 10, 'latin1');
  return out;
}

/** Raw deflate of `head` then `n` zero bytes. */
export function deflatedZeros(head: Buffer, n: number): Buffer {
  return zlib.deflateRawSync(Buffer.concat([head, Buffer.alloc(n)]), { level: 9 });
}

/** A zip file of `entries` (no ZIP64), the directory saying what each entry claims. */
export function buildZip(entries: readonly RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(e.deflated ? 8 : 0, 8);
    h.writeUInt32LE(e.crc ?? 0, 14);
    h.writeUInt32LE(e.data.length, 18);
    h.writeUInt32LE(e.size, 22);
    h.writeUInt16LE(name.length, 26);
    offsets.push(at);
    parts.push(h, name, e.data);
    at += 30 + name.length + e.data.length;
  }
  const cdStart = at;
  entries.forEach((e, i) => {
    const name = Buffer.from(e.name, 'utf8');
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(e.deflated ? 8 : 0, 10);
    c.writeUInt32LE(e.crc ?? 0, 16);
    c.writeUInt32LE(e.data.length, 20);
    c.writeUInt32LE(e.size, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(offsets[e.localOf ?? i], 42);
    parts.push(c, name);
    at += 46 + name.length;
  });
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(at - cdStart, 12);
  end.writeUInt32LE(cdStart, 16);
  parts.push(end);
  return Buffer.concat(parts);
}
