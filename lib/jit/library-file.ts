// Where the build leaves CUDA's math as PTX for the jit (jit-math.ptx,
// scripts/build-jit-math.js): beside the ops' binary. Its own module, so
// that the translation cache can key its entries by the file without
// loading the library's reader.
import * as path from 'path';

import { findBinary } from '../platform/binaries';

/**
 * The jit-math.ptx beside the ops' binary, there or not (undefined: no ops
 * binary). The translation cache keys its entries by its identity too
 * (translation-cache.ts): a kernel calling library math translated without
 * it is cached as having no PTX, and stayed so after a build made the file.
 */
export function libraryFile(): string | undefined {
  const ops = findBinary('ops');
  return ops === undefined ? undefined : path.join(path.dirname(ops), 'jit-math.ptx');
}
