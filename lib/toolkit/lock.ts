// One build at a time per output directory: `<outDir>/.gpuext/lock`, created
// with O_EXCL, holding who took it: {pid, hostname, startedAt} and, on Linux,
// the holder's start time and the boot id (procinfo.ts). A lock is taken
// over when its holder is provably gone: on this host, its process is dead,
// or its id now names another process (started at another time, or in an
// earlier boot: a restarted container reuses ids, its own included). Only a
// holder on another host, which we cannot see, is waited for until the lock
// is 30 minutes old. So a killed build never hangs the next one (unlike
// pytorch#189245).
//
// NOTE [ Locks of older versions ]
// A lock written by an older gpuext has no start time, so a live process
// with its id may be the build that took it or an unrelated process that got
// the id since. When that process started after the lock was taken, it is
// the latter, and the lock is stale at once; otherwise the lock is waited for
// LEGACY_WAIT_MS at most (a build of an older version may be running), the
// wait message naming the process, and then taken over, saying so.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { errorCode, rmQuiet } from '../platform/fs';
import { bootId, commandLine, ownStartTicks, pidAlive, startedAtMs, startTicks } from '../platform/procinfo';

export const STALE_LOCK_MS = 30 * 60 * 1000;
/** How long a lock of an older version naming a live process is waited for (NOTE [ Locks of older versions ]). */
export const LEGACY_WAIT_MS = 2 * 60 * 1000;

export interface LockInfo {
  pid: number;
  hostname: string;
  startedAt: string;
  /** The holder's start time in clock ticks since boot (Linux; absent in locks of older versions). */
  startTicks?: number;
  /** /proc/sys/kernel/random/boot_id when the lock was taken (Linux). */
  bootId?: string;
}

/** Who we are, as a lock records it. */
function selfInfo(): LockInfo {
  return { pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString(), startTicks: ownStartTicks(), bootId: bootId() };
}

export interface LockOptions {
  /** Called once when the lock is held by another live build and we start waiting; `detail` says more of the holder. */
  onWait?: (holder: LockInfo, detail?: string) => void;
  /** Called when a stale lock is taken over. */
  onTakeover?: (holder: LockInfo | undefined, why: string) => void;
  /** Poll interval (ms). */
  pollMs?: number;
  /** Locks older than this are stale (default 30 min). */
  staleMs?: number;
  /** How long a lock of an older version naming a live process is waited for (default LEGACY_WAIT_MS). */
  legacyWaitMs?: number;
}

/** What decides staleness: the age limit, and how long this acquirer has waited (NOTE [ Locks of older versions ]). */
interface Staleness {
  staleMs: number;
  legacyWaitMs: number;
  waitingSince: number;
}

/** Whether a lock is of an older version: no start time where this version records one (Linux). */
function isLegacy(info: LockInfo): boolean {
  return info.startTicks === undefined && ownStartTicks() !== undefined;
}

/** `ms` in seconds, to a tenth. */
function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

/** The wait message of a build waiting for `holder` ("waiting for another build (pid 12, ...)"). */
export function waitMessage(holder: LockInfo, detail?: string): string {
  const host = holder.hostname !== os.hostname() ? ` on ${holder.hostname}` : '';
  return `waiting for another build (pid ${holder.pid}${host}${detail !== undefined ? `: ${detail}` : ''})`;
}

/** More of a holder on this host for the wait message: its command line, and the bounded wait of an older lock. */
function holderDetail(holder: LockInfo, legacyWaitMs: number): string | undefined {
  if (holder.hostname !== os.hostname()) return undefined;
  const cmd = commandLine(holder.pid);
  const parts = cmd !== undefined ? [`process ${holder.pid} is '${cmd}'`] : [];
  if (isLegacy(holder)) parts.push(`the lock is of an older gpuext; taken over after ${seconds(legacyWaitMs)} s if still held`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

export interface Lock {
  readonly file: string;
  release(): void;
}

function readLock(file: string): LockInfo | undefined | 'missing' {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return errorCode(e) === 'ENOENT' ? 'missing' : undefined;
  }
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && 'pid' in v && typeof v.pid === 'number' &&
        'hostname' in v && typeof v.hostname === 'string' && 'startedAt' in v && typeof v.startedAt === 'string') {
      const info: LockInfo = { pid: v.pid, hostname: v.hostname, startedAt: v.startedAt };
      if ('startTicks' in v && typeof v.startTicks === 'number') info.startTicks = v.startTicks;
      if ('bootId' in v && typeof v.bootId === 'string') info.bootId = v.bootId;
      return info;
    }
  } catch {
    // half-written or garbage
  }
  return undefined;
}

/** Why the lock is stale, or undefined when its holder may still be running. */
function staleReason(file: string, info: LockInfo | undefined, st: Staleness): string | undefined {
  let age: number;
  try {
    age = Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  if (info === undefined) {
    // Unreadable content: a writer may be between open and write; give it a moment.
    return age > 5000 ? 'its content is unreadable' : undefined;
  }
  if (info.hostname === os.hostname()) {
    const why = goneReason(file, info) ?? legacyReason(info, st);
    if (why !== undefined) return why;
  }
  if (age > st.staleMs) return `it is ${Math.round(age / 60000)} minutes old`;
  return undefined;
}

/** On this host: why the lock's holder is certainly not running any more, or undefined when it may be. */
function goneReason(file: string, info: LockInfo): string | undefined {
  const boot = bootId();
  if (info.bootId !== undefined && boot !== undefined && info.bootId !== boot) {
    return `it was taken by process ${info.pid} before the machine restarted`;
  }
  if (info.pid === process.pid) {
    // Our own id: either this process holds it (another async build here, or
    // another thread), or an earlier process with the same id took it.
    const own = ownStartTicks();
    const ours = info.startTicks !== undefined && own !== undefined ? info.startTicks === own : held.has(file);
    return ours ? undefined : `it was taken by an earlier process with this process's id (${info.pid}), as after a container restart`;
  }
  if (!pidAlive(info.pid)) return `process ${info.pid} is gone`;
  const now = info.startTicks === undefined ? undefined : startTicks(info.pid);
  if (now !== undefined && now !== info.startTicks) return `process ${info.pid} has exited and its id now names another process`;
  return undefined;
}

/** On this host: why a lock of an older version (no start time) naming a live process is stale, or undefined. */
function legacyReason(info: LockInfo, st: Staleness): string | undefined {
  if (!isLegacy(info) || info.pid === process.pid) return undefined;
  const started = startedAtMs(info.pid), taken = Date.parse(info.startedAt);
  // startedAtMs may be up to 1 s early (the boot time is known to the second).
  if (started !== undefined && Number.isFinite(taken) && started > taken + 1000) {
    return `process ${info.pid} started after the lock was taken, so its id now names another process`;
  }
  const waited = Date.now() - st.waitingSince;
  if (waited < st.legacyWaitMs) return undefined;
  const cmd = commandLine(info.pid);
  return `the lock is of an older gpuext (no start time) and names process ${info.pid}${cmd !== undefined ? ` ('${cmd}')` : ''}, ` +
    `still running after ${seconds(waited)} s of waiting; it cannot be told from an unrelated process with the same id`;
}

function tryCreate(file: string, info: LockInfo): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx');
  } catch (e) {
    if (errorCode(e) === 'EEXIST') return false;
    throw e;
  }
  try {
    fs.writeSync(fd, JSON.stringify(info));
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/**
 * Removes a stale lock, under a short second lock so two waiters cannot both
 * decide "stale" and one delete the other's fresh lock.
 */
function takeOver(file: string, seen: LockInfo | undefined, st: Staleness): boolean {
  const guard = `${file}.takeover`;
  if (!tryCreate(guard, selfInfo())) {
    const g = readLock(guard);
    // A takeover guard lives milliseconds; one left by a killed process is removed.
    if (g !== 'missing' && staleReason(guard, g, { ...st, staleMs: 10_000 }) !== undefined) rmQuiet(guard);
    return false;
  }
  try {
    const now = readLock(file);
    if (now === 'missing') return true;
    if (JSON.stringify(now) !== JSON.stringify(seen) || staleReason(file, now, st) === undefined) return false;
    fs.rmSync(file, { force: true });
    return true;
  } finally {
    rmQuiet(guard);
  }
}

const held = new Set<string>();
let exitHooked = false;

function onSignal(sig: NodeJS.Signals): void {
  for (const f of held) rmQuiet(f);
  held.clear();
  process.exit(sig === 'SIGINT' ? 130 : 143);
}

/** Remembers a held lock; while any is held, Ctrl-C removes it before exiting. */
function hold(file: string): void {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const f of held) rmQuiet(f);
    });
  }
  if (held.size === 0) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  held.add(file);
}

function unhold(file: string): void {
  held.delete(file);
  if (held.size === 0) {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Takes the lock at `file`, waiting for a live holder and taking over a stale one. */
export async function acquireLock(file: string, opts: LockOptions = {}): Promise<Lock> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const info = selfInfo();
  const st: Staleness = { staleMs: opts.staleMs ?? STALE_LOCK_MS, legacyWaitMs: opts.legacyWaitMs ?? LEGACY_WAIT_MS, waitingSince: Date.now() };
  let waited = false;
  for (;;) {
    if (tryCreate(file, info)) break;
    const holder = readLock(file);
    if (holder === 'missing') continue;
    const why = staleReason(file, holder, st);
    if (why !== undefined) {
      if (takeOver(file, holder, st)) opts.onTakeover?.(holder, why);
      continue;
    }
    if (!waited && holder) {
      waited = true;
      opts.onWait?.(holder, holderDetail(holder, st.legacyWaitMs));
    }
    await sleep(opts.pollMs ?? 100);
  }
  hold(file);
  let released = false;
  return {
    file,
    release(): void {
      if (released) return;
      released = true;
      unhold(file);
      // Remove only our own lock (a build that outlived 30 minutes may have been taken over).
      const now = readLock(file);
      if (now !== 'missing' && now !== undefined && now.pid === info.pid && now.startedAt === info.startedAt) rmQuiet(file);
    },
  };
}
