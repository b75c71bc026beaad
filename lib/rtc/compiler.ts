// Compiling run-time kernels: a CUDA source string to a cubin (or PTX) image,
// through NVRTC when the core can load it, else through nvcc (what CI and a
// machine with a toolkit but no NVRTC have), with the kernel cache (cache.ts)
// in front. Compiling needs no GPU: both compile for a named arch.
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
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { rmQuiet, writeFileAtomic } from '../build/fsutil';
import { binaryFingerprint, detectToolchain, findCuda, FIXES, type Toolchain } from '../build/toolchain';
import {
  computeKey, diskGet, diskPut, headerFingerprints, kernelCacheDir, kernelCacheMaxBytes, memoryGet, memorySet,
  VERSIONS_FILE, type Backend, type CacheEntry,
} from './cache';
import { fileIdentity, identityOf, isFile, type FileStat } from './cache-io';
import { CompileError } from './errors';

export { cacheStats, clearKernelCache, kernelCacheDir, type Backend, type KernelCacheStats } from './cache';
export { CompileError } from './errors';

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

/** What the core's NVRTC binding returns (lib/native.ts: native.nvrtcCompile). */
export interface NvrtcOutput {
  ok: boolean;
  log: string;
  image?: Uint8Array;
  ptx: boolean;
  loweredNames: Record<string, string>;
}

/** What the core says about NVRTC and the driver (native.rtcInfo). */
export interface RtcInfo {
  /** NVRTC's version ("12.8"), or null when it cannot be loaded. */
  nvrtc: string | null;
  /** The file NVRTC was loaded from. */
  nvrtcPath?: string;
  nvrtcError?: string;
  driver: boolean;
}

/** The part of the core this module uses (injectable for tests). */
export interface RtcNative {
  rtcInfo(): RtcInfo;
  /** Where the core looks for NVRTC, in order (NOTE [ NVRTC identity ]); absent: always load it to learn its version. */
  nvrtcCandidates?(): string[];
  /** The first candidate that is a file, with its stat; null when a bare soname comes first. */
  nvrtcFile?(): [string, FileStat] | null;
  nvrtcCompile(source: string, programName: string, options: string[], nameExpressions: string[], arch: string): NvrtcOutput;
}

export interface CompileOptions {
  /** The core's NVRTC binding; default: lib/native's when it has one. null: none (nvcc only). */
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
// The core's NVRTC binding, looked up once.

function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}

function toRtcInfo(v: unknown): RtcInfo {
  if (typeof v !== 'object' || v === null || !('nvrtc' in v)) {
    return { nvrtc: null, nvrtcError: 'native.rtcInfo() returned something unexpected', driver: false };
  }
  const info: RtcInfo = {
    nvrtc: typeof v.nvrtc === 'string' ? v.nvrtc : null,
    driver: 'driver' in v && v.driver === true,
  };
  if ('nvrtcError' in v && typeof v.nvrtcError === 'string') info.nvrtcError = v.nvrtcError;
  if ('nvrtcPath' in v && typeof v.nvrtcPath === 'string') info.nvrtcPath = v.nvrtcPath;
  return info;
}

function toNvrtcOutput(v: unknown): NvrtcOutput {
  if (typeof v !== 'object' || v === null || !('ok' in v) || typeof v.ok !== 'boolean') {
    throw new Error('gpuext: native.nvrtcCompile returned something unexpected (the core addon and lib/ are out of step; rebuild)');
  }
  const out: NvrtcOutput = {
    ok: v.ok,
    log: 'log' in v && typeof v.log === 'string' ? v.log : '',
    ptx: 'ptx' in v && v.ptx === true,
    loweredNames: 'loweredNames' in v && isStringRecord(v.loweredNames) ? v.loweredNames : {},
  };
  if ('image' in v && v.image instanceof Uint8Array) out.image = v.image;
  return out;
}

// Required when this module loads, not at the first compile: resolving a
// require() costs a first cache lookup more than the lookup (NOTE [ First
// lookup ] in cache-io.ts).
let nativeModule: unknown;
let nativeLoadError = '';
try {
  nativeModule = require('../native');
} catch (e) {
  nativeLoadError = `the core addon did not load (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`;
}

let defaultNative: RtcNative | null | undefined;
let defaultNativeMissing = '';

const loadDefaultNative = (function loadDefaultNative(): RtcNative | null {
  if (defaultNative !== undefined) return defaultNative;
  defaultNative = null;
  const mod = nativeModule;
  if (mod === undefined) {
    defaultNativeMissing = nativeLoadError;
    return null;
  }
  const n: unknown = typeof mod === 'object' && mod !== null && 'native' in mod ? mod.native : undefined;
  if (typeof n !== 'object' || n === null || !('rtcInfo' in n) || !('nvrtcCompile' in n)) {
    defaultNativeMissing = 'the core addon has no NVRTC binding (rebuild it: npm run build)';
    return null;
  }
  const infoFn = n.rtcInfo;
  const compileFn = n.nvrtcCompile;
  const candidatesFn = 'nvrtcCandidates' in n ? n.nvrtcCandidates : undefined;
  if (typeof infoFn !== 'function' || typeof compileFn !== 'function') {
    defaultNativeMissing = 'the core addon has no NVRTC binding (rebuild it: npm run build)';
    return null;
  }
  let info: RtcInfo | undefined;
  defaultNative = {
    rtcInfo(): RtcInfo {
      if (info) return info;
      try {
        info = toRtcInfo(infoFn.call(n));
      } catch (e) {
        info = { nvrtc: null, nvrtcError: e instanceof Error ? e.message : String(e), driver: false };
      }
      return info;
    },
    nvrtcCompile(source, programName, options, nameExpressions, arch): NvrtcOutput {
      return toNvrtcOutput(compileFn.call(n, source, programName, options, nameExpressions, arch));
    },
  };
  if (typeof candidatesFn === 'function') {
    defaultNative.nvrtcCandidates = (function nvrtcCandidates(): string[] {
      const c: unknown = candidatesFn.call(n);
      if (!Array.isArray(c)) return [];
      for (const x of c) if (typeof x !== 'string') return [];
      return c;
    });
  }
  const fileFn = 'nvrtcFile' in n ? n.nvrtcFile : undefined;
  if (typeof fileFn === 'function') {
    defaultNative.nvrtcFile = (function nvrtcFile(): [string, FileStat] | null {
      const f: unknown = fileFn.call(n);
      if (!Array.isArray(f) || typeof f[0] !== 'string' || !Array.isArray(f[1]) || f[1].length !== 5) return null;
      const st: unknown[] = f[1];
      for (const x of st) if (typeof x !== 'number') return null;
      return [f[0], [Number(st[0]), Number(st[1]), Number(st[2]), Number(st[3]), Number(st[4])]];
    });
  }
  return defaultNative;
});

function nativeFor(opts: CompileOptions): { native: RtcNative | null; missing: string } {
  if (opts.native !== undefined) return { native: opts.native, missing: opts.native === null ? 'no NVRTC binding was given' : '' };
  const n = loadDefaultNative();
  return { native: n, missing: defaultNativeMissing };
}

// ---------------------------------------------------------------------------
// nvcc: found once per process; its version memoized in the cache directory
// by the binary's identity (path, size, mtime), so a process that hits the
// disk cache runs no compiler at all.

let toolchainMemo: Toolchain | undefined;

function toolchain(): Toolchain {
  if (!toolchainMemo) toolchainMemo = detectToolchain();
  return toolchainMemo;
}

const nvccVersionMemo = new Map<string, string>();

function nvccVersion(nvcc: string, dir: string): string {
  const fp = binaryFingerprint(nvcc);
  const memo = nvccVersionMemo.get(fp);
  if (memo !== undefined) return memo;
  const file = path.join(dir, VERSIONS_FILE);
  let stored: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (isStringRecord(parsed)) stored = parsed;
  } catch {
    // none yet
  }
  let v = stored[fp];
  if (v === undefined) {
    const r = spawnSync(nvcc, ['--version'], { encoding: 'utf8', timeout: 60_000 });
    v = r.status === 0 ? `${r.stdout}${r.stderr}`.trim() : `${nvcc} (version unknown)`;
    if (r.status === 0) {
      try {
        writeFileAtomic(file, `${JSON.stringify({ ...stored, [fp]: v }, null, 1)}\n`);
      } catch {
        // a read-only cache: the version is memoized in this process only
      }
    }
  }
  nvccVersionMemo.set(fp, v);
  return v;
}

// ---------------------------------------------------------------------------
// Options


/** Options that take a value, in their spellings; the canonical form is `<canon><value>`. */
const VALUED: { names: string[]; canon: string }[] = [
  { names: ['-I', '--include-path'], canon: '-I' },
  { names: ['-D', '--define-macro'], canon: '-D' },
  { names: ['-U', '--undefine-macro'], canon: '-U' },
  { names: ['-include', '--pre-include'], canon: '--pre-include=' },
  { names: ['-Xptxas', '--ptxas-options'], canon: '--ptxas-options=' },
];

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
    if (/^(-arch|--gpu-architecture|-gencode|--generate-code|-code|--gpu-code)([= ]|$)/.test(opt)) {
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

function includeDirsOf(options: readonly string[]): string[] {
  return options.filter((o) => o.startsWith('-I')).map((o) => o.slice(2));
}

function preIncludesOf(options: readonly string[]): string[] {
  return options.filter((o) => o.startsWith('--pre-include=')).map((o) => o.slice('--pre-include='.length));
}

/** NVRTC options with no nvcc counterpart that only change diagnostics or speed: dropped. */
const NVCC_DROP = [
  /^--?minimal$/, /^--?no-source-include$/, /^--?(builtin-move-forward|builtin-initializer-list)(=.*)?$/,
  /^--?device-int128$/, /^--?(time|optimization-info|opt-info)=/, /^--?fdevice-time-trace(=.*)?$/,
  /^-ewp$/, /^--extensible-whole-program$/, /^--?device-stack-protector(=.*)?$/,
];
/** NVRTC options whose meaning nvcc cannot give. */
const NVCC_UNSUPPORTED = [
  /^-default-device$/, /^--device-as-default-execution-space$/, /^-dlto$/, /^--dlink-time-opt$/,
  /^-pch$/, /^--pch$/, /^--(create|use)-pch=/, /^--pch-dir=/, /^--?gen-opt-lto$/,
];

/** NVRTC options (normalized) as nvcc arguments. */
export function nvccArgsFor(options: string[], cwd: string, what = 'gx.RawKernel'): string[] {
  const out: string[] = [];
  for (const o of options) {
    if (NVCC_DROP.some((re) => re.test(o))) continue;
    if (NVCC_UNSUPPORTED.some((re) => re.test(o))) {
      throw new TypeError(`${what}: option '${o}' needs NVRTC, which could not be loaded here; this compile goes through nvcc`);
    }
    if (o.startsWith('-I')) out.push(`-I${path.resolve(cwd, o.slice(2))}`);
    // nvcc runs in `cwd`, and its preprocessor looks for a pre-include there first, then on the include path.
    else if (o.startsWith('--pre-include=')) out.push('--pre-include', o.slice('--pre-include='.length));
    else if (o.startsWith('--ptxas-options=')) out.push(`-Xptxas=${o.slice('--ptxas-options='.length)}`);
    else out.push(o);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Backends

interface BackendCompileIn {
  source: string;
  name: string;
  options: string[];
  nameExpressions: string[];
  arch: string;
  cwd: string;
  what: string;
}

interface ChosenBackend {
  backend: Backend;
  version: string;
  /** Include directories the backend adds after the user's (searched for headers, so in the key). */
  includeDirs: string[];
  compile(req: BackendCompileIn): CacheEntry;
  /** After a compile: whether the key named the compiler that ran (NOTE [ NVRTC identity ]). */
  keyTrusted?(): boolean;
}

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

interface NvrtcFile {
  /** The candidate as the core names it. */
  candidate: string;
  /** Path, device and inode, size and mtime (identityOf). */
  identity: string;
}

const nvrtcFileMemo = new Map<RtcNative, NvrtcFile | null>();

const locateNvrtcFile = (function locateNvrtcFile(native: RtcNative): NvrtcFile | undefined {
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

const nvrtcBackend = (function nvrtcBackend(native: RtcNative, compiler: string, file?: NvrtcFile): ChosenBackend {
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

function nvccBackend(nvcc: string, tc: Toolchain, cacheDirForVersions: string): ChosenBackend {
  const ccbin = tc.cxxExplicit && tc.cxx && tc.cxx.length === 1 ? ['-ccbin', tc.cxx[0]] : [];
  return {
    backend: 'nvcc',
    version: `nvcc ${nvccVersion(nvcc, cacheDirForVersions)}\n${ccbin.join(' ')}`,
    includeDirs: [],
    compile(req): CacheEntry {
      return compileWithNvcc(nvcc, ccbin, req);
    },
  };
}

/** A file name for the program name: its base name with unsafe characters replaced, ending in .cu. */
function sourceFileName(name: string): string {
  let base = path.basename(name).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  if (base === '') base = 'kernel';
  if (!/\.cu$/.test(base)) base += '.cu';
  return base;
}

const NAME_EXPR_VAR = '__gx_name_expr_';

function compileWithNvcc(nvcc: string, ccbin: string[], req: BackendCompileIn): CacheEntry {
  const ptx = req.arch.startsWith('compute_');
  const mapped = nvccArgsFor(req.options, req.cwd, req.what);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-rtc-'));
  try {
    const file = path.join(tmp, sourceFileName(req.name));
    const out = path.join(tmp, ptx ? 'out.ptx' : 'out.cubin');
    let text = req.source;
    const appended = new Map<number, string>();
    if (req.nameExpressions.length > 0) {
      if (!text.endsWith('\n')) text += '\n';
      let line = text.split('\n').length;
      req.nameExpressions.forEach((e, i) => {
        const addr = e.trim().startsWith('&') ? e : `&${e}`;
        text += `__device__ void* ${NAME_EXPR_VAR}${i} = (void*)${addr};\n`;
        appended.set(line++, `name expression '${e}'`);
      });
    }
    fs.writeFileSync(file, text);
    // NVRTC looks for the main source's quoted includes in the working directory.
    const iquote = req.cwd.includes(',') ? [] : ['-Xcompiler', '-iquote', '-Xcompiler', req.cwd];
    const args = [ptx ? '-ptx' : '-cubin', `-arch=${req.arch}`, '-o', out, ...ccbin, ...mapped, ...iquote, file];
    const r = spawnSync(nvcc, args, { cwd: req.cwd, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 600_000 });
    if (r.error) throw new Error(`${req.what}: could not run nvcc (${nvcc}): ${r.error.message}`);
    const log = `${r.stdout}${r.stderr}`.split(file).join(req.name).split(`${tmp}${path.sep}`).join('').trim();
    if (r.status !== 0) {
      throw new CompileError({ log: log || `nvcc exited with status ${r.status ?? r.signal}`, source: req.source, programName: req.name, what: req.what, backend: 'nvcc', appended });
    }
    let image: Uint8Array = fs.readFileSync(out);
    if (ptx) {
      const withNul = new Uint8Array(image.byteLength + 1);
      withNul.set(image);
      image = withNul;
    }
    const loweredNames: Record<string, string> = {};
    if (req.nameExpressions.length > 0) {
      const found = ptx ? ptxNameExprs(Buffer.from(image).toString('utf8')) : cubinNameExprs(image);
      req.nameExpressions.forEach((e, i) => {
        const sym = found.get(i);
        if (sym === undefined) {
          throw new Error(`${req.what}: could not find the symbol of name expression '${e}' in what nvcc built for '${req.name}' ` +
            '(name expressions through nvcc work for __global__ functions and __device__ variables)');
        }
        loweredNames[e] = sym;
      });
    }
    return { image, ptx, loweredNames, log, backend: 'nvcc' };
  } finally {
    rmQuiet(tmp);
  }
}

/** `__gx_name_expr_<i> = <symbol>;` (or `generic(<symbol>)`) in PTX. */
export function ptxNameExprs(ptx: string): Map<number, string> {
  const out = new Map<number, string>();
  const re = new RegExp(`${NAME_EXPR_VAR}(\\d+)\\s*=\\s*(?:generic\\(\\s*)?([A-Za-z_$%.][A-Za-z0-9_$.]*)`, 'g');
  for (let m = re.exec(ptx); m !== null; m = re.exec(ptx)) out.set(Number(m[1]), m[2]);
  return out;
}

/**
 * In a cubin (ELF64): for each `__gx_name_expr_<i>` variable, the symbol its
 * initializer's relocation points at.
 */
export function cubinNameExprs(image: Uint8Array): Map<number, string> {
  const out = new Map<number, string>();
  const b = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  if (b.length < 64 || b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return out; // ELF64 little-endian only
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  interface Section { type: number; offset: number; size: number; link: number; info: number; entsize: number }
  const sections: Section[] = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    if (o + 64 > b.length) return out;
    sections.push({
      type: b.readUInt32LE(o + 4),
      offset: Number(b.readBigUInt64LE(o + 0x18)),
      size: Number(b.readBigUInt64LE(o + 0x20)),
      link: b.readUInt32LE(o + 0x28),
      info: b.readUInt32LE(o + 0x2c),
      entsize: Number(b.readBigUInt64LE(o + 0x38)),
    });
  }
  const symtabIndex = sections.findIndex((s) => s.type === 2);
  if (symtabIndex < 0) return out;
  const symtab = sections[symtabIndex];
  const strtab = sections[symtab.link];
  if (!strtab) return out;
  const cstr = (off: number): string => {
    const start = strtab.offset + off;
    let end = start;
    while (end < b.length && b[end] !== 0) end++;
    return b.toString('latin1', start, end);
  };
  interface Sym { name: string; shndx: number; value: number; size: number }
  const syms: Sym[] = [];
  const ent = symtab.entsize || 24;
  for (let o = symtab.offset; o + ent <= symtab.offset + symtab.size && o + 24 <= b.length; o += ent) {
    syms.push({ name: cstr(b.readUInt32LE(o)), shndx: b.readUInt16LE(o + 6), value: Number(b.readBigUInt64LE(o + 8)), size: Number(b.readBigUInt64LE(o + 16)) });
  }
  const vars = new Map<number, Sym>();
  for (const s of syms) {
    const m = new RegExp(`^${NAME_EXPR_VAR}(\\d+)$`).exec(s.name);
    if (m) vars.set(Number(m[1]), s);
  }
  for (const rela of sections) {
    if (rela.type !== 4 && rela.type !== 9) continue; // SHT_RELA, SHT_REL
    const size = rela.type === 4 ? 24 : 16;
    const step = rela.entsize || size;
    for (let o = rela.offset; o + size <= rela.offset + rela.size && o + size <= b.length; o += step) {
      const off = Number(b.readBigUInt64LE(o));
      const symIdx = Number(b.readBigUInt64LE(o + 8) >> 32n);
      for (const [i, v] of vars) {
        if (out.has(i) || v.shndx !== rela.info || off < v.value || off >= v.value + Math.max(v.size, 1)) continue;
        const target = syms[symIdx];
        if (target && target.name) out.set(i, target.name);
      }
    }
  }
  return out;
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
  const tc = toolchain();
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
  const tc = toolchain();
  if (tc.nvcc) return nvccBackend(tc.nvcc, tc, kernelsDir);
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
