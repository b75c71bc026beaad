// The cache of jit translations: what a kernel function becomes for given
// argument types (the CUDA source, its parameter types, the launch plan),
// in memory and on disk beside the compiled-kernel cache.
//
// NOTE [ Translation cache ]
// A jit kernel's first call in a new process used to parse the function
// (acorn), type it and emit CUDA before the kernel cache could even be asked
// for the image: most of a warm first call. Now the translation is cached too,
// keyed by everything that decides it:
// - the function's text (Function.prototype.toString) and the API, kernel
//   name, debug flag and NVRTC options;
// - the argument types (dtype, rank, contiguity of each tensor; the dtype of
//   each number);
// - the values it closes over: every static chain its body reads (`K`,
//   `jit.blockIdx.x`, `cfg.n`, `lib_1.grid`), each resolved through the
//   closure as the typer would, down to a leaf: a number (every value: -0,
//   NaN, Infinity), a bigint, a boolean, a string, undefined, a gx.jit
//   intrinsic, a builtin (Math.exp), or a gx.jit.device function (its text
//   and, recursively, what it closes over). A chain that ends anywhere else
//   (a plain JS function, an object, a tensor) makes the kernel uncacheable
//   on disk: it is translated in each process, which then explains the error;
// - the translator itself (the package version and the identity, size and
//   mtime, of lib/jit's compiled files: an edited translator misses).
// Finding the chains needs a parse; so the chains of a function are cached
// too, by its text. A hit reads two small JSON files and the closure (through
// the inspector, closure.ts) and never loads acorn or the translator
// (rawkernel.ts requires kernel-gen.ts only on a miss), nor the kernel cache's
// writer; the kernel's image is then found without the compiler (NOTE [ Warm
// lookup ] in lib/rtc/cache-lookup.ts). On disk an entry is
// `<cache dir>/jit/<sha256>.json`, written atomically; one that does not
// check out (unreadable, another format, another key, a wrong shape) is a
// miss and is written again. The directory is bounded like the kernel cache
// (least recently written go first), through its size ledger (NOTE [ Size
// ledger ] in lib/rtc/cache-evict.ts).
import * as fs from 'fs';
import * as path from 'path';

import type { DType } from '../generated/dtypes';
import { lazyModule } from '../platform/lazy';
import { writeFileAtomic } from '../platform/fs';
import { cacheDir, packageVersion } from '../platform/paths';
import { closureValues, type Lookup } from './closure';
import { INTRINSICS } from './intrinsics';
import { libraryFile } from './library-file';
import { deviceInfo } from './module';
import type { ScalarDType } from './types';

// Hashing and file identities load with the first translation lookup, not with gpuext (NOTE [ Lazy entry ] in lib/README.md);
// the directory's bound (the kernel cache's eviction) only with the first write.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cacheIo = lazyModule(() => require('../rtc/cache-io') as typeof import('../rtc/cache-io'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cacheEvict = lazyModule(() => require('../rtc/cache-evict') as typeof import('../rtc/cache-evict'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nvrtcPrefetch = lazyModule(() => require('../rtc/nvrtc-prefetch') as typeof import('../rtc/nvrtc-prefetch'));
/** The parser (parse.ts, and with it acorn): loaded when a text the cache has not described, or a translation it misses, must be parsed. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const parser = lazyModule(() => require('./parse') as typeof import('./parse'));

const FORMAT = 1;
/** The directory's bound: translations are a few KB each. */
const MAX_BYTES = 64 * 1024 * 1024;

/** One argument's part of a specialization: what the kernel receives for it. */
export type ArgSpec =
  | { kind: 'tensor'; dtype: DType; rank: number; contiguous: boolean }
  | { kind: 'number'; dtype: ScalarDType };

/** For each C parameter: [argument index, what, dimension]. */
export type PlanEntry = [number, 'ptr' | 'value' | 'dim' | 'stride', number];

/** What a kernel function becomes for given argument types. */
export interface Translation {
  source: string;
  /** The C parameter types, in order. */
  types: string[];
  plan: PlanEntry[];
  /** { debug: true }: the tensor accesses the error record points at. */
  sites: { label: string; line: number }[];
  /** The same kernel as PTX, when every node of it has a PTX face (NOTE [ PTX path ] in emit-ptx.ts). */
  ptx?: { text: string; minCapability: number };
}

/** What the cache keeps of a function's text: its parameters and the chains its body reads. */
export interface FunctionInfo {
  params: string[];
  chains: string[];
}

/** How many translations and hits this process has had (tests prove a hit translates nothing). */
export const translationCounts = { translations: 0, memoryHits: 0, diskHits: 0 };
export const countTranslation = (): void => {
  translationCounts.translations++;
};

const memory = new Map<string, unknown>();

/** `<cache dir>/jit`, beside the compiled kernels' `<cache dir>/kernels` (cache-lookup.ts's kernelCacheDir). */
export function translationDir(): string {
  return path.join(cacheDir(), 'jit');
}

/** Empties the memory layer and, with `disk`, the directory (tests). */
export function clearTranslationCache(opts: { disk?: boolean } = {}): void {
  memory.clear();
  infos.clear();
  if (opts.disk === true) fs.rmSync(translationDir(), { recursive: true, force: true });
}

let translatorId: string | undefined;
/** The package version, lib/jit's compiled files' identity and jit-math.ptx's: a changed translator makes new keys. */
function translator(): string {
  if (translatorId !== undefined) return translatorId;
  const parts: string[] = [];
  try {
    parts.push(packageVersion());
  } catch {
    parts.push('?');
  }
  try {
    for (const name of fs.readdirSync(__dirname).filter((n) => n.endsWith('.js')).sort()) parts.push(cacheIo().fileIdentity(path.join(__dirname, name)) ?? name);
  } catch {
    parts.push('?');
  }
  // The library math the PTX route inlines: a translation without it has no PTX (library-file.ts).
  const math = libraryFile();
  parts.push(math === undefined ? 'no ops binary' : cacheIo().fileIdentity(math) ?? 'no jit-math.ptx');
  return (translatorId = parts.join('\n'));
}

/** The entry at `key` (memory, then disk) when `valid` accepts it. */
function get<T>(key: string, valid: (v: unknown, key: string) => v is T): T | undefined {
  const m = memory.get(key);
  if (m !== undefined && valid(m, key)) {
    translationCounts.memoryHits++;
    return m;
  }
  let v: unknown;
  try {
    v = JSON.parse(fs.readFileSync(path.join(translationDir(), `${key}.json`), 'utf8'));
  } catch {
    return undefined;
  }
  if (!valid(v, key)) return undefined;
  translationCounts.diskHits++;
  memory.set(key, v);
  return v;
}

/** Keeps `value` at `key` in memory and on disk (best effort: a cache that cannot be written only costs time). */
function put(key: string, value: object): void {
  const entry = { format: FORMAT, key, ...value };
  memory.set(key, entry);
  const dir = translationDir();
  try {
    const json = JSON.stringify(entry);
    writeFileAtomic(path.join(dir, `${key}.json`), json);
    // The directory's bound, through its size ledger (NOTE [ Size ledger ] in lib/rtc/cache-evict.ts).
    cacheEvict().recordWrite({ dir, maxBytes: MAX_BYTES }, key, Buffer.byteLength(json));
  } catch {
    // read-only or full disk: the next process translates again
  }
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const header = (v: unknown, key: string): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && (v as { format?: unknown }).format === FORMAT && (v as { key?: unknown }).key === key;

function isInfo(v: unknown, key: string): v is FunctionInfo {
  return header(v, key) && isStrings(v.params) && isStrings(v.chains);
}

const isPtxOrNone = (ptx: unknown): ptx is Translation['ptx'] => ptx === undefined ||
  (typeof ptx === 'object' && ptx !== null && typeof (ptx as { text?: unknown }).text === 'string' && typeof (ptx as { minCapability?: unknown }).minCapability === 'number');

function isTranslation(v: unknown, key: string): v is Translation {
  if (!header(v, key) || typeof v.source !== 'string' || !isStrings(v.types) || !Array.isArray(v.plan) || !Array.isArray(v.sites)) return false;
  const planOk = v.plan.every((e: unknown) => Array.isArray(e) && e.length === 3 && Number.isInteger(e[0]) &&
    ['ptr', 'value', 'dim', 'stride'].includes(e[1]) && Number.isInteger(e[2]));
  return planOk && isPtxOrNone(v.ptx) && (v.types.length === v.plan.length || v.types.length === v.plan.length + 1) &&
    v.sites.every((s: unknown) => typeof s === 'object' && s !== null && typeof (s as { label?: unknown }).label === 'string' &&
      typeof (s as { line?: unknown }).line === 'number');
}

const infos = new Map<string, FunctionInfo>();
const textKey = (text: string): string => cacheIo().sha256Hex([translator(), '\0info\0', text]);

/**
 * The cached description of a function with this text, or undefined (parse
 * it, then infoPut). `nvrtc`: whether a kernel of a text never seen will be
 * compiled by NVRTC after its translation (not a device function, which its
 * callers compile, nor a kernel loaded as PTX, which needs no NVRTC).
 */
export function infoGet(text: string, nvrtc = true): FunctionInfo | undefined {
  const m = infos.get(text);
  if (m !== undefined) return m;
  const v = get(textKey(text), isInfo);
  if (v !== undefined) infos.set(text, v);
  // A text never seen is parsed and translated now, and compiled after: NVRTC's files are read meanwhile (NOTE [ NVRTC prefetch ]).
  else if (nvrtc) nvrtcPrefetch().prefetchNvrtc();
  return v;
}

export function infoPut(text: string, info: FunctionInfo): void {
  infos.set(text, info);
  put(textKey(text), { params: info.params, chains: info.chains });
}

/**
 * What `fn` closes over, as the key covers it (NOTE [ Translation cache ]),
 * or undefined when a value cannot be keyed. Read once per kernel object,
 * when it first translates, as the translator reads the closure.
 */
export function closureKey(fn: Function, info: FunctionInfo, lookup: Lookup = closureLookup(fn, info)): string | undefined {
  return chainsKey(fn, info, new Set(), lookup);
}

/** The values of the names `fn` reads (the roots of its chains, the names the typer looks up), read through its closure now. */
export function closureLookup(fn: Function, info: FunctionInfo): Lookup {
  return closureValues(fn, new Set(info.chains.map((c) => c.split('.')[0])));
}

/** The key of a translation of the function with this text and closure key; `what` names the API, options and argument types. */
export function translationKey(closure: string, text: string, what: string): string {
  return cacheIo().sha256Hex([translator(), '\0', what, '\0', closure, '\0', text]);
}

export const translationGet = (key: string): Translation | undefined => get(key, isTranslation);
export const translationPut = (key: string, t: Translation): void => put(key, t);

/** A kernel emitted as PTX alone (gx.vectorize's elementwise kernels, NOTE [ Elementwise PTX ]): its PTX, or none when it has no PTX face. */
export interface PtxEntry {
  ptx?: Translation['ptx'];
}
const isPtxEntry = (v: unknown, key: string): v is PtxEntry => header(v, key) && isPtxOrNone(v.ptx);
export const ptxEntryGet = (key: string): PtxEntry | undefined => get(key, isPtxEntry);
export const ptxEntryPut = (key: string, ptx: Translation['ptx']): void => put(key, ptx === undefined ? {} : { ptx });

/** A leaf value's part of the key; CONTAINER for an object to look into; undefined for a value no key can stand for. */
const CONTAINER = '';
function leafOf(v: unknown, seen: Set<Function>): string | undefined {
  switch (typeof v) {
    case 'number': return Object.is(v, -0) ? 'n-0' : `n${v}`;
    case 'bigint': return `b${v}`;
    case 'boolean': return v ? 'true' : 'false';
    case 'string': return `s${JSON.stringify(v)}`;
    case 'undefined': return 'u';
    case 'symbol': return undefined;
    default: break;
  }
  if (v === null) return 'null';
  const intrinsic = INTRINSICS.get(v);
  if (intrinsic !== undefined) return `i${JSON.stringify(intrinsic)}`;
  if (typeof v === 'function') {
    const dev = deviceInfo(v);
    if (dev !== undefined) {
      if (seen.has(dev.fn)) return 'recursion';
      seen.add(dev.fn);
      const info = dev.info();
      const inner = chainsKey(dev.fn, info, seen);
      seen.delete(dev.fn);
      return inner === undefined ? undefined : `d${JSON.stringify([Function.prototype.toString.call(dev.fn), inner])}`;
    }
    return builtins().get(v);
  }
  return CONTAINER;
}

let builtinNames: Map<unknown, string> | undefined;
/** Math's and Number's members and the global conversions, by value (what a kernel may call besides intrinsics). */
function builtins(): Map<unknown, string> {
  if (builtinNames !== undefined) return builtinNames;
  const m = new Map<unknown, string>();
  for (const [base, obj] of [['Math', Math], ['Number', Number]] as const) {
    for (const k of Object.getOwnPropertyNames(obj)) {
      const v = (obj as unknown as Record<string, unknown>)[k];
      if (typeof v === 'function') m.set(v, `${base}.${k}`);
    }
  }
  for (const k of ['Number', 'BigInt', 'Boolean', 'String', 'isNaN', 'isFinite', 'parseInt', 'parseFloat']) m.set((globalThis as Record<string, unknown>)[k], k);
  return (builtinNames = m);
}

/** The closure's part of the key: each chain resolved to its leaf; undefined when one cannot be keyed. */
function chainsKey(fn: Function, info: FunctionInfo, seen: Set<Function>, lookup: Lookup = closureLookup(fn, info)): string | undefined {
  const parts: string[] = [];
  for (const chain of info.chains) {
    const segs = chain.split('.');
    const r = lookup(segs[0]);
    if (!r.found) {
      parts.push(`${segs[0]}=?`);
      continue;
    }
    let v = r.value;
    for (let k = 1; ; k++) {
      const leaf = leafOf(v, seen);
      if (leaf === undefined) return undefined;
      if (leaf !== CONTAINER) {
        parts.push(`${segs.slice(0, k).join('.')}=${leaf}`);
        break;
      }
      if (k === segs.length) return undefined;
      try {
        v = (v as Record<string, unknown>)[segs[k]];
      } catch {
        return undefined;
      }
    }
  }
  return parts.join('\n');
}
