// A rank's connection to rank 0's store (store.ts): the handshake from the
// client's side (NOTE [ The store's handshake ]) and requests that each
// carry a deadline (NOTE [ Deadlines on both sides ]).
import * as net from 'net';

import { nonce, proof, sameProof, type JobSecret } from './trust';
import { FrameReader, frame, type FrameLimits, type Header } from './wire';

/** What a client reads before `ok` (an error reply may quote up to 4 KiB). */
const HANDSHAKE_LIMITS: FrameLimits = { maxHeaderBytes: 8192, maxPayloadBytes: 0 };
/** A get's reply may come this long after its wait ends on the server before the client calls rank 0 silent. */
const ANSWER_MARGIN_MS = 500;
/** Between attempts to reach a rank 0 that is not up yet. */
const RETRY_MS = 50;

const seconds = (ms: number): string => `${+(ms / 1000).toFixed(3)} s`;

type Reply = { h: Header; payload: Buffer };
/** A handshake's end: the connection and its `ok`, or why not (`retry`: rank 0 may not be up yet; `fatal`: waiting cannot help). */
type Attempt = { kind: 'ok'; sock: net.Socket; ok: Header; reader: FrameReader; route: Route } | { kind: 'retry' | 'fatal'; why: string };

/** Where a connection's frames go: the handshake's handlers first, then the client's. */
interface Route {
  frame: (h: Header, payload: Buffer) => void;
  bad: (why: string) => void;
}

/** A rank's connection to the store. */
export class StoreClient {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private closedWhy: string | undefined;
  private lastError = '';

  private constructor(
    private readonly sock: net.Socket,
    private readonly where: string,
    private readonly session: string,
    private readonly limits: FrameLimits,
    /** The deadline of a request that the server answers at once (the group's timeoutMs). */
    private readonly timeoutMs: number,
    route: Route,
  ) {
    sock.removeAllListeners('close');
    sock.removeAllListeners('error');
    route.frame = (h, payload) => {
      const p = this.pending.get(h.id);
      if (p === undefined) return;  // the answer to a request whose deadline passed
      this.pending.delete(h.id);
      clearTimeout(p.timer);
      p.resolve({ h, payload });
    };
    route.bad = (why) => {
      this.failAll(`rank 0's store at ${where} sent a frame this rank cannot read (${why})`);
      sock.destroy();
    };
    sock.on('error', (e) => { this.lastError = e.message; });
    sock.on('close', () => this.failAll(`the connection to rank 0's store at ${where} closed${this.lastError ? ` (${this.lastError})` : ''}: ` +
      'rank 0 exited or destroyed the group'));
  }

  /**
   * Connects to host:port and proves the job's secret, retrying while rank 0
   * is not up yet until `deadline` (ms since the epoch; default timeoutMs from
   * now); a program on the port that is not this job's store, or one that
   * does not answer, is an error saying so. Requests then wait timeoutMs.
   */
  static async connect(host: string, port: number, secret: JobSecret, timeoutMs: number, fn: string, deadline = Date.now() + timeoutMs): Promise<StoreClient> {
    const where = `${host}:${port}`;
    let last = 'no attempt';
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`${fn}: cannot reach rank 0's store at ${where} within ${seconds(timeoutMs)} (${last}); ` +
          'is rank 0 running, and are MASTER_ADDR / MASTER_PORT the same on every rank?');
      }
      const r = await attempt(host, port, where, secret, left, timeoutMs);
      if (r.kind === 'ok') {
        const limits = { maxHeaderBytes: Math.max(r.ok.maxHeaderBytes ?? 0, 1 << 20), maxPayloadBytes: r.ok.maxPayloadBytes ?? 0 };
        r.reader.setLimits(limits);
        return new StoreClient(r.sock, where, r.ok.session as string, limits, timeoutMs, r.route);
      }
      if (r.kind === 'fatal') throw new Error(`${fn}: ${r.why}`);
      last = r.why;
      await new Promise((res) => setTimeout(res, RETRY_MS));
    }
  }

  private failAll(why: string): void {
    this.closedWhy ??= why;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(why));
    }
    this.pending.clear();
  }

  private request(h: Omit<Header, 'id'>, payload: Uint8Array | undefined, timeoutMs: number): Promise<Reply> {
    if (this.closedWhy !== undefined) return Promise.reject(new Error(this.closedWhy));
    if (payload !== undefined && payload.length > this.limits.maxPayloadBytes) {
      return Promise.reject(new Error(`a value of ${payload.length} bytes is over the cap of rank 0's store, ${this.limits.maxPayloadBytes} bytes ` +
        '(initProcessGroup({ store: { maxPayloadBytes } }) on rank 0 raises it)'));
    }
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`rank 0 at ${this.where} did not answer within ${seconds(timeoutMs)} (stopped, overloaded or unreachable)`));
      }, timeoutMs);
      // The socket keeps the process up while a request is pending; the timer need not.
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
      this.sock.write(frame({ ...h, id }, payload));
    });
  }

  private async answer(h: Omit<Header, 'id'>, payload?: Uint8Array, timeoutMs = this.timeoutMs): Promise<Reply> {
    const r = await this.request(h, payload, timeoutMs);
    if (r.h.error !== undefined && r.h.error !== 'timeout') throw new Error(`rank 0's store at ${this.where} refused a '${h.op}': ${r.h.error}`);
    return r;
  }

  /** The key as the store holds it: under this store's session (NOTE [ The store's handshake ]). */
  private k(key: string): string {
    return `${this.session}/${key}`;
  }

  /** Sets key; with `readers`, the value is dropped after that many gets; with `once`, a key set already is an error. */
  async set(key: string, value: Uint8Array, readers?: number, once?: boolean): Promise<void> {
    await this.answer({ op: 'set', key: this.k(key), readers, once }, value);
  }

  /** The value of `key`, waiting up to timeoutMs for some rank to set it; undefined when none did by then. */
  async get(key: string, timeoutMs: number): Promise<Uint8Array | undefined> {
    const wait = Math.max(0, Math.min(Math.round(timeoutMs), 2 ** 31 - 1 - ANSWER_MARGIN_MS));
    const r = await this.answer({ op: 'get', key: this.k(key), timeoutMs: wait }, undefined, wait + ANSWER_MARGIN_MS);
    return r.h.error === 'timeout' ? undefined : r.payload;
  }

  async add(key: string, delta: number): Promise<number> {
    return (await this.answer({ op: 'add', key: this.k(key), delta })).h.value as number;
  }

  async has(keys: string[]): Promise<boolean[]> {
    return (await this.answer({ op: 'has', keys: keys.map((k) => this.k(k)) })).h.present as boolean[];
  }

  async del(keys: string[]): Promise<void> {
    await this.answer({ op: 'del', keys: keys.map((k) => this.k(k)) });
  }

  close(): void {
    this.failAll('this rank closed its connection to the store (the group was destroyed)');
    this.sock.destroy();
  }
}

/** One connection and its handshake. */
function attempt(host: string, port: number, where: string, secret: JobSecret, left: number, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    sock.setNoDelay(true);
    let stage: 'connect' | 'hello' | 'ok' = 'connect';
    let settled = false;
    const cn = nonce();
    let sn = '';
    let key: Uint8Array | undefined;
    const finish = (r: Attempt): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (r.kind !== 'ok') sock.destroy();
      resolve(r);
    };
    const silent = `rank 0 at ${where} did not answer within ${seconds(timeoutMs)}`;
    const timer = setTimeout(() => finish({ kind: 'fatal', why: stage === 'connect' ? `${silent} (the connection was not accepted)`
      : stage === 'hello' ? `${silent}: something accepted the connection but did not greet as a gpuext store (rank 0 stopped, or another program listens on port ${port})`
        : `${silent}: no answer to this rank's proof of the job's secret` }), left);
    const notStore = (what: string): void => finish({ kind: 'fatal', why: `the program at ${where} is not a gpuext store (${what}); is another program listening on port ${port}?` });
    const route: Route = {
      frame: (h) => {
        if (stage === 'hello') {
          if (h.op !== 'hello' || h.nonce === undefined) return notStore(`it sent ${JSON.stringify(h).slice(0, 80)}`);
          if (h.v !== 1) return finish({ kind: 'fatal', why: `rank 0's store at ${where} speaks version ${String(h.v)} of the store's protocol, this rank version 1; run one gpuext on every rank` });
          try {
            key = secret.read();
          } catch (e) {
            return finish({ kind: 'fatal', why: e instanceof Error ? e.message.replace(/^[^:]*: /, '') : String(e) });
          }
          if (key === undefined) return finish({ kind: 'retry', why: `no key yet in ${secret.from}` });
          sn = h.nonce;
          stage = 'ok';
          sock.write(frame({ id: 0, op: 'auth', nonce: cn, mac: proof(key, 'client', sn, cn) }));
          return;
        }
        const refused = `rank 0's store at ${where} refused this rank's secret (${secret.from})`;
        if (h.error !== undefined) {
          return finish(secret.mayBeStale ? { kind: 'retry', why: refused }
            : { kind: 'fatal', why: `${refused}: every rank of a job must have the same secret; is another job's rank 0 on port ${port}?` });
        }
        if (h.op !== 'ok' || h.mac === undefined || h.session === undefined || !sameProof(h.mac, proof(key as Uint8Array, 'server', sn, cn))) {
          const why = `the program at ${where} does not hold the job's secret (${secret.from}): it is not this job's store; is another job on port ${port}?`;
          return finish(secret.mayBeStale ? { kind: 'retry', why } : { kind: 'fatal', why });
        }
        finish({ kind: 'ok', sock, ok: h, reader, route });
      },
      bad: (why) => notStore(`it sent a frame this rank cannot read: ${why}`),
    };
    const reader = new FrameReader(HANDSHAKE_LIMITS, (h, p) => route.frame(h, p), (why) => route.bad(why));
    sock.on('data', (c: Buffer) => reader.push(c));
    sock.once('connect', () => { stage = 'hello'; });
    sock.on('error', (e) => finish({ kind: 'retry', why: e.message }));
    sock.on('close', () => finish({ kind: 'retry', why: stage === 'connect' ? 'the connection closed' : 'the connection closed before the handshake ended' }));
  });
}
