// The NVRTC backend of compile(): the toolkit's include directory NVRTC needs,
// NVRTC named by its file in the cache key (NOTE [ NVRTC identity ]), and the
// compile through the core.
import * as path from 'path';

import { findCuda } from '../platform/cuda';
import type { ChosenBackend, BackendCompileIn } from './backend';
import type { CacheEntry } from './cache';
import { fileIdentity, identityOf, isFile } from './cache-io';
import { CompileError } from './errors';
import type { RtcNative } from './rtc-native';

let cudaIncludeMemo: string | null | undefined;

/**
 * The CUDA toolkit's include directory (CUDA_HOME, CUDA_PATH, /usr/local/cuda,
 * else where find-cuda.js finds nvcc), or null. NVRTC searches no directory
 * by itself, so `#include <cuda_fp16.h>` needs it (CuPy adds it too); nvcc
 * adds it itself.
 */
export const cudaIncludeDir = (function cudaIncludeDir(): string | null {
  if (cudaIncludeMemo !== undefined) return cudaIncludeMemo;
  cudaIncludeMemo = null;
  for (const home of [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda']) {
    if (home && isFile(path.join(home, 'include', 'cuda_runtime.h'))) return (cudaIncludeMemo = path.join(path.resolve(home), 'include'));
  }
  let found = '';
  try {
    found = findCuda().cudaHome();
  } catch {
    // no toolkit found
  }
  if (found && isFile(path.join(found, 'include', 'cuda_runtime.h'))) cudaIncludeMemo = path.join(path.resolve(found), 'include');
  return cudaIncludeMemo;
});

// NOTE [ NVRTC identity ]
// The key names the compiler. Asking NVRTC its version means loading it
// (a dlopen of a 100 MB library: ~8 ms on the H100 machine), which a cache hit
// should not pay. So when the first candidate the core would load (native
// nvrtcCandidates(), stat'ed by nvrtcFile() in the same call) is a file that
// exists, the key names that file instead: its path, device and inode, size
// and mtime (a new install is a new inode; a realpath would cost the first
// lookup a walk of every link). NVRTC is then loaded only to compile, and a compile checks that
// it loaded that very file (else its result is not stored on disk under the
// file's key). When the first candidate is a bare soname (found by the
// loader's search, which only dlopen can follow), the key uses the loaded
// NVRTC's version, as before.

export interface NvrtcFile {
  /** The candidate as the core names it. */
  candidate: string;
  /** Path, device and inode, size and mtime (identityOf). */
  identity: string;
}

const nvrtcFileMemo = new Map<RtcNative, NvrtcFile | null>();

export const locateNvrtcFile = (function locateNvrtcFile(native: RtcNative): NvrtcFile | undefined {
  const memo = nvrtcFileMemo.get(native);
  if (memo !== undefined) return memo ?? undefined;
  let found: NvrtcFile | null = null;
  if (native.nvrtcFile) {
    const f = native.nvrtcFile();
    if (f !== null) found = { candidate: f[0], identity: identityOf(f[0], f[1]) };
  } else {
    for (const c of native.nvrtcCandidates ? native.nvrtcCandidates() : []) {
      if (!path.isAbsolute(c)) break;
      const identity = fileIdentity(c);
      if (identity === undefined) continue;
      found = { candidate: c, identity };
      break;
    }
  }
  nvrtcFileMemo.set(native, found);
  return found ?? undefined;
});

export const nvrtcBackend = (function nvrtcBackend(native: RtcNative, compiler: string, file?: NvrtcFile): ChosenBackend {
  const inc = cudaIncludeDir();
  const includeDirs = inc !== null ? [inc] : [];
  return {
    backend: 'nvrtc',
    version: `${compiler}\n${includeDirs.join('\n')}`,
    includeDirs,
    keyTrusted: () => file === undefined || native.rtcInfo().nvrtcPath === file.candidate,
    compile: (req) => compileWithNvrtc(native, includeDirs, file, req),
  };
});

function compileWithNvrtc(native: RtcNative, includeDirs: string[], file: NvrtcFile | undefined, req: BackendCompileIn): CacheEntry {
  if (file !== undefined) {
    const info = native.rtcInfo();
    if (info.nvrtc === null) {
      throw new Error(`${req.what}: NVRTC (${file.candidate}) could not be loaded: ${info.nvrtcError ?? 'unknown error'}`);
    }
  }
  const options = [...req.options, ...includeDirs.map((d) => `-I${d}`)];
  const r = native.nvrtcCompile(req.source, req.name, options, req.nameExpressions, req.arch);
  if (!r.ok) throw new CompileError({ log: r.log, source: req.source, programName: req.name, what: req.what, backend: 'nvrtc' });
  if (!r.image || r.image.byteLength === 0) {
    throw new Error(`${req.what}: NVRTC compiled '${req.name}' but returned no image`);
  }
  for (const e of req.nameExpressions) {
    if (!(e in r.loweredNames)) throw new Error(`${req.what}: NVRTC returned no lowered name for name expression '${e}' of '${req.name}'`);
  }
  return { image: r.image, ptx: r.ptx, loweredNames: r.loweredNames, log: r.log, backend: 'nvrtc' };
}
