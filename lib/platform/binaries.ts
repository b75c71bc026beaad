// Where the two native binaries are: the core addon (gpuext_core.node) and the
// built-in ops (gx_ops.node). A binary built on this machine wins (it exists
// only after a source build: a git checkout, `npm install --build-from-source`,
// or an install whose prebuilt binaries did not load); else the prebuilt one
// the published package carries in prebuilds/<platform>-<arch>/ (N-API, so one
// binary serves every Node version). scripts/install.js makes the same choice.
import fs from 'fs';
import path from 'path';

import { packageRoot } from './paths';

/** `linux-x64`: the folder under prebuilds/ for this platform, as prebuildify and node-gyp-build name it. */
export function prebuildTag(): string {
  return `${process.platform}-${process.arch}`;
}

/** The prebuilt binaries' folder for this platform. */
export function prebuildDir(root = packageRoot()): string {
  return path.join(root, 'prebuilds', prebuildTag());
}

export type BinaryName = 'core' | 'ops';

/** The candidates for a binary, in the order they are tried: built here, then prebuilt. */
export function binaryCandidates(which: BinaryName, root = packageRoot()): string[] {
  const built = which === 'core' ? path.join(root, 'build', 'Release', 'gpuext_core.node') : path.join(root, 'ops', 'build', 'gx_ops.node');
  const file = which === 'core' ? 'gpuext_core.node' : 'gx_ops.node';
  return [built, path.join(prebuildDir(root), file)];
}

/** The first candidate that exists, or undefined. */
export function findBinary(which: BinaryName, root = packageRoot()): string | undefined {
  return binaryCandidates(which, root).find((f) => fs.existsSync(f));
}

/** How a binary came to be where it is, for logs: 'prebuilt' (prebuilds/), 'built here' or 'named by <env var>'. */
export function binaryOrigin(file: string, root = packageRoot()): string {
  if (path.dirname(file) === prebuildDir(root)) return 'prebuilt';
  return binaryCandidates('core', root)[0] === file || binaryCandidates('ops', root)[0] === file ? 'built here' : 'named by GPUEXT_OPS_LIBRARY';
}
