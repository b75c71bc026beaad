// Byte sinks: where a tensor's bytes go when saving. A file at a running
// position, the deflate stream of a compressed .npz entry, and a CRC-32
// counter in front of either. A sink is done with the bytes it was handed once
// write() resolves, so the caller refills one buffer chunk after chunk.
import type { FileHandle } from 'fs/promises';
import * as zlib from 'zlib';

/** A destination of bytes, written in order. */
export interface ByteSink {
  /** Writes `bytes`; they may be reused once this resolves. */
  write(bytes: Uint8Array): Promise<void>;
}

/** An open file, written from `position` on. */
export class FileSink implements ByteSink {
  constructor(private readonly fh: FileHandle, public position: number) {}

  async write(bytes: Uint8Array): Promise<void> {
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await this.fh.write(bytes, done, bytes.length - done, this.position + done);
      done += bytesWritten;
    }
    this.position += done;
  }
}

/** Raw deflate (as in a zip entry) of the bytes written, passed on to `out`; finish() flushes. */
export class DeflateSink implements ByteSink {
  readonly #deflate = zlib.createDeflateRaw();
  readonly #pump: Promise<void>;

  constructor(out: ByteSink) {
    this.#pump = (async () => {
      for await (const chunk of this.#deflate) await out.write(chunk as Buffer);
    })();
    // A failure of `out` stops the stream, so that no write waits forever on it.
    this.#pump.catch((err: unknown) => this.#deflate.destroy(err instanceof Error ? err : new Error(String(err))));
  }

  async write(bytes: Uint8Array): Promise<void> {
    // The callback comes once zlib has consumed the bytes (not merely queued them): then they may be reused.
    const written = new Promise<void>((resolve, reject) => this.#deflate.write(bytes, (err) => (err ? reject(err) : resolve())));
    written.catch(() => undefined);  // when the pump failed first, the race below reports that failure
    await Promise.race([written, this.#pump.then(() => written)]);
  }

  async finish(): Promise<void> {
    this.#deflate.end();
    await this.#pump;
  }
}

/** A sink that keeps the CRC-32 and the count of the bytes it passes on (zip entries record both). */
export class Crc32Sink implements ByteSink {
  crc = 0;
  size = 0;

  constructor(private readonly inner: ByteSink) {}

  async write(bytes: Uint8Array): Promise<void> {
    this.crc = zlib.crc32(bytes, this.crc);
    this.size += bytes.length;
    await this.inner.write(bytes);
  }
}
