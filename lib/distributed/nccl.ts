// The NCCL transport of a process group (NOTE [ Collective transports ] in
// group.ts): one communicator per group on this rank's GPU, made on the
// first collective of CUDA tensors from a unique id rank 0 hands out through
// the store; each collective is enqueued on the current stream of the
// device (ops/dist/nccl.cu), and its Work resolves when an event recorded
// after it completes, without blocking the event loop.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { Device } from '../device';
import { empty } from '../creation';
import { namedForCaller } from '../ops/library';
import * as ops from '../generated/ops';
import { Event } from '../stream';
import type { Tensor } from '../tensor';
import type { StoreClient } from './store';

/** ncclRedOp_t of each reduction. */
export const NCCL_OPS = { sum: 0, prod: 1, max: 2, min: 3, avg: 4 } as const;

/**
 * Where NCCL is, when GPUEXT_NCCL_PATH does not say: nothing when a system
 * copy is on the usual library paths (the native loader finds it), else the
 * copy inside a Python environment's nvidia-nccl wheel (PyTorch installs
 * one), so `pip install torch` is enough.
 */
export function ncclWheelPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
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

/** A group's NCCL communicator on one device. */
export class NcclComm {
  private constructor(readonly device: Device, private readonly comm: string, private readonly probe: Tensor) {}

  /**
   * Makes the communicator: rank 0 draws the unique id and posts it; every
   * other rank reads it and says so; rank 0 joins only when all have read it
   * (ncclCommInitRank blocks this thread, which also serves the store).
   */
  static async create(store: StoreClient, rank: number, worldSize: number, device: Device, generation: number, timeoutMs: number, fn: string): Promise<NcclComm> {
    const wheel = ncclWheelPath();
    if (wheel !== undefined) process.env.GPUEXT_NCCL_PATH = wheel;
    const probe = empty([1], { dtype: 'uint8', device });
    try {
      const idKey = `nccl/${generation}/id`;
      let id: string;
      if (rank === 0) {
        id = ops.ncclUniqueId(fn, { probe: probe.handle(fn) });
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
      const comm = ops.ncclCommInit(fn, { probe: probe.handle(fn), uniqueId: id, worldSize, rank });
      return new NcclComm(device, comm, probe);
    } catch (e) {
      probe.dispose();
      throw namedForCaller(e, fn);
    }
  }

  /** Enqueues one collective; resolves when it has run. */
  run(fn: string, kind: string, input: Tensor, output: Tensor, op: number, peer: number): Promise<void> {
    try {
      ops.ncclCollective(fn, { input: input.handle(fn), output: output.handle(fn), comm: this.comm, kind, op, peer });
    } catch (e) {
      throw namedForCaller(e, fn);
    }
    return new Event({ device: this.device }).record().done();
  }

  destroy(abort: boolean): void {
    ops.ncclCommDestroy('gx.distributed.destroyProcessGroup', { probe: this.probe.handle(), comm: this.comm, abort });
    this.probe.dispose();
  }
}
