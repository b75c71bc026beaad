// Several GPUs driven from one process (ncclCommInitAll, as CuPy's
// NcclCommunicator.initAll and torch's former *_multigpu collectives): one
// communicator per device, and each collective takes one tensor per device,
// enqueued on every device's current stream as one NCCL group
// (NOTE [ NCCL communicators ] in ops/dist/nccl.cu). No process group or
// store is involved; the ranks are the devices, in the order given. The
// methods are generated from the collective table (those it marks for a
// device group); each call is checked here, once (NOTE [ Backends ]).
import { deviceCount, parseDevice, type Device, type DeviceLike } from '../core/device';
import { DeviceGroupCollectives, type Collective, type ReduceOp } from '../generated/collectives';
import { checkOptions, optionKeys } from '../core/options';
import { Tensor } from '../core/tensor';
import { callOf, checkOp, checkStacked, stacked, type Backend } from './backend';
import { lazyModule } from '../platform/lazy';

// NCCL's backend loads with the first device group (NOTE [ Lazy entry ] in lib/README.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ncclBackend = lazyModule(() => require('./nccl-backend') as typeof import('./nccl-backend'));
import type { Work } from './work';

export interface DeviceGroupOptions {
  /** How long a collective may take before the communicators are aborted (default 60 s; NOTE [ NCCL watchdog ]). */
  timeoutMs?: number;
}

const KEYS = optionKeys<DeviceGroupOptions>({ timeoutMs: true });

/** One NCCL communicator per GPU of this process; collectives take one tensor per device. */
export class DeviceGroup extends DeviceGroupCollectives {
  readonly #backend: Backend<Tensor[]>;

  /** @internal Use gx.distributed.initDeviceGroup (its backend: NcclDeviceBackend). */
  constructor(readonly devices: readonly Device[], backend: Backend<Tensor[]>) {
    super();
    this.#backend = backend;
  }

  get size(): number {
    return this.devices.length;
  }

  /** Checks a call by its row of the table (one tensor per device, op, root, stacked shapes), then enqueues it. */
  protected override collective(c: Collective, fn: string, tensors: readonly unknown[], root: unknown, op: unknown): Work {
    const names = c.deviceTensors ?? [];
    const ts = tensors.map((t, i) => this.#perDevice(fn, names[i], t));
    let reduceOp: ReduceOp | undefined;
    if (c.reduces) {
      checkOp(op, fn, ts[ts.length - 1][0].dtype);
      reduceOp = op;
    }
    const position = c.root !== undefined ? this.#checkRoot(root, fn) : undefined;
    const pair = stacked(c, ts);
    if (pair !== undefined) checkStacked(pair[0][0], pair[1][0], this.size, fn);
    return this.#backend.run(callOf(c, fn, ts, position, reduceOp));
  }

  /** Checks one tensor per device, each on its device. */
  #perDevice(fn: string, what: string, ts: unknown): Tensor[] {
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

  #checkRoot(root: unknown, fn: string): number {
    if (!(typeof root === 'number' && Number.isInteger(root) && root >= 0 && root < this.size)) {
      throw new RangeError(`${fn}: root must be a device's position from 0 to ${this.size - 1}, got ${String(root)}`);
    }
    return root;
  }

  /** Destroys the communicators (waiting for nothing: await pending Work first). */
  destroy(): void {
    void this.#backend.destroy();
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
  return new DeviceGroup(list, new (ncclBackend().NcclDeviceBackend)(list, timeoutMs, fn));
}
