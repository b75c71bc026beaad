// Devices: 'cpu' and 'cuda:N'; 'cuda' is the calling thread's current device
// (NOTE [ Current device ] in csrc/cuda/runtime.h), resolved where a device is
// parsed, never per launch: a tensor's Device always has its index.
import { native } from './native';
import { describeValue } from './shape';
export type DeviceType = 'cpu' | 'cuda';

/** A device a tensor lives on. Compare with `equals`; print with `toString()`. */
export class Device {
  readonly type: DeviceType;
  readonly index: number;

  /** `new gx.Device('cuda')` is the current device (gx.cuda.currentDevice()), as 'cuda' is. */
  constructor(type: DeviceType, index?: number) {
    this.type = type;
    this.index = type === 'cpu' ? 0 : index ?? currentCudaIndex();
  }

  /** 0 for cpu, 1 for cuda: the code the core uses. */
  get typeCode(): number {
    return this.type === 'cpu' ? 0 : 1;
  }

  equals(other: Device): boolean {
    return this.type === other.type && this.index === other.index;
  }

  toString(): string {
    return this.type === 'cpu' ? 'cpu' : `cuda:${this.index}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

/** 'cpu', 'cuda' (the current device: gx.cuda.setDevice), 'cuda:N', or a Device. */
export type DeviceLike = string | Device;

export const CPU = new Device('cpu');

// Device strings seen before (creation functions parse one on every call);
// never 'cuda', whose meaning changes with gx.cuda.setDevice.
const parsed = new Map<string, Device>([['cpu', CPU]]);

const byCodes = new Map<string, Device>();
/** @internal The Device of the core's (type, index) pair (0 = cpu, 1 = cuda), one object per device. */
export function deviceOf(type: number, index: number): Device {
  const key = `${type}:${index}`;
  let d = byCodes.get(key);
  if (d === undefined) {
    d = new Device(type === 0 ? 'cpu' : 'cuda', index);
    byCodes.set(key, d);
  }
  return d;
}

let cachedCount: number | undefined;

/** Number of usable GPUs (0 without a driver, a GPU, or a CUDA build). */
export function deviceCount(): number {
  // The core counts devices once per process; so can we (this is on every creation's path).
  cachedCount ??= native.cudaDeviceCount();
  return cachedCount;
}

/** The device count when something has asked for it already, else undefined (asking may initialize CUDA). */
export function knownDeviceCount(): number | undefined {
  return cachedCount;
}

/**
 * The calling thread's current CUDA device, asked of the core (no copy kept
 * here: C++ may set it too). With fewer than two GPUs nothing but 0 can be
 * current, so 'cuda' costs no call into the core there; without a GPU, 0 keeps
 * 'cuda' meaning cuda:0, refused with the reason where memory is needed.
 */
export function currentCudaIndex(): number {
  return deviceCount() > 1 ? native.cudaCurrentDevice() : 0;
}

// One Device per CUDA index, so that 'cuda' allocates nothing.
const cudaDevices: Device[] = [];
function cudaDevice(index: number): Device {
  return (cudaDevices[index] ??= new Device('cuda', index));
}

/**
 * Parses a device name. Checks the syntax only: whether cuda:N exists is
 * checked by the core when memory is first needed there (a RangeError).
 */
export function parseDevice(d: unknown, fn: string): Device {
  if (d instanceof Device) return d;
  if (d === undefined) return CPU;
  if (typeof d === 'string') {
    if (d === 'cuda') return cudaDevice(currentCudaIndex());
    const known = parsed.get(d);
    if (known !== undefined) return known;
    const m = /^cuda:(\d+)$/.exec(d);
    if (m) {
      const index = Number(m[1]);
      if (!Number.isSafeInteger(index)) throw new RangeError(`${fn}: device index in '${d}' is too large`);
      const device = new Device('cuda', index);
      if (parsed.size < 64) parsed.set(d, device);
      return device;
    }
  }
  throw new TypeError(`${fn}: unknown device ${typeof d === 'string' ? JSON.stringify(d) : describeValue(d)}; expected 'cpu', 'cuda' or 'cuda:N'`);
}
