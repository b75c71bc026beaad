// gx.distributed: the process group of this process (torch.distributed's
// shape: initProcessGroup, rank, worldSize, the collectives on the default
// group, destroyProcessGroup).
import type { Tensor } from '../tensor';
import { createProcessGroup, ProcessGroup, Work, type InitOptions, type ReduceOp } from './group';

export { ProcessGroup, Work, type InitOptions, type ReduceOp };
export { placementFromEnv, type JobPlacement } from './env';
export type { StoreOptions } from './store-options';
export { DeviceGroup, initDeviceGroup, type DeviceGroupOptions } from './device-group';
export { ncclVersion } from './nccl';

let current: ProcessGroup | undefined;

/** The default group (initProcessGroup's), as torch's dist.group.WORLD; an error naming `fn` when there is none. */
export function defaultGroup(fn = 'gx.distributed.defaultGroup'): ProcessGroup {
  return group(fn);
}

function group(fn: string): ProcessGroup {
  if (current === undefined) throw new Error(`${fn}: no process group; call await gx.distributed.initProcessGroup() first`);
  return current;
}

/**
 * Joins the job's process group (from RANK / WORLD_SIZE / MASTER_ADDR /
 * MASTER_PORT, as `gpuext run` and torchrun set them, Slurm's or Open MPI's
 * variables, or explicit options) and makes it the default one.
 * @example
 * await gx.distributed.initProcessGroup();
 * await gx.distributed.allReduce(grad, 'avg');
 */
export function initProcessGroup(opts: InitOptions = {}): Promise<ProcessGroup> {
  const fn = 'gx.distributed.initProcessGroup';
  if (current !== undefined) throw new Error(`${fn}: this process already joined a group (rank ${current.rank} of ${current.worldSize}); destroyProcessGroup() first`);
  return createProcessGroup(opts, fn).then((g) => (current = g));
}

/** Leaves the default group (a barrier first), so a new one can be joined. */
export async function destroyProcessGroup(): Promise<void> {
  const g = group('gx.distributed.destroyProcessGroup');
  current = undefined;
  await g.destroy();
}

export const isInitialized = (): boolean => current !== undefined;
export const rank = (): number => group('gx.distributed.rank').rank;
export const worldSize = (): number => group('gx.distributed.worldSize').worldSize;

export const allReduce = (t: Tensor, op: ReduceOp = 'sum'): Work => group('gx.distributed.allReduce').allReduce(t, op);
export const reduce = (t: Tensor, dst: number, op: ReduceOp = 'sum'): Work => group('gx.distributed.reduce').reduce(t, dst, op);
export const broadcast = (t: Tensor, src: number): Work => group('gx.distributed.broadcast').broadcast(t, src);
export const allGather = (out: Tensor, input: Tensor): Work => group('gx.distributed.allGather').allGather(out, input);
export const reduceScatter = (out: Tensor, input: Tensor, op: ReduceOp = 'sum'): Work => group('gx.distributed.reduceScatter').reduceScatter(out, input, op);
export const send = (t: Tensor, dst: number): Work => group('gx.distributed.send').send(t, dst);
export const recv = (t: Tensor, src: number): Work => group('gx.distributed.recv').recv(t, src);
export const barrier = (): Work => group('gx.distributed.barrier').barrier();
