// Several GPUs driven from one process (ncclCommInitAll, as CuPy's
// NcclCommunicator.initAll and torch's former *_multigpu collectives): one
// communicator per device, and each collective takes one tensor per device,
// enqueued on every device's current stream as one NCCL group
// (NOTE [ NCCL communicators ] in ops/dist/nccl.cu). No process group or
// store is involved; the ranks are the devices, in the order given.
import { parseDevice, type Device, type DeviceLike } from '../device';
import { deviceCount } from '../gpus';
import { checkOptions, optionKeys } from '../options';
import { Tensor } from '../tensor';
import { checkOp, checkStacked, Work, type ReduceOp } from './group';
import { ncclGroup, ncclOp, NcclComm } from './nccl';

export interface DeviceGroupOptions {
  /** How long a collective may take before the communicators are aborted (default 60 s; NOTE [ NCCL watchdog ]). */
  timeoutMs?: number;
}

const KEYS = optionKeys<DeviceGroupOptions>({ timeoutMs: true });

/** One NCCL communicator per GPU of this process; collectives take one tensor per device. */
export class DeviceGroup {
  #comms: NcclComm[] | undefined;

  /** @internal Use gx.distributed.initDeviceGroup. */
  constructor(readonly devices: readonly Device[], comms: NcclComm[]) {
    this.#comms = comms;
  }

  get size(): number {
    return this.devices.length;
  }

  private comms(fn: string): NcclComm[] {
    if (this.#comms === undefined) throw new Error(`${fn}: the device group was destroyed`);
    return this.#comms;
  }

  /** Checks one tensor per device, each on its device. */
  private perDevice(fn: string, what: string, ts: unknown): Tensor[] {
    if (!Array.isArray(ts) || ts.length !== this.size) throw new TypeError(`${fn}: ${what} must be an array of ${this.size} tensors, one per device (${this.devices.join(', ')})`);
    return ts.map((t, i) => {
      if (!(t instanceof Tensor)) throw new TypeError(`${fn}: ${what}[${i}] must be a Tensor`);
      t.handle(fn);
      if (!t.device.equals(this.devices[i])) throw new TypeError(`${fn}: ${what}[${i}] is on ${t.device}; it must be on ${this.devices[i]}`);
      if (t.dtype !== ts[0].dtype || t.shape.join() !== ts[0].shape.join()) {
        throw new TypeError(`${fn}: ${what}[${i}] is ${t.dtype} [${t.shape.join(', ')}] but ${what}[0] is ${ts[0].dtype} [${ts[0].shape.join(', ')}]`);
      }
      return t;
    });
  }

  private checkRoot(root: unknown, fn: string): number {
    if (!(typeof root === 'number' && Number.isInteger(root) && root >= 0 && root < this.size)) {
      throw new RangeError(`${fn}: root must be a device's position from 0 to ${this.size - 1}, got ${String(root)}`);
    }
    return root;
  }

  /** Enqueues `kind` on every device as one NCCL group; the Work resolves when all have run. */
  private launch(fn: string, kind: string, inputs: Tensor[], outputs: Tensor[], op: ReduceOp | undefined, peer: number): Work {
    const comms = this.comms(fn);
    const o = ncclOp(op, inputs[0].dtype);
    ncclGroup(fn, inputs[0].device, () => comms.forEach((c, i) => c.enqueue(fn, kind, inputs[i], outputs[i], o, peer)));
    const done = comms.map((c) => c.completion(fn));
    return new Work({ query: () => done.every((d) => d.query()), wait: () => Promise.all(done.map((d) => d.wait())).then(() => undefined) });
  }

  /** Reduces the tensors in place: every device ends with the result. */
  allReduce(tensors: Tensor[], op: ReduceOp = 'sum'): Work {
    const fn = 'DeviceGroup.allReduce';
    const ts = this.perDevice(fn, 'tensors', tensors);
    checkOp(op, fn, ts[0].dtype);
    return this.launch(fn, 'all_reduce', ts, ts, op, 0);
  }

  /** Copies the tensor of device `root` (a position in devices) into every other. */
  broadcast(tensors: Tensor[], root = 0): Work {
    const fn = 'DeviceGroup.broadcast';
    const ts = this.perDevice(fn, 'tensors', tensors);
    return this.launch(fn, 'broadcast', ts, ts, undefined, this.checkRoot(root, fn));
  }

  /** Reduces the tensors into the one of device `root`. */
  reduce(tensors: Tensor[], root = 0, op: ReduceOp = 'sum'): Work {
    const fn = 'DeviceGroup.reduce';
    const ts = this.perDevice(fn, 'tensors', tensors);
    checkOp(op, fn, ts[0].dtype);
    return this.launch(fn, 'reduce', ts, ts, op, this.checkRoot(root, fn));
  }

  /** Every device's `outputs[i]` gets all inputs stacked along the first dimension. */
  allGather(outputs: Tensor[], inputs: Tensor[]): Work {
    const fn = 'DeviceGroup.allGather';
    const outs = this.perDevice(fn, 'outputs', outputs);
    const ins = this.perDevice(fn, 'inputs', inputs);
    checkStacked(outs[0], ins[0], this.size, fn);
    return this.launch(fn, 'all_gather', ins, outs, undefined, 0);
  }

  /** Reduces the inputs (size blocks along the first dimension); device i gets block i. */
  reduceScatter(outputs: Tensor[], inputs: Tensor[], op: ReduceOp = 'sum'): Work {
    const fn = 'DeviceGroup.reduceScatter';
    const outs = this.perDevice(fn, 'outputs', outputs);
    const ins = this.perDevice(fn, 'inputs', inputs);
    checkOp(op, fn, ins[0].dtype);
    checkStacked(ins[0], outs[0], this.size, fn);
    return this.launch(fn, 'reduce_scatter', ins, outs, op, 0);
  }

  /** Destroys the communicators (waiting for nothing: await pending Work first). */
  destroy(): void {
    const comms = this.#comms;
    this.#comms = undefined;
    comms?.forEach((c) => c.destroy(false));
  }

  [Symbol.dispose](): void {
    this.destroy();
  }
}

/**
 * One NCCL communicator per GPU of this process (default: every GPU), for
 * collectives over tensors on several devices without a process per GPU.
 * @example
 * using g = gx.distributed.initDeviceGroup(['cuda:0', 'cuda:1']);
 * await g.allReduce([grad0, grad1], 'avg');
 */
export function initDeviceGroup(devices?: readonly DeviceLike[], options: DeviceGroupOptions = {}): DeviceGroup {
  const fn = 'gx.distributed.initDeviceGroup';
  const opts = checkOptions<DeviceGroupOptions>(options, fn, KEYS);
  const list = (devices ?? Array.from({ length: deviceCount() }, (_, i) => `cuda:${i}`)).map((d) => parseDevice(d, fn));
  if (list.length === 0) throw new TypeError(`${fn}: no CUDA devices`);
  list.forEach((d, i) => {
    if (d.type !== 'cuda') throw new TypeError(`${fn}: devices[${i}] is ${d}; NCCL groups are of CUDA devices`);
    if (list.findIndex((e) => e.equals(d)) !== i) throw new TypeError(`${fn}: ${d} is listed twice (NCCL takes each device once)`);
  });
  const timeoutMs = opts.timeoutMs ?? 60_000;
  if (!(timeoutMs > 0)) throw new RangeError(`${fn}: timeoutMs must be positive, got ${timeoutMs}`);
  return new DeviceGroup(list, NcclComm.createAll(list, timeoutMs, fn));
}
