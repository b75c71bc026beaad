// Writing a file atomically: into a temporary file beside it, flushed to the
// disk, then renamed over the target (whose permissions it takes). A reader (or a crash) sees the old
// file or the new one whole, never part of one; a failed write removes its
// temporary file and leaves the target as it was.
import { randomBytes } from 'crypto';
import { open, rename, stat, unlink, type FileHandle } from 'fs/promises';
import * as path from 'path';

import { withFileContext, type FileContext } from './errors';

/** Runs `write` on a new temporary file beside `ctx.path` and renames it to ctx.path once it succeeds. */
export async function writeAtomically(ctx: FileContext, write: (fh: FileHandle) => Promise<void>): Promise<void> {
  // Same directory: rename() is atomic only within one file system. Hidden, and named after
  // the target, so that one left by a killed process says what it was.
  const tmp = path.join(path.dirname(ctx.path), `.${path.basename(ctx.path)}.${randomBytes(6).toString('hex')}.tmp`);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'wx');
    // A file replaced keeps its permissions (a private 0600 file stays private).
    const old = await stat(ctx.path).catch(() => undefined);
    if (old?.isFile()) await fh.chmod(old.mode & 0o7777);
    await write(fh);
    await fh.datasync();  // the data on the disk before the name points at it
    await fh.close();
    fh = undefined;
    await rename(tmp, ctx.path);
  } catch (err) {
    if (fh !== undefined) await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw withFileContext(err, ctx);
  }
}
