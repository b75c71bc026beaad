// Telling processes apart on this host for the build lock and the build's
// temporary files. A process id alone is not an identity: ids are reused
// (a restarted container runs node as PID 1 again, under the same hostname),
// so an id is paired with the process's start time (/proc/<pid>/stat) and
// the kernel's boot id. Off Linux (no /proc) these are undefined, and
// callers fall back to "is the id alive".
import * as fs from 'fs';

import { errorCode } from './fs';

// The kernel reports start times in clock ticks of USER_HZ, which is 100 on
// every Linux architecture Node runs on (sysconf(_SC_CLK_TCK) is not
// reachable from JS without a native call).
const TICKS_PER_SECOND = 100;

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

let cachedBootId: string | undefined | null = null;

/** This boot of the machine (a random id the kernel picks at boot), or undefined off Linux. */
export function bootId(): string | undefined {
  if (cachedBootId === null) cachedBootId = readText('/proc/sys/kernel/random/boot_id')?.trim() || undefined;
  return cachedBootId;
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | undefined {
  const text = readText(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  const close = text.lastIndexOf(')');
  return close < 0 ? undefined : text.slice(close + 2).split(' ');
}

/** When the process started, in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined. */
export function startTicks(pid: number): number | undefined {
  // Field 3 (state) is index 0 here, so field 22 is index 19.
  const v = Number(statFields(pid)?.[19]);
  return Number.isInteger(v) ? v : undefined;
}

/** True when a process with this id exists and has not exited (a zombie, exited but not yet reaped, is not alive). */
export function pidAlive(pid: number): boolean {
  const fields = statFields(pid);
  if (fields !== undefined) return fields[0] !== 'Z' && fields[0] !== 'X';
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errorCode(e) !== 'ESRCH';
  }
}

let bootTimeMs: number | undefined | null = null;

/**
 * When the process started, in ms since the epoch, or undefined. The boot
 * time is known to the second only, so this may be up to 1 s early.
 */
export function startedAtMs(pid: number): number | undefined {
  const ticks = startTicks(pid);
  if (ticks === undefined) return undefined;
  if (bootTimeMs === null) {
    const m = /^btime (\d+)$/m.exec(readText('/proc/stat') ?? '');
    bootTimeMs = m ? Number(m[1]) * 1000 : undefined;
  }
  return bootTimeMs === undefined ? undefined : bootTimeMs + (ticks * 1000) / TICKS_PER_SECOND;
}

/** This process's start time in ticks, read once. */
let ownTicks: number | undefined | null = null;
export function ownStartTicks(): number | undefined {
  if (ownTicks === null) ownTicks = startTicks(process.pid);
  return ownTicks;
}

/** The command line of a process on this host ('node build.js'), shortened, or undefined (gone, or off Linux). */
export function commandLine(pid: number, max = 80): string | undefined {
  const text = readText(`/proc/${pid}/cmdline`)?.split('\0').filter(Boolean).join(' ');
  if (!text) return undefined;
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
