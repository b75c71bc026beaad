// The kernel cache's directory bound: what a directory of entries holds, and
// the eviction of the least recently used entries after a write takes it over
// its bound (cache.ts's writes, and the jit's translation cache beside it,
// whose writes need nothing else of the kernel cache).
import * as fs from 'fs';
import * as path from 'path';

import { errorCode, rmQuiet } from '../platform/fs';

/** Eviction trims the directory to this fraction of the bound. */
const TRIM_TO = 0.9;
/** Temporary files older than this are from a process that died mid-write. */
const STALE_TMP_MS = 10 * 60 * 1000;

/** The memo of compiler versions, beside the entries (a dot file: not an entry, never evicted). */
export const VERSIONS_FILE = '.compiler-versions.json';

export interface CacheLocation {
  /** The kernels directory itself (`<cache dir>/kernels`). */
  dir: string;
  /** Bound on the directory's size in bytes. */
  maxBytes: number;
}

interface DirEntry {
  key: string;
  files: string[];
  bytes: number;
  mtimeMs: number;
}

export interface DirScan {
  entries: Map<string, DirEntry>;
  /** Files that are no entry's: temporary files of writes in progress (or of dead processes). */
  temps: { file: string; bytes: number; mtimeMs: number }[];
  bytes: number;
}

export function scan(dir: string): DirScan {
  const out: DirScan = { entries: new Map(), temps: [], bytes: 0 };
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name === VERSIONS_FILE) continue;
    const file = path.join(dir, name);
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch {
      continue;
    }
    if (!st.isFile()) continue;
    const m = /^([0-9a-f]{64})\.(bin|json)$/.exec(name);
    if (m) {
      let e = out.entries.get(m[1]);
      if (!e) {
        e = { key: m[1], files: [], bytes: 0, mtimeMs: 0 };
        out.entries.set(m[1], e);
      }
      e.files.push(file);
      e.bytes += st.size;
      e.mtimeMs = Math.max(e.mtimeMs, st.mtimeMs);
      out.bytes += st.size;
    } else if (name.includes('.tmp-')) {
      out.temps.push({ file, bytes: st.size, mtimeMs: st.mtimeMs });
      out.bytes += st.size;
    }
  }
  return out;
}

export interface EvictResult {
  removedEntries: number;
  removedBytes: number;
  /** The directory's size afterwards. */
  bytes: number;
}

/**
 * When the directory is over `loc.maxBytes`, removes the least recently used
 * entries (oldest mtime first; never `keep`) until it is under 90% of it.
 * Temporary files of dead writers go first.
 */
export function evict(loc: CacheLocation, keep?: string): EvictResult {
  const s = scan(loc.dir);
  const res: EvictResult = { removedEntries: 0, removedBytes: 0, bytes: s.bytes };
  if (s.bytes <= loc.maxBytes) return res;
  const target = Math.floor(loc.maxBytes * TRIM_TO);
  const now = Date.now();
  for (const t of s.temps) {
    if (now - t.mtimeMs < STALE_TMP_MS) continue;
    rmQuiet(t.file);
    res.removedBytes += t.bytes;
    res.bytes -= t.bytes;
  }
  const byAge = [...s.entries.values()].filter((e) => e.key !== keep).sort((a, b) => a.mtimeMs - b.mtimeMs || (a.key < b.key ? -1 : 1));
  for (const e of byAge) {
    if (res.bytes <= target) break;
    // .json first: without it the entry is already a miss for readers.
    for (const f of [...e.files].sort((a, b) => (a.endsWith('.json') ? -1 : b.endsWith('.json') ? 1 : 0))) {
      try {
        fs.unlinkSync(f);
      } catch (err) {
        if (errorCode(err) !== 'ENOENT') continue;
      }
    }
    res.removedEntries++;
    res.removedBytes += e.bytes;
    res.bytes -= e.bytes;
  }
  return res;
}
