// The kernel cache's warm path: the key, the memory layer, reading a disk
// entry, NVRTC named by its file, and cachedImage(), the lookup a run-time
// kernel's first load tries before it loads the compiler (compiler.ts, with
// the header walk, the backends and the writes of cache.ts).
//
// NOTE [ Warm lookup ]
// A kernel that is in the disk cache needs, to be found, only its key: the
// source, the options, the arch and the compiler's identity (NOTE [ NVRTC
// identity ]), and the headers the source includes. For the common request
// (no name expressions, no #include, no pre-included header, NVRTC named by a
// file) the headers are none and every other part is at hand, so this module
// computes the key exactly as compiler.ts's prepare() does (the same
// functions: computeKey, nvrtcKeyVersion, normalizeOptions) and reads the
// entry. Any other request, or a miss, goes to compile(), which then loads
// (a process's first compile pays for loading the compiler, which a warm
// first launch of a jit kernel no longer does). test/rtc-cache-lookup.test.ts
// checks both paths give the same key and entry.
import path from 'path';

import { logger } from '../platform/log';
import { cacheDir } from '../platform/paths';
import { lazyModule } from '../platform/lazy';
import { fileIdentity, identityOf, isFile, readEntryFiles, sha256Hex } from './cache-io';
import { loadDefaultNative, type RtcNative } from './rtc-native';

// find-cuda's search only where the usual toolkit directories have no headers (NOTE [ Lazy entry ] in lib/README.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const platformCuda = lazyModule(() => require('../platform/cuda') as typeof import('../platform/cuda'));

/** Bump when what a key covers, or an entry's format, changes. */
export const KEY_VERSION = 'gpuext-rtc-1';
export const ENTRY_FORMAT = 1;
/** The memory cache keeps at most this many bytes of images (least recently used go first). */
const MEMORY_MAX_BYTES = 256 * 1024 * 1024;

export type Backend = 'nvrtc' | 'nvcc';

/** One compiled kernel module, as cached. */
export interface CacheEntry {
  /** A cubin, or PTX text ending in a NUL byte (ready for cuModuleLoadData). */
  image: Uint8Array;
  ptx: boolean;
  loweredNames: Record<string, string>;
  log: string;
  backend: Backend;
}

export const cacheLog = logger('cache');

/** `<GPUEXT_CACHE_DIR or the user cache dir>/kernels`, or `<root>/kernels` for an explicit root. */
export const kernelCacheDir = (function kernelCacheDir(root?: string): string {
  return path.join(root !== undefined ? path.resolve(root) : cacheDir(), 'kernels');
});

// ---------------------------------------------------------------------------
// Keys

export interface KeyParts {
  source: string;
  /** The options, normalized (order kept). */
  options: readonly string[];
  nameExpressions: readonly string[];
  arch: string;
  backend: Backend;
  /** The backend's version ("nvrtc 12.8", nvcc's --version text). */
  compilerVersion: string;
  /** headerFingerprints() of the source. */
  headers: readonly string[];
}

/** The cache key: sha256 (hex) over every part, in a fixed order. Nothing random, nothing from the clock. */
export const computeKey = (function computeKey(p: KeyParts): string {
  const parts = JSON.stringify([KEY_VERSION, p.backend, p.compilerVersion, p.arch, p.options, p.nameExpressions, p.headers]);
  return sha256Hex([parts, '\0', p.source]);
});

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
    found = platformCuda().findCuda().cudaHome();
  } catch {
    // no toolkit found
  }
  if (found && isFile(path.join(found, 'include', 'cuda_runtime.h'))) cudaIncludeMemo = path.join(path.resolve(found), 'include');
  return cudaIncludeMemo;
});

/** The include directories the NVRTC backend adds (the toolkit's, when found). */
export const nvrtcIncludeDirs = (function nvrtcIncludeDirs(): string[] {
  const inc = cudaIncludeDir();
  return inc !== null ? [inc] : [];
});

/** The key's compiler version for NVRTC: the compiler (`nvrtc file <identity>` or `nvrtc 12.8`) and the include directories it adds. */
export const nvrtcKeyVersion = (function nvrtcKeyVersion(compiler: string, includeDirs: readonly string[]): string {
  return `${compiler}\n${includeDirs.join('\n')}`;
});

export interface NvrtcFile {
  /** The candidate as the core names it. */
  candidate: string;
  /** Path, device and inode, size and mtime (identityOf). */
  identity: string;
}

const nvrtcFileMemo = new Map<RtcNative, NvrtcFile | null>();

/** The file the core would load NVRTC from, when its first candidate is one (NOTE [ NVRTC identity ] in nvrtc-backend.ts). */
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

// ---------------------------------------------------------------------------
// Options, as the key sees them

/** Options that take a value, in their spellings; the canonical form is `<canon><value>`. */
const VALUED: { names: string[]; canon: string }[] = [
  { names: ['-I', '--include-path'], canon: '-I' },
  { names: ['-D', '--define-macro'], canon: '-D' },
  { names: ['-U', '--undefine-macro'], canon: '-U' },
  { names: ['-include', '--pre-include'], canon: '--pre-include=' },
  { names: ['-Xptxas', '--ptxas-options'], canon: '--ptxas-options=' },
];

/** The options that name an arch, which normalizeOptions refuses (`arch` is its own option); tested as strings: a regular expression is compiled at its first test (~20 us, on every warm lookup's path). */
const ARCH_OPTIONS = ['-arch', '--gpu-architecture', '-gencode', '--generate-code', '-code', '--gpu-code'];

/**
 * Options in one token each, order kept: `-I dir`, `['-I', 'dir']`,
 * `--include-path=dir` all become `-Idir` (likewise -D, -U, --pre-include=,
 * --ptxas-options=). The arch is not an option (it is `arch`).
 */
export function normalizeOptions(options: readonly string[], what = 'gx.RawKernel'): string[] {
  const out: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const raw = options[i];
    if (typeof raw !== 'string') throw new TypeError(`${what}: options must be strings; option ${i} is ${typeof raw}`);
    const opt = raw.trim();
    if (opt === '') continue;
    if (ARCH_OPTIONS.some((name) => opt.startsWith(name) && (opt.length === name.length || opt[name.length] === '=' || opt[name.length] === ' '))) {
      throw new TypeError(`${what}: '${opt}': give the arch as the arch option (e.g. arch: 'sm_90'), not in options`);
    }
    let matched = false;
    for (const v of VALUED) {
      for (const name of v.names) {
        let value: string | undefined;
        if (opt === name) {
          const next = options[i + 1];
          if (typeof next !== 'string' || next.trim() === '') throw new TypeError(`${what}: option '${name}' needs a value`);
          value = next.trim();
          i++;
        } else if (opt.startsWith(`${name}=`)) {
          value = opt.slice(name.length + 1);
        } else if (opt.startsWith(`${name} `)) {
          value = opt.slice(name.length + 1).trim();
        } else if ((name === '-I' || name === '-D' || name === '-U') && opt.startsWith(name)) {
          value = opt.slice(name.length);
        }
        if (value !== undefined) {
          out.push(`${v.canon}${value}`);
          matched = true;
          break;
        }
      }
      if (matched) break;
    }
    if (!matched) out.push(opt);
  }
  return out;
}

export function includeDirsOf(options: readonly string[]): string[] {
  return options.filter((o) => o.startsWith('-I')).map((o) => o.slice(2));
}

export function preIncludesOf(options: readonly string[]): string[] {
  return options.filter((o) => o.startsWith('--pre-include=')).map((o) => o.slice('--pre-include='.length));
}

// ---------------------------------------------------------------------------
// Memory

const memory = new Map<string, CacheEntry>();
let memoryBytes = 0;

export const memoryGet = (function memoryGet(key: string): CacheEntry | undefined {
  const e = memory.get(key);
  if (e) {
    // Map order is insertion order: re-inserting makes it the most recent.
    memory.delete(key);
    memory.set(key, e);
  }
  return e;
});

export const memorySet = (function memorySet(key: string, entry: CacheEntry): void {
  const old = memory.get(key);
  if (old) {
    memoryBytes -= old.image.byteLength;
    memory.delete(key);
  }
  memory.set(key, entry);
  memoryBytes += entry.image.byteLength;
  for (const [k, e] of memory) {
    if (memoryBytes <= MEMORY_MAX_BYTES || k === key) break;
    memory.delete(k);
    memoryBytes -= e.image.byteLength;
  }
});

/** The memory layer's size (cacheStats). */
export function memoryStats(): { entries: number; bytes: number } {
  return { entries: memory.size, bytes: memoryBytes };
}

export function memoryClear(): void {
  memory.clear();
  memoryBytes = 0;
}

// ---------------------------------------------------------------------------
// Disk

export interface EntryMeta {
  format: number;
  key: string;
  backend: Backend;
  ptx: boolean;
  loweredNames: Record<string, string>;
  log: string;
  bytes: number;
  sha256: string;
  createdAt: string;
}

const isStringRecord = (function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
});

const isEntryMeta = (function isEntryMeta(v: unknown): v is EntryMeta {
  if (typeof v !== 'object' || v === null) return false;
  return 'format' in v && v.format === ENTRY_FORMAT &&
    'key' in v && typeof v.key === 'string' &&
    'backend' in v && (v.backend === 'nvrtc' || v.backend === 'nvcc') &&
    'ptx' in v && typeof v.ptx === 'boolean' &&
    'loweredNames' in v && isStringRecord(v.loweredNames) &&
    'log' in v && typeof v.log === 'string' &&
    'bytes' in v && typeof v.bytes === 'number' &&
    'sha256' in v && typeof v.sha256 === 'string';
});

/** The entry for `key` in `dir`, or undefined when there is none or it does not check out. A hit touches it (LRU). */
export const diskGet = (function diskGet(dir: string, key: string): CacheEntry | undefined {
  const files = readEntryFiles(dir, key);
  if (files === undefined) return undefined;
  let meta: unknown;
  try {
    meta = JSON.parse(files.meta);
  } catch {
    return undefined;
  }
  if (!isEntryMeta(meta) || meta.key !== key) return undefined;
  const { image } = files;
  if (image.byteLength !== meta.bytes || files.imageSha256 !== meta.sha256) return undefined;
  return {
    image,
    ptx: meta.ptx,
    loweredNames: meta.loweredNames,
    log: meta.log,
    backend: meta.backend,
  };
});

// ---------------------------------------------------------------------------
// The warm lookup (NOTE [ Warm lookup ])

/** What a request's source must not contain for its headers to be none: an include directive (parseIncludes needs `#`, blanks, `include`). */
const INCLUDE = /#[ \t]*include/;
const NONE: readonly string[] = Object.freeze([]);

export interface CachedImage extends CacheEntry {
  cached: 'memory' | 'disk';
  key: string;
}

/**
 * The cached image of a request compile() would find with its default
 * options (NVRTC, the default cache), or undefined: a request this path
 * does not key (name expressions, an include, NVRTC not named by a file),
 * options compile() would refuse, or not cached. Loads no compiler.
 */
export const cachedImage = (function cachedImage(req: { source: string; options: readonly string[]; arch: string },
  native: RtcNative | null = loadDefaultNative()): CachedImage | undefined {
  if (native === null || INCLUDE.test(req.source)) return undefined;
  const file = locateNvrtcFile(native);
  if (file === undefined) return undefined;
  let options = NONE;
  if (req.options.length > 0) {
    try {
      options = normalizeOptions(req.options);
    } catch {
      return undefined; // compile() says what is wrong
    }
    if (preIncludesOf(options).length > 0) return undefined;
  }
  const key = computeKey({
    source: req.source, options, nameExpressions: NONE, arch: req.arch, backend: 'nvrtc',
    compilerVersion: nvrtcKeyVersion(`nvrtc file ${file.identity}`, nvrtcIncludeDirs()), headers: NONE,
  });
  const inMemory = memoryGet(key);
  const e = inMemory ?? diskGet(kernelCacheDir(), key);
  if (e === undefined) return undefined;
  if (inMemory === undefined) memorySet(key, e);
  const cached = inMemory === undefined ? 'disk' : 'memory';
  if (cacheLog.enabled) cacheLog('kernel %s: %s hit (%s)', key.slice(0, 16), cached, e.backend);
  return { ...e, loweredNames: { ...e.loweredNames }, cached, key };
});
