// gx.distributed's process group, shaped like torch.distributed:
// initProcessGroup() (from the environment gpuext run / torchrun / Slurm /
// Open MPI set, or explicit options), a rendezvous through rank 0's store
// with a deadline, rank(), worldSize(), barrier(), destroyProcessGroup(),
// and the collectives, each returning a Work to await.
//
// NOTE [ Collective transports ]
// The collectives here move tensors through rank 0's TCP store (store.ts):
// each rank posts its bytes under the collective's sequence number and reads
// the others'. That is for CPU tensors and small data (it is how CI, with no
// GPU, tests everything above the transport); every rank also posts what it
// called (the op, dtype, shape, root), so ranks that disagree get an error
// naming both sides instead of a hang, and a rank that does not join within
// the group's timeout is named. CUDA tensors go through NCCL instead
// (nccl.ts): one communicator on this rank's GPU, made on the first such
// collective, each call enqueued on the device's current stream. NCCL does
// not compare what the ranks called: a mismatch there hangs until the
// job's launcher stops it, as with torch.distributed.
// Who may talk to the store, and where it listens: trust.ts
// (NOTE [ The store's trust ]); the keys of a collective are its sequence
// number and rank, under the store's session, and each is posted once.
import { tensor } from '../creation';
import { checkOptions, optionKeys } from '../options';
import { Tensor } from '../tensor';
import { DTYPE_INFO, type DType } from '../generated/dtypes';
import { parseDevice, type DeviceLike } from '../device';
import { placementFromEnv } from './env';
import { ncclOp, NcclComm, type Completion } from './nccl';
import { StoreClient, StoreServer } from './store';
import type { StoreOptions } from './store-options';
import { bindAddress, isLoopback, jobSecret, loopbackOf, STORE_ENV } from './trust';

const INIT_KEYS = optionKeys<InitOptions>({ rank: true, worldSize: true, masterAddr: true, masterPort: true, timeoutMs: true, device: true, store: true });
const STORE_KEYS = optionKeys<StoreOptions>({ maxHeaderBytes: true, maxPayloadBytes: true, authTimeoutMs: true, frameTimeoutMs: true });

export type ReduceOp = 'sum' | 'prod' | 'min' | 'max' | 'avg';
const REDUCE_OPS: readonly ReduceOp[] = ['sum', 'prod', 'min', 'max', 'avg'];

export interface InitOptions {
  rank?: number;
  worldSize?: number;
  masterAddr?: string;
  masterPort?: number;
  /** How long a rank waits for the others, at the rendezvous and in each collective (default 60 s). */
  timeoutMs?: number;
  /** The GPU this rank's collectives of CUDA tensors use (default: the device of the first such tensor). */
  device?: DeviceLike;
  /** Limits of the store rank 0 hosts: frame caps and connection deadlines (README "What the store trusts"). */
  store?: StoreOptions;
}

/** A pending collective: await it (or its wait()) before reading the tensors it writes. */
export class Work implements PromiseLike<void> {
  #done = false;
  #p: Promise<void> | undefined;
  readonly #completion: Completion | undefined;

  /** @internal A promise (started now), or an NCCL completion, waited for only when asked. */
  constructor(p: Promise<void> | Completion) {
    if (p instanceof Promise) {
      this.#completion = undefined;
      this.#p = Work.#settled(p, this);
    } else {
      this.#completion = p;
    }
  }

  static #settled(p: Promise<void>, w: Work): Promise<void> {
    const done = p.then(() => {
      w.#done = true;
    });
    // An error is the awaiting caller's; one nobody awaits is not a crash.
    done.catch(() => undefined);
    return done;
  }

  isCompleted(): boolean {
    if (!this.#done && this.#completion?.query()) this.#done = true;
    return this.#done;
  }

  wait(): Promise<void> {
    return (this.#p ??= Work.#settled((this.#completion as Completion).wait(), this));
  }

  then<A = void, B = never>(ok?: ((v: void) => A | PromiseLike<A>) | null, bad?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.wait().then(ok, bad);
  }
}

/** What each rank posts with its data: what it called. Ranks must agree on it. */
interface CallHeader {
  what: string;
  dtype: DType;
  shape: number[];
  op?: ReduceOp;
  root?: number;
}

const describe = (h: CallHeader): string =>
  `${h.what}(${h.dtype} [${h.shape.join(', ')}]${h.op ? `, '${h.op}'` : ''}${h.root !== undefined ? `, root ${h.root}` : ''})`;

function encode(h: CallHeader, data: ArrayBufferView): Uint8Array {
  const hb = Buffer.from(JSON.stringify(h));
  const out = new Uint8Array(4 + hb.length + data.byteLength);
  new DataView(out.buffer).setUint32(0, hb.length, true);
  out.set(hb, 4);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 4 + hb.length);
  return out;
}

/** A rank's post; `who` names it in the error when the bytes are not one. */
function decode(bytes: Uint8Array, who: string): { h: CallHeader; bytes: Buffer } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const hl = b.length >= 4 ? b.readUInt32LE(0) : -1;
  let h: unknown;
  try {
    h = hl >= 0 && 4 + hl <= b.length ? JSON.parse(b.subarray(4, 4 + hl).toString('utf8')) : undefined;
  } catch { /* refused below */ }
  const ok = typeof h === 'object' && h !== null && typeof (h as CallHeader).what === 'string' && Array.isArray((h as CallHeader).shape);
  if (!ok) throw new Error(`${who} is not a post of gx.distributed (${b.length} bytes)`);
  return { h: h as CallHeader, bytes: b.subarray(4 + hl) };
}

type Values = Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | BigInt64Array | Uint8Array;

/** A tensor's values as toArray gives them (float16 decoded to float32; gx.tensor encodes them back). */
function valuesOf(t: Tensor): Values {
  return t.toArraySync() as Values;
}

function viewLike(proto: Values, bytes: Buffer): Values {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const C = proto.constructor as new (b: ArrayBuffer) => Values;
  return new C(copy.buffer);
}

function writeInto(t: Tensor, v: Values): void {
  using src = tensor(v as Float32Array, { dtype: t.dtype, shape: t.shape }) as Tensor;
  t.copy_(src);
}

function combine(acc: Values, x: Values, op: ReduceOp, dtype: DType): void {
  const a = acc as unknown as (number | bigint)[];
  const b = x as unknown as (number | bigint)[];
  for (let i = 0; i < a.length; i++) {
    const p = a[i] as number;
    const q = b[i] as number;
    switch (op) {
      case 'sum': case 'avg': a[i] = dtype === 'bool' ? Number(p || q) : p + q; break;
      case 'prod': a[i] = dtype === 'bool' ? Number(p && q) : p * q; break;
      case 'min': a[i] = q < p || Number.isNaN(q) ? q : p; break;
      case 'max': a[i] = q > p || Number.isNaN(q) ? q : p; break;
    }
  }
}

/** A process group: this process's rank among worldSize, joined through rank 0's store. */
export class ProcessGroup {
  #seq = 0;
  #p2p = new Map<string, number>();
  #destroyed = false;
  #nccl: Promise<NcclComm> | undefined;
  #ncclReady: NcclComm | undefined;
  /** Collectives waiting for the communicator to be made. */
  #early = 0;

  constructor(
    readonly rank: number,
    readonly worldSize: number,
    readonly timeoutMs: number,
    private readonly store: StoreClient,
    private readonly server: StoreServer | undefined,
    private readonly ncclDevice: DeviceLike | undefined,
  ) {}

  /** Where rank 0's store listens (address, family, port); undefined on the other ranks. */
  get storeAddress(): { address: string; family: string; port: number } | undefined {
    return this.server?.address;
  }

  /** Whether the collective's tensors are CUDA tensors (then NCCL moves them); CUDA and CPU mixed is an error. */
  private onCuda(fn: string, ...ts: Tensor[]): boolean {
    const cuda = ts.map((t) => t.device.type === 'cuda');
    if (cuda.some((c) => c !== cuda[0])) throw new TypeError(`${fn}: the tensors are on ${ts.map((t) => String(t.device)).join(' and ')}; put them on one device`);
    return cuda[0];
  }

  /** Enqueues a collective on this group's NCCL communicator (made on first use, on the tensors' device). */
  private viaNccl(fn: string, kind: string, input: Tensor, output: Tensor, op: ReduceOp | undefined, peer: number): Work {
    this.check(fn);
    const device = this.ncclDevice === undefined ? input.device : parseDevice(this.ncclDevice, fn);
    if (!input.device.equals(device) || !output.device.equals(device)) {
      throw new TypeError(`${fn}: this rank's collectives run on ${device}; the tensors are on ${input.device}${output !== input ? ` and ${output.device}` : ''}`);
    }
    const o = ncclOp(op, input.dtype);
    const run = (c: NcclComm): Completion => {
      if (!c.device.equals(device)) throw new TypeError(`${fn}: this group's NCCL communicator is on ${c.device}; the tensors are on ${device}`);
      return c.run(fn, kind, input, output, o, peer);
    };
    // Once the communicator exists, enqueue now (as torch does): a loop of collectives queues them all before anyone waits.
    const ready = this.#ncclReady;
    if (ready !== undefined) {
      try {
        return new Work(run(ready));
      } catch (e) {
        return new Work(Promise.reject(e as Error));
      }
    }
    // Before, calls wait for it in order; the direct path opens once the last of them is enqueued.
    this.#nccl ??= NcclComm.create(this.store, this.rank, this.worldSize, device, 0, this.timeoutMs, fn);
    this.#early++;
    return new Work(this.#nccl.then((c) => {
      try {
        return run(c).wait();
      } finally {
        if (--this.#early === 0) this.#ncclReady = c;
      }
    }, (e: unknown) => {
      this.#early--;
      throw e;
    }));
  }

  private check(fn: string): void {
    if (this.#destroyed) throw new Error(`${fn}: the process group was destroyed`);
  }

  private tensorArg(t: unknown, fn: string, what: string): Tensor {
    if (!(t instanceof Tensor)) throw new TypeError(`${fn}: ${what} must be a Tensor`);
    t.handle(fn);  // throws naming fn when disposed
    return t;
  }

  /** Ranks whose `keys` are missing after a timeout, as an error. */
  private async missing(fn: string, keyOf: (r: number) => string, ranks: readonly number[]): Promise<Error> {
    const present = await this.store.has(ranks.map(keyOf)).catch(() => ranks.map(() => false));
    const absent = ranks.filter((_, i) => !present[i]);
    return new Error(`${fn}: rank${absent.length === 1 ? '' : 's'} ${absent.join(', ')} did not join within ${this.timeoutMs / 1000} s ` +
      '(every rank must call the same collectives in the same order)');
  }

  /** Posts this rank's call and data for collective `seq`, then reads the given ranks' posts, checking they agree. */
  private async exchange(fn: string, seq: number, h: CallHeader, data: ArrayBufferView | undefined, from: readonly number[]):
    Promise<Map<number, Buffer>> {
    const key = (r: number): string => `c/${seq}/${r}`;
    // Who reads this post: everyone else, except that in a rooted collective the others' posts go to the root only.
    const readers = h.root === undefined || h.root === this.rank ? this.worldSize - 1 : 1;
    if (data !== undefined) await this.store.set(key(this.rank), encode(h, data), readers, true);
    const got = new Map<number, Buffer>();
    await Promise.all(from.map(async (r) => {
      if (r === this.rank && data !== undefined) return;
      const b = await this.store.get(key(r), this.timeoutMs);
      if (b === undefined) throw await this.missing(fn, key, from);
      const d = decode(b, `rank ${r}'s part of collective ${seq}`);
      if (describe(d.h) !== describe(h)) {
        throw new Error(`${fn}: ranks disagree: rank ${this.rank} called ${describe(h)} but rank ${r} called ${describe(d.h)}`);
      }
      got.set(r, d.bytes);
    }));
    return got;
  }

  private run(fn: string, body: () => Promise<void>): Work {
    this.check(fn);
    return new Work(body().catch((e: unknown) => {
      throw named(fn, e);
    }));
  }

  /** Reduces `t` across ranks in place: every rank ends with the result (sum, prod, min, max, avg). */
  allReduce(t: Tensor, op: ReduceOp = 'sum'): Work {
    const fn = 'gx.distributed.allReduce';
    const x = this.tensorArg(t, fn, 'tensor');
    checkOp(op, fn, x.dtype);
    if (this.onCuda(fn, x)) return this.viaNccl(fn, 'all_reduce', x, x, op, 0);
    const seq = this.#seq++;
    const mine = valuesOf(x);
    const h: CallHeader = { what: 'allReduce', dtype: x.dtype, shape: [...x.shape], op };
    return this.run(fn, async () => {
      const all = await this.exchange(fn, seq, h, mine, ranks(this.worldSize));
      writeInto(x, this.reduceAll(mine, all, op, x.dtype));
    });
  }

  /** The reduction of every rank's values, combined in rank order so that every rank gets the same bits. */
  private reduceAll(mine: Values, all: Map<number, Buffer>, op: ReduceOp, dtype: DType): Values {
    const of = (r: number): Values => (r === this.rank ? mine : viewLike(mine, all.get(r) as Buffer));
    const acc = viewLike(mine, Buffer.from(of(0).buffer, of(0).byteOffset, of(0).byteLength));
    for (let r = 1; r < this.worldSize; r++) combine(acc, of(r), op, dtype);
    if (op === 'avg') for (let i = 0; i < acc.length; i++) (acc as Float32Array)[i] /= this.worldSize;
    return acc;
  }

  /** Reduces `t` across ranks into rank `dst`'s `t` (the others' are left as they were). */
  reduce(t: Tensor, dst: number, op: ReduceOp = 'sum'): Work {
    const fn = 'gx.distributed.reduce';
    const x = this.tensorArg(t, fn, 'tensor');
    checkOp(op, fn, x.dtype);
    this.checkRank(dst, fn, 'dst');
    if (this.onCuda(fn, x)) return this.viaNccl(fn, 'reduce', x, x, op, dst);
    const seq = this.#seq++;
    const mine = valuesOf(x);
    const h: CallHeader = { what: 'reduce', dtype: x.dtype, shape: [...x.shape], op, root: dst };
    return this.run(fn, async () => {
      const all = await this.exchange(fn, seq, h, mine, this.rank === dst ? ranks(this.worldSize) : [dst]);
      if (this.rank === dst) writeInto(x, this.reduceAll(mine, all, op, x.dtype));
    });
  }

  /** Copies rank `src`'s `t` into every rank's `t`. */
  broadcast(t: Tensor, src: number): Work {
    const fn = 'gx.distributed.broadcast';
    const x = this.tensorArg(t, fn, 'tensor');
    this.checkRank(src, fn, 'src');
    if (this.onCuda(fn, x)) return this.viaNccl(fn, 'broadcast', x, x, undefined, src);
    const seq = this.#seq++;
    const h: CallHeader = { what: 'broadcast', dtype: x.dtype, shape: [...x.shape], root: src };
    const mine = this.rank === src ? valuesOf(x) : undefined;
    // Every rank posts (the root its data, the others their call), so a disagreement is seen on both sides.
    return this.run(fn, async () => {
      const all = await this.exchange(fn, seq, h, mine ?? new Uint8Array(0), this.rank === src ? ranks(this.worldSize) : [src]);
      if (this.rank !== src) writeInto(x, viewLike(valuesOf(x), all.get(src) as Buffer));
    });
  }

  /** Gathers every rank's `input` into `out`, stacked along the first dimension (all_gather_into_tensor). */
  allGather(out: Tensor, input: Tensor): Work {
    const fn = 'gx.distributed.allGather';
    const o = this.tensorArg(out, fn, 'out');
    const x = this.tensorArg(input, fn, 'input');
    checkStacked(o, x, this.worldSize, fn);
    if (this.onCuda(fn, o, x)) return this.viaNccl(fn, 'all_gather', x, o, undefined, 0);
    const seq = this.#seq++;
    const mine = valuesOf(x);
    const h: CallHeader = { what: 'allGather', dtype: x.dtype, shape: [...x.shape] };
    return this.run(fn, async () => {
      const all = await this.exchange(fn, seq, h, mine, ranks(this.worldSize));
      const res = new (mine.constructor as new (n: number) => Values)(mine.length * this.worldSize);
      for (let r = 0; r < this.worldSize; r++) {
        (res as Float32Array).set((r === this.rank ? mine : viewLike(mine, all.get(r) as Buffer)) as Float32Array, r * mine.length);
      }
      writeInto(o, res);
    });
  }

  /** Reduces `input` (worldSize blocks along its first dimension) across ranks; rank r gets block r in `out`. */
  reduceScatter(out: Tensor, input: Tensor, op: ReduceOp = 'sum'): Work {
    const fn = 'gx.distributed.reduceScatter';
    const o = this.tensorArg(out, fn, 'out');
    const x = this.tensorArg(input, fn, 'input');
    checkOp(op, fn, x.dtype);
    checkStacked(x, o, this.worldSize, fn);
    if (this.onCuda(fn, o, x)) return this.viaNccl(fn, 'reduce_scatter', x, o, op, 0);
    const seq = this.#seq++;
    const mine = valuesOf(x);
    const h: CallHeader = { what: 'reduceScatter', dtype: x.dtype, shape: [...x.shape], op };
    return this.run(fn, async () => {
      const all = await this.exchange(fn, seq, h, mine, ranks(this.worldSize));
      const n = mine.length / this.worldSize;
      const acc = this.reduceAll(mine, all, op, x.dtype);
      writeInto(o, acc.subarray(this.rank * n, (this.rank + 1) * n) as Values);
    });
  }

  /** Sends `t` to rank `dst` (its matching recv). */
  send(t: Tensor, dst: number): Work {
    const fn = 'gx.distributed.send';
    const x = this.tensorArg(t, fn, 'tensor');
    this.checkRank(dst, fn, 'dst', true);
    if (this.onCuda(fn, x)) return this.viaNccl(fn, 'send', x, x, undefined, dst);
    const key = this.p2pKey(this.rank, dst);
    const data = encode({ what: 'send', dtype: x.dtype, shape: [...x.shape] }, valuesOf(x));
    return this.run(fn, () => this.store.set(key, data));
  }

  /** Receives into `t` what rank `src` sends. */
  recv(t: Tensor, src: number): Work {
    const fn = 'gx.distributed.recv';
    const x = this.tensorArg(t, fn, 'tensor');
    this.checkRank(src, fn, 'src', true);
    if (this.onCuda(fn, x)) return this.viaNccl(fn, 'recv', x, x, undefined, src);
    const key = this.p2pKey(src, this.rank);
    const want: CallHeader = { what: 'send', dtype: x.dtype, shape: [...x.shape] };
    return this.run(fn, async () => {
      const b = await this.store.get(key, this.timeoutMs);
      if (b === undefined) throw new Error(`${fn}: rank ${src} sent nothing within ${this.timeoutMs / 1000} s`);
      await this.store.del([key]);
      const d = decode(b, `what rank ${src} sent`);
      if (describe(d.h) !== describe(want)) throw new Error(`${fn}: rank ${src} sent ${d.h.dtype} [${d.h.shape.join(', ')}] but this recv takes ${x.dtype} [${x.shape.join(', ')}]`);
      writeInto(x, viewLike(valuesOf(x), d.bytes));
    });
  }

  private p2pKey(src: number, dst: number): string {
    const pair = `${src}>${dst}`;
    const n = this.#p2p.get(pair) ?? 0;
    this.#p2p.set(pair, n + 1);
    return `p/${pair}/${n}`;
  }

  /** Waits until every rank has reached it. */
  barrier(): Work {
    const fn = 'gx.distributed.barrier';
    const seq = this.#seq++;
    const h: CallHeader = { what: 'barrier', dtype: 'uint8', shape: [] };
    return this.run(fn, async () => {
      await this.exchange(fn, seq, h, new Uint8Array(0), ranks(this.worldSize));
    });
  }

  private checkRank(r: unknown, fn: string, what: string, notSelf = false): void {
    if (!(typeof r === 'number' && Number.isInteger(r) && r >= 0 && r < this.worldSize)) {
      throw new RangeError(`${fn}: ${what} must be a rank from 0 to ${this.worldSize - 1}, got ${String(r)}`);
    }
    if (notSelf && r === this.rank) throw new RangeError(`${fn}: ${what} is this rank (${r})`);
  }

  /** Leaves the group: a barrier, then rank 0 closes the store (closed whatever happens, the error passed on). */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    try {
      await this.barrier();
      // The last rank to leave says so; rank 0, which hosts the store, closes it only then.
      if ((await this.store.add('left', 1)) === this.worldSize) await this.store.set('left-all', new Uint8Array(0));
      if (this.server !== undefined) await this.store.get('left-all', this.timeoutMs);
    } finally {
      this.#destroyed = true;
      const comm = this.#nccl;
      if (comm !== undefined) await comm.then((c) => c.destroy(false), () => undefined);
      this.store.close();
      await this.server?.close();
    }
  }
}

const ranks = (n: number): number[] => Array.from({ length: n }, (_, r) => r);

/** The error, its message starting with `fn` (the store's own errors name rank 0, not the call). */
function named(fn: string, e: unknown): Error {
  const m = e instanceof Error ? e.message : String(e);
  return m.startsWith(`${fn}:`) ? (e as Error) : new Error(`${fn}: ${m}`);
}

export function checkOp(op: unknown, fn: string, dtype: DType): asserts op is ReduceOp {
  if (!(REDUCE_OPS as readonly unknown[]).includes(op)) throw new TypeError(`${fn}: op must be one of ${REDUCE_OPS.join(', ')}, got ${String(op)}`);
  if (op === 'avg' && DTYPE_INFO[dtype].kind !== 'f') throw new TypeError(`${fn}: 'avg' needs a floating tensor, got ${dtype}`);
}

/** `big` is worldSize blocks of `small` along its first dimension. */
export function checkStacked(big: Tensor, small: Tensor, worldSize: number, fn: string): void {
  const want = small.ndim === 0 ? [worldSize] : [small.shape[0] * worldSize, ...small.shape.slice(1)];
  if (big.dtype !== small.dtype || big.shape.join() !== want.join()) {
    throw new TypeError(`${fn}: with ${worldSize} ranks and a block of ${small.dtype} [${small.shape.join(', ')}], the stacked tensor must be ${small.dtype} [${want.join(', ')}], got ${big.dtype} [${big.shape.join(', ')}]`);
  }
}

/**
 * Joins the process group: rank 0 hosts the store at masterAddr:masterPort,
 * every rank connects and announces itself, and the call returns when all
 * worldSize ranks have (an error names those that did not, after timeoutMs).
 */
export function createProcessGroup(options: InitOptions, fn: string): Promise<ProcessGroup> {
  // Options are checked before anything is awaited: a typo is a throw where it is written.
  return join(checkOptions<InitOptions>(options, fn, INIT_KEYS), fn);
}

async function join(opts: InitOptions, fn: string): Promise<ProcessGroup> {
  const explicit = opts.rank !== undefined || opts.worldSize !== undefined;
  const env = explicit ? undefined : placementFromEnv(process.env, fn);
  const rank = opts.rank ?? env?.rank;
  const worldSize = opts.worldSize ?? env?.worldSize;
  if (!(Number.isInteger(worldSize) && (worldSize as number) >= 1 && Number.isInteger(rank) && (rank as number) >= 0 && (rank as number) < (worldSize as number))) {
    throw new RangeError(`${fn}: rank must be an integer from 0 to worldSize - 1 and worldSize at least 1, got rank ${String(rank)} of ${String(worldSize)}`);
  }
  const storeOpts = checkStoreOptions(opts.store, fn);
  const host = opts.masterAddr ?? env?.masterAddr ?? process.env.MASTER_ADDR ?? '127.0.0.1';
  const port = opts.masterPort ?? env?.masterPort ?? Number(process.env.MASTER_PORT ?? 0);
  if (port === 0 && worldSize !== 1) throw new TypeError(`${fn}: masterPort (or MASTER_PORT) is needed with more than one rank`);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  // One host: the store listens on the loopback, and every rank reaches it there (NOTE [ The store's trust ]).
  const oneNode = worldSize === 1 || isLoopback(host) || env?.allLocal === true;
  const secret = jobSecret(process.env, fn, rank as number, worldSize as number, oneNode, port);
  const bindNamed = process.env[STORE_ENV.bind] !== undefined && process.env[STORE_ENV.bind] !== '';
  const connectHost = oneNode && !bindNamed ? loopbackOf(host) : host;
  const server = rank === 0 ? await listen(await bindAddress(process.env, host, oneNode, fn), port, secret.read() as Buffer, storeOpts, fn) : undefined;
  let store: StoreClient | undefined;
  try {
    if (server !== undefined && secret.publish !== undefined) server.onClose(secret.publish(server.port));
    store = await StoreClient.connect(server !== undefined ? reachable(server.address.address) : connectHost, server?.port ?? port, secret,
      timeoutMs, fn, deadline);
    const group = new ProcessGroup(rank as number, worldSize as number, timeoutMs, store, server, opts.device);
    await store.set(`joined/${rank}`, new Uint8Array(0));
    if ((await store.add('joined', 1)) === worldSize) await store.set('all-joined', new Uint8Array(0));
    if ((await store.get('all-joined', Math.max(1, deadline - Date.now()))) === undefined) {
      const present = await store.has(ranks(worldSize as number).map((r) => `joined/${r}`));
      const absent = ranks(worldSize as number).filter((r) => !present[r]);
      throw new Error(`${fn}: rank${absent.length === 1 ? '' : 's'} ${absent.join(', ')} of ${worldSize} did not arrive within ${timeoutMs / 1000} s at ${host}:${port}`);
    }
    return group;
  } catch (e) {
    store?.close();
    await server?.close();
    throw named(fn, e);
  }
}

async function listen(bind: string, port: number, key: Buffer, opts: StoreOptions, fn: string): Promise<StoreServer> {
  return StoreServer.listen(bind, port, key, opts).catch((e: Error) => {
    throw new Error(`${fn}: rank 0 cannot listen on ${bind}:${port}: ${e.message}`);
  });
}

/** The address rank 0's own client reaches its store at: the one it is bound to, the loopback for a wildcard. */
const reachable = (bound: string): string => (bound === '0.0.0.0' ? '127.0.0.1' : bound === '::' ? '::1' : bound);

function checkStoreOptions(o: unknown, fn: string): StoreOptions {
  const opts = checkOptions<StoreOptions>(o, `${fn}: store`, STORE_KEYS);
  for (const [k, v] of Object.entries(opts)) {
    if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= 1)) {
      throw new TypeError(`${fn}: store.${k} must be a positive integer, got ${String(v)}`);
    }
  }
  if (opts.maxPayloadBytes !== undefined && opts.maxPayloadBytes > 2 ** 32 - 1) throw new RangeError(`${fn}: store.maxPayloadBytes must be below 2^32 (a frame's length is 32 bits), got ${opts.maxPayloadBytes}`);
  return opts;
}
