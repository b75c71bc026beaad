// V8's compiled code for gpuext's own modules, made when the package is built
// (scripts/code-cache.js) and read when they load: Python's .pyc for gpuext.
//
// NOTE [ Code cache ]
// A jit kernel's first call in a fresh process loads the translator (acorn,
// the typer, both emitters) and runs it once: on an H200's host, compiling
// those modules and the first, interpreted run of their functions were most
// of the ~30 ms before the kernel even reached the driver, and
// require('gpuext') paid the same for its own modules. Node 20 has no
// compile cache of its own (module.enableCompileCache is Node 22), so gpuext
// keeps one: the build runs a short warm-up (a kernel of each kind translated
// and simulated) with GPUEXT_CODE_CACHE=write, which records V8's cached data
// of every gpuext module after the run (so the functions it ran are in it,
// compiled), into dist/.code-cache/ beside the modules. Later processes
// compile those modules from it (vm.Script's cachedData) instead of from
// source. Only gpuext's modules (dist/lib) and acorn's entry as the
// translator finds it (NOTE [ acorn by path ]: in gpuext's node_modules or,
// installed in a project, hoisted above it) go this way; every other module
// loads as Node loads it.
//
// A cached module is used only when its file is the one the cache was made
// from: same size and mtime (V8's own check is the source's length, so an
// edited module of the same length would otherwise run its old code). Data
// V8 rejects (another Node, other flags) is ignored, and the module compiles
// from source. GPUEXT_CODE_CACHE=0 turns it off. The cache is read-only at
// run time: nothing is written into the package but by the build.
import * as fs from 'fs';
import Module from 'module';
import * as path from 'path';
import * as vm from 'vm';

import { ACORN_ENTRY, acornFile } from './acorn';
import { writeFileAtomic } from './fs';

/** The package's root (this file is dist/lib/platform/code-cache.js). */
const ROOT = path.resolve(__dirname, '..', '..', '..');
/**
 * One file per Node version and architecture (V8 rejects another's anyway):
 * a 4-byte length, the manifest (JSON: each module's size, mtime and place
 * in the data), then the data; written whole and renamed into place, so a
 * reader never sees a manifest of one build with the data of another.
 */
const FILE = path.join(ROOT, 'dist', '.code-cache', `${process.version}-${process.arch}.bin`);

interface Entry {
  size: number;
  mtimeMs: number;
  offset: number;
  length: number;
}

type Compile = (this: Module, content: string, filename: string) => unknown;
interface ModuleInternals {
  _compile: Compile;
}
/** Node's resolution, as the require function it gives a module uses it. */
const resolver = Module as typeof Module & {
  _resolveFilename(request: string, parent: Module, isMain: boolean, options?: { paths?: string[] }): string;
  _resolveLookupPaths(request: string, parent: Module): string[] | null;
};

const mode = process.env.GPUEXT_CODE_CACHE;
let entries: Record<string, Entry> = {};
let blob: Buffer | undefined;
const written: { rel: string; filename: string; script: vm.Script }[] = [];
/** How many modules came from the cache, and how many of its entries V8 or the file check refused (test/code-cache.test.ts). */
export const codeCacheCounts = { used: 0, refused: 0 };

/** The folder whose modules go through the cache: every module load of the process asks (so the prefix is made once). */
const LIB_DIR = path.join(ROOT, 'dist', 'lib') + path.sep;
/** gpuext's modules, and acorn's entry where the translator finds it (NOTE [ acorn by path ]): beside gpuext or hoisted above it. */
const inPackage = (filename: string): boolean => filename.startsWith(LIB_DIR) || (filename.endsWith(ACORN_ENTRY) && filename === acornFile());

function load(): void {
  try {
    const all = fs.readFileSync(FILE);
    const n = all.readUInt32LE(0);
    const manifest: unknown = JSON.parse(all.toString('utf8', 4, 4 + n));
    if (typeof manifest === 'object' && manifest !== null && 'files' in manifest && typeof manifest.files === 'object' && manifest.files !== null) {
      entries = manifest.files as Record<string, Entry>;
      blob = all.subarray(4 + n);
    }
  } catch {
    // no cache (a source checkout before its build, or another Node): modules compile from source
  }
}

/** The cached data of `filename` when its file is the one it was made from. */
function cachedData(rel: string, filename: string): Buffer | undefined {
  const e = entries[rel];
  if (e === undefined || blob === undefined) return undefined;
  try {
    const st = fs.statSync(filename);
    if (st.size !== e.size || st.mtimeMs !== e.mtimeMs) {
      codeCacheCounts.refused++;
      return undefined;
    }
  } catch {
    return undefined;
  }
  return blob.subarray(e.offset, e.offset + e.length);
}

/** Compiles and runs a module of this package as Node's loader would, from the cached data when there is one. */
function compileCached(original: Compile, mod: Module, content: string, filename: string): unknown {
  const rel = path.relative(ROOT, filename);
  const data = mode === 'write' ? undefined : cachedData(rel, filename);
  if (data === undefined && mode !== 'write') return original.call(mod, content, filename);
  const script = new vm.Script(Module.wrap(content), { filename, cachedData: data });
  if (data !== undefined) {
    if (script.cachedDataRejected === true) codeCacheCounts.refused++;
    else codeCacheCounts.used++;
  }
  if (mode === 'write') written.push({ rel, filename, script });
  const fn = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
  const resolve = Object.assign((request: string, options?: { paths?: string[] }) => resolver._resolveFilename(request, mod, false, options),
    { paths: (request: string) => resolver._resolveLookupPaths(request, mod) });
  const req: NodeJS.Require = Object.assign((id: string): unknown => mod.require(id),
    { resolve, main: require.main, cache: require.cache, extensions: require.extensions });
  return fn.call(mod.exports, mod.exports, req, mod, filename, path.dirname(filename));
}

/** Writes the cached data of every module compiled so far (the build's warm-up, at its exit). */
function writeAll(): void {
  const files: Record<string, Entry> = {};
  const parts: Buffer[] = [];
  let offset = 0;
  for (const { rel, filename, script } of written) {
    const data = script.createCachedData();
    const st = fs.statSync(filename);
    files[rel] = { size: st.size, mtimeMs: st.mtimeMs, offset, length: data.length };
    parts.push(data);
    offset += data.length;
  }
  const manifest = Buffer.from(JSON.stringify({ node: process.version, files }), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(manifest.length, 0);
  writeFileAtomic(FILE, Buffer.concat([length, manifest, ...parts]));
}

if (mode !== '0') {
  if (mode === 'write') process.on('exit', writeAll);
  else load();
  const proto = Module.prototype as Module & ModuleInternals;
  const original = proto._compile;
  if (mode === 'write' || blob !== undefined) {
    proto._compile = function compile(this: Module, content: string, filename: string): unknown {
      return inPackage(filename) ? compileCached(original, this, content, filename) : original.call(this, content, filename);
    };
  }
}
