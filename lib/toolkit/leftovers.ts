// Temporary files a killed build left behind. A build writes its outputs
// under temporary names and renames them (lib/platform/fs.ts tmpPathFor:
// `.<file>.tmp-<pid>-<hex>`; compile.ts: `obj/tmp-<pid>-<n>.o`/`.d`); a build
// ended by SIGKILL renames nothing and removes nothing. The next build, once
// it holds the lock, removes those whose writer is gone.
import * as fs from 'fs';
import * as path from 'path';

import { rmQuiet } from '../platform/fs';
import { pidAlive, startedAtMs } from '../platform/procinfo';

const TMP_NAME = /^\.(.+)\.tmp-(\d+)-[0-9a-f]+$/;
const TMP_OBJECT = /^tmp-(\d+)-\d+\.[od]$/;

/**
 * True when the process that wrote a temporary file (named with its id) no
 * longer runs. Called with the build lock held: this process has written
 * nothing yet, so a file with our own id is an earlier process's (a restarted
 * container reuses ids).
 */
function writerGone(pid: number, mtimeMs: number): boolean {
  if (pid === process.pid) return true;
  if (!pidAlive(pid)) return true;
  // Alive, but started after the file was last written: the id was reused.
  const started = startedAtMs(pid);
  return started !== undefined && started > mtimeMs;
}

function removeIn(dir: string, writerOf: (name: string) => number | undefined): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const n of names) {
    const pid = writerOf(n);
    if (pid === undefined) continue;
    const file = path.join(dir, n);
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(file).mtimeMs;
    } catch {
      continue;
    }
    if (writerGone(pid, mtimeMs)) {
      rmQuiet(file);
      removed.push(file);
    }
  }
  return removed;
}

/**
 * Removes the temporary files of dead builds: in `outDir` those of extension
 * `name` (other files there are not ours), in `gxDir` and `objDir` all.
 * Returns the removed paths. Call only while holding the build lock.
 */
export function removeLeftovers(dirs: { outDir: string; gxDir: string; objDir: string }, name: string): string[] {
  const tmpName = (only?: string) => (n: string): number | undefined => {
    const m = TMP_NAME.exec(n);
    return m && (only === undefined || m[1].startsWith(`${only}.`)) ? Number(m[2]) : undefined;
  };
  const tmpObject = (n: string): number | undefined => {
    const m = TMP_OBJECT.exec(n);
    return m ? Number(m[1]) : undefined;
  };
  return [...removeIn(dirs.outDir, tmpName(name)), ...removeIn(dirs.gxDir, tmpName()), ...removeIn(dirs.objDir, tmpObject)];
}
