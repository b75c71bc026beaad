// The one caller of the nccl_* ops (ops/dist/nccl.cu): a communicator
// crosses into C++ as a schema Handle, a device as a schema Device
// (NOTE [ NCCL communicators ]). The rest of lib/distributed holds NcclHandles
// and never calls the ops itself.
import type { Device } from '../core/device';
import type { OpaqueHandle } from '../core/native';
import { namedForCaller } from '../ops/library';
import * as ops from '../generated/ops';
import type { Tensor } from '../core/tensor';

/** A communicator of ops/dist/nccl.cu's table, on its device. */
export class NcclHandle {
  /** @internal Made by commInit / commInitAll. */
  constructor(readonly device: Device, readonly comm: OpaqueHandle) {}
}

/** NCCL's version code (loading the library on first use, in `device`'s context). */
export function versionCode(device: Device, fn: string): number {
  return Number(ops.ncclVersion(fn, { device }));
}

/** A new ncclUniqueId, as hex, for rank 0 to hand to the others. */
export function uniqueId(device: Device, fn: string): string {
  return ops.ncclUniqueId(fn, { device });
}

/** Joins the communicator of `id` as `rank` of `worldSize` on `device` (blocks until every rank has). */
export function commInit(device: Device, id: string, worldSize: number, rank: number, fn: string): NcclHandle {
  try {
    return new NcclHandle(device, ops.ncclCommInit(fn, { device, uniqueId: id, worldSize, rank }));
  } catch (e) {
    throw namedForCaller(e, fn);
  }
}

/**
 * One communicator per device, all in this process: what ncclCommInitAll
 * does, as NCCL documents it (one unique id, each rank joined on its device
 * between ncclGroupStart and ncclGroupEnd). The ranks that joined before a
 * failure are aborted, not left behind.
 */
export function commInitAll(devices: readonly Device[], fn: string): NcclHandle[] {
  const handles: NcclHandle[] = [];
  try {
    const id = ops.ncclUniqueId(fn, { device: devices[0] });
    groupOn(devices[0], fn, () => {
      devices.forEach((device, rank) => handles.push(new NcclHandle(device, ops.ncclCommInit(fn, { device, uniqueId: id, worldSize: devices.length, rank }))));
    });
    return handles;
  } catch (e) {
    for (const h of handles) {
      try {
        ops.ncclCommDestroy(fn, { device: h.device, comm: h.comm, abort: true });
      } catch {
        // the failure already reported is the one to see
      }
    }
    throw namedForCaller(e, fn);
  }
}

/** The communicator's asynchronous error (a peer or the network gone), or '' when none. */
export function commError(h: NcclHandle, fn: string): string {
  return ops.ncclCommError(fn, { device: h.device, comm: h.comm });
}

/** Destroys (or aborts: its kernels stop) the communicator; the handle is dead after. */
export function commDestroy(h: NcclHandle, abort: boolean, fn: string): void {
  ops.ncclCommDestroy(fn, { device: h.device, comm: h.comm, abort });
}

/** Enqueues collective `kind` (a row's ncclKind) on the current stream of the communicator's device. */
export function collective(h: NcclHandle, kind: string, input: Tensor, output: Tensor, op: number, peer: number, fn: string): void {
  try {
    ops.ncclCollective(fn, { input: input.handle(fn), output: output.handle(fn), comm: h.comm, kind, op, peer });
  } catch (e) {
    throw namedForCaller(e, fn);
  }
}

/** Runs `body` between ncclGroupStart and ncclGroupEnd (ended also when it throws); `h` picks the device. */
export function group(h: NcclHandle, fn: string, body: () => void): void {
  groupOn(h.device, fn, body);
}

function groupOn(device: Device, fn: string, body: () => void): void {
  ops.ncclGroup(fn, { device, start: true });
  try {
    body();
  } finally {
    ops.ncclGroup(fn, { device, start: false });
  }
}
