// Compiling run-time kernels: a CUDA source string to a cubin (or PTX) image,
// through NVRTC when the core can load it, else through nvcc (what CI and a
// machine with a toolkit but no NVRTC have), with the kernel cache (cache.ts)
// in front. Compiling needs no GPU: both compile for a named arch. This file
// is the front (checking the request, choosing the backend, the cache key);
// the backends are nvrtc-backend.ts (with the core's binding, rtc-native.ts)
// and nvcc-backend.ts, the option mapping compile-options.ts.
//
//   compile({ source, name: 'kernel.cu', options: ['-std=c++17'], arch: 'sm_90' })
//     -> { image, ptx, loweredNames, log, backend, cached, key }
//
// NVRTC gets the options as given (normalized: one token each), then
// `-I<CUDA toolkit>/include` when a toolkit is found, since NVRTC searches no
// directory by itself (`#include <cuda_fp16.h>` needs it; CuPy adds it too).
//
// nvcc gets the source in a temporary directory (`nvcc -cubin -arch=sm_90`,
// or `-ptx -arch=compute_90`), the options mapped (-I made absolute,
// --pre-include and --ptxas-options in nvcc's spelling, NVRTC-only options
// that change nothing dropped, -default-device and -dlto refused), and
// `-iquote <cwd>` so the source's quoted includes resolve where NVRTC looks
// for them. Its log names the program, never the temporary file.
// Name expressions (C++ templates by name, `f<float>`) work by appending
// `__device__ void* __gx_name_expr_<i> = (void*)&<expr>;` to the source:
// that instantiates the template, and the relocation of that variable in the
// cubin (its initializer in the PTX) names the symbol the expression lowers
// to, what NVRTC's nvrtcGetLoweredName returns (the same Itanium names; the
// tests check both agree). Such expressions must name a __global__ function or
// a __device__ variable; the variables stay in the module (8 bytes each).
import * as path from 'path';

import { logger } from '../platform/log';
import { FIXES } from '../platform/cuda';
import type { ChosenBackend } from './backend';
import {
  computeKey, diskGet, diskPut, headerFingerprints, kernelCacheDir, kernelCacheMaxBytes, memoryGet, memorySet,
  type Backend, type CacheEntry,
} from './cache';
import { includeDirsOf, normalizeOptions, preIncludesOf } from './compile-options';
import { lazyModule } from '../platform/lazy';
import { locateNvrtcFile, nvrtcBackend } from './nvrtc-backend';
import { loadDefaultNative, nativeFor, type RtcNative } from './rtc-native';

export { cacheStats, clearKernelCache, kernelCacheDir, type Backend, type KernelCacheStats } from './cache';
export { CompileError } from './errors';
export { normalizeOptions, nvccArgsFor } from './compile-options';
export { cudaIncludeDir } from './nvrtc-backend';
export type { NvrtcOutput, RtcInfo, RtcNative } from './rtc-native';

// The nvcc backend (and child_process under it) loads only where NVRTC is not used: a cache hit through NVRTC's
// key never needs it (NOTE [ Lazy entry ] in lib/README.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nvcc = lazyModule(() => require('./nvcc-backend') as typeof import('./nvcc-backend'));

export interface CompileRequest {
  /** CUDA C++ source. */
  source: string;
  /** The program name: how the source is named in compiler messages (`kernel.cu`). */
  name: string;
  /** NVRTC-style options (`-std=c++17`, `--use_fast_math`, `-DN=4`, `-I dir`); not the arch. */
  options?: string[];
  /** C++ names to lower to symbols (`f<float>`, `ns::g<3>`); their symbols come back in `loweredNames`. */
  nameExpressions?: string[];
  /** `sm_90` (a cubin) or `compute_90` (PTX). */
  arch: string;
}

export interface CompileResult {
  /** A cubin, or PTX text ending in a NUL byte (ready for cuModuleLoadData). Shared with the cache: do not modify. */
  image: Uint8Array;
  ptx: boolean;
  /** Name expression -> symbol (mangled name). */
  loweredNames: Record<string, string>;
  /** The compiler's messages (warnings) of the compile that made the image. */
  log: string;
  backend: Backend;
  /** Where the image came from: this process's memory, the disk cache, or a compile (false). */
  cached: 'memory' | 'disk' | false;
  /** The cache key (sha256, hex). */
  key: string;
}

export interface CompileOptions {
  /** The core's NVRTC binding; default: lib/core/native's when it has one. null: none (nvcc only). */
  native?: RtcNative | null;
  /** Force a backend; default NVRTC when it loads, else nvcc. */
  backend?: Backend;
  /** Cache root (the kernels go in `<root>/kernels`); default GPUEXT_CACHE_DIR, else the user cache dir. */
  cacheDir?: string;
  /** Bound on the disk cache's size; default GPUEXT_KERNEL_CACHE_MAX_BYTES, else 1 GiB. */
  maxBytes?: number;
  /** Use the disk cache (default true). */
  disk?: boolean;
  /** Use the memory cache (default true). */
  memory?: boolean;
  /** Where relative -I paths and the source's quoted includes resolve (default process.cwd()). */
  cwd?: string;
  /** How compile errors start (default 'gx.RawKernel'). */
  what?: string;
}

// ---------------------------------------------------------------------------
// Choosing a backend

export interface BackendInfo {
  /** What compile() would use now, or null when neither works. */
  backend: Backend | null;
  nvrtc: string | null;
  nvrtcError?: string;
  driver: boolean;
  nvcc?: string;
  nvccMissing?: string;
}

/** Which compilers are available (NVRTC through the core, nvcc through the toolkit) and which compile() picks. */
export function backendInfo(opts: CompileOptions = {}): BackendInfo {
  const { native, missing } = nativeFor(opts);
  const info = native ? native.rtcInfo() : { nvrtc: null, nvrtcError: missing, driver: false };
  const tc = nvcc().toolchain();
  const out: BackendInfo = { backend: null, nvrtc: info.nvrtc, driver: info.driver };
  if (info.nvrtcError !== undefined) out.nvrtcError = info.nvrtcError;
  if (tc.nvcc) out.nvcc = tc.nvcc;
  else out.nvccMissing = tc.nvccMissing ?? 'nvcc not found';
  if (opts.backend === 'nvcc') out.backend = tc.nvcc ? 'nvcc' : null;
  else if (opts.backend === 'nvrtc') out.backend = info.nvrtc !== null ? 'nvrtc' : null;
  else out.backend = info.nvrtc !== null ? 'nvrtc' : tc.nvcc ? 'nvcc' : null;
  return out;
}

const chooseBackend = (function chooseBackend(opts: CompileOptions, kernelsDir: string, what: string): ChosenBackend {
  if (opts.backend !== 'nvcc') {
    const native = opts.native !== undefined ? opts.native : loadDefaultNative();
    const file = native ? locateNvrtcFile(native) : undefined;
    if (native && file !== undefined) return nvrtcBackend(native, `nvrtc file ${file.identity}`, file);
  }
  return chooseLoadedBackend(opts, kernelsDir, what);
});

/** When NVRTC is not named by a file: the loaded NVRTC's version, else nvcc. */
function chooseLoadedBackend(opts: CompileOptions, kernelsDir: string, what: string): ChosenBackend {
  const { native, missing } = nativeFor(opts);
  const info = native ? native.rtcInfo() : undefined;
  const nvrtcWhy = info ? info.nvrtcError ?? 'NVRTC is not available' : missing;
  if (opts.backend !== 'nvcc' && native && info && info.nvrtc !== null) return nvrtcBackend(native, `nvrtc ${info.nvrtc}`);
  if (opts.backend === 'nvrtc') throw new Error(`${what}: NVRTC was asked for but cannot be used: ${nvrtcWhy}`);
  const tc = nvcc().toolchain();
  if (tc.nvcc) return nvcc().nvccBackend(tc.nvcc, tc, kernelsDir);
  if (opts.backend === 'nvcc') throw new Error(`${what}: nvcc was asked for but ${tc.nvccMissing ?? 'not found'}. ${FIXES.nvcc}`);
  throw new Error(
    `${what}: no CUDA compiler: NVRTC could not be loaded (${nvrtcWhy}) and ${tc.nvccMissing ?? 'nvcc was not found'}. ` +
      'Install the CUDA toolkit (it has NVRTC and nvcc) or put libnvrtc on the library path.',
  );
}

// ---------------------------------------------------------------------------
// compile()

const NONE: readonly string[] = Object.freeze([]);

/** The request's name expressions, after checking it; the common request passes a few cheap tests. */
const checkRequest = (function checkRequest(req: CompileRequest, what: string): readonly string[] {
  if (typeof req === 'object' && req !== null && typeof req.source === 'string' && typeof req.name === 'string' && req.name !== '' &&
    typeof req.arch === 'string' && isArch(req.arch) && (req.options === undefined || Array.isArray(req.options)) &&
    req.nameExpressions === undefined) {
    return NONE;
  }
  return checkRequestFully(req, what);
});

/** An arch like `sm_90`, `sm_90a` or `compute_90`; no regular expression: a first regex test compiles it (NOTE [ First lookup ]). */
const isArch = (function isArch(a: string): boolean {
  const start = a.startsWith('sm_') ? 3 : a.startsWith('compute_') ? 8 : -1;
  if (start < 0) return false;
  let i = start;
  while (i < a.length && a.charCodeAt(i) >= 48 && a.charCodeAt(i) <= 57) i++;
  if (i === start) return false;
  if (i < a.length && a.charCodeAt(i) >= 97 && a.charCodeAt(i) <= 122) i++;
  return i === a.length;
});

function checkRequestFully(req: CompileRequest, what: string): string[] {
  if (typeof req !== 'object' || req === null) throw new TypeError(`${what}: compile() needs a request object`);
  if (typeof req.source !== 'string') throw new TypeError(`${what}: the source must be a string, got ${typeof req.source}`);
  if (typeof req.name !== 'string' || req.name === '') throw new TypeError(`${what}: the program name must be a non-empty string`);
  if (typeof req.arch !== 'string' || !isArch(req.arch)) {
    throw new TypeError(`${what}: arch '${String(req.arch)}' is not an arch like 'sm_90' (a cubin) or 'compute_90' (PTX)`);
  }
  if (req.options !== undefined && !Array.isArray(req.options)) throw new TypeError(`${what}: options must be an array of strings`);
  const nameExpressions = req.nameExpressions ?? [];
  if (!Array.isArray(nameExpressions)) throw new TypeError(`${what}: nameExpressions must be an array of strings`);
  nameExpressions.forEach((e, i) => {
    if (typeof e !== 'string' || e.trim() === '' || /[\n;{}]/.test(e)) {
      throw new TypeError(`${what}: name expression ${i} (${JSON.stringify(e)}) is not a C++ name like 'f<float>'`);
    }
  });
  return nameExpressions;
}

interface Prepared {
  key: string;
  backend: ChosenBackend;
  options: readonly string[];
  nameExpressions: readonly string[];
  cwd: string;
  kernelsDir: string;
  what: string;
}

// NOTE [ First lookup ] (cache-io.ts): a process's first compile() runs this
// code cold, and V8 compiles each function on its first call, so the common
// request (no options, no #include, no name expressions) takes small
// functions only; the general ones run when there is something to do.
const cacheLog = logger('cache');
const prepare = (function prepare(req: CompileRequest, opts: CompileOptions): Prepared {
  const what = opts.what ?? 'gx.RawKernel';
  const nameExpressions = checkRequest(req, what);
  const options = req.options === undefined || req.options.length === 0 ? NONE : normalizeOptions(req.options, what);
  const cwd = opts.cwd === undefined ? process.cwd() : path.resolve(opts.cwd);
  const kernelsDir = kernelCacheDir(opts.cacheDir);
  const backend = chooseBackend(opts, kernelsDir, what);
  const headers = options.length === 0 && !req.source.includes('#') ? NONE : headerFingerprints(req.source, {
    cwd,
    includeDirs: [...includeDirsOf(options), ...backend.includeDirs],
    preIncludes: preIncludesOf(options),
    fixedDirs: backend.includeDirs,
  });
  const key = computeKey({
    source: req.source,
    options,
    nameExpressions,
    arch: req.arch,
    backend: backend.backend,
    compilerVersion: backend.version,
    headers,
  });
  return { key, backend, options, nameExpressions, cwd, kernelsDir, what };
});

/** The cache key compile() would use for this request (compiles nothing). */
export function kernelCacheKey(req: CompileRequest, opts: CompileOptions = {}): string {
  return prepare(req, opts).key;
}

const result = (function result(e: CacheEntry, cached: CompileResult['cached'], key: string): CompileResult {
  if (cacheLog.enabled) cacheLog('kernel %s: %s (%s)', key.slice(0, 16), cached === false ? 'miss, compiled' : `${cached} hit`, e.backend);
  return { image: e.image, ptx: e.ptx, loweredNames: { ...e.loweredNames }, log: e.log, backend: e.backend, cached, key };
});

/**
 * Compiles `req.source` for `req.arch`, or finds it in the cache (this
 * process's memory, then disk). Throws CompileError when the source does not
 * compile (its message shows the errors with numbered source lines), TypeError
 * for a bad request, Error when no compiler is available.
 */
export const compile = (function compile(req: CompileRequest, opts: CompileOptions = {}): CompileResult {
  const p = prepare(req, opts);
  const useMemory = opts.memory !== false;
  const useDisk = opts.disk !== false;
  if (useMemory) {
    const hit = memoryGet(p.key);
    if (hit) return result(hit, 'memory', p.key);
  }
  if (useDisk) {
    const hit = diskGet(p.kernelsDir, p.key);
    if (hit) {
      if (useMemory) memorySet(p.key, hit);
      return result(hit, 'disk', p.key);
    }
  }
  const maxBytes = opts.maxBytes ?? kernelCacheMaxBytes();
  if (!Number.isFinite(maxBytes) || maxBytes < 0) throw new RangeError(`${p.what}: maxBytes must be a byte count >= 0, got ${maxBytes}`);
  const entry = p.backend.compile({
    source: req.source,
    name: req.name,
    options: [...p.options],
    nameExpressions: [...p.nameExpressions],
    arch: req.arch,
    cwd: p.cwd,
    what: p.what,
  });
  if (useMemory) memorySet(p.key, entry);
  if (useDisk && (p.backend.keyTrusted?.() ?? true)) {
    try {
      diskPut({ dir: p.kernelsDir, maxBytes }, p.key, entry);
    } catch {
      // A cache that cannot be written (read-only, full, removed meanwhile) costs a recompile next time, nothing more.
    }
  }
  return result(entry, false, p.key);
});
