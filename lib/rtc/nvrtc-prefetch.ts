// Reading NVRTC's library files into the page cache in the background, ahead
// of a compile that is coming.
//
// NOTE [ NVRTC prefetch ]
// A process's first compile loads NVRTC: a dlopen of a ~100 MB library, and
// of its builtins library at the first compile. When those files are not in
// the page cache (the first run after a boot or an install), reading them is
// most of a cold jit call: 146 ms of 298 on an H200, where a later process
// paid 8 ms. A jit kernel whose text the translation cache has never seen is
// parsed and translated (acorn, the typer: tens of ms) before it is compiled,
// so when such a kernel is made the files are read meanwhile, by libuv's
// threadpool (every chunk's read is queued at once, into one scratch buffer
// whose bytes are dropped: the main thread is busy translating and runs no
// callback until it is done), and the dlopen then finds them in memory. Once
// per process, and only where NVRTC is named by a file (NOTE [ NVRTC
// identity ]): nothing is loaded, so require('gpuext') and a warm call pay
// nothing, and a core without CUDA names no file. Not in a process that
// has found no GPU (its kernels run on the simulator); one that has not
// looked yet (a kernel made before any CUDA tensor) reads them all the same.
// Not for a kernel meant for the PTX path (NOTE [ PTX path ]), which needs no
// NVRTC: its start cost 1.6-7 ms of the main thread on the 2-core machine and
// the read ~20 ms of the threadpool's CPU per 63 MB, all for nothing.
import * as fs from 'fs';
import * as path from 'path';

import { knownDeviceCount } from '../core/device';
import { native as core } from '../core/native';
import type { RtcNative } from './rtc-native';

const CHUNK = 8 * 1024 * 1024;
/** NVRTC's builtins library, beside it (loaded at the first compile). */
const BUILTINS = /^libnvrtc-builtins\.so/;

let started = false;

/**
 * Starts reading NVRTC's files (and its builtins library's) in the
 * background, once per process; returns the files being read (none when
 * NVRTC is not named by a file, or when already started), and calls `done`
 * with the bytes read once every read has finished.
 */
export function prefetchNvrtc(native: Pick<RtcNative, 'nvrtcFile' | 'nvrtcCandidates'> | null = coreNvrtc(), done?: (bytes: number) => void): string[] {
  if (started || native === null || knownDeviceCount() === 0) return [];
  const first = native.nvrtcFile ? native.nvrtcFile()?.[0] : native.nvrtcCandidates?.()[0];
  if (first === undefined || !path.isAbsolute(first)) return [];
  started = true;
  const dir = path.dirname(first);
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((n) => BUILTINS.test(n));
  } catch {
    // the library's own file is read all the same
  }
  const files = [first, ...names.map((n) => path.join(dir, n))];
  readInBackground(files, done);
  return files;
}

/** The core's NVRTC file lookup (the core is loaded with gpuext; rtc-native.ts's checks of the rest are not needed here). */
function coreNvrtc(): Pick<RtcNative, 'nvrtcFile'> | null {
  const nvrtcFile: unknown = Reflect.get(core, 'nvrtcFile');
  return typeof nvrtcFile === 'function' ? { nvrtcFile: () => core.nvrtcFile() } : null;
}

/** Queues a read of every chunk of every file (best effort: a file that cannot be opened is skipped). */
function readInBackground(files: readonly string[], done?: (bytes: number) => void): void {
  const scratch = Buffer.allocUnsafe(CHUNK);
  let pending = 0;
  let bytes = 0;
  const finished = (): void => {
    if (--pending === 0) done?.(bytes);
  };
  for (const file of files) {
    let fd: number;
    let size: number;
    try {
      fd = fs.openSync(file, 'r');
      size = fs.fstatSync(fd).size;
    } catch {
      continue;
    }
    let left = Math.ceil(size / CHUNK);
    if (left === 0) {
      fs.close(fd, () => undefined);
      continue;
    }
    for (let pos = 0; pos < size; pos += CHUNK) {
      pending++;
      fs.read(fd, scratch, 0, Math.min(CHUNK, size - pos), pos, (err, n) => {
        if (!err) bytes += n;
        if (--left === 0) fs.close(fd, () => undefined);
        finished();
      });
    }
  }
  if (pending === 0) done?.(0);
}

/** Forgets that a prefetch ran (tests). */
export function resetNvrtcPrefetch(): void {
  started = false;
}
