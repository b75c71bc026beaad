// Which GPUs this process can use, and the checks every API that takes a
// device runs (checkDevice: errors name the caller, not a core function; the
// environment's memory limit applied when CUDA is first used). The public
// face of these is gx.cuda (cuda.ts); streams, graphs, creation and the ops
// import them from here so that they need nothing of that face.
import { Device, currentCudaIndex, deviceCount, parseDevice, type DeviceLike } from './device';
import { prebuildTag } from '../platform/binaries';
import { native, nativeOrigin } from './native';
import { describeValue } from './shape';


/** True when the core was built with CUDA and at least one GPU is usable. */
export function isAvailable(): boolean {
  return native.cudaCompiled && deviceCount() > 0;
}


/** Why isAvailable() is false ('' when it is true). */
export function unavailableReason(): string {
  if (isAvailable()) return '';
  // A source build leaves CUDA out when there is no toolkit, no GPU, or GPUEXT_NO_CUDA=1 (scripts/find-cuda.js).
  return native.cudaCompiled ? native.cudaUnavailableReason() : cpuOnlyReason(nativeOrigin, prebuildTag());
}

/**
 * Why a core without CUDA code has none: a CPU-only prebuilt binary (linux-arm64's,
 * cross-compiled where no CUDA cross toolkit was at hand) needs a source build for
 * CUDA; a source build left CUDA out for the reasons scripts/find-cuda.js gives.
 */
export function cpuOnlyReason(origin: string, tag: string): string {
  if (origin === 'prebuilt') {
    return `the prebuilt binaries for ${tag} are for the CPU only; for CUDA, build gpuext from source on this machine ` +
      'with the CUDA toolkit installed: npm rebuild gpuext --build-from-source';
  }
  return 'gpuext was built for the CPU only (no GPU or no CUDA toolkit when it was built, or GPUEXT_NO_CUDA=1)';
}

/** True when the core was compiled with CUDA support. */
export function isCompiled(): boolean {
  return native.cudaCompiled;
}

/** The index of a CUDA device argument (default: the current device's); `fn` names the caller. */
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

/**
 * Makes a GPU the calling thread's current device, as torch.cuda.set_device:
 * 'cuda', `new gx.Device('cuda')`, `.cuda()`, streams, events and kernels
 * given no device then mean it, in JS and in C++ (gx::current_device(),
 * gx::kCUDA). Other threads (workers) keep theirs. NOTE [ Current device ] in
 * csrc/cuda/runtime.h.
 * @example gx.cuda.setDevice(Number(process.env.LOCAL_RANK ?? 0));
 * @example gx.cuda.setDevice('cuda:1'); gx.ones([2], { device: 'cuda' }).device  // cuda:1
 */
export function setDevice(device: number | DeviceLike): void {
  const fn = 'gx.cuda.setDevice';
  // Not cudaIndex's default: a missing argument is a mistake here, not 'the current device'.
  const index = typeof device === 'number' ? device : device === undefined || device === null ? NaN : cudaIndex(device, fn);
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError(`${fn}: argument 'device' must be a device index (an integer >= 0), 'cuda:N' or a gx.Device, got ${describeValue(device)}`);
  }
  if (!isAvailable()) throw new Error(`${fn}: cannot make cuda:${index} current: there is no GPU (${unavailableReason()})`);
  checkDevice(new Device('cuda', index), fn);
  native.cudaSetDevice(index);
}

/**
 * The index of the calling thread's current GPU (0 until setDevice, or
 * GPUEXT_DEVICE, says otherwise), as torch.cuda.current_device. Throws when
 * there is no GPU, as torch does: there is no current GPU to name.
 * @example const here = gx.cuda.currentDevice();  // 1 after gx.cuda.setDevice(1)
 */
export function currentDevice(): number {
  if (!isAvailable()) throw new Error(`gx.cuda.currentDevice: there is no GPU (${unavailableReason()})`);
  return currentCudaIndex();
}

/**
 * GPUEXT_DEVICE=k (set per rank by `gpuext run`: its LOCAL_RANK) makes
 * cuda:(k mod the number of GPUs) current on each thread that loads gpuext,
 * before the program runs; ignored without a GPU (a CPU-only job). The modulo
 * is the usual `local_rank % device_count()`: a job may run more ranks than
 * there are GPUs (CPU collectives on a GPU machine), and those must start too.
 */
function applyEnvDevice(env: Readonly<Record<string, string | undefined>>): void {
  const spec = env.GPUEXT_DEVICE;
  if (spec === undefined || spec === '') return;
  if (!/^\d+$/.test(spec)) throw new RangeError(`gpuext: GPUEXT_DEVICE must be a device index (an integer >= 0), got ${JSON.stringify(spec)}`);
  const n = deviceCount();
  if (n > 0) native.cudaSetDevice(Number(spec) % n);
}

applyEnvDevice(process.env);
