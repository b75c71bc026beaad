// A key-value store over TCP, hosted by rank 0 (torch.distributed's
// TCPStore): the rendezvous of a process group (each rank announces itself,
// NCCL's unique id is handed out) and the transport of the small collectives
// on CPU tensors. Keys hold bytes; `get` waits until a key is set, with a
// deadline, so a rank that never arrives is an error naming it, not a hang.
// Frames are wire.ts's; who may connect is trust.ts's.
//
// NOTE [ The store's handshake ]
// On connecting, the server sends `hello` with a fresh nonce; the client
// answers `auth` with a nonce of its own and HMAC(secret, "client", both
// nonces); the server checks it in constant time and answers `ok` with
// HMAC(secret, "server", both nonces), so the client knows it reached its
// own job's store and not a program squatting the port. Nothing but these
// frames is read before: a request, a wrong proof, a proof replayed from
// another connection (its server nonce differs), a frame over the
// handshake's 1 KiB cap, or silence past authTimeoutMs closes the connection.
// `ok` also carries the session, a random name this store gives its keys:
// every key a client sends is `session/key`, so a value left by another job
// or an earlier group can never be read as a part of this one's collective.
//
// NOTE [ Deadlines on both sides ]
// The server bounds what it waits for (a get's timeoutMs, a frame's
// frameTimeoutMs, the handshake's authTimeoutMs); each client request has its
// own deadline too (the group's timeoutMs; a get's wait plus a margin), so a
// rank 0 that stopped answering (stopped, squatted, lost) is an error naming
// rank 0 and its address, and a connection that closed says it closed.
import * as net from 'net';
import { debuglog } from 'util';

import { nonce, proof, sameProof, type JobSecret } from './trust';
import { STORE_DEFAULTS, type StoreOptions } from './store-options';
import { FrameReader, frame, type FrameLimits, type Header } from './wire';

export { STORE_DEFAULTS, type StoreOptions };

const debug = debuglog('gpuext');

/** What is read before the handshake ends: an `auth` frame is about 200 bytes and carries no payload. */
const HANDSHAKE_LIMITS: FrameLimits = { maxHeaderBytes: 1024, maxPayloadBytes: 0 };
/** Connections still in their handshake beyond this many are closed at once (each holds a timer and a buffer). */
const MAX_UNAUTHENTICATED = 256;

/** Counts a test (or a curious user) can read: how many connections came, proved the secret, were refused. */
export interface StoreStats {
  connections: number;
  authenticated: number;
  refused: number;
}

/** Where a store listens (net.AddressInfo's fields, without Node's types in the public declarations). */
export interface BoundAddress {
  address: string;
  family: string;
  port: number;
}

interface Waiter {
  sock: net.Socket;
  reply: (b: Buffer) => void;
  timer: NodeJS.Timeout;
}

/** The server side, in rank 0's process. */
export class StoreServer {
  private readonly data = new Map<string, Buffer>();
  /** Keys set with a number of readers: the gets still to come. */
  private readonly remaining = new Map<string, number>();
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly sockets = new Set<net.Socket>();
  private unauthenticated = 0;
  private readonly atClose: (() => void)[] = [];
  private bound: BoundAddress = { address: '', family: '', port: 0 };
  readonly stats: StoreStats = { connections: 0, authenticated: 0, refused: 0 };
  /** The name this store's keys live under (NOTE [ The store's handshake ]). */
  readonly session = nonce().slice(0, 32);

  private constructor(private readonly server: net.Server, private readonly key: Uint8Array, private readonly opts: Required<StoreOptions>) {}

  /** Listens on host:port (port 0: any free port); only clients holding `key` are served. */
  static listen(host: string, port: number, key: Uint8Array, opts: StoreOptions = {}): Promise<StoreServer> {
    return new Promise((resolve, reject) => {
      const server = net.createServer();
      const s = new StoreServer(server, key, { ...STORE_DEFAULTS, ...opts });
      server.on('connection', (sock) => s.serve(sock));
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        const a = server.address() as net.AddressInfo;
        s.bound = { address: a.address, family: a.family, port: a.port };
        // After listening, an error (EMFILE on accept) is logged, never thrown into the event loop.
        server.on('error', (e) => debug('store: server error: %s', e.message));
        resolve(s);
      });
    });
  }

  /** Where it listens (kept from the listen: the server's own address() is null once closed). */
  get address(): BoundAddress {
    return this.bound;
  }

  get port(): number {
    return this.address.port;
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
    this.stats.connections++;
    const peer = `${sock.remoteAddress ?? '?'}:${sock.remotePort ?? '?'}`;
    if (this.unauthenticated >= MAX_UNAUTHENTICATED) {
      this.stats.refused++;
      debug('store: refused %s: %d connections are already in their handshake', peer, this.unauthenticated);
      sock.destroy();
      return;
    }
    this.sockets.add(sock);
    this.unauthenticated++;
    sock.setNoDelay(true);
    let authed = false;
    let done = false;
    let frameTimer: NodeJS.Timeout | undefined;
    const send = (h: Header, p?: Uint8Array): void => {
      if (!sock.destroyed && sock.writable) sock.write(frame(h, p));
    };
    const refuse = (why: string, reply?: string): void => {
      if (done) return;
      done = true;
      this.stats.refused++;
      const line = `store at port ${this.port}: closed the connection of ${peer} (${authed ? 'authenticated' : 'before the handshake ended'}): ${why}`;
      // A stranger's junk is a debug line (NODE_DEBUG=gpuext); the job's own client sending it is a bug worth a warning.
      if (authed) process.emitWarning(line, { code: 'GPUEXT_STORE' });
      else debug(line);
      if (reply !== undefined && sock.writable) {
        sock.end(frame({ id: 0, error: reply }));
        setTimeout(() => sock.destroy(), 1000).unref();
      } else {
        sock.destroy();
      }
    };
    const sn = nonce();
    const authTimer = setTimeout(() => refuse(`did not prove the job's secret within ${this.opts.authTimeoutMs / 1000} s`), this.opts.authTimeoutMs);
    authTimer.unref();
    const reader = new FrameReader(HANDSHAKE_LIMITS, (h, payload) => {
      if (frameTimer !== undefined) clearTimeout(frameTimer);
      frameTimer = undefined;
      // Frames that came in the same chunk as a refused one are not served.
      if (done) return;
      if (authed) {
        this.handle(h, payload, sock, send, refuse);
        return;
      }
      if (h.op !== 'auth' || h.nonce === undefined || h.mac === undefined) return refuse(`sent '${String(h.op)}' before the handshake`);
      if (h.nonce === sn || !sameProof(h.mac, proof(this.key, 'client', sn, h.nonce))) {
        return refuse('a wrong proof of the secret', 'authentication failed: this store belongs to another job, or the ranks have different secrets');
      }
      authed = true;
      this.unauthenticated--;
      this.stats.authenticated++;
      clearTimeout(authTimer);
      reader.setLimits(this.opts);
      send({ id: 0, op: 'ok', mac: proof(this.key, 'server', sn, h.nonce), session: this.session,
        maxHeaderBytes: this.opts.maxHeaderBytes, maxPayloadBytes: this.opts.maxPayloadBytes });
    }, (why) => refuse(why));
    sock.on('data', (c: Buffer) => {
      if (done) return;
      reader.push(c);
      if (!done && reader.inFrame && frameTimer === undefined) {
        frameTimer = setTimeout(() => refuse(`a frame took over ${this.opts.frameTimeoutMs / 1000} s to arrive`), this.opts.frameTimeoutMs);
        frameTimer.unref();
      }
    });
    sock.on('error', (e) => debug('store: connection of %s: %s', peer, e.message));
    sock.on('close', () => {
      done = true;
      if (!authed) this.unauthenticated--;
      clearTimeout(authTimer);
      if (frameTimer !== undefined) clearTimeout(frameTimer);
      this.sockets.delete(sock);
      this.dropWaiters(sock);
    });
    send({ id: 0, op: 'hello', v: 1, nonce: sn });
  }

  /** A closed connection's gets: their timers stop, and a later set does not count them as readers. */
  private dropWaiters(sock: net.Socket): void {
    for (const [key, list] of this.waiters) {
      const kept = list.filter((w) => {
        if (w.sock !== sock) return true;
        clearTimeout(w.timer);
        return false;
      });
      if (kept.length === 0) this.waiters.delete(key);
      else if (kept.length !== list.length) this.waiters.set(key, kept);
    }
  }

  /** Serves one request of an authenticated connection (its header already checked by wire.ts). */
  private handle(h: Header, payload: Buffer, sock: net.Socket, send: (h: Header, p?: Uint8Array) => void, refuse: (why: string) => void): void {
    const key = h.key as string;
    switch (h.op) {
      case 'set': {
        if (h.once === true && this.data.has(key)) {
          send({ id: h.id, error: `the key ${key} holds a value already` });
          return;
        }
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
        const w: Waiter = {
          sock,
          reply: (b) => {
            clearTimeout(w.timer);
            send({ id: h.id }, b);
          },
          timer: setTimeout(() => {
            const l = this.waiters.get(key);
            if (l !== undefined && l.includes(w)) l.splice(l.indexOf(w), 1);
            send({ id: h.id, error: 'timeout' });
          }, h.timeoutMs),
        };
        w.timer.unref();
        const list = this.waiters.get(key) ?? [];
        list.push(w);
        this.waiters.set(key, list);
        return;
      }
      case 'add': {
        const cur = this.data.get(key);
        const v = (cur === undefined ? 0 : Number(cur.toString('utf8'))) + (h.delta as number);
        if (!Number.isFinite(v)) {
          send({ id: h.id, error: `the key ${key} holds no number` });
          return;
        }
        const b = Buffer.from(String(v));
        this.data.set(key, b);
        const ws = this.waiters.get(key) ?? [];
        this.waiters.delete(key);
        for (const w of ws) w.reply(b);
        send({ id: h.id, value: v });
        return;
      }
      case 'del':
        for (const k of h.keys as string[]) {
          this.data.delete(k);
          this.remaining.delete(k);
        }
        send({ id: h.id });
        return;
      case 'has':
        send({ id: h.id, present: (h.keys as string[]).map((k) => this.data.has(k)) });
        return;
      default:
        refuse(h.op === undefined ? 'sent a reply, not a request' : `sent '${h.op}' after the handshake`);
    }
  }

  /** Runs `f` when the store closes (rank 0's key file is removed then). */
  onClose(f: () => void): void {
    this.atClose.push(f);
  }

  close(): Promise<void> {
    for (const f of this.atClose.splice(0)) f();
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export { StoreClient } from './store-client';
