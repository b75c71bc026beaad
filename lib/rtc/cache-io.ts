// The file and hashing calls of a kernel cache lookup, through the core addon
// when it is loaded, else through Node's fs and crypto (same results).
//
// NOTE [ First lookup ]
// A program's first compile() usually hits the disk cache, and it is the one
// lookup whose cost a user sees (the next ones find the kernel in memory).
// It runs cold, and cold costs were most of it (1.6 ms of 1.8 on a 2-core
// VM, where the lookup itself is 0.1 ms):
// - Starting OpenSSL at the first createHash (~0.5 ms) and Node's first fs
//   calls (~0.2 ms). The core addon is loaded by then, so its SHA-256 and
//   POSIX calls have nothing to start. Both paths give the same bytes (the
//   tests compare them), so processes with and without the addon share keys
//   and entries.
// - V8 compiling each function at its first call (~8 us for a small one,
//   more for a big one; about 25 on the path). The functions of the lookup
//   path are written `const f = (function f() {...})`: V8 compiles a
//   parenthesized function when it compiles the module, which costs less
//   than compiling it later, so the first lookup runs compiled code. Keep
//   the path's functions few and written so; the rare cases (options,
//   #include, name expressions) call ordinary functions.
// - A dlopen(RTLD_NOLOAD) that searched the library path (0.3 ms; rtc/nvrtc.cpp).
// - Loading the modules: fs and path are default imports here and in
//   cache-lookup.ts, since TypeScript's `import * as fs` copies each of fs's
//   ~100 exports into a getter when the module loads (~0.1 ms).
import fs from 'fs';
import path from 'path';

import type { NativeCore } from '../core/native';

type CacheNative = Pick<NativeCore, 'sha256' | 'statFile' | 'readCacheEntry'>;

/** The core addon's cache functions (required when this module loads), or null: no addon, or one that predates them. */
const cacheNative: CacheNative | null = loadCacheNative();

function loadCacheNative(): CacheNative | null {
  if (process.env.GPUEXT_CACHE_IO === 'node') return null; // to test the fallback
  try {
    const { native } = require('../core/native') as { native: Partial<CacheNative> };
    if (typeof native.sha256 === 'function' && typeof native.statFile === 'function' && typeof native.readCacheEntry === 'function') {
      return native as CacheNative;
    }
  } catch {
    // no addon: Node's fs and crypto
  }
  return null;
}

/** SHA-256 (hex) of the parts' bytes, in order (strings as UTF-8). */
export const sha256Hex = (function sha256Hex(parts: readonly (string | Uint8Array)[]): string {
  const c = cacheNative;
  if (c) return c.sha256(parts);
  // crypto (2-3 ms to load) only for this fallback: the addon hashes on the warm path (NOTE [ Lazy entry ] in lib/README.md).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const h = (require('crypto') as typeof import('crypto')).createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
});

/** What the core's statFile() gives: size, mtime (seconds, nanoseconds), device, inode. */
export type FileStat = readonly [size: number, mtimeSec: number, mtimeNsec: number, dev: number, ino: number];

/** A file's identity: the name it was found by, device and inode, size and mtime (ms). */
export const identityOf = (function identityOf(name: string, st: FileStat | fs.Stats): string {
  if (st instanceof fs.Stats) return `${name} ${st.dev}:${st.ino} ${st.size} ${st.mtimeMs}`;
  // Node's Stats.mtimeMs, computed as Node computes it, so both forms give one string.
  return `${name} ${st[3]}:${st[4]} ${st[0]} ${st[1] * 1e3 + st[2] / 1e6}`;
});

/** A regular file's identity (identityOf); undefined when it is missing or not a file. Links are followed. */
export const fileIdentity = (function fileIdentity(file: string): string | undefined {
  const c = cacheNative;
  if (c) {
    const s = c.statFile(file);
    return s === null ? undefined : identityOf(file, s);
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return undefined;
  }
  return st.isFile() ? identityOf(file, st) : undefined;
});

/** Whether `file` is a regular file. */
export const isFile = (function isFile(file: string): boolean {
  const c = cacheNative;
  if (c) return c.statFile(file) !== null;
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
});

export interface EntryFiles {
  /** The .json file's text. */
  meta: string;
  /** The .bin file's bytes. */
  image: Uint8Array;
  /** SHA-256 (hex) of the image. */
  imageSha256: string;
}

/** `<dir>/<key>.json` and `.bin`, the .json touched (the cache's LRU order); undefined when either is missing. */
export const readEntryFiles = (function readEntryFiles(dir: string, key: string): EntryFiles | undefined {
  const c = cacheNative;
  if (c) return c.readCacheEntry(dir, key) ?? undefined;
  const base = path.join(dir, key);
  let meta: string;
  let image: Buffer;
  try {
    meta = fs.readFileSync(`${base}.json`, 'utf8');
    image = fs.readFileSync(`${base}.bin`);
  } catch {
    return undefined;
  }
  const now = new Date();
  try {
    fs.utimesSync(`${base}.json`, now, now); // the entry's last use (one file does: eviction goes by an entry's newest mtime)
  } catch {
    // evicted by another process meanwhile: what was read is still whole
  }
  return { meta, image: new Uint8Array(image.buffer, image.byteOffset, image.byteLength), imageSha256: sha256Hex([image]) };
});
