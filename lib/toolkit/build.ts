// `gpuext build`, as a function: config -> sources -> objects (cached by
// content) -> `<outDir>/<name>.node` -> typed bindings (`<name>.js`/.d.ts, or
// .mjs/.cjs with .d.mts/.d.cts: module-format.ts).
// A no-change rebuild reads the manifest, re-hashes sources and headers,
// and runs no compiler, no linker and no codegen.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import type { ExtensionDescriptor } from '../extension/runtime';
import { logger } from '../platform/log';
import { compileUnit, killAll, pool, runTool, unitKey, type ChildSet, type CompileUnit, type UnitRecord } from './compile';
import { DEFAULT_CONFIG_FILE, loadConfig, SOURCE_EXTENSIONS, type ResolvedConfig } from './config';
import { linkError, loadError, namespaceWarnings } from './build-errors';
import { ConfigError, displayPath } from './errors';
import { errorCode, exists, hashFile, rmQuiet, sha256, tmpPathFor, writeFileAtomic, writeIfChanged } from '../platform/fs';
import { glob } from './glob';
import { removeLeftovers } from './leftovers';
import { acquireLock, type LockInfo } from './lock';
import { allBindingNames, bindingFiles } from './module-format';
import {
  compilerVersion, detectToolchain, findCuda, includeDir, nativeGpuModels, packageVersion, requireCxx, requireNvcc,
  systemIncludePrefixes, type Toolchain,
} from './toolchain';

const buildLog = logger('build');
const LINK_KEY_VERSION = 'gpuext-link-1';
const MANIFEST_VERSION = 1;

/** The host file every extension links: it defines gx_extension_init_v1. */
export const EXTENSION_MAIN_SOURCE = '#include <gpuext/extension_main.h>\n';

export type BuildEvent =
  | { type: 'compiled'; index: number; total: number; tool: string; file: string; seconds: number }
  | { type: 'linked'; tool: string; file: string; seconds: number }
  | { type: 'command'; argv: string[] }
  | { type: 'log'; file: string; text: string }
  | { type: 'wait'; holder: LockInfo; detail?: string }
  | { type: 'takeover'; holder?: LockInfo; why: string }
  | { type: 'warning'; text: string };

export interface BuildOptions {
  /** The config file (default ./setup.config.json). */
  config?: string;
  /** An already resolved config (gx.load builds from one without a file). */
  resolved?: ResolvedConfig;
  /** Overrides the config's arch ("native", "all", "sm_80,sm_90"). */
  arch?: string | string[];
  /** Report every command and the compilers' full output (through onEvent) and leave the --verbose hint out of errors. */
  verbose?: boolean;
  /** nvcc to use (tests point it at a missing path); default GPUEXT_NVCC, else the CUDA toolkit's. */
  nvcc?: string;
  /** Host compiler command; default $CXX, else g++. */
  cxx?: string;
  /** Parallel compiler runs (default os.availableParallelism()). */
  jobs?: number;
  /** Describe the built extension and generate its bindings, `<name>.js`/`.d.ts` (default true). */
  bindings?: boolean;
  onEvent?: (e: BuildEvent) => void;
}

export interface BuildResult {
  config: ResolvedConfig;
  /** `<outDir>/<name>.node`. */
  outPath: string;
  /** The generated bindings: `<name>.js` and `<name>.d.ts`, or the .mjs/.d.mts/.cjs/.d.cts of 'both' (empty when bindings are off). */
  bindings: string[];
  /** Units compiled now, and units whose objects came from the cache. */
  compiled: number;
  cached: number;
  /** False when link and codegen were skipped (nothing they depend on changed). */
  linked: boolean;
  seconds: number;
  /** Source files of the build (absolute). */
  sources: string[];
  /** Every file whose change should trigger a rebuild (config, sources, non-system headers). */
  watchFiles: string[];
  /** What the extension defines (when it was linked now and bindings are on). */
  descriptor?: ExtensionDescriptor;
}

interface Manifest {
  version: number;
  /** Compiler version texts by binary fingerprint. */
  versions: Record<string, string>;
  /** By absolute source path. */
  units: Record<string, UnitRecord>;
  /** `stamps`: each output's stampOf when the build ended (absent in manifests from before them: relinked once). */
  link?: { key: string; outputs: string[]; stamps?: string[] };
}

/**
 * What identifies an output file as the one the link wrote: size, modification time and inode. A library
 * put in its place (extracted from an archive, copied from another build) has another, so the next build
 * links again instead of calling it up to date by its name alone.
 */
function stampOf(file: string): string {
  try {
    const st = fs.statSync(file);
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return 'missing';
  }
}

function emptyManifest(): Manifest {
  return { version: MANIFEST_VERSION, versions: {}, units: {} };
}

function isRecordOf(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function readManifest(file: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return emptyManifest();
  }
  if (!isRecordOf(raw) || raw.version !== MANIFEST_VERSION) return emptyManifest();
  const m = emptyManifest();
  if (isRecordOf(raw.versions)) {
    for (const [k, v] of Object.entries(raw.versions)) if (typeof v === 'string') m.versions[k] = v;
  }
  const strs = (x: unknown): string[] | undefined => (Array.isArray(x) && x.every((e) => typeof e === 'string') ? x : undefined);
  if (isRecordOf(raw.units)) {
    for (const [k, v] of Object.entries(raw.units)) {
      if (!isRecordOf(v) || typeof v.key !== 'string') continue;
      const deps = strs(v.deps);
      if (deps && typeof v.sys === 'string') m.units[k] = { key: v.key, deps, sys: v.sys };
    }
  }
  if (isRecordOf(raw.link) && typeof raw.link.key === 'string') {
    const outputs = strs(raw.link.outputs);
    if (outputs) m.link = { key: raw.link.key, outputs, stamps: strs(raw.link.stamps) };
  }
  return m;
}

/** Paths of a build's working files. */
export function buildPaths(cfg: ResolvedConfig): { gxDir: string; objDir: string; lock: string; manifest: string; main: string; node: string } {
  const gxDir = path.join(cfg.outDir, '.gpuext');
  return {
    gxDir,
    objDir: path.join(gxDir, 'obj'),
    lock: path.join(gxDir, 'lock'),
    manifest: path.join(gxDir, 'manifest.json'),
    main: path.join(gxDir, 'extension_main.cpp'),
    node: path.join(cfg.outDir, `${cfg.name}.node`),
  };
}

/** The source files a config names, checked. Throws ConfigError when there are none. */
export function findSources(cfg: ResolvedConfig): string[] {
  const under = displayPath(cfg.baseDir, process.cwd()) || '.';
  const isSource = (f: string) => SOURCE_EXTENSIONS.includes(path.extname(f));
  const matched = glob(cfg.sources, cfg.baseDir, { ignoreDirs: [cfg.outDir] });
  const sources = matched.filter(isSource);
  if (sources.length === 0) {
    const what = matched.length ? `only files that are not sources (${SOURCE_EXTENSIONS.join(', ')})` : 'no files';
    throw new ConfigError(`${cfg.displayFile}: "sources" (${cfg.sources.map((s) => JSON.stringify(s)).join(', ')}) matched ${what} under ${under}`,
      cfg.file, 'sources');
  }
  // Each pattern must match a source on its own: one that matches nothing
  // (a typo, a moved folder) would otherwise drop its ops from the extension
  // and its wrapper without a word while the other patterns build.
  if (cfg.sources.length > 1) {
    for (const pattern of cfg.sources) {
      if (glob([pattern], cfg.baseDir, { ignoreDirs: [cfg.outDir] }).some(isSource)) continue;
      throw new ConfigError(`${cfg.displayFile}: "sources" pattern ${JSON.stringify(pattern)} matched no source files under ${under}` +
        ' (fix the path, or remove the pattern: each one must match at least one source file)', cfg.file, 'sources');
    }
  }
  return sources;
}

function cudaLibDir(tc: Toolchain): string | undefined {
  if (!tc.cudaHome) return undefined;
  for (const d of ['lib64', 'lib', path.join('targets', 'x86_64-linux', 'lib')]) {
    const p = path.join(tc.cudaHome, d);
    if (exists(p)) return p;
  }
  return undefined;
}

// The core addon and the generator load only when a link happens, so a
// no-change rebuild starts no native code (typed lazy requires).
function loadNative(): typeof import('../core/native') {
  return require('../core/native');
}

function loadCodegen(): typeof import('./codegen') {
  return require('./codegen');
}

function codegenFingerprint(): string {
  // The generator's own code is part of what the bindings depend on.
  return hashFile(path.join(__dirname, 'codegen.js')) ?? 'no-codegen';
}

/** Builds an extension. Throws ConfigError, ToolchainError or BuildError. */
export async function build(opts: BuildOptions = {}): Promise<BuildResult> {
  const t0 = performance.now();
  const cfg = opts.resolved ?? loadConfig(opts.config ?? DEFAULT_CONFIG_FILE, { arch: opts.arch });
  const sources = findSources(cfg);
  const paths = buildPaths(cfg);
  const lock = await acquireLock(paths.lock, {
    onWait: (holder, detail) => opts.onEvent?.({ type: 'wait', holder, detail }),
    onTakeover: (holder, why) => opts.onEvent?.({ type: 'takeover', holder, why }),
  });
  try {
    removeLeftovers({ outDir: cfg.outDir, gxDir: paths.gxDir, objDir: paths.objDir }, cfg.name);
    return await buildLocked(cfg, sources, paths, opts, t0);
  } finally {
    lock.release();
  }
}

/**
 * nvcc's -arch=native with no GPU visible quietly falls back to nvcc's own
 * default arch: the build succeeds, and the extension then fails to load its
 * kernels on the GPU it was meant for. Said once per build.
 */
export const NATIVE_WITHOUT_GPU = 'warning: "arch" is "native" but no NVIDIA GPU is visible here, so nvcc builds for its default arch only; ' +
  'name the GPUs to build for ("arch": "sm_80,sm_90" or "all" in setup.config.json, --arch, or GPUEXT_CUDA_ARCH)';

/** What a build's steps share: the config, its paths and sources, the toolchain and its versions, the events. */
interface BuildContext {
  cfg: ResolvedConfig;
  sources: string[];
  paths: ReturnType<typeof buildPaths>;
  opts: BuildOptions;
  emit: (e: BuildEvent) => void;
  verbose: boolean;
  tc: Toolchain;
  /** nvcc, when there are .cu sources. */
  nvcc: string | undefined;
  cxx: string[];
  nvccVersion: string;
  cxxVersion: string;
  /** nvcc's host compiler flag, when the host compiler was named. */
  ccbin: string[];
}

async function buildLocked(cfg: ResolvedConfig, sources: string[], paths: ReturnType<typeof buildPaths>, opts: BuildOptions,
  t0: number): Promise<BuildResult> {
  const tc = detectToolchain({ nvcc: opts.nvcc, cxx: opts.cxx });
  const cu = sources.filter((s) => path.extname(s) === '.cu');
  const nvcc = cu.length ? requireNvcc(tc, cu.map((s) => displayPath(s, cfg.baseDir))) : undefined;
  const cxx = requireCxx(tc);
  const manifest = readManifest(paths.manifest);
  const [nvccVersion, cxxVersion] = await Promise.all([
    nvcc ? compilerVersion([nvcc], manifest.versions) : Promise.resolve(''),
    compilerVersion(cxx, manifest.versions),
  ]);
  const ctx: BuildContext = {
    cfg, sources, paths, opts, emit: (e) => opts.onEvent?.(e), verbose: opts.verbose ?? false, tc, nvcc, cxx, nvccVersion, cxxVersion,
    ccbin: tc.cxxExplicit && cxx.length === 1 ? ['-ccbin', cxx[0]] : [],
  };

  fs.mkdirSync(paths.objDir, { recursive: true });
  writeIfChanged(paths.main, EXTENSION_MAIN_SOURCE);
  const units = compileUnits(ctx);
  const { keys, objects, records, compiled } = await compileAll(ctx, units, manifest);
  const link = await linkIfChanged(ctx, units, keys, objects, manifest);

  // The manifest, then the objects nothing refers to any more (we hold the lock: no other build uses them).
  const newManifest: Manifest = {
    version: MANIFEST_VERSION, versions: manifest.versions, units: records,
    link: { key: link.key, outputs: link.outputs, stamps: link.outputs.map(stampOf) },
  };
  writeFileAtomic(paths.manifest, JSON.stringify(newManifest, null, 1));
  if (link.linked || compiled > 0) collectGarbage(paths.objDir, new Set(keys.map((k) => `${k}.o`)));

  const watch = new Set<string>([...(path.isAbsolute(cfg.file) ? [cfg.file] : []), ...sources]);
  for (const r of Object.values(records)) for (const d of r.deps) watch.add(d);
  return {
    config: cfg, outPath: paths.node, bindings: link.bindings, compiled, cached: units.length - compiled, linked: link.linked,
    seconds: (performance.now() - t0) / 1000, sources, watchFiles: [...watch], descriptor: link.descriptor,
  };
}

/** The compile units: each .cu through nvcc, each C++ source and the extension's main through the host compiler. */
function compileUnits(ctx: BuildContext): CompileUnit[] {
  const { cfg, tc, cxx, paths, sources } = ctx;
  const cu = sources.filter((s) => path.extname(s) === '.cu');
  const inc = includeDir();
  const common = [`-I${inc}`, ...cfg.includeDirs.map((d) => `-I${d}`), ...cfg.defines.map((d) => `-D${d}`)];
  const gencode = cu.length ? findCuda().gencode(cfg.arch) : [];
  // Several targets: nvcc runs their cicc/ptxas steps in parallel (all archs: 7.1 -> 5.2 s on 2 cores).
  if (gencode.filter((f) => f.startsWith('-gencode')).length > 1) gencode.push('--threads', '0');
  const nvccFlags = ['-std=c++17', '-O3', '-Xcompiler', '-fPIC', '-Xcompiler', '-fvisibility=hidden', ...ctx.ccbin, ...common,
    ...gencode, ...cfg.nvccFlags];
  const cxxFlags = ['-std=c++17', '-O2', '-fPIC', '-fvisibility=hidden', ...common,
    ...(tc.cudaHome ? [`-I${path.join(tc.cudaHome, 'include')}`] : []), ...cfg.cxxFlags];
  const nvccKeyExtra = cfg.arch === 'native' ? nativeGpuModels() : [];
  if (cu.length && cfg.arch === 'native' && nvccKeyExtra.length === 0) ctx.emit({ type: 'warning', text: NATIVE_WITHOUT_GPU });
  return [
    ...cu.map((s): CompileUnit => ({
      source: s, display: displayPath(s, cfg.baseDir), toolName: 'nvcc', exe: [ctx.nvcc ?? 'nvcc'], flags: nvccFlags,
      version: ctx.nvccVersion, keyExtra: nvccKeyExtra,
    })),
    ...[...sources.filter((s) => path.extname(s) !== '.cu'), paths.main].map((s): CompileUnit => ({
      source: s, display: s === paths.main ? 'extension_main.cpp (gpuext)' : displayPath(s, cfg.baseDir), toolName: cxxName(cxx),
      exe: cxx, flags: cxxFlags, version: ctx.cxxVersion, keyExtra: [],
    })),
  ];
}

function cxxName(cxx: readonly string[]): string {
  return path.basename(cxx[cxx.length - 1]);
}

/**
 * Compiles the units whose objects are not current (found by re-hashing the
 * source and its recorded headers: no compiler runs for them). Returns each
 * unit's key and object, the manifest records and how many compiled.
 */
async function compileAll(ctx: BuildContext, units: CompileUnit[], manifest: Manifest): Promise<{
  keys: (string | undefined)[]; objects: string[]; records: Record<string, UnitRecord>; compiled: number;
}> {
  const { cfg, paths, verbose, emit } = ctx;
  const keys: (string | undefined)[] = units.map((u) => {
    const rec = manifest.units[u.source];
    if (!rec) return undefined;
    const key = unitKey(u, rec.deps, rec.sys);
    return key !== undefined && key === rec.key && exists(path.join(paths.objDir, `${key}.o`)) ? key : undefined;
  });
  const todo = units.map((_, i) => i).filter((i) => keys[i] === undefined);
  if (buildLog.enabled) {
    units.forEach((u, i) => buildLog('%s: %s %s', cfg.name, keys[i] === undefined ? 'miss, compiling' : `cache hit ${keys[i]?.slice(0, 16)}.o`, u.display));
  }
  const systemPrefixes = systemIncludePrefixes(ctx.tc);
  let done = 0;
  const records: Record<string, UnitRecord> = {};
  units.forEach((u, i) => {
    const rec = manifest.units[u.source];
    if (keys[i] !== undefined && rec) records[u.source] = rec;
  });
  const objects: string[] = units.map((_, i) => path.join(paths.objDir, `${keys[i]}.o`));
  const jobs = ctx.opts.jobs ?? os.availableParallelism();
  const children: ChildSet = new Set();
  await pool(todo.map((i) => async () => {
    const u = units[i];
    const r = await compileUnit(u, {
      objDir: paths.objDir, cwd: cfg.baseDir, systemPrefixes, verbose, children,
      onCommand: verbose ? (argv) => emit({ type: 'command', argv }) : undefined,
      onLog: verbose ? (unit, text) => emit({ type: 'log', file: unit.display, text }) : undefined,
    });
    keys[i] = r.record.key;
    objects[i] = r.object;
    if (r.reusable) records[u.source] = r.record;
    emit({ type: 'compiled', index: ++done, total: todo.length, tool: u.toolName, file: u.display, seconds: r.seconds });
  }), jobs, () => killAll(children));
  return { keys, objects, records, compiled: todo.length };
}

/** What the link step leaves: its key and outputs for the manifest, the bindings, and the new descriptor when it linked. */
interface LinkResult {
  key: string;
  outputs: string[];
  bindings: string[];
  linked: boolean;
  descriptor: ExtensionDescriptor | undefined;
}

/** Links, unless nothing the link and the bindings depend on changed. */
async function linkIfChanged(ctx: BuildContext, units: CompileUnit[], keys: (string | undefined)[], objects: string[],
  manifest: Manifest): Promise<LinkResult> {
  const { cfg, tc, nvcc, cxx, paths } = ctx;
  const bindingsOn = ctx.opts.bindings ?? true;
  const libDir = cudaLibDir(tc);
  const useNvcc = nvcc !== undefined;
  const libFlags = cfg.libraries.length === 0 ? [] : [
    ...(libDir ? [`-L${libDir}`, ...(useNvcc ? ['-Xlinker', '-rpath', '-Xlinker', libDir] : [`-Wl,-rpath,${libDir}`])] : []),
    ...cfg.libraries.map((l) => `-l${l}`),
  ];
  const linkExe = nvcc ? [nvcc] : cxx;
  const linkFlags = ['-shared', ...(useNvcc ? ctx.ccbin : []), ...(useNvcc ? (cfg.linkFlags ?? []).flatMap(throughNvcc) : cfg.linkFlags ?? [])];
  // 'auto' is decided now (the package's "type" may have changed since the last build), and the files it gives are in the key.
  const files = bindingsOn ? bindingFiles(cfg.outDir, cfg.name, cfg.outputFormat) : [];
  const key = sha256(LINK_KEY_VERSION, useNvcc ? ctx.nvccVersion : ctx.cxxVersion, JSON.stringify(linkExe), JSON.stringify(linkFlags),
    JSON.stringify(libFlags), cfg.name, ...keys.map((k) => k ?? ''),
    bindingsOn ? JSON.stringify([packageVersion(), cfg.runtimeImport, cfg.file, codegenFingerprint(), files]) : 'no-bindings');
  const bindings: string[] = files.flatMap((f) => [f.js, f.dts]);
  const outputs = [paths.node, ...bindings];
  const stamps = manifest.link?.stamps;
  const upToDate = manifest.link?.key === key && stamps !== undefined && stamps.length === outputs.length &&
    outputs.every((o, i) => exists(o) && stampOf(o) === stamps[i]);
  buildLog('%s: link %s', cfg.name, upToDate ? 'skipped, outputs up to date' : `needed (${displayPath(paths.node, cfg.baseDir)})`);
  if (upToDate) return { key, outputs, bindings, linked: false, descriptor: undefined };
  const argv = (tmp: string): string[] => [...linkExe, ...linkFlags, '-o', tmp, ...objects, ...libFlags];
  const r = await link(ctx, argv, units, objects, bindingsOn ? files : undefined);
  return { key, outputs, bindings: r.bindings ?? bindings, linked: true, descriptor: r.descriptor };
}

/** A host link flag as nvcc passes it on: -Wl,a,b through -Xlinker (which splits at commas), the rest through -Xcompiler. */
function throughNvcc(flag: string): string[] {
  return flag.startsWith('-Wl,') ? ['-Xlinker', flag.slice(4)] : ['-Xcompiler', flag];
}

/**
 * Links into a temporary file; with bindings, describes it under that name
 * (a registration error leaves the old outputs in place, and a process that
 * already loaded the old one, watch mode, still loads the new), then renames
 * it into place and writes the bindings.
 */
async function link(ctx: BuildContext, argvFor: (tmp: string) => string[], units: CompileUnit[], objects: string[],
  files: ReturnType<typeof bindingFiles> | undefined): Promise<{ bindings?: string[]; descriptor?: ExtensionDescriptor }> {
  const { cfg, paths, verbose, emit, sources } = ctx;
  const tmp = tmpPathFor(paths.node);
  const argv = argvFor(tmp);
  if (verbose) emit({ type: 'command', argv });
  const start = Date.now();
  try {
    const r = await runTool(argv, cfg.baseDir);
    if (verbose && r.output.trim()) emit({ type: 'log', file: `${cfg.name}.node`, text: r.output });
    if (r.code !== 0) {
      throw linkError({
        source: paths.node, log: r.output, command: argv, cwd: cfg.baseDir, base: cfg.baseDir, exitCode: r.code, signal: r.signal,
        stage: 'link', verbose,
      }, { sources: units.map((u) => u.source), objects, base: cfg.baseDir });
    }
    emit({ type: 'linked', tool: ctx.nvcc !== undefined ? 'nvcc' : cxxName(ctx.cxx), file: displayPath(paths.node, cfg.baseDir), seconds: (Date.now() - start) / 1000 });
    if (files === undefined) {
      fs.renameSync(tmp, paths.node);
      return {};
    }
    const { native } = loadNative();
    let desc: ExtensionDescriptor;
    try {
      desc = native.describeExtension(tmp);
    } catch (e) {
      throw loadError(e instanceof Error ? e.message : String(e), tmp, paths.node, sources, cfg.baseDir);
    }
    for (const text of namespaceWarnings(desc, cfg.name, cfg.file, sources, cfg.baseDir)) emit({ type: 'warning', text });
    fs.renameSync(tmp, paths.node);
    const descriptor = { ...desc, path: paths.node };
    const { writeBindings } = loadCodegen();
    const bindings = writeBindings(descriptor, {
      outDir: cfg.outDir, name: cfg.name, runtimeImport: cfg.runtimeImport, configFile: cfg.displayFile,
      // Relative, so generated files do not depend on where the project lives.
      configPath: path.isAbsolute(cfg.file) ? path.relative(cfg.baseDir, cfg.file) : cfg.file,
    }, files, allBindingNames(cfg.name));
    return { bindings, descriptor };
  } finally {
    rmQuiet(tmp);
  }
}

function collectGarbage(objDir: string, keep: Set<string>): void {
  let names: string[];
  try {
    names = fs.readdirSync(objDir);
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return;
    throw e;
  }
  for (const n of names) if (!keep.has(n)) rmQuiet(path.join(objDir, n));
}

/**
 * What `gpuext clean` does: removes `<name>.node`, its bindings in every
 * format (`<name>.js`, `.d.ts`, `.mjs`, `.cjs`, ...) and `<outDir>/.gpuext` (waiting for a running build first), and outDir
 * itself when that leaves it empty. Returns the removed paths.
 */
export async function clean(cfg: ResolvedConfig, onEvent?: (e: BuildEvent) => void): Promise<string[]> {
  const p = buildPaths(cfg);
  const removed: string[] = [];
  if (!exists(cfg.outDir)) return removed;
  const lock = await acquireLock(p.lock, {
    onWait: (holder, detail) => onEvent?.({ type: 'wait', holder, detail }),
    onTakeover: (holder, why) => onEvent?.({ type: 'takeover', holder, why }),
  });
  try {
    for (const f of [p.node, ...allBindingNames(cfg.name).map((n) => path.join(cfg.outDir, n))]) {
      if (exists(f)) {
        rmQuiet(f);
        removed.push(f);
      }
    }
    for (const n of fs.readdirSync(cfg.outDir)) {
      // Temporary files of killed builds.
      if (n.startsWith(`.${cfg.name}.`) && n.includes('.tmp-')) {
        rmQuiet(path.join(cfg.outDir, n));
        removed.push(path.join(cfg.outDir, n));
      }
    }
    for (const n of fs.readdirSync(p.gxDir)) if (n !== 'lock') rmQuiet(path.join(p.gxDir, n));
    removed.push(p.gxDir);
  } finally {
    lock.release();
  }
  try {
    fs.rmdirSync(p.gxDir);
    if (fs.readdirSync(cfg.outDir).length === 0) fs.rmdirSync(cfg.outDir);
  } catch {
    // another build started meanwhile, or the user keeps other files there
  }
  return removed;
}
