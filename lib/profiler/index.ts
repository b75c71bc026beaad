// gx.profiler: what a piece of a program spends its time on, op by op
// (torch.profiler's shape, smaller). While a profiler records, every op call
// (built-in or a library's) is recorded with its name, device, argument
// shapes and host time, and with the 'cuda' activity its GPU time from timing
// events recorded on the current stream around it; user ranges
// (gx.profiler.range) group them. The result prints as a table of totals and
// exports as a Chrome trace. The hook is NOTE [ A profiler hook that costs
// nothing when off ] (hook.ts); lib/profiler/README.md says how the parts fit.
import { parseDevice, type Device } from '../core/device';
import { opNameById } from '../extension/runtime';
import { native, type NativeTensor } from '../core/native';
import { checkOptions, optionKeys } from '../core/options';
import { Event } from '../core/stream';
import { install, installed, isTensorHandle, uninstall } from './hook';
import { Profile, type ProfileEvent } from './profile';

export { Profile };
export type { ChromeTrace, KeyAverage, ProfileEvent, TableOptions, TraceEvent } from './profile';

export type Activity = 'cpu' | 'cuda';

export interface ProfilerOptions {
  /** What to record: 'cpu' (host times of every op call, the default) and 'cuda' (GPU times of CUDA ops as well). */
  activities?: Activity[];
  /** Record the shapes of each op's tensor arguments (default true). */
  recordShapes?: boolean;
  /** Also open an NVTX range named after each op around its call, for Nsight Systems (default false; ranges from gx.profiler.range always). */
  nvtx?: boolean;
}

const OPTION_KEYS = optionKeys<ProfilerOptions>({ activities: true, recordShapes: true, nvtx: true });

/** A CUDA op's timing events, resolved into GPU times when the profiler stops. */
interface PendingGpu {
  event: ProfileEvent;
  device: Device;
  start: Event;
  end: Event;
}

/** Per device, the first timing event and the host time it was recorded at: GPU times are placed relative to it. */
interface GpuClock {
  ref: Event;
  hostTime: number;
}

interface Session {
  t0: number;
  cuda: boolean;
  nvtx: boolean;
  shapes: boolean;
  events: ProfileEvent[];
  pending: PendingGpu[];
  clocks: Map<string, GpuClock>;
}

let session: Session | undefined;

function now(s: Session): number {
  return (performance.now() - s.t0) * 1000;
}

/**
 * What the profiler needs of a tensor handle, by handle: a handle's shape and
 * device never change while recording (no handle is reused then), and asking the core (native.describe, about 2.5 us)
 * for the weights a step passes to every call would be most of the cost.
 */
let described = new WeakMap<NativeTensor, { shape: number[]; device: Device | undefined }>();

function describeHandle(h: NativeTensor): { shape: number[]; device: Device | undefined } {
  let d = described.get(h);
  if (d === undefined) {
    const n = native.describe(h);
    d = { shape: n.shape, device: n.deviceType === 0 ? undefined : parseDevice(`cuda:${n.deviceIndex}`, 'gx.profiler') };
    described.set(h, d);
  }
  return d;
}

/** The device (undefined: the CPU) and shapes of an op call's tensor arguments (tensor lists included). */
function describeArgs(args: unknown[], shapes: boolean): { device: Device | undefined; shapes: number[][] } {
  let device: Device | undefined;
  const out: number[][] = [];
  const visit = (a: unknown): void => {
    if (!isTensorHandle(a)) return;
    const d = describeHandle(a);
    device ??= d.device;
    if (shapes) out.push(d.shape);
  };
  for (const a of args) {
    if (Array.isArray(a)) a.forEach(visit);
    else visit(a);
  }
  return { device, shapes: out };
}

function gpuClock(s: Session, device: Device): GpuClock {
  const key = String(device);
  let c = s.clocks.get(key);
  if (c === undefined) {
    c = { ref: new Event({ device, timing: true }).record(), hostTime: now(s) };
    s.clocks.set(key, c);
  }
  return c;
}

function recordCall(s: Session, id: number, args: unknown[], call: () => unknown): unknown {
  const { device, shapes } = describeArgs(args, s.shapes);
  const event: ProfileEvent = {
    name: opNameById(id) ?? `op#${id}`, kind: 'op', device: device === undefined ? 'cpu' : String(device), shapes, hostStart: now(s), hostDuration: 0,
  };
  const timed = s.cuda && device !== undefined;
  if (timed) gpuClock(s, device);
  const start = timed ? new Event({ device, timing: true }).record() : undefined;
  if (s.nvtx) native.nvtxRangePush(event.name);
  try {
    return call();
  } catch (e) {
    event.error = e instanceof Error ? e.message : String(e);
    throw e;
  } finally {
    if (s.nvtx) native.nvtxRangePop();
    if (start !== undefined && device !== undefined) s.pending.push({ event, device, start, end: new Event({ device, timing: true }).record() });
    event.hostDuration = now(s) - event.hostStart;
    s.events.push(event);
  }
}

/**
 * Starts recording op calls (one profiler at a time).
 * @example gx.profiler.start({ activities: ['cpu', 'cuda'] }); step(); const prof = gx.profiler.stop();
 */
export function start(opts: ProfilerOptions = {}): void {
  begin(opts, 'gx.profiler.start');
}

function begin(opts: ProfilerOptions, fn: string): void {
  opts = checkOptions<ProfilerOptions>(opts, fn, OPTION_KEYS);
  if (session !== undefined || installed()) throw new Error(`${fn}: a profiler is already recording; stop it first (gx.profiler.stop())`);
  const activities = opts.activities ?? ['cpu'];
  if (!Array.isArray(activities) || activities.some((a) => a !== 'cpu' && a !== 'cuda')) {
    throw new TypeError(`${fn}: activities must be an array of 'cpu' and 'cuda', got ${JSON.stringify(activities)}`);
  }
  const s: Session = {
    t0: performance.now(), cuda: activities.includes('cuda'), nvtx: (opts.nvtx ?? false) && native.cudaCompiled, shapes: opts.recordShapes ?? true, events: [], pending: [], clocks: new Map(),
  };
  session = s;
  // Per recording: between recordings a disposed tensor's handle is reused (NOTE [ Recycled handles ]).
  described = new WeakMap();
  install((id, args, call) => recordCall(s, id, args, call));
}

/** Stops recording and returns the profile (waits for the GPU work it timed). */
export function stop(): Profile {
  const s = session;
  if (s === undefined) throw new Error('gx.profiler.stop: no profiler is recording (gx.profiler.start() starts one)');
  uninstall();
  session = undefined;
  for (const p of s.pending) {
    p.end.synchronize();
    const clock = s.clocks.get(String(p.device));
    const startMs = clock === undefined ? 0 : clock.ref.elapsedTime(p.start);
    p.event.gpuStart = (clock?.hostTime ?? 0) + startMs * 1000;
    p.event.gpuDuration = p.start.elapsedTime(p.end) * 1000;
  }
  return new Profile(s.events);
}

/** Whether a profiler is recording. */
export function isActive(): boolean {
  return session !== undefined;
}

/**
 * Profiles `fn` and returns the profile; for an async `fn`, a promise of it,
 * after `fn`'s promise settles.
 * @example
 * const prof = gx.profiler.profile(() => step(x), { activities: ['cpu', 'cuda'] });
 * console.log(prof.table()); prof.exportChromeTrace('trace.json');
 */
export function profile(fn: () => Promise<unknown>, opts?: ProfilerOptions): Promise<Profile>;
export function profile(fn: () => unknown, opts?: ProfilerOptions): Profile;
export function profile(fn: () => unknown, opts: ProfilerOptions = {}): Profile | Promise<Profile> {
  if (typeof fn !== 'function') throw new TypeError(`gx.profiler.profile: fn must be a function, got ${fn === null ? 'null' : typeof fn}`);
  begin(opts, 'gx.profiler.profile');
  let result: unknown;
  try {
    result = fn();
  } catch (e) {
    stop();
    throw e;
  }
  if (result instanceof Promise) {
    return result.then(() => stop(), (e: unknown) => {
      stop();
      throw e;
    });
  }
  return stop();
}

/**
 * Runs `fn` as a named range: with a profiler recording, the range and the
 * ops inside it show as one span (torch's record_function). With CUDA, it is
 * also an NVTX range, which Nsight Systems shows by name (`nsys profile node
 * app.js`), profiler or not. Only the synchronous part of `fn` is inside.
 * @example gx.profiler.range('forward', () => model(x));
 */
export function range<T>(name: string, fn: () => T): T {
  if (typeof name !== 'string' || name === '') throw new TypeError(`gx.profiler.range: name must be a non-empty string, got ${JSON.stringify(name)}`);
  if (typeof fn !== 'function') throw new TypeError(`gx.profiler.range: fn must be a function, got ${fn === null ? 'null' : typeof fn}`);
  const s = session;
  const nvtx = native.cudaCompiled;
  if (s === undefined && !nvtx) return fn();
  const event: ProfileEvent | undefined = s === undefined ? undefined : { name, kind: 'range', device: 'cpu', shapes: [], hostStart: now(s), hostDuration: 0 };
  if (nvtx) native.nvtxRangePush(name);
  try {
    return fn();
  } finally {
    if (nvtx) native.nvtxRangePop();
    if (s !== undefined && event !== undefined) {
      event.hostDuration = now(s) - event.hostStart;
      s.events.push(event);
    }
  }
}
