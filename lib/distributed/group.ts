// gx.distributed's process group, shaped like torch.distributed:
// initProcessGroup() (from the environment gpuext run / torchrun / Slurm /
// Open MPI set, or explicit options), a rendezvous through rank 0's store
// with a deadline, rank(), worldSize(), barrier(), destroyProcessGroup(),
// and the collectives, each returning a Work to await. The collectives'
// methods are generated from the collective table; each call is checked
// here, once, and runs on the backend of its tensors' device: NCCL for CUDA
// tensors, the store for CPU tensors (NOTE [ Backends ] in backend.ts).
import { checkOptions, optionKeys } from '../core/options';
import { Tensor } from '../core/tensor';
import { ProcessGroupCollectives, type Collective, type ReduceOp } from '../generated/collectives';
import type { DeviceLike } from '../core/device';
import { callOf, checkOp, checkStacked, stacked, type Backend } from './backend';
import { placementFromEnv } from './env';
import type { NcclBackend } from './nccl-backend';
import type { StoreClient, StoreServer } from './store';
import type { StoreBackend } from './store-backend';
import type { StoreOptions } from './store-options';
import type { Work } from './work';
import { lazyModule } from '../platform/lazy';

// The transports (the store's sockets and crypto, NCCL) load when a group is created, not with gpuext
// (NOTE [ Lazy entry ] in lib/README.md).
/* eslint-disable @typescript-eslint/no-require-imports */
const ncclBackend = lazyModule(() => require('./nccl-backend') as typeof import('./nccl-backend'));
const storeModule = lazyModule(() => require('./store') as typeof import('./store'));
const storeBackend = lazyModule(() => require('./store-backend') as typeof import('./store-backend'));
const trust = lazyModule(() => require('./trust') as typeof import('./trust'));
/* eslint-enable @typescript-eslint/no-require-imports */

export type { ReduceOp } from '../generated/collectives';

const INIT_KEYS = optionKeys<InitOptions>({ rank: true, worldSize: true, masterAddr: true, masterPort: true, timeoutMs: true, device: true, store: true });
const STORE_KEYS = optionKeys<StoreOptions>({ maxHeaderBytes: true, maxPayloadBytes: true, authTimeoutMs: true, frameTimeoutMs: true });

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

/** A process group: this process's rank among worldSize, joined through rank 0's store. */
export class ProcessGroup extends ProcessGroupCollectives {
  #destroyed = false;
  readonly #viaStore: StoreBackend;
  readonly #viaNccl: NcclBackend;

  /** @internal Use gx.distributed.initProcessGroup. */
  constructor(
    readonly rank: number,
    readonly worldSize: number,
    readonly timeoutMs: number,
    private readonly store: StoreClient,
    private readonly server: StoreServer | undefined,
    ncclDevice: DeviceLike | undefined,
  ) {
    super();
    this.#viaStore = new (storeBackend().StoreBackend)(store, rank, worldSize, timeoutMs);
    this.#viaNccl = new (ncclBackend().NcclBackend)(store, rank, worldSize, timeoutMs, ncclDevice);
  }

  /** Where rank 0's store listens (address, family, port); undefined on the other ranks. */
  get storeAddress(): { address: string; family: string; port: number } | undefined {
    return this.server?.address;
  }

  /** Checks a call by its row of the table (tensors, op, root, stacked shapes), then runs it on its tensors' backend. */
  protected override collective(c: Collective, fn: string, tensors: readonly unknown[], root: unknown, op: unknown): Work {
    const ts = tensors.map((t, i) => tensorArg(t, fn, c.tensors[i]));
    let reduceOp: ReduceOp | undefined;
    if (c.reduces) {
      checkOp(op, fn, ts[ts.length - 1].dtype);
      reduceOp = op;
    }
    let peer: number | undefined;
    if (c.root !== undefined) {
      this.#checkRank(root, fn, c.root, c.layout === 'p2p');
      peer = root;
    }
    const pair = stacked(c, ts);
    if (pair !== undefined) checkStacked(pair[0], pair[1], this.worldSize, fn);
    const backend = this.#backendOf(fn, ts);
    if (this.#destroyed) throw new Error(`${fn}: the process group was destroyed`);
    return backend.run(callOf(c, fn, ts, peer, reduceOp));
  }

  /** The backend of the tensors' device: NCCL for CUDA tensors, the store for CPU ones (and for none); CUDA and CPU mixed is an error. */
  #backendOf(fn: string, ts: readonly Tensor[]): Backend<Tensor> {
    const cuda = ts.map((t) => t.device.type === 'cuda');
    if (cuda.some((x) => x !== cuda[0])) throw new TypeError(`${fn}: the tensors are on ${ts.map((t) => String(t.device)).join(' and ')}; put them on one device`);
    return cuda[0] ? this.#viaNccl : this.#viaStore;
  }

  #checkRank(r: unknown, fn: string, what: string, notSelf: boolean): asserts r is number {
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
      await this.#viaNccl.destroy();
      await this.#viaStore.destroy();
      await this.server?.close();
    }
  }
}

const ranks = (n: number): number[] => Array.from({ length: n }, (_, r) => r);

function tensorArg(t: unknown, fn: string, what: string): Tensor {
  if (!(t instanceof Tensor)) throw new TypeError(`${fn}: ${what} must be a Tensor`);
  t.handle(fn);  // throws naming fn when disposed
  return t;
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
  const oneNode = worldSize === 1 || trust().isLoopback(host) || env?.allLocal === true;
  const secret = trust().jobSecret(process.env, fn, rank as number, worldSize as number, oneNode, port);
  const bindNamed = process.env[trust().STORE_ENV.bind] !== undefined && process.env[trust().STORE_ENV.bind] !== '';
  const connectHost = oneNode && !bindNamed ? trust().loopbackOf(host) : host;
  const server = rank === 0 ? await listen(await trust().bindAddress(process.env, host, oneNode, fn), port, secret.read() as Buffer, storeOpts, fn) : undefined;
  let store: StoreClient | undefined;
  try {
    if (server !== undefined && secret.publish !== undefined) server.onClose(secret.publish(server.port));
    store = await storeModule().StoreClient.connect(server !== undefined ? reachable(server.address.address) : connectHost, server?.port ?? port, secret,
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
    throw storeBackend().named(fn, e);
  }
}

async function listen(bind: string, port: number, key: Buffer, opts: StoreOptions, fn: string): Promise<StoreServer> {
  return storeModule().StoreServer.listen(bind, port, key, opts).catch((e: Error) => {
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
