// Where gpuext is: its package root and version, the public headers, and the
// per-user cache directory. The run-time (lib/rtc, the binaries, gx.load) and
// the build toolkit both ask; neither owns the answer (lib/platform/README.md).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

let rootCache: string | undefined;

/** The gpuext package root: the nearest ancestor holding a package.json named "gpuext". */
export function packageRoot(): string {
  if (rootCache !== undefined) return rootCache;
  let dir = __dirname;
  for (;;) {
    const pj = path.join(dir, 'package.json');
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(pj, 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && 'name' in parsed && parsed.name === 'gpuext') {
        rootCache = dir;
        return dir;
      }
    } catch {
      // no package.json here (or not JSON): keep walking up
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`gpuext: cannot find the package root (no package.json named "gpuext" above ${__dirname})`);
    dir = up;
  }
}

let versionCache: string | undefined;

/** The package's version (package.json, read once: gpuext's entry asks, and so does every cache key after it), for keys and the init scaffold. */
export function packageVersion(): string {
  if (versionCache !== undefined) return versionCache;
  const parsed: unknown = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8'));
  versionCache = typeof parsed === 'object' && parsed !== null && 'version' in parsed && typeof parsed.version === 'string' ? parsed.version : '0.0.0';
  return versionCache;
}

/** The directory extensions include from (`#include <gpuext/extension.h>`). */
export function includeDir(): string {
  return path.join(packageRoot(), 'csrc', 'include');
}

/** The per-user cache directory: GPUEXT_CACHE_DIR, else $XDG_CACHE_HOME/gpuext, else ~/.cache/gpuext. */
export function cacheDir(): string {
  if (process.env.GPUEXT_CACHE_DIR) return path.resolve(process.env.GPUEXT_CACHE_DIR);
  if (process.env.XDG_CACHE_HOME) return path.join(path.resolve(process.env.XDG_CACHE_HOME), 'gpuext');
  return path.join(os.homedir(), '.cache', 'gpuext');
}
