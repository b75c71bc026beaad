// Writing a file atomically: into a temporary file beside it, flushed to the
// disk, then renamed over the target (whose permissions it takes). A reader (or a crash) sees the old
// file or the new one whole, never part of one (NOTE [ Temporary files of saves ]).
//
// NOTE [ Temporary files of saves ]
// The temporary file is hidden and named after the target and the writing
// process: `.<name>.<pid>.<random>.tmp`. A failed write removes it (any error,
// and SIGINT or SIGTERM while a save is under way, and the process's exit);
// what no code can see (SIGKILL, a power cut) leaves it, so each save first
// sweeps the leftovers of its target: those of processes that are gone, and
// any older than a day (a process id may be reused; older versions' names
// have no id).
import { randomBytes } from 'crypto';
import { unlinkSync } from 'fs';
import { lstat, open, readdir, readlink, realpath, rename, stat, unlink, type FileHandle } from 'fs/promises';
import * as path from 'path';

import { pidAlive } from '../platform/procinfo';
import { withFileContext, type FileContext } from './errors';

/** Leftovers older than this are removed whoever wrote them. */
export const STALE_TEMP_MS = 24 * 60 * 60 * 1000;

/** Temporary files being written now, removed if the process ends first. */
const inFlight = new Set<string>();
let exitHooked = false;

function removeInFlight(): void {
  for (const f of inFlight) {
    try {
      unlinkSync(f);
    } catch {
      // already gone
    }
  }
  inFlight.clear();
}

/** On a signal during a save: remove the temporary files, then let the signal do what it would have done. */
function onSignal(sig: NodeJS.Signals): void {
  removeInFlight();
  unhookSignals();
  // Another listener decides what the signal means; alone, we re-raise it for its default action (exit).
  if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
}

function hookSignals(): void {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', removeInFlight);
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

function unhookSignals(): void {
  process.removeListener('SIGINT', onSignal);
  process.removeListener('SIGTERM', onSignal);
}

function track(tmp: string): void {
  if (inFlight.size === 0) hookSignals();
  inFlight.add(tmp);
}

function untrack(tmp: string): void {
  if (inFlight.delete(tmp) && inFlight.size === 0) unhookSignals();
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Removes the leftover temporary files of `target` (NOTE [ Temporary files of saves ]); best effort, never throws. */
export async function sweepTemporaryFiles(target: string): Promise<string[]> {
  const dir = path.dirname(target);
  const pattern = new RegExp(`^\\.${escapeRegExp(path.basename(target))}\\.(?:(\\d+)\\.)?[0-9a-f]{12}\\.tmp$`);
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const m = pattern.exec(name);
    const file = path.join(dir, name);
    if (m === null || inFlight.has(file)) continue;
    const pid = m[1] === undefined ? undefined : Number(m[1]);
    let stale = pid !== undefined && pid !== process.pid && !pidAlive(pid);
    if (!stale) stale = await stat(file).then((s) => Date.now() - s.mtimeMs > STALE_TEMP_MS, () => false);
    if (stale && (await unlink(file).then(() => true, () => false))) removed.push(file);
  }
  return removed;
}

/**
 * The file a write to `p` replaces: `p`, or the file its symbolic link points
 * at (as np.save and open() write through a link; renaming over the link's
 * own name would replace the link and leave its file as it was).
 */
async function writeTarget(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    // not there yet, or a link to a file not there yet
  }
  const link = await lstat(p).catch(() => undefined);
  return link?.isSymbolicLink() ? path.resolve(path.dirname(p), await readlink(p)) : p;
}

/** Runs `write` on a new temporary file beside `ctx.path` (or the file it links to) and renames it over that once it succeeds. */
export async function writeAtomically(ctx: FileContext, write: (fh: FileHandle) => Promise<void>): Promise<void> {
  const target = await writeTarget(ctx.path);
  await sweepTemporaryFiles(target);
  // Same directory: rename() is atomic only within one file system.
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fh: FileHandle | undefined;
  // Tracked before it exists: a signal arriving while open() completes would otherwise find the file and no
  // record of it (removing a name not yet made is harmless).
  track(tmp);
  let made = false;
  try {
    fh = await open(tmp, 'wx');
    made = true;
    // A file replaced keeps its permissions (a private 0600 file stays private).
    const old = await stat(target).catch(() => undefined);
    if (old?.isFile()) await fh.chmod(old.mode & 0o7777);
    await write(fh);
    await fh.datasync();  // the data on the disk before the name points at it
    await fh.close();
    fh = undefined;
    await rename(tmp, target);
    untrack(tmp);
  } catch (err) {
    if (fh !== undefined) await fh.close().catch(() => undefined);
    // Only a file this call made: when open() failed with EEXIST, `tmp` is another's.
    if (made) await unlink(tmp).catch(() => undefined);
    untrack(tmp);
    throw withFileContext(err, ctx);
  }
}
