// What a gx.reductionKernel call's shape and device decide before a plan is
// picked: which dims are reduced, the coalesced dims (NOTE [ Reduction
// codegen ]), and how many blocks of a kernel one SM holds (for the split
// into partials).
import type { Device } from '../core/device';
import { native } from '../core/native';
import { BLOCK } from './reduction-codegen';
import type { RawKernel } from './raw';

/** Which dims are reduced: all for `axis` undefined; negative axes count from the end. */
export function reducedDims(axis: number | readonly number[] | undefined, ndim: number, fn: string): boolean[] {
  const reduced = new Array<boolean>(ndim).fill(axis === undefined);
  if (axis === undefined) return reduced;
  const list = typeof axis === 'number' ? [axis] : Array.isArray(axis) ? axis as readonly number[] : undefined;
  if (list === undefined) throw new TypeError(`${fn}: axis must be a number or an array of numbers, got ${typeof axis}`);
  for (const a of list) {
    if (!Number.isInteger(a) || a < -ndim || a >= Math.max(ndim, 1)) {
      throw new RangeError(`${fn}: axis ${String(a)} is out of range for a ${ndim}-d input`);
    }
    const d = a < 0 ? a + ndim : a;
    if (reduced[d]) throw new RangeError(`${fn}: axis ${list.join(', ')} repeats an axis`);
    reduced[d] = true;
  }
  return reduced;
}

/**
 * @internal Kept and reduced dims with size-1 dims dropped, the reduced ones ordered by
 * stride (largest outermost), and neighbours merged where every tensor is
 * contiguous across them. An empty reduced extent is one dim of size 0, no
 * reduced dim at all one of size 1 (stride 0).
 */
export function coalesce(shape: readonly number[], reduced: readonly boolean[], strides: readonly (readonly number[])[]): {
  kShape: number[]; rShape: number[]; kSt: number[][]; rSt: number[][]; nRed: number;
} {
  const kept: number[] = [];
  const red: number[] = [];
  let nRed = 1;
  for (let d = 0; d < shape.length; d++) {
    if (reduced[d]) nRed *= shape[d];
    if (shape[d] !== 1) (reduced[d] ? red : kept).push(d);
  }
  const weight = (d: number): number => strides.reduce((p, st) => p + Math.abs(st[d]), 0);
  if (red.length > 1) red.sort((x, y) => weight(y) - weight(x));
  const merge = (dims: number[]): { sh: number[]; st: number[][] } => {
    const sh: number[] = [];
    const st: number[][] = strides.map(() => []);
    for (const d of dims) {
      const n = sh.length;
      if (n > 0 && strides.every((s, t) => st[t][n - 1] === s[d] * shape[d])) {
        sh[n - 1] *= shape[d];
        strides.forEach((s, t) => { st[t][n - 1] = s[d]; });
      } else {
        sh.push(shape[d]);
        strides.forEach((s, t) => st[t].push(s[d]));
      }
    }
    return { sh, st };
  };
  const k = merge(kept);
  let r = merge(red);
  if (nRed === 0) r = { sh: [0], st: strides.map(() => [0]) };
  else if (r.sh.length === 0) r = { sh: [1], st: strides.map(() => [0]) };
  return { kShape: k.sh, rShape: r.sh, kSt: k.st, rSt: r.st, nRed };
}

export interface DeviceInfo {
  sms: number;
  threadsPerSM: number;
}

const devices = new Map<number, DeviceInfo>();
export function deviceInfo(index: number): DeviceInfo {
  let d = devices.get(index);
  if (d === undefined) {
    const limits = native.deviceLimits(index);
    const [major, minor] = limits.computeCapability;
    // Resident threads per SM by compute capability (the CUDA occupancy tables).
    const threadsPerSM = major === 7 && minor === 5 ? 1024 : (major === 8 && minor !== 0) || major === 12 ? 1536 : 2048;
    d = { sms: limits.multiProcessorCount, threadsPerSM };
    devices.set(index, d);
  }
  return d;
}

/** Blocks of BLOCK threads of `k` resident at once on one SM (registers and threads; its shared memory is small). */
export function residentBlocks(k: RawKernel, device: Device, info: DeviceInfo): number {
  const regs = Math.max(8, Math.ceil(native.functionAttributes(k.function(device)).numRegs / 8) * 8);
  return Math.max(1, Math.min(Math.floor(65536 / (regs * BLOCK)), Math.floor(info.threadsPerSM / BLOCK)));
}
