// Atomic file writes (a temporary file in the same directory, then rename)
// and small hashing helpers.
import * as fs from 'fs';
import * as path from 'path';

import { lazyModule } from './lazy';

// crypto loads with the first hash or temporary name, not with gpuext (NOTE [ Lazy entry ] in lib/README.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crypto = lazyModule(() => require('crypto') as typeof import('crypto'));

/** A temporary path next to `file` (same directory, so rename is atomic). */
export function tmpPathFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}-${crypto().randomBytes(4).toString('hex')}`);
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
