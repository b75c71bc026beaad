// gx.distributed: the process group of this process (torch.distributed's
// shape: initProcessGroup, rank, worldSize, the collectives on the default
// group, destroyProcessGroup), and device groups (one process, several GPUs).
// How the layer is built: README.md and NOTE [ Backends ] in backend.ts.
import { currentGroup, group, setCurrentGroup } from './default-group';
import { createProcessGroup, ProcessGroup, type InitOptions } from './group';

export { ProcessGroup, type InitOptions };
export { Work } from './work';
export type { ReduceOp } from '../generated/collectives';
export { placementFromEnv, type JobPlacement } from './env';
export type { StoreOptions } from './store-options';
export { DeviceGroup, initDeviceGroup, type DeviceGroupOptions } from './device-group';
export { ncclVersion } from './nccl';
export * from '../generated/collective-functions';

/** The default group (initProcessGroup's), as torch's dist.group.WORLD; an error naming `fn` when there is none. */
export function defaultGroup(fn = 'gx.distributed.defaultGroup'): ProcessGroup {
  return group(fn);
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
  const current = currentGroup();
  if (current !== undefined) throw new Error(`${fn}: this process already joined a group (rank ${current.rank} of ${current.worldSize}); destroyProcessGroup() first`);
  return createProcessGroup(opts, fn).then((g) => {
    setCurrentGroup(g);
    return g;
  });
}

/** Leaves the default group (a barrier first), so a new one can be joined. */
export async function destroyProcessGroup(): Promise<void> {
  const g = group('gx.distributed.destroyProcessGroup');
  setCurrentGroup(undefined);
  await g.destroy();
}

export const isInitialized = (): boolean => currentGroup() !== undefined;
export const rank = (): number => group('gx.distributed.rank').rank;
export const worldSize = (): number => group('gx.distributed.worldSize').worldSize;
