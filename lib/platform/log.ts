// The debug log: NODE_DEBUG=gpuext prints every subsystem's lines to stderr,
// NODE_DEBUG=gpuext:cache (or gpuext:build, gpuext:nccl, ...) one
// subsystem's, through Node's util.debuglog (which also takes patterns:
// NODE_DEBUG=gpuext*). Every subsystem logs through logger() so the lines
// look alike and one place decides what is on.
//
// NOTE [ Logging costs nothing when off ]
// NODE_DEBUG is read once, when this module loads; logger() returns a
// function with a plain boolean `enabled`. A caller on a path that runs often
// writes `if (log.enabled) log(...)`, so a disabled log costs one property
// read and builds no message. Call sites that run once (a binary loaded, a
// communicator created) may call log(...) directly: it returns at once when off.
import { debuglog, format } from 'util';

/** The subsystems that log, each a NODE_DEBUG section of its own (`gpuext:<channel>`). */
export const CHANNELS = {
  load: 'which native binaries loaded (core, ops, extensions): built here or prebuilt, and their paths',
  blas: 'the CPU BLAS and LAPACK the ops picked',
  cache: 'run-time kernel cache hits and misses (memory, disk, compiled)',
  build: 'extension build cache: units compiled or reused, link run or skipped',
  nccl: 'NCCL communicator set-up: ranks, device, version',
  alloc: 'device allocator growth and out-of-memory retries',
  fuse: 'gx.fuse functions that run unfused, and why',
  conv: 'which path CUDA convolutions take (cuDNN, or unfold + matmul) and why',
  jit: 'jit kernels loaded as PTX or compiled by NVRTC, and why (NOTE [ PTX path ])',
} as const;

export type Channel = keyof typeof CHANNELS;

/** A channel's log: call it like console.log's format; `enabled` says whether anything prints. */
export interface Log {
  (message: string, ...args: unknown[]): void;
  readonly enabled: boolean;
}

const everything = debuglog('gpuext');

/** The log of one subsystem; on when NODE_DEBUG names `gpuext` or `gpuext:<channel>` (checked once, here). */
export function logger(channel: Channel): Log {
  const own = debuglog(`gpuext:${channel}`);
  // Node prints the section in upper case before the pid: "GPUEXT:CACHE 123: ..." or "GPUEXT 123: cache: ...".
  const print = own.enabled ? own : everything.enabled ? (message: string, ...args: unknown[]) => everything(`${channel}: %s`, format(message, ...args)) : undefined;
  const log = (message: string, ...args: unknown[]): void => {
    if (print !== undefined) print(message, ...args);
  };
  return Object.assign(log, { enabled: print !== undefined });
}
