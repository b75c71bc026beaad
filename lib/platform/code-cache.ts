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
//
// NOTE [ Code cache under V8 flags ]
// V8 takes cached data only from a process with its flags (a hash of them in
// the data): any V8 flag, on the command line or in NODE_OPTIONS
// (--max-old-space-size, --expose-gc, --stack-size; not Node's own, such as
// --require or --enable-source-maps), makes it refuse every module of the
// build's cache, and a cold jit call then cost 24-31 ms instead of 13.7 on
// the 2-core machine. Such a process, at the first module V8 refuses, turns
// to a cache of its own flags in the user's cache directory
// (`<cache dir>/code-cache/<node>-<arch>-<hash>.bin`, the build's
// format): the modules it has go from there, the others compile from source,
// and at exit the data of those (after the run, so with the functions that
// ran) is written into it beside the entries it had, atomically. The next
// process with those flags finds them; one that adds no module writes
// nothing. The hash is of the package's root and the flags: the command
// line's options (not -e/-p code) and NODE_OPTIONS, as given (Node's own
// options there only give another file; V8 checks the data's flags anyway).
// With it a process under --max-old-space-size=4096 made its cold jit call in
// 12 ms again on the 2-core machine (25 without; medians of 9). The test suite's
// processes are such processes (ava passes --expose-gc). A module whose file
// changed since the build (a bare tsc; a copy of dist/ that did not keep
// mtimes) opens the same cache: its entry there is checked against its file
// as the build's are, so such a package heals at the next process instead of
// compiling from source until `node scripts/code-cache.js` runs.
import * as fs from 'fs';
import Module from 'module';
import * as path from 'path';
import * as vm from 'vm';

import { writeFileAtomic } from './fs';
import { lazyModule } from './lazy';

// Loaded when first needed, not before the hook below is in place (what loads before it compiles from source, and a
// warm jit call paid a young-generation collection more for it).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const paths = lazyModule(() => require('./paths') as typeof import('./paths'));

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

/** A cache file as read: its entries by path relative to ROOT, its data, and whether V8 has refused its data in this process. */
interface CacheFile {
  entries: Record<string, Entry>;
  blob: Buffer;
  v8Refused: boolean;
  /** The build's resolution table (NOTE [ Resolution table ]): `${parent}\0${request}` to the file, paths relative to ROOT as `entries`' are. */
  resolved?: Record<string, string>;
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
/** The build's cache (undefined: none, or GPUEXT_CODE_CACHE=write, which makes it). */
let build: CacheFile | undefined;
/** This process's own cache (NOTE [ Code cache under V8 flags ]): undefined until the build's refuses a module; null when it has none yet. */
let own: CacheFile | null | undefined;
let ownFile: string | undefined;
/** Modules compiled from source to be written at exit: into the build's cache (write mode) or this process's own. */
const written: { rel: string; filename: string; script: vm.Script }[] = [];
/** Whether a module compiled from source is one this process's own cache lacks (or has stale): only then is it written at exit. */
let news = false;
/** How many modules came from a cache, and how many entries V8 or the file check refused (test/code-cache.test.ts). */
export const codeCacheCounts = { used: 0, refused: 0 };

/** The folder whose modules go through the cache: every module load of the process asks (so the prefix is made once). */
const LIB_DIR = path.join(ROOT, 'dist', 'lib') + path.sep;
/** Files outside dist/lib that go through the cache: acorn's entry where the translator finds it (NOTE [ acorn by path ]). */
const covered = new Set<string>();
/** Puts a file outside dist/lib, a dependency of gpuext's, under the cache (before it is required). */
export function coverFile(file: string): void {
  covered.add(file);
}
const inPackage = (filename: string): boolean => filename.startsWith(LIB_DIR) || (covered.size > 0 && covered.has(filename));

/** The cache file at `file`, or undefined (missing, unreadable, not this format). */
function readCacheFile(file: string): CacheFile | undefined {
  try {
    const all = fs.readFileSync(file);
    const n = all.readUInt32LE(0);
    const manifest: unknown = JSON.parse(all.toString('utf8', 4, 4 + n));
    if (typeof manifest === 'object' && manifest !== null && 'files' in manifest && typeof manifest.files === 'object' && manifest.files !== null) {
      const resolved = 'resolved' in manifest && typeof manifest.resolved === 'object' && manifest.resolved !== null
        ? manifest.resolved as Record<string, string> : undefined;
      return { entries: manifest.files as Record<string, Entry>, blob: all.subarray(4 + n), v8Refused: false, resolved };
    }
  } catch {
    // no cache (a source checkout before its build, another Node, a first process with these flags): modules compile from source
  }
  return undefined;
}

/** Writes `items` as one cache file (the format FILE's comment gives). */
function writeCacheFile(file: string, items: readonly { rel: string; size: number; mtimeMs: number; data: Buffer }[], resolved?: Record<string, string>): void {
  const files: Record<string, Entry> = {};
  let offset = 0;
  for (const { rel, size, mtimeMs, data } of items) {
    files[rel] = { size, mtimeMs, offset, length: data.length };
    offset += data.length;
  }
  const manifest = Buffer.from(JSON.stringify({ node: process.version, files, resolved }), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(manifest.length, 0);
  writeFileAtomic(file, Buffer.concat([length, manifest, ...items.map((i) => i.data)]));
}

/** Whether `e` was made from the module's file as it is: same size and mtime (undefined: the file cannot be read). */
function current(e: Entry, filename: string): boolean | undefined {
  try {
    const st = fs.statSync(filename);
    return st.size === e.size && st.mtimeMs === e.mtimeMs;
  } catch {
    return undefined; // gone since it was read: compiled from its content as Node gave it
  }
}

/**
 * The cached data for a module: the build's, else this process's own cache's (NOTE [ Code cache under V8 flags ]),
 * which a refusal of the build's entry (by V8, or a file changed since the build) opens.
 */
function cachedData(rel: string, filename: string): { from: CacheFile; data: Buffer } | undefined {
  for (let k = 0; k < 2; k++) {
    const c = k === 0 ? build : own;
    const e = c === undefined || c === null || c.v8Refused ? undefined : c.entries[rel];
    if (c === undefined || c === null || e === undefined) continue;
    const ok = current(e, filename);
    if (ok === true) return { from: c, data: c.blob.subarray(e.offset, e.offset + e.length) };
    if (ok === false) {
      codeCacheCounts.refused++;
      if (c === build && own === undefined) turnToOwn();
    }
  }
  return undefined;
}

/**
 * A hash (FNV-1a, 32 bits) of this package's root and this process's flags: the command line's options without -e/-p
 * code, and NODE_OPTIONS. The root keeps two checkouts sharing a cache directory from overwriting each other's file.
 */
function flagsHash(): string {
  const argv = process.execArgv;
  const flags: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (/^(-e|--eval|-p|--print|-pe)$/.test(argv[i])) i++;
    else if (!/^--(eval|print)=/.test(argv[i])) flags.push(argv[i]);
  }
  const text = [ROOT, ...flags, process.env.NODE_OPTIONS ?? ''].join('\0');
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** Whether turnToOwn is running (what it loads compiles from source, without turning again). */
let turning = false;

/** The build's cache cannot serve this process (V8 refused its data: other flags) or this module (changed since the build). */
function turnToOwn(): void {
  // paths.js loads here (it no longer loads before the hook: lib/index.ts loads this module first), and its entry may be
  // stale too (a bare tsc rewrote every module): its load must not turn again, which would require it half loaded.
  if (turning) return;
  turning = true;
  try {
    ownFile = path.join(paths().cacheDir(), 'code-cache', `${process.version}-${process.arch}-${flagsHash()}.bin`);
    own = readCacheFile(ownFile) ?? null;
    process.on('exit', writeOwn);
  } catch {
    ownFile = undefined; // no cache directory to be had: modules compile from source
  } finally {
    turning = false;
  }
}

/** Compiles and runs a module of this package as Node's loader would, from the cached data when there is one. */
function compileCached(original: Compile, mod: Module, content: string, filename: string): unknown {
  const rel = path.relative(ROOT, filename);
  const hit = mode === 'write' ? undefined : cachedData(rel, filename);
  // A module compiled from source is kept (as a vm.Script) only when its data will be written.
  const keep = mode === 'write' || ownFile !== undefined;
  if (hit === undefined && !keep) return original.call(mod, content, filename);
  const script = new vm.Script(Module.wrap(content), { filename, cachedData: hit?.data });
  let fromSource = hit === undefined;
  if (hit !== undefined && script.cachedDataRejected === true) {
    codeCacheCounts.refused++;
    hit.from.v8Refused = true;
    fromSource = true;
    if (hit.from === build && own === undefined) turnToOwn();
  } else if (hit !== undefined) {
    codeCacheCounts.used++;
  }
  if (fromSource && (mode === 'write' || ownFile !== undefined)) {
    written.push({ rel, filename, script });
    const e = own === null || own === undefined || own.v8Refused ? undefined : own.entries[rel];
    if (ownFile !== undefined && (e === undefined || current(e, filename) !== true)) news = true;
  }
  const fn = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
  const resolve = Object.assign((request: string, options?: { paths?: string[] }) => resolver._resolveFilename(request, mod, false, options),
    { paths: (request: string) => resolver._resolveLookupPaths(request, mod) });
  const req: NodeJS.Require = Object.assign((id: string): unknown => mod.require(id),
    { resolve, main: require.main, cache: require.cache, extensions: require.extensions });
  return fn.call(mod.exports, mod.exports, req, mod, filename, path.dirname(filename));
}

/** The data of the modules compiled from source so far, with their files' identities. */
function writtenItems(): { rel: string; size: number; mtimeMs: number; data: Buffer }[] {
  return written.map(({ rel, filename, script }) => {
    const st = fs.statSync(filename);
    return { rel, size: st.size, mtimeMs: st.mtimeMs, data: script.createCachedData() };
  });
}

/** Writes the cached data of every module compiled so far (the build's warm-up, at its exit). */
function writeAll(): void {
  writeCacheFile(FILE, writtenItems(), recorded);
}

/** At exit: this process's own cache, with the modules it compiled from source beside the entries it had (best effort). */
function writeOwn(): void {
  if (ownFile === undefined || !news) return;
  const fresh = new Set(written.map((w) => w.rel));
  const old = own === null || own === undefined || own.v8Refused ? undefined : own;
  const kept = old === undefined ? [] : Object.entries(old.entries).filter(([rel]) => !fresh.has(rel))
    .map(([rel, e]) => ({ rel, size: e.size, mtimeMs: e.mtimeMs, data: old.blob.subarray(e.offset, e.offset + e.length) }));
  try {
    writeCacheFile(ownFile, [...kept, ...writtenItems()]);
  } catch {
    // a read-only or full cache directory: the next process compiles from source again
  }
}

// NOTE [ Resolution table ]
// Node resolves each require of a relative path on its own: the path against
// the parent's folder, a stat of the bare name, then of name.js, then the
// real path; require('gpuext') asks it about 950 times, and on the 2-core
// machine that was 11 of its 42 ms. The build's warm-up records what Node
// answered for every request a gpuext module made of another (parent and
// request to the file, relative to the package, under dist/lib only) into
// the cache file, and later processes answer those requests from it: the
// file when it is loaded already or is a file still, else (a package
// changed since its build) Node's own resolution, as for every request the
// table lacks (other parents, require.resolve's paths, the modules only a
// GPU run loads). The same files load either way (test/code-cache.test.ts
// compares the module lists).
/** The build's warm-up's answers (write mode), for the cache file. */
let recorded: Record<string, string> | undefined;

/** Records Node's answers for requests between gpuext's modules (the build's warm-up). */
function recordResolutions(): void {
  const original = resolver._resolveFilename;
  recorded = {};
  const table = recorded;
  resolver._resolveFilename = function resolveFilename(request, parent, isMain, options) {
    const file = original.call(this, request, parent, isMain, options);
    if (options === undefined && typeof parent?.filename === 'string' && parent.filename.startsWith(LIB_DIR) && file.startsWith(LIB_DIR)) {
      table[`${path.relative(ROOT, parent.filename)}\0${request}`] = path.relative(ROOT, file);
    }
    return file;
  };
}

const loaded = Module as unknown as { _cache: Record<string, Module | undefined> };

/**
 * @internal The table's file for `request` of the module at `from`: where the entry names a module loaded already or a
 * file still; undefined (Node resolves it) for any other request, parent or entry.
 */
export function tableAnswer(table: Record<string, string>, request: string, from: unknown): string | undefined {
  if (typeof from !== 'string' || !from.startsWith(LIB_DIR)) return undefined;
  // Both paths are under ROOT and normalized (path.relative made the table's): sliced and joined by hand, where
  // path.relative and path.join would normalize them again at every request.
  const rel = table[`${from.slice(ROOT.length + 1)}\0${request}`];
  if (rel === undefined) return undefined;
  const file = ROOT + path.sep + rel;
  return loaded._cache[file] !== undefined || fs.statSync(file, { throwIfNoEntry: false })?.isFile() === true ? file : undefined;
}

/** Answers requests between gpuext's modules from the build's table (tableAnswer), the rest as Node does. */
function answerResolutions(table: Record<string, string>): void {
  const original = resolver._resolveFilename;
  resolver._resolveFilename = function resolveFilename(request, parent, isMain, options) {
    return (options === undefined ? tableAnswer(table, request, parent?.filename) : undefined) ?? original.call(this, request, parent, isMain, options);
  };
}

if (mode !== '0') {
  if (mode === 'write') {
    process.on('exit', writeAll);
    recordResolutions();
  } else {
    build = readCacheFile(FILE);
    if (build?.resolved !== undefined) answerResolutions(build.resolved);
  }
  const proto = Module.prototype as Module & ModuleInternals;
  const original = proto._compile;
  if (mode === 'write' || build !== undefined) {
    proto._compile = function compile(this: Module, content: string, filename: string): unknown {
      return inPackage(filename) ? compileCached(original, this, content, filename) : original.call(this, content, filename);
    };
  }
}
