// The kernel cache's directory bound: what a directory of entries holds, the
// size ledger each write adds to, and the eviction of the least recently used
// entries after a write takes it over its bound (cache.ts's writes, and the
// jit's translation cache beside it, whose writes need nothing else of the
// kernel cache).
//
// NOTE [ Size ledger ]
// Knowing whether a write took a directory over its bound needs its size. A
// scan stats every file: 100 ms for a kernel cache of 13,000 files on the
// 2-core machine, paid by every compile (the kernel cache scanned after each
// write) and by each process's first jit translation. So a directory keeps
// its size in a ledger, `.size.json` (a dot file: never an entry, never
// evicted): a write reads it, adds its own bytes and writes it back
// (atomically), and scans only when the sum passes the bound, when the
// ledger is missing or unreadable, or when its last full count is a day old.
// Writers racing each other can lose an addition; the ledger then reads
// low, by at most the lost entries, until the day's recount or the next
// scan corrects it: a bound kept a little late, never a wrong entry. ccache
// keeps its size the same way (counters updated by each write, a cleanup
// when they pass the limit).
import * as fs from 'fs';
import * as path from 'path';

import { errorCode, rmQuiet, writeFileAtomic } from '../platform/fs';

/** Eviction trims the directory to this fraction of the bound. */
const TRIM_TO = 0.9;
/** Temporary files older than this are from a process that died mid-write. */
const STALE_TMP_MS = 10 * 60 * 1000;

/** The memo of compiler versions, beside the entries (a dot file: not an entry, never evicted). */
export const VERSIONS_FILE = '.compiler-versions.json';
/** The directory's size as its writers counted it (NOTE [ Size ledger ]). */
export const SIZE_FILE = '.size.json';
/** A ledger whose last full count is older than this is counted again by a scan. */
const RECOUNT_MS = 24 * 60 * 60 * 1000;

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
    if (name === VERSIONS_FILE || name === SIZE_FILE) continue;
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

/** Writes counted by a ledger, and the scans among them (for tests). */
export const ledgerCounts = { writes: 0, scans: 0 };

interface Ledger {
  /** Bytes in the directory: the last scan's count plus the writes since. */
  bytes: number;
  /** When the last scan counted them (ms since the epoch). */
  countedAt: number;
}

function readLedger(file: string): Ledger | undefined {
  try {
    const v: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (typeof v !== 'object' || v === null) return undefined;
    const { bytes, countedAt } = v as Record<string, unknown>;
    return typeof bytes === 'number' && bytes >= 0 && typeof countedAt === 'number' ? { bytes, countedAt } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Counts the `bytes` of an entry just written at `key` in `loc.dir` (NOTE [ Size
 * ledger ]): added to the ledger while the sum stays within the bound, else
 * the directory is scanned and evicted down to it (never `key`) and the ledger
 * starts again from the scan's count.
 */
export function recordWrite(loc: CacheLocation, key: string, bytes: number): void {
  const file = path.join(loc.dir, SIZE_FILE);
  const now = Date.now();
  const ledger = readLedger(file);
  let next: Ledger;
  if (ledger !== undefined && now - ledger.countedAt < RECOUNT_MS && ledger.countedAt <= now && ledger.bytes + bytes <= loc.maxBytes) {
    next = { bytes: ledger.bytes + bytes, countedAt: ledger.countedAt };
  } else {
    next = { bytes: evict(loc, key).bytes, countedAt: now };
    ledgerCounts.scans++;
  }
  ledgerCounts.writes++;
  try {
    writeFileAtomic(file, JSON.stringify(next));
  } catch {
    // a ledger that cannot be written only makes the next write scan
  }
}

/** Forgets the directory's counted size (its entries were removed): the next write scans. */
export function forgetSize(dir: string): void {
  rmQuiet(path.join(dir, SIZE_FILE));
}
