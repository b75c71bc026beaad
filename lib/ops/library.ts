// Each built-in op's registry id, found on first use, and the built-in ops'
// errors named for the gx function called. The library itself
// (ops/build/gx_ops.node) is an ordinary extension: the extension loader
// (lib/extension/runtime.ts) loads it, before any user's library, with the same
// registry and schema checks as a user's.
import { BUILD_CMD, opsLibrary } from '../extension/runtime';

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
