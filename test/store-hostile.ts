// Hostile clients of rank 0's store, for test/store-trust.test.ts: raw
// connections that send what a stranger or a broken rank might (random bytes,
// huge length prefixes, bad headers, replayed proofs, slow trickles) and
// report whether the server refused them (closed the connection without an
// `ok`), and how long that took.
import * as net from 'net';

import { nonce, proof } from '../lib/distributed/trust';
import { FrameReader, frame, type Header } from '../lib/distributed/wire';

export interface Outcome {
  /** The server closed the connection. */
  closed: boolean;
  /** The server answered the handshake with `ok` (the client proved the secret). */
  authenticated: boolean;
  /** Replies to requests (frames after the handshake). */
  replies: Header[];
  /** The error frame of a refused handshake, if one came. */
  error?: string;
  /** From connecting to the close. */
  ms: number;
}

/** A raw connection: the server's frames as they come, and a way to send any bytes. */
export class RawConn {
  readonly frames: Header[] = [];
  readonly closed: Promise<void>;
  readonly t0 = Date.now();
  isClosed = false;
  private waiters: (() => void)[] = [];

  private constructor(readonly sock: net.Socket) {
    const reader = new FrameReader({ maxHeaderBytes: 1 << 20, maxPayloadBytes: 1 << 26 }, (h) => {
      this.frames.push(h);
      for (const w of this.waiters.splice(0)) w();
    }, () => sock.destroy());
    sock.on('data', (c: Buffer) => reader.push(c));
    sock.on('error', () => undefined);
    this.closed = new Promise((resolve) => sock.on('close', () => {
      this.isClosed = true;
      for (const w of this.waiters.splice(0)) w();
      resolve();
    }));
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConn> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port });
      s.once('connect', () => resolve(new RawConn(s)));
      s.once('error', reject);
    });
  }

  /** The n-th frame from the server, or undefined if the connection closed (or ms passed) first. */
  async frame(n: number, ms = 5000): Promise<Header | undefined> {
    const end = Date.now() + ms;
    while (this.frames.length <= n && !this.isClosed && Date.now() < end) {
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, Math.max(1, end - Date.now())).unref();
      });
    }
    return this.frames[n];
  }

  write(b: Uint8Array): void {
    if (!this.sock.destroyed) this.sock.write(b);
  }

  /** Proves `key` (after the hello); resolves with the server's answer. */
  async auth(key: Buffer): Promise<Header | undefined> {
    const hello = await this.frame(0);
    if (hello?.nonce === undefined) return undefined;
    const cn = nonce();
    this.write(frame({ id: 0, op: 'auth', nonce: cn, mac: proof(key, 'client', hello.nonce, cn) }));
    return this.frame(1);
  }

  /** Waits up to ms for the server to close; the outcome either way. */
  async outcome(ms: number): Promise<Outcome> {
    await Promise.race([this.closed, new Promise((r) => setTimeout(r, ms).unref())]);
    const closed = this.isClosed;
    this.sock.destroy();
    const authenticated = this.frames.some((f) => f.op === 'ok');
    return { closed, authenticated, replies: this.frames.filter((f) => f.op === undefined && f.error === undefined), error: this.frames.find((f) => f.error !== undefined)?.error, ms: Date.now() - this.t0 };
  }
}

/** A frame with the given raw header text and payload (the lengths as given, or the true ones). */
export function rawFrame(header: string | Buffer, payload: Buffer = Buffer.alloc(0), lengths: { header?: number; payload?: number } = {}): Buffer {
  const hb = typeof header === 'string' ? Buffer.from(header) : header;
  const out = Buffer.alloc(8 + hb.length + payload.length);
  out.writeUInt32LE(lengths.header ?? hb.length, 0);
  hb.copy(out, 4);
  out.writeUInt32LE(lengths.payload ?? payload.length, 4 + hb.length);
  payload.copy(out, 8 + hb.length);
  return out;
}
