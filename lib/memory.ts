// gx.memory: what the allocators hold, per device.
import { parseDevice, type DeviceLike } from './device';
import { checkDevice, limitBytes } from './gpus';
import { native, type NativeMemoryStats } from './native';

export type MemoryStats = NativeMemoryStats;

/**
 * Statistics of a device's allocator: live tensors, bytes allocated to
 * tensors, bytes cached for reuse, driver allocations and cache hits. On
 * 'cpu', `pinned` reports the page-locked host pool.
 * @example const { liveTensors, allocatedBytes } = gx.memory.stats('cuda');
 */
export function stats(device: DeviceLike = 'cpu'): MemoryStats {
  const d = parseDevice(device, 'gx.memory.stats');
  return native.memoryStats(d.typeCode, d.index);
}

/**
 * Returns cached, unused blocks to the driver or the OS: those of a CUDA
 * device (and the pinned host pool), or on 'cpu' the host caching
 * allocator's (and the pinned pool's); every device's without an argument.
 * @example gx.memory.emptyCache('cpu');
 */
export function emptyCache(device?: DeviceLike): void {
  if (device === undefined) {
    native.emptyCache(-1);
    return;
  }
  const d = parseDevice(device, 'gx.memory.emptyCache');
  if (d.type === 'cuda') native.emptyCache(d.index);
  else native.emptyHostCache();
}

/**
 * Caps what the caching allocator of a CUDA device may reserve: a byte count
 * or a share of the device's memory ('50%'); 0 removes the cap. Allocations
 * past it fail with an out-of-memory error (after freeing the cache), and the
 * program can go on. GPUEXT_GPU_MEMORY_LIMIT sets the same for every device.
 * @example gx.memory.setLimit('50%');
 */
export function setLimit(limit: number | string, device: DeviceLike = 'cuda'): void {
  const d = parseDevice(device, 'gx.memory.setLimit');
  if (d.type !== 'cuda') throw new TypeError(`gx.memory.setLimit: limits apply to CUDA devices, got '${d}'`);
  checkDevice(d, 'gx.memory.setLimit');
  native.setMemoryLimit(d.index, limitBytes(limit, d.index, 'gx.memory.setLimit'));
}
