// Byte readers: where a tensor's bytes come from when loading. A file range
// read at explicit positions (safetensors, .npy, stored .npz entries) or the
// inflated bytes of a deflated .npz entry, pulled on demand: either way the
// bytes go straight into the buffer of the tensor (or chunk) being filled,
// and a file is never read whole into memory.
import type { FileHandle } from 'fs/promises';
import { pipeline, Readable } from 'stream';
import * as zlib from 'zlib';

import { native, type NativeTensor } from '../core/native';
import { fileError, withFileContext, type FileContext } from './errors';

/** A source of bytes, read in order. */
export interface ByteReader {
  /** Fills `dst`, or throws naming `what` when the bytes end first. */
  readExactly(dst: Uint8Array, what: string): Promise<void>;
  /**
   * Fills the new contiguous tensor `dst` (of `nbytes` bytes) with the next
   * bytes, with no copy through JS memory, where the reader can (a plain
   * file range: NOTE [ File reads ] in csrc/base/file_read.cpp).
   */
  readIntoTensor?(dst: NativeTensor, nbytes: number, what: string): Promise<void>;
  /** Whether every byte has been read. */
  atEnd(): Promise<boolean>;
}

function truncated(ctx: FileContext, what: string, want: number, got: number): Error {
  return fileError(ctx, `the file is truncated: ${what} needs ${want} bytes, only ${got} are left`);
}

/** The bytes [start, end) of an open file. */
export class FileRangeReader implements ByteReader {
  #at: number;

  constructor(private readonly fh: FileHandle, start: number, private readonly end: number, private readonly ctx: FileContext) {
    this.#at = start;
  }

  async readExactly(dst: Uint8Array, what: string): Promise<void> {
    const left = this.end - this.#at;
    if (dst.length > left) throw truncated(this.ctx, what, dst.length, Math.max(0, left));
    let done = 0;
    while (done < dst.length) {
      // A short read happens (signals, pipes); zero bytes means the file shrank under us.
      const { bytesRead } = await this.fh.read(dst, done, dst.length - done, this.#at + done);
      if (bytesRead === 0) throw truncated(this.ctx, what, dst.length, done);
      done += bytesRead;
    }
    this.#at += done;
  }

  async readIntoTensor(dst: NativeTensor, nbytes: number, what: string): Promise<void> {
    const left = this.end - this.#at;
    if (nbytes > left) throw truncated(this.ctx, what, nbytes, Math.max(0, left));
    try {
      await native.readFile(this.fh.fd, this.#at, dst);
    } catch (err) {
      throw withFileContext(err, this.ctx);
    }
    this.#at += nbytes;
  }

  async atEnd(): Promise<boolean> {
    return this.#at >= this.end;
  }
}

/** Compressed bytes read from the file per step of inflating. */
const INFLATE_READ_BYTES = 64 * 1024;

/** The bytes [start, end) of an open file, a chunk at a time, read at explicit positions. */
async function* fileChunks(fh: FileHandle, start: number, end: number): AsyncGenerator<Buffer> {
  for (let at = start; at < end;) {
    const buf = Buffer.alloc(Math.min(INFLATE_READ_BYTES, end - at));
    const { bytesRead } = await fh.read(buf, 0, buf.length, at);
    if (bytesRead === 0) return;  // the file shrank: inflating reports the cut stream
    at += bytesRead;
    yield buf.subarray(0, bytesRead);
  }
}

/**
 * The inflated bytes of a raw deflate stream in the file range [start, end)
 * (a deflated zip entry). The compressed bytes are read at explicit
 * positions, not by a stream of the FileHandle: such a stream closes the
 * handle when it is destroyed (so one entry left early closed the file for
 * the next) and adds a listener to it per entry.
 */
export class InflateReader implements ByteReader {
  #chunks: AsyncIterator<Buffer>;
  #pending: Buffer = Buffer.alloc(0);

  constructor(fh: FileHandle, start: number, end: number, private readonly ctx: FileContext) {
    const inflate = zlib.createInflateRaw();
    pipeline(Readable.from(fileChunks(fh, start, end), { objectMode: false }), inflate, () => undefined);  // errors reach the iterator through inflate
    this.#chunks = inflate[Symbol.asyncIterator]();
  }

  /** The next inflated chunk, or undefined at the end. */
  async #next(): Promise<Buffer | undefined> {
    try {
      const r = await this.#chunks.next();
      return r.done ? undefined : r.value;
    } catch (err) {
      throw withFileContext(err, this.ctx);
    }
  }

  async readExactly(dst: Uint8Array, what: string): Promise<void> {
    let done = 0;
    while (done < dst.length) {
      if (this.#pending.length === 0) {
        const chunk = await this.#next();
        if (chunk === undefined) throw truncated(this.ctx, what, dst.length, done);
        this.#pending = chunk;
      }
      const n = Math.min(this.#pending.length, dst.length - done);
      dst.set(this.#pending.subarray(0, n), done);
      this.#pending = this.#pending.subarray(n);
      done += n;
    }
  }

  async atEnd(): Promise<boolean> {
    while (this.#pending.length === 0) {
      const chunk = await this.#next();
      if (chunk === undefined) return true;
      this.#pending = chunk;
    }
    return false;
  }

  /** Stops inflating (when the reader is left before its end). */
  close(): void {
    void this.#chunks.return?.();
  }
}

/** A reader that keeps the CRC-32 of the bytes it passes on (zip entries carry one). */
export class Crc32Reader implements ByteReader {
  crc = 0;

  constructor(private readonly inner: ByteReader) {}

  async readExactly(dst: Uint8Array, what: string): Promise<void> {
    await this.inner.readExactly(dst, what);
    this.crc = zlib.crc32(dst, this.crc);
  }

  atEnd(): Promise<boolean> {
    return this.inner.atEnd();
  }
}
