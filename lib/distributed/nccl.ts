// NCCL communicators (NOTE [ Backends ] in backend.ts: nccl-backend.ts runs
// collectives on them): one per rank, made from a unique id rank 0 hands out
// through the store, or one per GPU of this process; each collective is
// enqueued on the current stream of the device (ops/dist/nccl.cu, through
// nccl-ops.ts), and its completion comes when an event recorded after it
// passes, without blocking the event loop; a watchdog aborts what hangs.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { Device, parseDevice, type DeviceLike } from '../core/device';
import { logger } from '../platform/log';
import { namedForCaller } from '../ops/library';
import { Event } from '../core/stream';
import type { Tensor } from '../core/tensor';
import * as nccl from './nccl-ops';
import type { StoreClient } from './store';
import type { Completion } from './work';

const ncclLog = logger('nccl');

/**
 * Where NCCL is, when GPUEXT_NCCL_PATH does not say: nothing when a system
 * copy is on the usual library paths (the native loader finds it), else the
 * copy inside a Python environment's nvidia-nccl wheel (PyTorch installs
 * one), so `pip install torch` is enough.
 */
export function ncclWheelPath(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  if (env.GPUEXT_NCCL_PATH) return undefined;
  const systemDirs = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/usr/local/cuda/lib64',
    ...(env.CUDA_HOME ? [path.join(env.CUDA_HOME, 'lib64')] : []), ...(env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean)];
  if (systemDirs.some((d) => fs.existsSync(path.join(d, 'libnccl.so.2')))) return undefined;
  const roots = [env.VIRTUAL_ENV, env.CONDA_PREFIX, '/usr/local', '/usr', path.join(os.homedir(), '.local')].filter((r): r is string => Boolean(r));
  for (const root of roots) {
    const lib = path.join(root, 'lib');
    let pythons: string[] = [];
    try {
      pythons = fs.readdirSync(lib).filter((d) => /^python3/.test(d));
    } catch {
      continue;
    }
    for (const py of pythons) {
      for (const pkgs of ['site-packages', 'dist-packages']) {
        const f = path.join(lib, py, pkgs, 'nvidia', 'nccl', 'lib', 'libnccl.so.2');
        if (fs.existsSync(f)) return f;
      }
    }
  }
  return undefined;
}

/** Points GPUEXT_NCCL_PATH at a Python environment's NCCL when the system has none (ncclWheelPath). */
export function locateNccl(): void {
  const wheel = ncclWheelPath();
  if (wheel !== undefined) process.env.GPUEXT_NCCL_PATH = wheel;
}

/**
 * The version of the NCCL library collectives load, as 'major.minor.patch'
 * (torch.cuda.nccl.version()'s); loading it on first use. `device` picks the
 * GPU whose context loads it (default: the current device).
 */
export function ncclVersion(device: DeviceLike = 'cuda'): string {
  const fn = 'gx.distributed.ncclVersion';
  locateNccl();
  const code = nccl.versionCode(parseDevice(device, fn), fn);
  // NCCL 2.9 and later: major * 10000 + minor * 100 + patch (before: major * 1000 + minor * 100 + patch).
  const [major, rest] = code >= 20900 ? [Math.floor(code / 10000), code % 10000] : [Math.floor(code / 1000), code % 1000];
  return `${major}.${Math.floor(rest / 100)}.${rest % 100}`;
}

/** A collective the watchdog follows until its event has passed. */
interface Pending {
  started: number;
  event: Event;
  /** Set when the communicator was aborted before the collective finished. */
  error: Error | undefined;
  /** Rejects the caller's wait, once there is one. */
  fail: ((e: Error) => void) | undefined;
}

/**
 * NOTE [ NCCL watchdog ]
 * NCCL never gives up on its own: a collective whose peer died, or that the
 * ranks called differently, spins on the GPU for ever. Each communicator
 * keeps its pending collectives, and while any is pending a timer checks
 * NCCL's asynchronous error (a peer or the network gone) and each
 * collective's age; on an error or past the group's timeout it aborts the
 * communicator (ncclCommAbort, which also stops its kernels) and fails the
 * pending collectives with what happened. Later collectives on an aborted
 * communicator are errors, not hangs.
 */
export class NcclComm {
  readonly #pending = new Set<Pending>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #gone: string | undefined;

  private constructor(private readonly comm: nccl.NcclHandle, private readonly timeoutMs: number) {}

  get device(): Device {
    return this.comm.device;
  }

  /**
   * Makes the communicator: rank 0 draws the unique id and posts it; every
   * other rank reads it and says so; rank 0 joins only when all have read it
   * (ncclCommInitRank blocks this thread, which also serves the store).
   */
  static async create(store: StoreClient, rank: number, worldSize: number, device: Device, generation: number, timeoutMs: number, fn: string): Promise<NcclComm> {
    locateNccl();
    try {
      const idKey = `nccl/${generation}/id`;
      let id: string;
      if (rank === 0) {
        id = nccl.uniqueId(device, fn);
        await store.set(idKey, Buffer.from(id), worldSize - 1);
        if (worldSize > 1 && (await store.get(`nccl/${generation}/all-read`, timeoutMs)) === undefined) {
          throw new Error(`${fn}: not every rank fetched NCCL's unique id within ${timeoutMs / 1000} s`);
        }
      } else {
        const b = await store.get(idKey, timeoutMs);
        if (b === undefined) throw new Error(`${fn}: rank 0 posted no NCCL unique id within ${timeoutMs / 1000} s (did it call the same collective?)`);
        id = Buffer.from(b).toString();
        if ((await store.add(`nccl/${generation}/read`, 1)) === worldSize - 1) await store.set(`nccl/${generation}/all-read`, new Uint8Array(0));
      }
      const comm = nccl.commInit(device, id, worldSize, rank, fn);
      if (ncclLog.enabled) ncclLog('communicator: rank %d of %d on %s (generation %d), NCCL %s from %s', rank, worldSize, String(device), generation, ncclVersion(device), process.env.GPUEXT_NCCL_PATH ?? 'the library path');
      return new NcclComm(comm, timeoutMs);
    } catch (e) {
      throw namedForCaller(e, fn);
    }
  }

  /**
   * One communicator per device, all in this process: what ncclCommInitAll
   * does, as NCCL documents it (one unique id, each rank joined on its
   * device between ncclGroupStart and ncclGroupEnd).
   */
  static createAll(devices: readonly Device[], timeoutMs: number, fn: string): NcclComm[] {
    locateNccl();
    const comms = nccl.commInitAll(devices, fn);
    if (ncclLog.enabled) ncclLog('communicators: %d ranks in this process on %s, NCCL %s', devices.length, devices.join(', '), ncclVersion(devices[0]));
    return comms.map((c) => new NcclComm(c, timeoutMs));
  }

  /** Enqueues one collective on the current stream of the device, without waiting. */
  enqueue(fn: string, kind: string, input: Tensor, output: Tensor, op: number, peer: number): void {
    if (this.#gone !== undefined) throw new Error(`${fn}: this group's NCCL communicator on ${this.device} was aborted: ${this.#gone}`);
    nccl.collective(this.comm, kind, input, output, op, peer, fn);
  }

  /** Runs `body` (enqueues on several communicators) as one NCCL group, on this communicator's device. */
  group(fn: string, body: () => void): void {
    nccl.group(this.comm, fn, body);
  }

  /**
   * The completion of the work enqueued so far on the device's current
   * stream: an event recorded now, which the watchdog polls while it is
   * pending (NOTE [ NCCL watchdog ]). Nothing waits for the GPU until the
   * caller asks (wait()), so a loop of collectives costs an enqueue and an
   * event record each, as torch's does, not a thread parked on each.
   */
  completion(fn: string): Completion {
    const event = new Event({ device: this.device }).record();
    const entry: Pending = { started: Date.now(), event, error: undefined, fail: undefined };
    this.#pending.add(entry);
    this.#watch();
    let waiting: Promise<void> | undefined;
    return {
      query: () => entry.error === undefined && (!this.#pending.has(entry) || event.query()),
      wait: () => (waiting ??= new Promise<void>((resolve, reject) => {
        if (entry.error !== undefined) return reject(new Error(`${fn}: ${entry.error.message}`));
        entry.fail = (e) => reject(new Error(`${fn}: ${e.message}`));
        event.done().then(() => {
          this.#pending.delete(entry);
          resolve();
        }, reject);
      })),
    };
  }

  /** Enqueues one collective; its completion to await. */
  run(fn: string, kind: string, input: Tensor, output: Tensor, op: number, peer: number): Completion {
    this.enqueue(fn, kind, input, output, op, peer);
    return this.completion(fn);
  }

  #watch(): void {
    if (this.#timer !== undefined) return;
    const period = Math.max(10, Math.min(1000, this.timeoutMs / 4));
    this.#timer = setInterval(() => {
      if (this.#pending.size === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
        return;
      }
      for (const p of this.#pending) if (p.event.query()) this.#pending.delete(p);
      if (this.#pending.size === 0) return;
      const error = this.#gone === undefined ? nccl.commError(this.comm, 'NCCL watchdog') : '';
      const oldest = Math.min(...[...this.#pending].map((p) => p.started));
      const late = Date.now() - oldest > this.timeoutMs;
      if (error === '' && !late) return;
      const why = error !== '' ? `NCCL reported ${error}` : `a collective did not finish within ${this.timeoutMs / 1000} s (a rank died or stopped, or the ranks called different collectives)`;
      this.abort(why);
    }, period);
    this.#timer.unref();
  }

  /** Aborts the communicator (its kernels stop) and fails every pending collective with `why`. */
  abort(why: string): void {
    if (this.#gone !== undefined) return;
    this.#gone = why;
    clearInterval(this.#timer);
    this.#timer = undefined;
    try {
      nccl.commDestroy(this.comm, true, 'NCCL watchdog');
    } finally {
      const err = new Error(`${why}; the communicator on ${this.device} was aborted, so later CUDA collectives of this group fail`);
      for (const p of this.#pending) {
        p.error = err;
        p.fail?.(err);
      }
      this.#pending.clear();
    }
  }

  destroy(abort: boolean): void {
    if (this.#gone !== undefined) return;
    if (abort) return this.abort('destroyed');
    this.#gone = 'destroyed';
    clearInterval(this.#timer);
    nccl.commDestroy(this.comm, abort, 'gx.distributed.destroyProcessGroup');
  }
}
