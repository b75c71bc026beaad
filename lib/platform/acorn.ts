// acorn, the jit translator's parser, loaded from its file.
//
// NOTE [ acorn by path ]
// `require('acorn')` resolves through acorn's package.json "exports", and the
// first such resolution in a process loads Node's ES module resolver: 2.5 ms
// of a cold jit call on the 2-core machine (about 2 ms on an H200's host),
// more than parsing the kernel. So the translator takes acorn's CommonJS
// entry, its package.json's `main` (dist/acorn.js, the file its exports give
// `require` too: test/jit-cold.test.ts checks they agree), from the first
// node_modules folder Node would look in (require.resolve.paths) that holds
// an acorn package: beside gpuext in a checkout, hoisted above it in a
// project, the same file either way. A package without a `main` file, or no
// folder at all (a loader without node_modules), leaves the choice to Node's
// resolution. The code cache (NOTE [ Code cache ]) covers
// this file wherever it lies, so a hoisted acorn compiles from it too.
import * as fs from 'fs';
import * as path from 'path';

import type * as Acorn from 'acorn';

import { coverFile } from './code-cache';

let found: string | null | undefined;

/** The file a package.json's `main` names in `dir`, or null (no package, no main, no such file). */
function mainOf(dir: string): string | null {
  try {
    const main: unknown = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { main?: unknown }).main;
    const file = typeof main === 'string' ? path.join(dir, main) : null;
    return file !== null && fs.existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

/** acorn's entry in the first of the node_modules folders `dirs` that holds an acorn package, or null (none, or no entry of its `main`). */
export function findAcorn(dirs: readonly string[]): string | null {
  for (const dir of dirs) {
    if (fs.existsSync(path.join(dir, 'acorn', 'package.json'))) return mainOf(path.join(dir, 'acorn'));
  }
  return null;
}

/** acorn's CommonJS entry as Node would find the package from here (put under the code cache), or null when Node's resolution must decide. */
export function acornFile(): string | null {
  if (found !== undefined) return found;
  found = findAcorn(require.resolve.paths('acorn') ?? []);
  if (found !== null) coverFile(found);
  return found;
}

/** acorn itself: from its file when found (NOTE [ acorn by path ]), else through Node's resolution. */
export function loadAcorn(): typeof Acorn {
  const file = acornFile();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (file !== null ? require(file) : require('acorn')) as typeof Acorn;
}
