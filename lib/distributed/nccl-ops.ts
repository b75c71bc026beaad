// The one caller of the nccl_* ops (ops/dist/nccl.cu). The schema grammar
// has no handle or device type, so a communicator crosses into C++ as its
// index in the C++ table, written as a decimal string, and each op that
// needs a device takes a one-byte "probe" tensor on it; both stay in here,
// inside NcclHandle, so the rest of lib/distributed holds handles and never
// sees the strings or the probes.
import type { Device } from '../device';
import { empty } from '../creation';
import { namedForCaller } from '../ops/library';
import * as ops from '../generated/ops';
import type { Tensor } from '../tensor';

/** A communicator of ops/dist/nccl.cu's table, on its device (NOTE [ NCCL communicators ]). */
export class NcclHandle {
  /** @internal Made by commInit / commInitAll. */
  constructor(readonly device: Device, readonly name: string, readonly probe: Tensor) {}
}

/** A probe on `device` for the length of `body`. */
function withProbe<R>(device: Device, body: (probe: Tensor) => R): R {
  using probe = empty([1], { dtype: 'uint8', device });
  return body(probe);
}

/** NCCL's version code (loading the library on first use; `device`'s context loads it). */
export function versionCode(device: Device, fn: string): number {
  return withProbe(device, (probe) => Number(ops.ncclVersion(fn, { probe: probe.handle(fn) })));
}

/** A new ncclUniqueId, as hex, for rank 0 to hand to the others. */
export function uniqueId(device: Device, fn: string): string {
  return withProbe(device, (probe) => ops.ncclUniqueId(fn, { probe: probe.handle(fn) }));
}

/** Joins the communicator of `id` as `rank` of `worldSize` on `device` (blocks until every rank has). */
export function commInit(device: Device, id: string, worldSize: number, rank: number, fn: string): NcclHandle {
  const probe = empty([1], { dtype: 'uint8', device });
  try {
    return new NcclHandle(device, ops.ncclCommInit(fn, { probe: probe.handle(fn), uniqueId: id, worldSize, rank }), probe);
  } catch (e) {
    probe.dispose();
    throw namedForCaller(e, fn);
  }
}

/** One communicator per device, all in this process (ncclCommInitAll). */
export function commInitAll(devices: readonly Device[], fn: string): NcclHandle[] {
  const probes = devices.map((d) => empty([1], { dtype: 'uint8', device: d }));
  try {
    const names = ops.ncclCommInitAll(fn, { probe: probes[0].handle(fn), devices: devices.map((d) => d.index) }).split(',');
    return names.map((name, i) => new NcclHandle(devices[i], name, probes[i]));
  } catch (e) {
    probes.forEach((p) => p.dispose());
    throw namedForCaller(e, fn);
  }
}

/** The communicator's asynchronous error (a peer or the network gone), or '' when none. */
export function commError(h: NcclHandle, fn: string): string {
  return ops.ncclCommError(fn, { probe: h.probe.handle(), comm: h.name });
}

/** Destroys (or aborts: its kernels stop) the communicator; the handle is dead after. */
export function commDestroy(h: NcclHandle, abort: boolean, fn: string): void {
  try {
    ops.ncclCommDestroy(fn, { probe: h.probe.handle(), comm: h.name, abort });
  } finally {
    h.probe.dispose();
  }
}

/** Enqueues collective `kind` (a row's ncclKind) on the current stream of the communicator's device. */
export function collective(h: NcclHandle, kind: string, input: Tensor, output: Tensor, op: number, peer: number, fn: string): void {
  try {
    ops.ncclCollective(fn, { input: input.handle(fn), output: output.handle(fn), comm: h.name, kind, op, peer });
  } catch (e) {
    throw namedForCaller(e, fn);
  }
}

/** Runs `body` between ncclGroupStart and ncclGroupEnd (ended also when it throws); `h` picks the device. */
export function group(h: NcclHandle, fn: string, body: () => void): void {
  ops.ncclGroup(fn, { probe: h.probe.handle(fn), start: true });
  try {
    body();
  } finally {
    ops.ncclGroup(fn, { probe: h.probe.handle(fn), start: false });
  }
}
