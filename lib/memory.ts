// gx.memory: what the allocators hold, per device.
import { parseDevice, type DeviceLike } from './device';
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

/** Returns cached, unused device blocks (and pinned host blocks) to the driver. */
export function emptyCache(device?: DeviceLike): void {
  if (device === undefined) {
    native.emptyCache(-1);
    return;
  }
  const d = parseDevice(device, 'gx.memory.emptyCache');
  if (d.type === 'cuda') native.emptyCache(d.index);
}

/** Caps what the caching allocator of a CUDA device may reserve (0 removes the cap). */
export function setLimit(bytes: number, device: DeviceLike = 'cuda'): void {
  const d = parseDevice(device, 'gx.memory.setLimit');
  if (d.type !== 'cuda') throw new TypeError(`gx.memory.setLimit: limits apply to CUDA devices, got '${d}'`);
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new RangeError(`gx.memory.setLimit: bytes must be a non-negative integer, got ${bytes}`);
  }
  native.setMemoryLimit(d.index, bytes);
}
