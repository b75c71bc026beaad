// A key-value store over TCP, hosted by rank 0 (torch.distributed's
// TCPStore): the rendezvous of a process group (each rank announces itself,
// NCCL's unique id is handed out) and the transport of the small collectives
// on CPU tensors. Keys hold bytes; `get` waits until a key is set, with a
// deadline, so a rank that never arrives is an error naming it, not a hang.
//
// Frames, both ways: u32 header length, JSON header, u32 payload length,
// payload. Requests carry an id the reply repeats.
import * as net from 'net';

interface Header {
  id: number;
  op?: 'set' | 'get' | 'add' | 'del' | 'has';
  key?: string;
  keys?: string[];
  delta?: number;
  /** set: how many gets consume the value (it is dropped after the last); absent: it stays. */
  readers?: number;
  timeoutMs?: number;
  error?: string;
  value?: number;
  present?: boolean[];
}

/** Splits a byte stream into frames. */
class FrameReader {
  private buf: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (h: Header, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      if (this.buf.length < 4) return;
      const hl = this.buf.readUInt32LE(0);
      if (this.buf.length < 8 + hl) return;
      const pl = this.buf.readUInt32LE(4 + hl);
      if (this.buf.length < 8 + hl + pl) return;
      const header = JSON.parse(this.buf.subarray(4, 4 + hl).toString('utf8')) as Header;
      const payload = this.buf.subarray(8 + hl, 8 + hl + pl);
      this.buf = this.buf.subarray(8 + hl + pl);
      this.onFrame(header, Buffer.from(payload));
    }
  }
}

function frame(h: Header, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const hb = Buffer.from(JSON.stringify(h), 'utf8');
  const out = Buffer.alloc(8 + hb.length + payload.length);
  out.writeUInt32LE(hb.length, 0);
  hb.copy(out, 4);
  out.writeUInt32LE(payload.length, 4 + hb.length);
  out.set(payload, 8 + hb.length);
  return out;
}

/** The server side, in rank 0's process. */
export class StoreServer {
  private readonly data = new Map<string, Buffer>();
  /** Keys set with a number of readers: the gets still to come. */
  private readonly remaining = new Map<string, number>();
  private readonly waiters = new Map<string, { reply: (b: Buffer) => void }[]>();
  private readonly sockets = new Set<net.Socket>();

  private constructor(private readonly server: net.Server) {}

  /** Listens on host:port (port 0: any free port). */
  static listen(host: string, port: number): Promise<StoreServer> {
    return new Promise((resolve, reject) => {
      const server = net.createServer();
      const s = new StoreServer(server);
      server.on('connection', (sock) => s.serve(sock));
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(s);
      });
    });
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** One get of a key set with readers: the last one drops it. */
  private consumed(key: string): void {
    const left = this.remaining.get(key);
    if (left === undefined) return;
    if (left <= 1) {
      this.remaining.delete(key);
      this.data.delete(key);
    } else {
      this.remaining.set(key, left - 1);
    }
  }

  private serve(sock: net.Socket): void {
    this.sockets.add(sock);
    sock.setNoDelay(true);
    const send = (h: Header, p?: Uint8Array): void => {
      if (!sock.destroyed) sock.write(frame(h, p));
    };
    const reader = new FrameReader((h, payload) => {
      const key = h.key ?? '';
      switch (h.op) {
        case 'set': {
          const ws = this.waiters.get(key) ?? [];
          this.waiters.delete(key);
          for (const w of ws) w.reply(payload);
          const left = h.readers === undefined ? undefined : h.readers - ws.length;
          if (left === undefined || left > 0) this.data.set(key, payload);
          if (left !== undefined && left > 0) this.remaining.set(key, left);
          send({ id: h.id });
          return;
        }
        case 'get': {
          const v = this.data.get(key);
          if (v !== undefined) {
            this.consumed(key);
            send({ id: h.id }, v);
            return;
          }
          let timer: NodeJS.Timeout | undefined;
          const w = {
            reply: (b: Buffer): void => {
              if (timer !== undefined) clearTimeout(timer);
              send({ id: h.id }, b);
            },
          };
          const list = this.waiters.get(key) ?? [];
          list.push(w);
          this.waiters.set(key, list);
          timer = setTimeout(() => {
            const l = this.waiters.get(key);
            if (l !== undefined) l.splice(l.indexOf(w), 1);
            send({ id: h.id, error: 'timeout' });
          }, h.timeoutMs ?? 30_000);
          timer.unref();
          return;
        }
        case 'add': {
          const cur = this.data.get(key);
          const v = (cur === undefined ? 0 : Number(cur.toString('utf8'))) + (h.delta ?? 0);
          this.data.set(key, Buffer.from(String(v)));
          const ws = this.waiters.get(key) ?? [];
          this.waiters.delete(key);
          for (const w of ws) w.reply(Buffer.from(String(v)));
          send({ id: h.id, value: v });
          return;
        }
        case 'del':
          for (const k of h.keys ?? []) this.data.delete(k);
          send({ id: h.id });
          return;
        case 'has':
          send({ id: h.id, present: (h.keys ?? []).map((k) => this.data.has(k)) });
          return;
        default:
          send({ id: h.id, error: `unknown request ${String(h.op)}` });
      }
    });
    sock.on('data', (c) => reader.push(c));
    sock.on('error', () => undefined);
    sock.on('close', () => this.sockets.delete(sock));
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A rank's connection to the store. */
export class StoreClient {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (r: { h: Header; payload: Buffer }) => void; reject: (e: Error) => void }>();
  private closed = false;

  private constructor(private readonly sock: net.Socket, private readonly where: string) {
    sock.setNoDelay(true);
    const reader = new FrameReader((h, payload) => {
      const p = this.pending.get(h.id);
      this.pending.delete(h.id);
      p?.resolve({ h, payload });
    });
    sock.on('data', (c) => reader.push(c));
    sock.on('error', (e) => this.failAll(e));
    sock.on('close', () => this.failAll(new Error(`the store at ${where} closed the connection (rank 0 exited or destroyed the group)`)));
  }

  /** Connects to host:port, retrying until `deadline` (ms since the epoch) while the server is not up yet. */
  static async connect(host: string, port: number, deadline: number, fn: string): Promise<StoreClient> {
    const where = `${host}:${port}`;
    for (;;) {
      try {
        const sock = await new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect({ host, port });
          s.once('connect', () => {
            s.off('error', reject);
            resolve(s);
          });
          s.once('error', reject);
        });
        return new StoreClient(sock, where);
      } catch (e) {
        if (Date.now() > deadline) {
          throw new Error(`${fn}: cannot reach rank 0's store at ${where} (${e instanceof Error ? e.message : String(e)}); ` +
            'is rank 0 running, and are MASTER_ADDR / MASTER_PORT the same on every rank?');
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  private failAll(e: Error): void {
    this.closed = true;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  private request(h: Omit<Header, 'id'>, payload?: Uint8Array): Promise<{ h: Header; payload: Buffer }> {
    if (this.closed) return Promise.reject(new Error(`the store at ${this.where} is closed`));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.sock.write(frame({ ...h, id }, payload));
    });
  }

  /** Sets key; with `readers`, the value is dropped after that many gets. */
  async set(key: string, value: Uint8Array, readers?: number): Promise<void> {
    await this.request({ op: 'set', key, readers }, value);
  }

  /** The value of `key`, waiting up to timeoutMs for some rank to set it; undefined on timeout. */
  async get(key: string, timeoutMs: number): Promise<Uint8Array | undefined> {
    const r = await this.request({ op: 'get', key, timeoutMs });
    return r.h.error === 'timeout' ? undefined : r.payload;
  }

  async add(key: string, delta: number): Promise<number> {
    return (await this.request({ op: 'add', key, delta })).h.value as number;
  }

  async has(keys: string[]): Promise<boolean[]> {
    return (await this.request({ op: 'has', keys })).h.present as boolean[];
  }

  async del(keys: string[]): Promise<void> {
    await this.request({ op: 'del', keys });
  }

  close(): void {
    this.closed = true;
    this.sock.destroy();
  }
}
