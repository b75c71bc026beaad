// The store's frames, both ways: u32 header length, JSON header, u32 payload
// length, payload (little-endian). Requests carry an id the reply repeats.
//
// NOTE [ Frames that cannot hurt the reader ]
// A frame comes from a peer that may be anything that can open a TCP
// connection, so reading one must neither throw into the event loop nor let
// the peer choose how much memory or CPU the reader spends:
// - each length is checked against its cap the moment its 4 bytes arrive, so a
//   length prefix of 0xFFFFFFFF is refused before a byte of it is buffered;
// - bytes are kept as a list of chunks and copied once, into the frame's own
//   buffer, when the frame is complete (Buffer.concat per chunk made a
//   trickled 4 GiB prefix quadratic);
// - the header is parsed in a try, then checked field by field against what
//   its op needs (a `null` header, `keys: "x"`, a key of 5 are refused here,
//   not as a TypeError inside the server);
// - a failure is reported once through `onError` and the reader stops: the
//   owner closes the connection (and logs why), nothing is thrown.

/** Caps on what a peer may send in one frame (checked before the bytes are kept). */
export interface FrameLimits {
  /** The JSON header's bytes. */
  maxHeaderBytes: number;
  /** The payload's bytes. */
  maxPayloadBytes: number;
}

export type Op = 'hello' | 'auth' | 'ok' | 'set' | 'get' | 'add' | 'del' | 'has';

export interface Header {
  id: number;
  op?: Op;
  key?: string;
  keys?: string[];
  delta?: number;
  /** set: how many gets consume the value (it is dropped after the last); absent: it stays. */
  readers?: number;
  /** set: refuse if the key holds a value already (a collective's part is posted once). */
  once?: boolean;
  timeoutMs?: number;
  error?: string;
  value?: number;
  present?: boolean[];
  /** The handshake (store.ts, NOTE [ The store's handshake ]). */
  nonce?: string;
  mac?: string;
  session?: string;
  v?: number;
  maxHeaderBytes?: number;
  maxPayloadBytes?: number;
}

/** The longest key, and the most keys in one has/del: far above what a group uses, far below what hurts. */
export const MAX_KEY_BYTES = 1024;
export const MAX_KEYS = 65_536;

type Check = (v: unknown) => boolean;
const isString: Check = (v) => typeof v === 'string';
const isKey: Check = (v) => typeof v === 'string' && v.length > 0 && Buffer.byteLength(v) <= MAX_KEY_BYTES;
const isCount: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isFinite: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const isBool: Check = (v) => typeof v === 'boolean';
const isHex = (n: number): Check => (v) => typeof v === 'string' && v.length === n && /^[0-9a-f]+$/.test(v);
const isKeys: Check = (v) => Array.isArray(v) && v.length <= MAX_KEYS && v.every(isKey);
const isBools: Check = (v) => Array.isArray(v) && v.length <= MAX_KEYS && v.every(isBool);

/** Every field a header may carry and the check its value must pass; an unknown field is refused. */
const FIELDS: Readonly<Record<keyof Header, Check>> = {
  id: isCount, op: isString, key: isKey, keys: isKeys, delta: isFinite, readers: isCount,
  once: isBool, timeoutMs: (v) => isCount(v) && (v as number) <= 2 ** 31 - 1, error: (v) => isString(v) && (v as string).length <= 4096,
  value: isFinite, present: isBools, nonce: isHex(64), mac: isHex(64), session: isHex(32), v: isCount,
  maxHeaderBytes: isCount, maxPayloadBytes: isCount,
};

/** The fields each op must carry (a reply, with no op, needs only its id). */
const REQUIRED: Readonly<Record<Op, readonly (keyof Header)[]>> = {
  hello: ['nonce', 'v'], auth: ['nonce', 'mac'], ok: ['mac', 'session'],
  set: ['key'], get: ['key', 'timeoutMs'], add: ['key', 'delta'], del: ['keys'], has: ['keys'],
};

/** The header's parsed JSON if it is one this protocol can carry, else why not. */
export function checkHeader(text: string): Header | string {
  let h: unknown;
  try {
    h = JSON.parse(text);
  } catch (e) {
    return `the header is not JSON (${e instanceof Error ? e.message : String(e)})`;
  }
  if (typeof h !== 'object' || h === null || Array.isArray(h)) return `the header is ${h === null ? 'null' : Array.isArray(h) ? 'an array' : typeof h}, not an object`;
  const rec = h as Record<string, unknown>;
  for (const [k, v] of Object.entries(rec)) {
    const check = (FIELDS as Record<string, Check | undefined>)[k];
    if (check === undefined || !Object.prototype.hasOwnProperty.call(FIELDS, k)) return `the header has an unknown field '${k.slice(0, 40)}'`;
    if (!check(v)) return `the header's '${k}' is ${JSON.stringify(v)?.slice(0, 60) ?? 'undefined'}`;
  }
  if (rec.id === undefined) return "the header has no 'id'";
  const op = rec.op as string | undefined;
  if (op !== undefined) {
    const need = (REQUIRED as Record<string, readonly string[] | undefined>)[op];
    if (need === undefined || !Object.prototype.hasOwnProperty.call(REQUIRED, op)) return `the header's op '${op.slice(0, 40)}' is not one of ${Object.keys(REQUIRED).join(', ')}`;
    const absent = need.find((k) => rec[k] === undefined);
    if (absent !== undefined) return `a '${op}' header needs '${absent}'`;
  }
  return h as Header;
}

/** Encodes one frame. */
export function frame(h: Header, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const hb = Buffer.from(JSON.stringify(h), 'utf8');
  const out = Buffer.allocUnsafe(8 + hb.length + payload.length);
  out.writeUInt32LE(hb.length, 0);
  hb.copy(out, 4);
  out.writeUInt32LE(payload.length, 4 + hb.length);
  out.set(payload, 8 + hb.length);
  return out;
}

/** Bytes received and not yet taken, as the chunks they came in (NOTE [ Frames that cannot hurt the reader ]). */
class ByteQueue {
  private chunks: Buffer[] = [];
  private first = 0;  // chunks before it are taken (dropped in batches: shift() per chunk is quadratic on long lists)
  private head = 0;  // bytes of chunks[first] already taken
  length = 0;

  push(c: Buffer): void {
    if (c.length === 0) return;
    this.chunks.push(c);
    this.length += c.length;
  }

  /** The next n bytes (n <= length), copied into a buffer of their own. */
  take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let done = 0;
    while (done < n) {
      const c = this.chunks[this.first];
      const k = Math.min(n - done, c.length - this.head);
      c.copy(out, done, this.head, this.head + k);
      done += k;
      this.head += k;
      if (this.head === c.length) {
        this.first++;
        this.head = 0;
      }
    }
    if (this.first > 64 || this.first === this.chunks.length) {
      this.chunks = this.chunks.slice(this.first);
      this.first = 0;
    }
    this.length -= n;
    return out;
  }
}

/** Splits a byte stream into checked frames; the first bad one stops it (see the NOTE above). */
export class FrameReader {
  private readonly q = new ByteQueue();
  private header: Header | undefined;
  private headerBytes = -1;
  private payloadBytes = -1;
  private failed = false;

  constructor(
    private limits: FrameLimits,
    private readonly onFrame: (h: Header, payload: Buffer) => void,
    private readonly onError: (why: string) => void,
  ) {}

  /** Changes the caps (a connection's handshake is read under tighter ones than its requests). */
  setLimits(limits: FrameLimits): void {
    this.limits = limits;
  }

  /** Whether a frame is partly received (the owner's slow-sender deadline runs while it is). */
  get inFrame(): boolean {
    return this.q.length > 0 || this.headerBytes >= 0;
  }

  push(chunk: Buffer): void {
    if (this.failed) return;
    this.q.push(chunk);
    try {
      while (!this.failed && this.step()) { /* one field per step */ }
    } catch (e) {
      // A throw from onFrame (the owner's bug, or a reply to a closed socket) is reported like a bad frame.
      this.fail(`reading a frame failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private fail(why: string): void {
    if (this.failed) return;
    this.failed = true;
    this.onError(why);
  }

  /** Takes the next field if its bytes are in; false when more bytes are needed. */
  private step(): boolean {
    if (this.headerBytes < 0) {
      if (this.q.length < 4) return false;
      this.headerBytes = this.q.take(4).readUInt32LE(0);
      if (this.headerBytes > this.limits.maxHeaderBytes) {
        this.fail(`a header of ${this.headerBytes} bytes is over the cap of ${this.limits.maxHeaderBytes}`);
        return false;
      }
      return true;
    }
    if (this.header === undefined) {
      if (this.q.length < this.headerBytes) return false;
      const h = checkHeader(this.q.take(this.headerBytes).toString('utf8'));
      if (typeof h === 'string') {
        this.fail(h);
        return false;
      }
      this.header = h;
      return true;
    }
    if (this.payloadBytes < 0) {
      if (this.q.length < 4) return false;
      this.payloadBytes = this.q.take(4).readUInt32LE(0);
      if (this.payloadBytes > this.limits.maxPayloadBytes) {
        this.fail(`a payload of ${this.payloadBytes} bytes is over the cap of ${this.limits.maxPayloadBytes}`);
        return false;
      }
      return true;
    }
    if (this.q.length < this.payloadBytes) return false;
    const h = this.header;
    const payload = this.q.take(this.payloadBytes);
    this.header = undefined;
    this.headerBytes = -1;
    this.payloadBytes = -1;
    this.onFrame(h, payload);
    return true;
  }
}
