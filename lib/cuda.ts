// gx.cuda: is there a GPU, how many, waiting for them, the current stream.
import { Device, parseDevice, type DeviceLike } from './device';
import { native, type NativeDeviceProperties } from './native';

/** True when the core was built with CUDA and at least one GPU is usable. */
export function isAvailable(): boolean {
  return native.cudaCompiled && deviceCount() > 0;
}

let cachedCount: number | undefined;

/** Number of usable GPUs (0 without a driver, a GPU, or a CUDA build). */
export function deviceCount(): number {
  // The core counts devices once per process; so can we (this is on every creation's path).
  cachedCount ??= native.cudaDeviceCount();
  return cachedCount;
}

/** Why isAvailable() is false ('' when it is true). */
export function unavailableReason(): string {
  if (isAvailable()) return '';
  return native.cudaCompiled ? native.cudaUnavailableReason() : 'gpuext was built without CUDA (no toolkit at install time)';
}

/** True when the core was compiled with CUDA support. */
export function isCompiled(): boolean {
  return native.cudaCompiled;
}

function cudaIndex(device: DeviceLike | undefined, fn: string): number {
  const d = parseDevice(device ?? 'cuda', fn);
  if (d.type !== 'cuda') throw new TypeError(`${fn}: expected a CUDA device, got '${d}'`);
  return d.index;
}

/**
 * Throws a RangeError naming `fn` unless `device` is the cpu or an existing
 * GPU, so errors name the caller's API rather than a core function.
 */
export function checkDevice(device: Device, fn: string): void {
  if (device.type === 'cpu') return;
  const n = deviceCount();
  if (n === 0) {
    throw new RangeError(`${fn}: device '${device}' requested but CUDA is not available (${unavailableReason()})`);
  }
  if (device.index >= n) {
    throw new RangeError(`${fn}: device '${device}' does not exist; this machine has ${n} GPU${n === 1 ? '' : 's'} (cuda:0${n > 1 ? `..cuda:${n - 1}` : ''})`);
  }
}

/** Blocks until all work on the device is done. */
export function synchronize(device?: DeviceLike): void {
  native.cudaSynchronize(cudaIndex(device, 'gx.cuda.synchronize'));
}

/** The current stream of this thread on a device (NOTE [ Current stream ] in csrc/cuda/runtime.h). */
export interface StreamInfo {
  device: Device;
  /** The cudaStream_t, for passing to native code. */
  handle: bigint;
}

export function currentStream(device?: DeviceLike): StreamInfo {
  const index = cudaIndex(device, 'gx.cuda.currentStream');
  return { device: new Device('cuda', index), handle: native.cudaCurrentStream(index) };
}

export type DeviceProperties = NativeDeviceProperties;

/** Name, compute capability, memory and SM count of a GPU. */
export function getDeviceProperties(device?: DeviceLike): DeviceProperties {
  return native.cudaDeviceProperties(cudaIndex(device, 'gx.cuda.getDeviceProperties'));
}
