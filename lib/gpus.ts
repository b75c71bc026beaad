// Which GPUs this process can use, and the checks every API that takes a
// device runs (checkDevice: errors name the caller, not a core function; the
// environment's memory limit applied when CUDA is first used). The public
// face of these is gx.cuda (cuda.ts); streams, graphs, creation and the ops
// import them from here so that they need nothing of that face.
import { parseDevice, type Device, type DeviceLike } from './device';
import { native } from './native';

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
  // A source build leaves CUDA out when there is no toolkit, no GPU, or GPUEXT_NO_CUDA=1 (scripts/find-cuda.js).
  return native.cudaCompiled ? native.cudaUnavailableReason()
    : 'gpuext was built for the CPU only (no GPU or no CUDA toolkit when it was built, or GPUEXT_NO_CUDA=1)';
}

/** True when the core was compiled with CUDA support. */
export function isCompiled(): boolean {
  return native.cudaCompiled;
}

/** The index of a CUDA device argument (default: the current one's, cuda:0); `fn` names the caller. */
export function cudaIndex(device: DeviceLike | undefined, fn: string): number {
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
  applyEnvLimitOnce();
}

let envLimitApplied = false;

// GPUEXT_GPU_MEMORY_LIMIT (bytes, or a percentage like '50%') caps every
// device's caching allocator; applied when CUDA is first used, so importing
// gpuext stays cheap.
function applyEnvLimitOnce(): void {
  if (envLimitApplied) return;
  envLimitApplied = true;
  const spec = process.env.GPUEXT_GPU_MEMORY_LIMIT;
  if (spec === undefined || spec === '') return;
  for (let i = 0; i < deviceCount(); i++) native.setMemoryLimit(i, limitBytes(spec, i, 'GPUEXT_GPU_MEMORY_LIMIT'));
}

/** Bytes for a limit given as a byte count or a percentage of the device's memory ('50%'). */
export function limitBytes(spec: number | string, device: number, fn: string): number {
  if (typeof spec === 'number' || /^\d+$/.test(spec)) {
    const n = Number(spec);
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${fn}: a limit must be a non-negative integer of bytes, got ${spec}`);
    return n;
  }
  const m = /^(\d+(?:\.\d+)?)%$/.exec(spec);
  if (!m || Number(m[1]) > 100) {
    throw new RangeError(`${fn}: a limit is a byte count or a percentage like '50%', got ${JSON.stringify(spec)}`);
  }
  return Math.floor((native.cudaDeviceProperties(device).totalMemory * Number(m[1])) / 100);
}
