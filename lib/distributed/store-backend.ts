// The store backend (NOTE [ Backends ] in backend.ts): collectives of CPU
// tensors through rank 0's TCP store.
//
// NOTE [ Collective transports ]
// Each rank posts its bytes under the collective's sequence number and reads
// the others'. That is for CPU tensors and small data (it is how CI, with no
// GPU, tests everything above the transport); every rank also posts what it
// called (the op, dtype, shape, root), so ranks that disagree get an error
// naming both sides instead of a hang, and a rank that does not join within
// the group's timeout is named. CUDA tensors go through NCCL instead
// (nccl-backend.ts). Who may talk to the store, and where it listens:
// trust.ts (NOTE [ The store's trust ]); the keys of a collective are its
// sequence number and rank, under the store's session, and each is posted once.
import { tensor } from '../ops/creation/creation';
import type { CollectiveName, ReduceOp } from '../generated/collectives';
import type { DType } from '../generated/dtypes';
import { copyValues, type Tensor } from '../core/tensor';
import { effectiveOp, inputOf, outputOf, type Backend, type CollectiveCall } from './backend';
import type { StoreClient } from './store';
import { Work } from './work';

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

/** The header of a call: the collective, its input's dtype and shape, the op, and the root of a rooted one. */
function headerOf(call: CollectiveCall<Tensor>): CallHeader {
  if (call.tensors.length === 0) return { what: call.c.name, dtype: 'uint8', shape: [] };
  const x = inputOf(call);
  const root = call.c.root !== undefined && call.c.layout !== 'p2p' ? call.peer : undefined;
  return { what: call.c.name, dtype: x.dtype, shape: [...x.shape], op: call.op, root };
}

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
  copyValues(t, src, 'Tensor.copy_');
}

/** acc op= x, elementwise; `op` is the one that runs (effectiveOp: bools as or / and). */
function combine(acc: Values, x: Values, op: ReduceOp): void {
  const a = acc as Float32Array;
  const b = x as Float32Array;
  // int32 products wrap as NCCL's and gx.mul's do only through Math.imul: p * q in float64 passes 2^53 and rounds
  // before the array wraps it ((2^31 - 1)^2 stored 0, not 1). Narrower integers' products are exact; int64 are bigints.
  const int32 = acc instanceof Int32Array;
  for (let i = 0; i < a.length; i++) {
    const p = a[i];
    const q = b[i];
    switch (op) {
      case 'sum': case 'avg': a[i] = p + q; break;
      case 'prod': a[i] = int32 ? Math.imul(p, q) : p * q; break;
      case 'min': a[i] = q < p || Number.isNaN(q) ? q : p; break;
      case 'max': a[i] = q > p || Number.isNaN(q) ? q : p; break;
    }
  }
}

const ranks = (n: number): number[] => Array.from({ length: n }, (_, r) => r);

/** The error, its message starting with `fn` (the store's own errors name rank 0, not the call). */
export function named(fn: string, e: unknown): Error {
  const m = e instanceof Error ? e.message : String(e);
  return m.startsWith(`${fn}:`) ? (e as Error) : new Error(`${fn}: ${m}`);
}

/** The store's body of each collective: tsc refuses a row of the table without one. */
type Bodies = { readonly [K in CollectiveName]: (call: CollectiveCall<Tensor>) => Work };

/** Collectives of CPU tensors through rank 0's store (NOTE [ Collective transports ]). */
export class StoreBackend implements Backend<Tensor>, Bodies {
  #seq = 0;
  #p2p = new Map<string, number>();

  constructor(private readonly store: StoreClient, private readonly rank: number, private readonly worldSize: number, private readonly timeoutMs: number) {}

  run(call: CollectiveCall<Tensor>): Work {
    return this[call.c.name](call);
  }

  destroy(): Promise<void> {
    this.store.close();
    return Promise.resolve();
  }

  allReduce(call: CollectiveCall<Tensor>): Work {
    const x = inputOf(call);
    const seq = this.#seq++;
    const mine = valuesOf(x);
    return this.#run(call.fn, async () => {
      const all = await this.#exchange(call.fn, seq, headerOf(call), mine, ranks(this.worldSize));
      writeInto(x, this.#reduceAll(mine, all, call.op as ReduceOp, x.dtype));
    });
  }

  reduce(call: CollectiveCall<Tensor>): Work {
    const x = inputOf(call);
    const dst = call.peer;
    const seq = this.#seq++;
    const mine = valuesOf(x);
    return this.#run(call.fn, async () => {
      const all = await this.#exchange(call.fn, seq, headerOf(call), mine, this.rank === dst ? ranks(this.worldSize) : [dst]);
      if (this.rank === dst) writeInto(x, this.#reduceAll(mine, all, call.op as ReduceOp, x.dtype));
    });
  }

  broadcast(call: CollectiveCall<Tensor>): Work {
    const x = inputOf(call);
    const src = call.peer;
    const seq = this.#seq++;
    const mine = this.rank === src ? valuesOf(x) : undefined;
    // Every rank posts (the root its data, the others their call), so a disagreement is seen on both sides.
    return this.#run(call.fn, async () => {
      const all = await this.#exchange(call.fn, seq, headerOf(call), mine ?? new Uint8Array(0), this.rank === src ? ranks(this.worldSize) : [src]);
      if (this.rank !== src) writeInto(x, viewLike(valuesOf(x), all.get(src) as Buffer));
    });
  }

  allGather(call: CollectiveCall<Tensor>): Work {
    const [o, x] = [outputOf(call), inputOf(call)];
    const seq = this.#seq++;
    const mine = valuesOf(x);
    return this.#run(call.fn, async () => {
      const all = await this.#exchange(call.fn, seq, headerOf(call), mine, ranks(this.worldSize));
      const res = new (mine.constructor as new (n: number) => Values)(mine.length * this.worldSize);
      for (let r = 0; r < this.worldSize; r++) {
        (res as Float32Array).set((r === this.rank ? mine : viewLike(mine, all.get(r) as Buffer)) as Float32Array, r * mine.length);
      }
      writeInto(o, res);
    });
  }

  reduceScatter(call: CollectiveCall<Tensor>): Work {
    const [o, x] = [outputOf(call), inputOf(call)];
    const seq = this.#seq++;
    const mine = valuesOf(x);
    return this.#run(call.fn, async () => {
      const all = await this.#exchange(call.fn, seq, headerOf(call), mine, ranks(this.worldSize));
      const n = mine.length / this.worldSize;
      const acc = this.#reduceAll(mine, all, call.op as ReduceOp, x.dtype);
      writeInto(o, acc.subarray(this.rank * n, (this.rank + 1) * n) as Values);
    });
  }

  send(call: CollectiveCall<Tensor>): Work {
    const x = inputOf(call);
    const key = this.#p2pKey(this.rank, call.peer);
    const data = encode(headerOf(call), valuesOf(x));
    return this.#run(call.fn, () => this.store.set(key, data));
  }

  recv(call: CollectiveCall<Tensor>): Work {
    const { fn } = call;
    const [x, src] = [outputOf(call), call.peer];
    const key = this.#p2pKey(src, this.rank);
    // What the matching send posts: its own header, naming itself.
    const want = { ...headerOf(call), what: 'send' };
    return this.#run(fn, async () => {
      const b = await this.store.get(key, this.timeoutMs);
      if (b === undefined) throw new Error(`${fn}: rank ${src} sent nothing within ${this.timeoutMs / 1000} s`);
      await this.store.del([key]);
      const d = decode(b, `what rank ${src} sent`);
      if (describe(d.h) !== describe(want)) throw new Error(`${fn}: rank ${src} sent ${d.h.dtype} [${d.h.shape.join(', ')}] but this recv takes ${x.dtype} [${x.shape.join(', ')}]`);
      writeInto(x, viewLike(valuesOf(x), d.bytes));
    });
  }

  barrier(call: CollectiveCall<Tensor>): Work {
    const seq = this.#seq++;
    return this.#run(call.fn, async () => {
      await this.#exchange(call.fn, seq, headerOf(call), new Uint8Array(0), ranks(this.worldSize));
    });
  }

  #run(fn: string, body: () => Promise<void>): Work {
    return new Work(body().catch((e: unknown) => {
      throw named(fn, e);
    }));
  }

  /** The reduction of every rank's values, combined in rank order so that every rank gets the same bits. */
  #reduceAll(mine: Values, all: Map<number, Buffer>, op: ReduceOp, dtype: DType): Values {
    const of = (r: number): Values => (r === this.rank ? mine : viewLike(mine, all.get(r) as Buffer));
    const acc = viewLike(mine, Buffer.from(of(0).buffer, of(0).byteOffset, of(0).byteLength));
    const runs = effectiveOp(op, dtype);
    for (let r = 1; r < this.worldSize; r++) combine(acc, of(r), runs);
    if (runs === 'avg') for (let i = 0; i < acc.length; i++) (acc as Float32Array)[i] /= this.worldSize;
    return acc;
  }

  /** Ranks whose `keys` are missing after a timeout, as an error. */
  async #missing(fn: string, keyOf: (r: number) => string, from: readonly number[]): Promise<Error> {
    const present = await this.store.has(from.map(keyOf)).catch(() => from.map(() => false));
    const absent = from.filter((_, i) => !present[i]);
    return new Error(`${fn}: rank${absent.length === 1 ? '' : 's'} ${absent.join(', ')} did not join within ${this.timeoutMs / 1000} s ` +
      '(every rank must call the same collectives in the same order)');
  }

  /** Posts this rank's call and data for collective `seq`, then reads the given ranks' posts, checking they agree. */
  async #exchange(fn: string, seq: number, h: CallHeader, data: ArrayBufferView, from: readonly number[]): Promise<Map<number, Buffer>> {
    const key = (r: number): string => `c/${seq}/${r}`;
    // Who reads this post: everyone else, except that in a rooted collective the others' posts go to the root only.
    const readers = h.root === undefined || h.root === this.rank ? this.worldSize - 1 : 1;
    await this.store.set(key(this.rank), encode(h, data), readers, true);
    const got = new Map<number, Buffer>();
    await Promise.all(from.map(async (r) => {
      if (r === this.rank) return;
      const b = await this.store.get(key(r), this.timeoutMs);
      if (b === undefined) throw await this.#missing(fn, key, from);
      const d = decode(b, `rank ${r}'s part of collective ${seq}`);
      if (describe(d.h) !== describe(h)) {
        throw new Error(`${fn}: ranks disagree: rank ${this.rank} called ${describe(h)} but rank ${r} called ${describe(d.h)}`);
      }
      got.set(r, d.bytes);
    }));
    return got;
  }

  #p2pKey(src: number, dst: number): string {
    const pair = `${src}>${dst}`;
    const n = this.#p2p.get(pair) ?? 0;
    this.#p2p.set(pair, n + 1);
    return `p/${pair}/${n}`;
  }
}
