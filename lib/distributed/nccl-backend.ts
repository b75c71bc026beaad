// The NCCL backends (NOTE [ Backends ] in backend.ts): a process group's, on
// one communicator on this rank's GPU, made on the first collective of CUDA
// tensors; and a device group's, on one communicator per GPU of this process.
// Both run every collective of the table the same way: its row's ncclKind,
// the op's ncclRedOp_t and the peer go to ops/dist/nccl.cu, whose dispatch is
// generated from the same table. NCCL does not compare what the ranks called:
// a mismatch hangs until the watchdog's timeout (NOTE [ NCCL watchdog ]), as
// with torch.distributed.
import { parseDevice, type Device, type DeviceLike } from '../core/device';
import { REDUCE_OP_INFO } from '../generated/collectives';
import type { Tensor } from '../core/tensor';
import { effectiveOp, inputOf, outputOf, type Backend, type CollectiveCall } from './backend';
import { NcclComm } from './nccl';
import type { StoreClient } from './store';
import { Work, type Completion } from './work';

/** The kind, op and peer of `call` as nccl_collective takes them. */
export function ncclArgs<T>(call: CollectiveCall<T>, dtype: Tensor['dtype']): { kind: string; op: number; peer: number } {
  const kind = call.c.ncclKind;
  if (kind === undefined) throw new Error(`${call.fn}: NCCL has no ${call.c.name} (internal: the face routes it to the store)`);
  return { kind, op: call.op === undefined ? 0 : REDUCE_OP_INFO[effectiveOp(call.op, dtype)].nccl, peer: call.peer };
}

/** A process group's CUDA collectives: one communicator, on `device` (default: the first collective's tensors'). */
export class NcclBackend implements Backend<Tensor> {
  #comm: Promise<NcclComm> | undefined;
  #ready: NcclComm | undefined;
  /** Collectives waiting for the communicator to be made. */
  #early = 0;

  constructor(
    private readonly store: StoreClient,
    private readonly rank: number,
    private readonly worldSize: number,
    private readonly timeoutMs: number,
    private readonly device: DeviceLike | undefined,
  ) {}

  run(call: CollectiveCall<Tensor>): Work {
    const { fn } = call;
    const [input, output] = [inputOf(call), outputOf(call)];
    const device = this.device === undefined ? input.device : parseDevice(this.device, fn);
    if (!input.device.equals(device) || !output.device.equals(device)) {
      throw new TypeError(`${fn}: this rank's collectives run on ${device}; the tensors are on ${input.device}${output !== input ? ` and ${output.device}` : ''}`);
    }
    const { kind, op, peer } = ncclArgs(call, input.dtype);
    const run = (c: NcclComm): Completion => {
      if (!c.device.equals(device)) throw new TypeError(`${fn}: this group's NCCL communicator is on ${c.device}; the tensors are on ${device}`);
      return c.run(fn, kind, input, output, op, peer);
    };
    // Once the communicator exists, enqueue now (as torch does): a loop of collectives queues them all before anyone waits.
    const ready = this.#ready;
    if (ready !== undefined) {
      try {
        return new Work(run(ready));
      } catch (e) {
        return Work.failed(e);
      }
    }
    // Before, calls wait for it in order; the direct path opens once the last of them is enqueued.
    this.#comm ??= NcclComm.create(this.store, this.rank, this.worldSize, device, 0, this.timeoutMs, fn);
    this.#early++;
    return new Work(this.#comm.then((c) => {
      try {
        return run(c).wait();
      } finally {
        if (--this.#early === 0) this.#ready = c;
      }
    }, (e: unknown) => {
      this.#early--;
      throw e;
    }));
  }

  async destroy(): Promise<void> {
    const comm = this.#comm;
    if (comm !== undefined) await comm.then((c) => c.destroy(false), () => undefined);
  }
}

/** A device group's collectives: one communicator per device, each call enqueued on all of them as one NCCL group. */
export class NcclDeviceBackend implements Backend<Tensor[]> {
  #comms: NcclComm[] | undefined;

  constructor(devices: readonly Device[], timeoutMs: number, fn: string) {
    this.#comms = NcclComm.createAll(devices, timeoutMs, fn);
  }

  /** The communicators; an error naming `fn` once destroyed. */
  comms(fn: string): NcclComm[] {
    if (this.#comms === undefined) throw new Error(`${fn}: the device group was destroyed`);
    return this.#comms;
  }

  run(call: CollectiveCall<Tensor[]>): Work {
    const { fn } = call;
    const comms = this.comms(fn);
    const [inputs, outputs] = [inputOf(call), outputOf(call)];
    const { kind, op, peer } = ncclArgs(call, inputs[0].dtype);
    comms[0].group(fn, () => comms.forEach((c, i) => c.enqueue(fn, kind, inputs[i], outputs[i], op, peer)));
    const done = comms.map((c) => c.completion(fn));
    return new Work({ query: () => done.every((d) => d.query()), wait: () => Promise.all(done.map((d) => d.wait())).then(() => undefined) });
  }

  /** Destroys the communicators (waiting for nothing: await pending Work first). */
  destroy(): Promise<void> {
    const comms = this.#comms;
    this.#comms = undefined;
    comms?.forEach((c) => c.destroy(false));
    return Promise.resolve();
  }
}
