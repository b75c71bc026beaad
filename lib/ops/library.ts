// Loading the built-in ops (ops/build/gx_ops.node, built from the root
// setup.config.json by scripts/build-ops.js, or the prebuilt one of a
// published package) the first time an op runs, and
// finding each op's registry id. The library is an ordinary extension: the
// same loader, registry and schema checks as a user's.
import fs from 'fs';
import path from 'path';

import { binaryCandidates, findBinary } from '../binaries';
import { loadLibrary, type ExtensionLibrary } from '../extension';

/**
 * Where the built-in ops library is: GPUEXT_OPS_LIBRARY, else the one built
 * here (`<package>/ops/build/gx_ops.node`), else the prebuilt one
 * (lib/binaries.ts); when none exists, the built path (for the error).
 */
export function opsLibraryPath(): string {
  const env = process.env.GPUEXT_OPS_LIBRARY;
  if (env) return path.resolve(env);
  return findBinary('ops') ?? binaryCandidates('ops')[0];
}

/** The GX_LIBRARY namespace of the built-in ops; no other library may take it. */
export const BUILTIN_NAMESPACE = 'gx_ops';

const BUILD_CMD = '`npm rebuild gpuext --build-from-source` (in a checkout of gpuext: `npm run build:ops`)';

let library: ExtensionLibrary | undefined;

/** The loaded built-in ops; `fn` names the caller in the error when they are missing. */
export function opsLibrary(fn: string): ExtensionLibrary {
  if (library !== undefined) return library;
  const file = opsLibraryPath();
  if (!fs.existsSync(file)) {
    const err = new Error(`${fn}: the built-in ops are not built (${file} is missing); build them with ${BUILD_CMD}`);
    (err as Error & { code: string }).code = 'GX_OPS_NOT_BUILT';
    throw err;
  }
  try {
    library = loadLibrary(file);
  } catch (e) {
    const err = new Error(`${fn}: cannot load the built-in ops from ${file}: ${e instanceof Error ? e.message : String(e)}; ` +
      `rebuild them with ${BUILD_CMD}`);
    (err as Error & { code: string }).code = 'GX_OPS_NOT_BUILT';
    throw err;
  }
  return library;
}

/**
 * Loads the built-in ops if they are not loaded yet, before a user's library:
 * registered first, their names can never be taken by a user's op (one in
 * namespace gx_ops would otherwise make every built-in op fail to load for
 * the rest of the process). A missing or broken built-in library is not an
 * error here: the first op that needs it reports it, with the fix.
 */
export function loadBuiltinsFirst(): void {
  if (library !== undefined) return;
  try {
    opsLibrary('gx.loadLibrary');
  } catch {
    // reported when a built-in op is called (see above)
  }
}

/** One built-in op, its id resolved on first use. */
export class OpRef {
  #id = -1;
  constructor(readonly name: string) {}

  id(fn: string): number {
    if (this.#id < 0) {
      const lib = opsLibrary(fn);
      if (!lib.ops.some((o) => o.name === this.name)) {
        throw new Error(`${fn}: the built-in ops library ${lib.path} has no op '${this.name}'; it is out of date: rebuild it with ${BUILD_CMD}`);
      }
      this.#id = lib.opId(this.name);
    }
    return this.#id;
  }
}

/**
 * `e` with the built-in op's registry name (`gx_ops::svd: ...`, the
 * prefix the core puts on an op's errors) replaced by `fn`, the function the
 * user called: built-in ops' errors name gx functions, not their schemas.
 * For the catch blocks of the wrappers (nothing on the success path).
 */
export function namedForCaller(e: unknown, fn: string): unknown {
  if (e instanceof Error && e.message.startsWith('gx_ops::')) e.message = e.message.replace(/^gx_ops::\w+/, fn);
  return e;
}
