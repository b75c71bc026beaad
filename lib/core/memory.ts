// gx.memory: what the allocators hold, per device.
import { parseDevice, type DeviceLike, deviceCount } from './device';
import { checkDevice, limitBytes } from './gpus';
import { logger } from '../platform/log';
import { flushDeferred } from './handle-pool';
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
  flushDeferred();  // NOTE [ Deferred disposal ]: what the program disposed is not live
  return native.memoryStats(d.typeCode, d.index);
}

/**
 * Returns cached, unused blocks to the driver or the OS: those of a CUDA
 * device (and the pinned host pool), or on 'cpu' the host caching
 * allocator's (and the pinned pool's); every device's without an argument.
 * @example gx.memory.emptyCache('cpu');
 */
export function emptyCache(device?: DeviceLike): void {
  flushDeferred();
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
  flushDeferred();
  native.setMemoryLimit(d.index, limitBytes(limit, d.index, 'gx.memory.setLimit'));
}

// NOTE [ Allocator log ]
// The allocators (csrc/cuda/caching_allocator.cpp, csrc/core/cpu_allocator.cpp)
// grow, free their cache and retry an allocation that ran out of memory in
// C++, with no callback to JS; a callback on that path would cost every
// allocation. With NODE_DEBUG=gpuext (or gpuext:alloc) on, a timer samples
// their counters every ALLOC_SAMPLE_MS instead (and once more at exit) and
// logs what changed: reserved bytes grown or given back, driver allocations
// and frees, allocations that failed even after the retry. Off, nothing runs.
const allocLog = logger('alloc');
const ALLOC_SAMPLE_MS = 100;

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function sampleAllocators(last: Map<string, MemoryStats>): void {
  const devices = ['cpu', ...Array.from({ length: native.cudaCompiled ? deviceCount() : 0 }, (_, i) => `cuda:${i}`)];
  for (const d of devices) {
    const now = stats(d);
    const was = last.get(d);
    last.set(d, now);
    const grew = now.reservedBytes !== (was?.reservedBytes ?? 0);
    const ooms = now.numOoms - (was?.numOoms ?? 0);
    if (grew) {
      allocLog('%s: reserved %s -> %s (%d driver allocations, %d frees so far; %s allocated, peak %s)', d,
        mib(was?.reservedBytes ?? 0), mib(now.reservedBytes), now.numDeviceMallocs, now.numDeviceFrees, mib(now.allocatedBytes),
        mib(now.peakAllocatedBytes));
    }
    if (ooms > 0) {
      allocLog('%s: %d allocation(s) ran out of memory after freeing the cache and retrying (limit %s)', d, ooms,
        now.limitBytes > 0 ? mib(now.limitBytes) : 'none');
    }
  }
}

if (allocLog.enabled) {
  const last = new Map<string, MemoryStats>();
  setInterval(() => sampleAllocators(last), ALLOC_SAMPLE_MS).unref();
  process.on('exit', () => sampleAllocators(last));
}
