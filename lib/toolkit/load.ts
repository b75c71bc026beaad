// gx.load / gx.loadInline: build an extension on first use (like
// torch.utils.cpp_extension.load / load_inline) through the same build code
// and object cache as `gpuext build`, then load it and return its ops.
// Builds live in <cache dir>/extensions/<name>-<hash of the inputs>/; a later
// call, in this process or another, with the same inputs runs no compiler.
import * as path from 'path';

import { sha256, writeIfChanged } from '../platform/fs';
import { cacheDir, packageVersion } from '../platform/paths';
import type { BuildEvent } from './build';
import type { DefineValue } from './config';
import { ConfigError, displayPath } from './errors';
import { lazyModule } from '../platform/lazy';
import { loadLibrary, namespaceOwner, type OpDescriptor, type OpFunction, BUILTIN_NAMESPACE } from '../extension/runtime';
import { checkOptions, optionKeys } from '../core/options';

import type { OpsOf } from '../extension/schema-types';

// The build (its compilers, child processes, config reader and lock) loads with the first gx.load, not with
// gpuext (NOTE [ Lazy entry ] in lib/README.md).
/* eslint-disable @typescript-eslint/no-require-imports */
const builder = lazyModule(() => require('./build') as typeof import('./build'));
const config = lazyModule(() => require('./config') as typeof import('./config'));
const diagnostics = lazyModule(() => require('./diagnostics') as typeof import('./diagnostics'));
const lock = lazyModule(() => require('./lock') as typeof import('./lock'));
/* eslint-enable @typescript-eslint/no-require-imports */

export interface LoadOptions {
  /** The extension's name (an identifier); ops come from its GX_LIBRARY blocks. */
  name: string;
  /** Source files (.cu, .cpp), relative to the current directory or absolute; globs allowed. */
  sources: string[];
  nvccFlags?: string[];
  cxxFlags?: string[];
  includeDirs?: string[];
  defines?: Record<string, DefineValue> | string[];
  /** Libraries to link by name ("cublas"). */
  libraries?: string[];
  /** "native" (default), "all", "sm_80,sm_90" or an array. */
  arch?: string | string[];
  /** Print the build's commands and compiler output (to stderr). */
  verbose?: boolean;
  /** Where builds go (default: GPUEXT_CACHE_DIR, $XDG_CACHE_HOME/gpuext or ~/.cache/gpuext, + /extensions). */
  buildDirectory?: string;
  /**
   * The schemas of the ops to call, as in the GX_LIBRARY block (`m.def("...")`):
   * the returned ops are typed from them (OpsOf), and each is checked at load
   * time against what the extension registers, so the types cannot drift from
   * the C++. Ops left out stay callable, untyped, through a cast.
   */
  schemas?: readonly string[];
}

export interface LoadInlineOptions extends Omit<LoadOptions, 'sources'> {
  /** CUDA source (a .cu file's text); `gpuext/extension.h` is pre-included (-include) when the text does not include it. */
  cuda?: string | string[];
  /** C++ source (a .cpp file's text); `gpuext/extension.h` is pre-included (-include) when the text does not include it. */
  cpp?: string | string[];
}

/** The ops of a loaded extension, by camelCase name (add_gpu -> addGpu), untyped. */
export type LoadedOps = Readonly<Record<string, OpFunction>>;

const LOAD_KEYS = optionKeys<LoadOptions>({
  name: true, sources: true, nvccFlags: true, cxxFlags: true, includeDirs: true, defines: true, libraries: true, arch: true,
  verbose: true, buildDirectory: true, schemas: true,
});
const LOAD_INLINE_KEYS = optionKeys<LoadInlineOptions>({
  name: true, cuda: true, cpp: true, nvccFlags: true, cxxFlags: true, includeDirs: true, defines: true, libraries: true,
  arch: true, verbose: true, buildDirectory: true, schemas: true,
});

// NOTE [ One version of an extension per process ]
// Ops stay registered until the process exits (the registry never forgets an
// id a caller may hold), so a second version of an extension cannot replace
// the first. The build directory's name holds a hash of the inputs: an edited
// loadInline text (or other options) builds in a new directory and would only
// meet the core's "duplicate op". So what was loaded is remembered by
// extension name, and a name is checked before anything is built.
/** The build directory each extension name was loaded from, in this process. */
const loadedByName = new Map<string, string>();

function list(x: string | string[] | undefined): string[] {
  return x === undefined ? [] : Array.isArray(x) ? x : [x];
}

function fail(fn: string, field: string, msg: string): never {
  throw new ConfigError(`${fn}: "${field}" ${msg}`, fn, field);
}

/** Schema text with its spacing normalized, for comparing a declared schema with a registered one. */
function normalSchema(s: string): string {
  return s.replace(/\s+/g, ' ').replace(/\s*([(),=*\[\]?>-])\s*/g, '$1').trim();
}

/** The `schemas` option, checked before anything is built: an array of strings, each with an op name. */
function checkSchemas(fn: string, schemas: unknown): readonly string[] {
  if (schemas === undefined) return [];
  if (!Array.isArray(schemas) || !schemas.every((s) => typeof s === 'string' && /^\s*[\w:]+\s*\(/.test(s))) {
    fail(fn, 'schemas', "must be an array of op schemas like 'scale(Tensor x, float s) -> Tensor'");
  }
  return schemas as readonly string[];
}

/** Each declared schema must be the one the extension registered (the types come from it). */
function verifySchemas(fn: string, declared: readonly string[], ops: readonly OpDescriptor[]): void {
  declared.forEach((s, i) => {
    const name = s.slice(0, s.indexOf('(')).trim().replace(/^.*::/, '');
    const op = ops.find((o) => o.name === name);
    if (op === undefined) {
      fail(fn, 'schemas', `[${i}] declares op '${name}', which the extension does not register (it has ${ops.map((o) => o.name).join(', ')})`);
    }
    if (normalSchema(s) !== normalSchema(op.schema)) {
      fail(fn, 'schemas', `[${i}] declares '${s.trim()}' but the extension registers '${op.schema}'; copy the schema from its m.def()`);
    }
  });
}

function checkName(fn: string, name: unknown): string {
  if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    fail(fn, 'name', 'must be an identifier (letters, digits, _; not starting with a digit)');
  }
  return name;
}

function stderrPrinter(e: BuildEvent): void {
  switch (e.type) {
    case 'compiled': process.stderr.write(`[${e.index}/${e.total}] ${e.tool} ${e.file} ${e.seconds.toFixed(1)}s\n`); break;
    case 'command': process.stderr.write(`$ ${e.argv.join(' ')}\n`); break;
    case 'log': process.stderr.write(`${e.text.replace(/\s+$/, '')}\n`); break;
    case 'wait': process.stderr.write(`${lock().waitMessage(e.holder, e.detail)}\n`); break;
    case 'takeover': process.stderr.write(`taking over a stale build lock (${e.why})\n`); break;
    case 'warning': process.stderr.write(`${e.text}\n`); break;
    case 'linked': break;
  }
}

const warned = new Set<string>();

/** Without `verbose`, a build's warnings only, each once per process (as process warnings, so --no-warnings hides them). */
function quietPrinter(e: BuildEvent): void {
  if (e.type !== 'warning' || warned.has(e.text)) return;
  warned.add(e.text);
  process.emitWarning(e.text.replace(/^warning: /, ''), { code: 'GPUEXT_BUILD' });
}

function restartHint(name: string): string {
  return `its ops stay registered until the process exits, so they cannot be replaced: give this version another name ` +
    `(e.g. '${name}_v2'), or restart the process to load it`;
}

/** Refuses, before building, a name that would clash with what this process already registered. */
function checkNameFree(fn: string, name: string, dir: string, node: string): void {
  if (name === BUILTIN_NAMESPACE) {
    fail(fn, 'name', `'${name}' is reserved: it is the namespace of gpuext's built-in ops; choose another name`);
  }
  const before = loadedByName.get(name);
  if (before !== undefined && before !== dir) {
    const what = fn === 'gx.loadInline' ? 'other source text' : 'other sources';
    throw new Error(`${fn}: an extension named '${name}' is already loaded in this process, built from ${what} or options; ` +
      restartHint(name));
  }
  const owner = namespaceOwner(name);
  if (owner !== undefined && owner !== node) {
    fail(fn, 'name', `'${name}' is already taken: the ops of ${owner} are registered under it in this process; choose another name`);
  }
}

/** loadLibrary, with a registration error's m.def located in `sources` (the error says where, as `gpuext build`'s does). */
function loadRegistered(file: string, sources: readonly string[]): ReturnType<typeof loadLibrary> {
  try {
    return loadLibrary(file);
  } catch (e) {
    const place = e instanceof Error ? diagnostics().locateDef(e.message, sources) : undefined;
    if (e instanceof Error && place !== undefined) e.message += ` (at ${displayPath(place.file, process.cwd())}:${place.line})`;
    throw e;
  }
}

/** Builds (when needed) and loads; `writeSources` runs once the name is known to be free. */
async function buildAndLoad(fn: string, o: Omit<LoadOptions, 'sources'>, sources: string[], inputsKey: string[],
  writeSources?: () => void): Promise<LoadedOps> {
  const name = checkName(fn, o.name);
  const schemas = checkSchemas(fn, o.schemas);
  const hash = sha256(packageVersion(), name, ...inputsKey, JSON.stringify([
    o.nvccFlags ?? [], o.cxxFlags ?? [], (o.includeDirs ?? []).map((d) => path.resolve(d)), o.defines ?? [], o.libraries ?? [],
    o.arch ?? null,
  ])).slice(0, 16);
  const dir = path.join(o.buildDirectory ? path.resolve(o.buildDirectory) : path.join(cacheDir(), 'extensions'), `${name}-${hash}`);
  checkNameFree(fn, name, dir, path.join(dir, `${name}.node`));
  writeSources?.();
  const cfg = config().resolveConfig({
    name, sources, outDir: dir, nvccFlags: o.nvccFlags, cxxFlags: o.cxxFlags, includeDirs: o.includeDirs,
    defines: o.defines, libraries: o.libraries, arch: o.arch,
  }, fn, process.cwd());
  const r = await builder().build({ resolved: cfg, bindings: false, verbose: o.verbose, onEvent: o.verbose ? stderrPrinter : quietPrinter });
  // Same inputs by name (gx.load hashes paths, not contents): an edited file is found only by the build.
  if (r.linked && loadedByName.get(name) === dir) {
    throw new Error(`${fn}: extension '${name}' changed after this process loaded it; ${restartHint(name)}`);
  }
  const lib = loadRegistered(r.outPath, r.sources);
  loadedByName.set(name, dir);
  verifySchemas(fn, schemas, lib.ops);
  return lib.functions;
}

/**
 * Builds (on first use) and loads an extension from source files; returns its
 * ops by camelCase name (add_gpu -> addGpu), as torch.utils.cpp_extension.load.
 *
 * Typed ops, two ways: pass the ops' `schemas` (copied from the m.def() lines;
 * checked against the extension when it loads), or name the ops' type, e.g.
 * the module `gpuext build` generates. Without either the ops are untyped.
 * @example
 * const ops = await gx.load({ name: 'my_ops', sources: ['ops/add.cu'],
 *   schemas: ['add_gpu(Tensor a, Tensor b) -> Tensor'] });
 * const c = ops.addGpu(a, b);  // (a: Tensor, b: Tensor) => Tensor; ops.addGPU is a compile error
 * const typed = await gx.load<typeof import('./build/my_ops')>({ name: 'my_ops', sources: ['ops/add.cu'] });
 */
export function load<const S extends readonly string[]>(options: LoadOptions & { schemas: S }): Promise<OpsOf<S>>;
export function load(options: LoadOptions): Promise<LoadedOps>;
export function load<Ops extends object>(options: LoadOptions): Promise<Ops>;
export async function load(options: LoadOptions): Promise<LoadedOps> {
  const fn = 'gx.load';
  checkOptions<LoadOptions>(options, fn, LOAD_KEYS);
  if (options === undefined || options === null) fail(fn, 'name', 'is required: gx.load({ name, sources })');
  const sources = options.sources;
  if (!Array.isArray(sources) || sources.length === 0 || !sources.every((s) => typeof s === 'string' && s !== '')) {
    fail(fn, 'sources', 'must be a non-empty array of file paths');
  }
  const abs = sources.map((s) => path.resolve(s));
  return buildAndLoad(fn, options, abs, abs);
}

const HEADER = 'gpuext/extension.h';

// The header comes in by the compiler's -include, not as a line added to the
// text: the file on disk is then the user's text, so the line numbers and the
// source lines a compiler quotes under an error are the user's own (gcc quotes
// the file's physical line, which a prepended `#include` + `#line 1` shifts).
function preInclude(texts: string[]): string[] {
  return texts.some((t) => !t.includes(`<${HEADER}>`)) ? ['-include', HEADER] : [];
}

/**
 * Builds (on first use) and loads an extension from source text; returns its
 * ops by camelCase name, as torch.utils.cpp_extension.load_inline. Typed as
 * gx.load: by `schemas` (checked against the m.def() lines when it loads) or
 * by a type argument.
 * @example
 * const { scale } = await gx.loadInline({ name: 'inline_ops', cuda: `
 *   gx::Tensor scale(const gx::Tensor& x, double s) { ... }
 *   GX_LIBRARY(inline_ops, m) { m.def("scale(Tensor x, float s) -> Tensor").impl(gx::kCUDA, scale); }`,
 *   schemas: ['scale(Tensor x, float s) -> Tensor'] });
 * scale(x, 2);  // (x: Tensor, s: number) => Tensor
 */
export function loadInline<const S extends readonly string[]>(options: LoadInlineOptions & { schemas: S }): Promise<OpsOf<S>>;
export function loadInline(options: LoadInlineOptions): Promise<LoadedOps>;
export function loadInline<Ops extends object>(options: LoadInlineOptions): Promise<Ops>;
export async function loadInline(options: LoadInlineOptions): Promise<LoadedOps> {
  const fn = 'gx.loadInline';
  checkOptions<LoadInlineOptions>(options, fn, LOAD_INLINE_KEYS);
  if (options === undefined || options === null) fail(fn, 'name', "is required: gx.loadInline({ name, cuda: '...' })");
  const name = checkName(fn, options.name);
  const cuda = list(options.cuda);
  const cpp = list(options.cpp);
  if (![...cuda, ...cpp].every((s) => typeof s === 'string')) fail(fn, 'cuda', 'and "cpp" must be strings or arrays of strings');
  if (cuda.length + cpp.length === 0) fail(fn, 'cuda', 'or "cpp" must hold source text');
  const files = [
    ...cuda.map((text, i) => ({ file: `${name}${i ? `_${i}` : ''}.cu`, text })),
    ...cpp.map((text, i) => ({ file: `${name}${i ? `_${i}` : ''}.cpp`, text })),
  ];
  const contentKey = files.flatMap((f) => [f.file, f.text]);
  const hash = sha256(packageVersion(), name, ...contentKey).slice(0, 16);
  const srcDir = path.join(options.buildDirectory ? path.resolve(options.buildDirectory) : path.join(cacheDir(), 'extensions'),
    'inline', `${name}-${hash}`);
  // Same text, same file (and mtime): the build then finds its objects current.
  const write = (): void => {
    for (const f of files) writeIfChanged(path.join(srcDir, f.file), f.text);
  };
  const sources = files.map((f) => path.join(srcDir, f.file));
  // Flags that are not an array pass unchanged, for the config check to name them.
  const withPre = (pre: string[], given: string[] | undefined): string[] | undefined =>
    given === undefined ? pre : Array.isArray(given) ? [...pre, ...given] : given;
  const flags = { nvccFlags: withPre(preInclude(cuda), options.nvccFlags), cxxFlags: withPre(preInclude(cpp), options.cxxFlags) };
  return buildAndLoad(fn, { ...options, ...flags }, sources, contentKey, write);
}
