// The cache of compiled run-time kernels: in memory (per process) and on
// disk (`<GPUEXT_CACHE_DIR or the user cache dir>/kernels/`), keyed by a
// sha256 of everything that decides the image: the source, the options, the
// name expressions, the arch, the backend and its version, and the bytes of
// every header the source pulls in. The key has no random or time-dependent
// part (a random part made every lookup of CuPy's miss, cupy#7391).
//
// On disk an entry is `<key>.bin` (the image) and `<key>.json` (what else
// compile() returns, with the image's size and sha256). Both are written to a
// temporary file in the same directory and renamed, .bin first, so a reader in
// another process sees a whole entry or none; an entry that does not check out
// (partial, corrupt, another version) is a miss and gets recompiled. The
// directory is bounded (GPUEXT_KERNEL_CACHE_MAX_BYTES, default 1 GiB; CuPy's
// grows forever, cupy#4926): after a write that takes it over the bound, the
// least recently used entries (by mtime; a hit touches its entry) go until
// it is under 90% of it.
import * as fs from 'fs';
import * as path from 'path';

import { rmQuiet, writeFileAtomic } from '../platform/fs';
import { sha256Hex } from './cache-io';
import { forgetSize, recordWrite, scan, type CacheLocation } from './cache-evict';
import { ENTRY_FORMAT, kernelCacheDir, memoryClear, memoryStats, type CacheEntry, type EntryMeta } from './cache-lookup';

// The directory's bound is the translation cache's too (cache-evict.ts).
export { evict, recordWrite, SIZE_FILE, VERSIONS_FILE, type CacheLocation, type EvictResult } from './cache-evict';

// The key, the memory layer and reading an entry are the warm path's (cache-lookup.ts, NOTE [ Warm lookup ]).
export {
  computeKey, diskGet, kernelCacheDir, KEY_VERSION, memoryGet, memorySet,
  type Backend, type CacheEntry, type KeyParts,
} from './cache-lookup';

export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;
const KEY_RE = /^[0-9a-f]{64}$/;
/** GPUEXT_KERNEL_CACHE_MAX_BYTES (a byte count), else 1 GiB. */
export function kernelCacheMaxBytes(): number {
  const raw = process.env.GPUEXT_KERNEL_CACHE_MAX_BYTES;
  if (raw === undefined || raw.trim() === '') return DEFAULT_MAX_BYTES;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    throw new RangeError(`GPUEXT_KERNEL_CACHE_MAX_BYTES: '${raw}' is not a byte count (a number >= 0)`);
  }
  return Math.floor(n);
}

// ---------------------------------------------------------------------------
// Keys

export interface IncludeSearch {
  /** Where the main source's quoted includes are looked up first (the working directory, as NVRTC does). */
  cwd: string;
  /** -I directories, in order. */
  includeDirs: string[];
  /** Headers included before the source (--pre-include). */
  preIncludes?: string[];
  /**
   * Directories whose files do not change while a process runs (the CUDA
   * toolkit's include directory): their headers are read and hashed once per
   * process, not stat'ed on every lookup.
   */
  fixedDirs?: string[];
}

const MAX_HEADERS = 1024;
const MAX_DEPTH = 64;

interface FileInfo {
  sig: string;
  sha: string;
  includes: { quoted: boolean; name: string }[];
}

/** Per-process memo of headers by (path, size, mtime, inode): a hit re-stats, never re-reads. */
const fileMemo = new Map<string, FileInfo>();

/**
 * The #include directives of a text, in order, skipping comments (and not
 * fooled by comment markers in string literals). `#include MACRO` gives its
 * raw text after '#'.
 */
export function parseIncludes(text: string): { quoted: boolean; name: string }[] {
  const out: { quoted: boolean; name: string }[] = [];
  const n = text.length;
  let i = 0;
  let lineStart = true; // only whitespace (or comments) since the last newline
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 10 /* \n */) {
      lineStart = true;
      i++;
    } else if (c === 32 || c === 9 || c === 13 || c === 12 || c === 11) {
      i++;
    } else if (c === 47 /* / */ && text.charCodeAt(i + 1) === 47) {
      // A // comment, continued by backslash-newlines.
      for (;;) {
        const e = text.indexOf('\n', i);
        if (e < 0) {
          i = n;
          break;
        }
        let back = e - 1;
        if (text.charCodeAt(back) === 13) back--;
        i = e;
        if (text.charCodeAt(back) !== 92) break;
        i = e + 1;
      }
    } else if (c === 47 && text.charCodeAt(i + 1) === 42 /* * */) {
      const e = text.indexOf('*/', i + 2);
      i = e < 0 ? n : e + 2;
    } else if (c === 35 /* # */ && lineStart) {
      const e = text.indexOf('\n', i);
      const line = text.slice(i, e < 0 ? n : e);
      const m = /^#[ \t]*include[ \t]*(?:"([^"]+)"|<([^>]+)>|(.*))/.exec(line);
      if (m) {
        if (m[1] !== undefined) out.push({ quoted: true, name: m[1] });
        else if (m[2] !== undefined) out.push({ quoted: false, name: m[2] });
        else out.push({ quoted: false, name: `#${(m[3] ?? '').replace(/\/[/*].*$/, '').trim()}` });
      }
      // Skip the directive (and its continuation lines) as code: comments in it are handled above.
      lineStart = false;
      i++;
    } else if (c === 34 /* " */ || c === 39 /* ' */) {
      // A string or character literal: to its closing quote, or the end of the line.
      lineStart = false;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92) i += 2;
        else if (d === c) {
          i++;
          break;
        } else if (d === 10) break;
        else i++;
      }
    } else {
      lineStart = false;
      // Skip ordinary characters quickly.
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 10 || d === 47 || d === 34 || d === 39) break;
        i++;
      }
    }
  }
  return out;
}

/** Headers under a fixed directory, by path: read once per process. */
const fixedMemo = new Map<string, FileInfo | null>();

function fileInfo(file: string, fixed = false): FileInfo | undefined {
  if (fixed) {
    const memo = fixedMemo.get(file);
    if (memo !== undefined) return memo ?? undefined;
    const info = fileInfo(file);
    fixedMemo.set(file, info ?? null);
    return info;
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return undefined;
  }
  if (!st.isFile()) return undefined;
  const sig = `${st.size}:${st.mtimeMs}:${st.ino}:${st.ctimeMs}`;
  const memo = fileMemo.get(file);
  if (memo && memo.sig === sig) return memo;
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  const info: FileInfo = {
    sig,
    sha: sha256Hex([data]),
    includes: parseIncludes(data.toString('utf8')),
  };
  fileMemo.set(file, info);
  return info;
}

function isFixed(file: string, search: IncludeSearch): boolean {
  return (search.fixedDirs ?? []).some((d) => file.startsWith(d.endsWith(path.sep) ? d : d + path.sep));
}

function resolveInclude(inc: { quoted: boolean; name: string }, fromDir: string, search: IncludeSearch): string | undefined {
  if (inc.name.startsWith('#')) return undefined;
  if (path.isAbsolute(inc.name)) return fileInfo(inc.name, isFixed(inc.name, search)) ? inc.name : undefined;
  const dirs = inc.quoted ? [fromDir, ...search.includeDirs] : search.includeDirs;
  for (const d of dirs) {
    const p = path.resolve(search.cwd, d, inc.name);
    if (fileInfo(p, isFixed(p, search))) return p;
  }
  return undefined;
}

interface Resolved {
  shown: string;
  /** The header's path, or undefined when not found. */
  file?: string;
  /** A header outside the fixed directories: its own includes are walked on each lookup. */
  open?: boolean;
}

/** Per process: what a header under a fixed directory includes, resolved, recursively (through fixed headers only). */
const subtreeMemo = new Map<string, Resolved[]>();

function fixedSubtree(file: string, search: IncludeSearch): Resolved[] {
  const memoKey = [file, search.cwd, ...search.includeDirs].join('\0');
  const memo = subtreeMemo.get(memoKey);
  if (memo) return memo;
  const out: Resolved[] = [];
  const seen = new Set<string>([file]);
  const walk = (from: string, depth: number): void => {
    const info = fileInfo(from, true);
    if (!info) return;
    for (const inc of info.includes) {
      const shown = inc.quoted ? `"${inc.name}"` : `<${inc.name}>`;
      const f = resolveInclude(inc, path.dirname(from), search);
      if (f === undefined) {
        out.push({ shown });
        continue;
      }
      if (seen.has(f)) continue;
      seen.add(f);
      if (!isFixed(f, search)) {
        out.push({ shown, file: f, open: true });
        continue;
      }
      out.push({ shown, file: f });
      if (depth < MAX_DEPTH && seen.size < MAX_HEADERS) walk(f, depth + 1);
    }
  };
  walk(file, 0);
  subtreeMemo.set(memoKey, out);
  return out;
}

/**
 * What the headers a source includes contribute to its key, one string per
 * header in the order first met: `"name" <sha256 of its bytes>` for one found
 * (through -I, the includer's directory, or the working directory for the
 * main source), searched recursively; `<name> ?` for one not found (the
 * system's, and NVRTC's built-in ones, which the compiler version stands for).
 */
export function headerFingerprints(source: string, search: IncludeSearch): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let full = false;
  const add = (shown: string, file: string | undefined): FileInfo | undefined => {
    if (file === undefined) {
      out.push(`${shown} ?`);
      return undefined;
    }
    const info = fileInfo(file, isFixed(file, search));
    if (!info) {
      out.push(`${shown} ?`);
      return undefined;
    }
    seen.add(file);
    out.push(`${shown} ${info.sha}`);
    if (seen.size >= MAX_HEADERS && !full) {
      full = true;
      out.push(`(more than ${MAX_HEADERS} headers)`);
    }
    return info;
  };
  const walk = (includes: { quoted: boolean; name: string }[], fromDir: string, depth: number): void => {
    for (const inc of includes) {
      if (full) return;
      const shown = inc.quoted ? `"${inc.name}"` : `<${inc.name}>`;
      const file = resolveInclude(inc, fromDir, search);
      if (file !== undefined && seen.has(file)) continue;
      const info = add(shown, file);
      if (!info || file === undefined || depth >= MAX_DEPTH) continue;
      if (!isFixed(file, search)) {
        walk(info.includes, path.dirname(file), depth + 1);
        continue;
      }
      // A toolkit header: its (memoized) tree, and the trees of headers outside it that it pulls in.
      for (const r of fixedSubtree(file, search)) {
        if (full) return;
        if (r.file !== undefined && seen.has(r.file)) continue;
        const sub = add(r.shown, r.file);
        if (sub && r.open && r.file !== undefined) walk(sub.includes, path.dirname(r.file), depth + 2);
      }
    }
  };
  const pre = (search.preIncludes ?? []).map((name) => ({ quoted: true, name }));
  walk([...pre, ...parseIncludes(source)], search.cwd, 0);
  return out;
}

// ---------------------------------------------------------------------------
// Disk

/**
 * Writes an entry (atomically: .bin, then .json, each through a temporary
 * file and a rename), then counts it in the directory's size ledger, which
 * evicts down to the bound when over it (NOTE [ Size ledger ]).
 */
export function diskPut(loc: CacheLocation, key: string, entry: CacheEntry): void {
  const base = path.join(loc.dir, key);
  const meta: EntryMeta = {
    format: ENTRY_FORMAT,
    key,
    backend: entry.backend,
    ptx: entry.ptx,
    loweredNames: entry.loweredNames,
    log: entry.log,
    bytes: entry.image.byteLength,
    sha256: sha256Hex([entry.image]),
    createdAt: new Date().toISOString(),
  };
  const json = `${JSON.stringify(meta)}\n`;
  writeFileAtomic(`${base}.bin`, entry.image);
  writeFileAtomic(`${base}.json`, json);
  recordWrite(loc, key, entry.image.byteLength + Buffer.byteLength(json));
}

export interface KernelCacheStats {
  /** Entries on disk. */
  entries: number;
  /** Bytes on disk (entries and temporary files). */
  bytes: number;
  /** The kernels directory. */
  dir: string;
  /** Entries in this process's memory cache. */
  memoryEntries: number;
  memoryBytes: number;
}

/** What the kernel cache holds, on disk (`dir`, default from GPUEXT_CACHE_DIR) and in memory. */
export function cacheStats(dir: string = kernelCacheDir()): KernelCacheStats {
  const s = scan(dir);
  let entries = 0;
  for (const e of s.entries.values()) if (e.files.some((f) => f.endsWith('.json'))) entries++;
  const m = memoryStats();
  return { entries, bytes: s.bytes, dir, memoryEntries: m.entries, memoryBytes: m.bytes };
}

/** Empties the memory cache and removes every entry (and temporary file) from the disk cache at `dir`. */
export function clearKernelCache(dir: string = kernelCacheDir(), opts: { memory?: boolean; disk?: boolean } = {}): void {
  if (opts.memory !== false) memoryClear();
  if (opts.disk === false) return;
  const s = scan(dir);
  for (const e of s.entries.values()) for (const f of e.files) rmQuiet(f);
  for (const t of s.temps) rmQuiet(t.file);
  forgetSize(dir);
}

/** Whether `key` looks like a cache key (64 hex digits). */
export function isKey(key: string): boolean {
  return KEY_RE.test(key);
}
