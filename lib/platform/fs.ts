// Atomic file writes (a temporary file in the same directory, then rename)
// and small hashing helpers.
import * as fs from 'fs';
import * as path from 'path';

import { lazyModule } from './lazy';

// crypto loads with the first hash, not with gpuext (NOTE [ Lazy entry ] in lib/README.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crypto = lazyModule(() => require('crypto') as typeof import('crypto'));

let tmpCount = 0;

/**
 * A temporary path next to `file` (same directory, so rename is atomic): `.<name>.tmp-<pid>-<hex>`, unique
 * within the process by a counter, across processes by the pid, the random digits guarding against a reused
 * pid's leftovers. No crypto: a jit kernel's first translation writes through here (NOTE [ Lazy entry ]).
 */
export function tmpPathFor(file: string): string {
  const hex = `${(tmpCount++).toString(16)}${Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, '0')}`;
  return path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}-${hex}`);
}

/** Writes `data` to `file` so readers see the old or the new content, never a part. */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = tmpPathFor(file);
  try {
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
  } catch (e) {
    rmQuiet(tmp);
    throw e;
  }
}

/** Writes only when the content differs (keeps mtimes, and watchers, quiet). Returns true when written. */
export function writeIfChanged(file: string, data: string): boolean {
  try {
    if (fs.readFileSync(file, 'utf8') === data) return false;
  } catch {
    // missing: write it
  }
  writeFileAtomic(file, data);
  return true;
}

export function rmQuiet(p: string): void {
  try {
    fs.rmSync(p, { force: true, recursive: true });
  } catch {
    // already gone, or not ours to remove
  }
}

export function sha256(...parts: (string | Uint8Array)[]): string {
  const h = crypto().createHash('sha256');
  for (const p of parts) {
    h.update(p);
    h.update('\0');
  }
  return h.digest('hex');
}

/** sha256 of a file's bytes, or undefined when it cannot be read. */
export function hashFile(file: string): string | undefined {
  try {
    return crypto().createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

export function exists(p: string): boolean {
  try {
    fs.accessSync(p);
    return true;
  } catch {
    return false;
  }
}

export function errorCode(e: unknown): string | undefined {
  if (e instanceof Error && 'code' in e && typeof e.code === 'string') return e.code;
  return undefined;
}
