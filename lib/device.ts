// Devices: 'cpu' and 'cuda:N'.
import { describeValue } from './shape';
export type DeviceType = 'cpu' | 'cuda';

/** A device a tensor lives on. Compare with `equals`; print with `toString()`. */
export class Device {
  readonly type: DeviceType;
  readonly index: number;

  constructor(type: DeviceType, index = 0) {
    this.type = type;
    this.index = type === 'cpu' ? 0 : index;
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

/** 'cpu', 'cuda' (= 'cuda:0'), 'cuda:N', or a Device. */
export type DeviceLike = string | Device;

export const CPU = new Device('cpu');

// Device strings seen before (creation functions parse one on every call).
const parsed = new Map<string, Device>([['cpu', CPU]]);

/**
 * Parses a device name. Checks the syntax only: whether cuda:N exists is
 * checked by the core when memory is first needed there (a RangeError).
 */
export function parseDevice(d: unknown, fn: string): Device {
  if (d instanceof Device) return d;
  if (d === undefined) return CPU;
  if (typeof d === 'string') {
    const known = parsed.get(d);
    if (known !== undefined) return known;
    if (d === 'cpu') return CPU;
    const m = /^cuda(?::(\d+))?$/.exec(d);
    if (m) {
      const index = m[1] === undefined ? 0 : Number(m[1]);
      if (!Number.isSafeInteger(index)) throw new RangeError(`${fn}: device index in '${d}' is too large`);
      const device = new Device('cuda', index);
      if (parsed.size < 64) parsed.set(d, device);
      return device;
    }
  }
  throw new TypeError(`${fn}: unknown device ${typeof d === 'string' ? JSON.stringify(d) : describeValue(d)}; expected 'cpu', 'cuda' or 'cuda:N'`);
}
