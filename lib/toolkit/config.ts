// setup.config.json: the build description of an extension (the same format
// the built-in ops use). Loaded, validated (errors name the file and the
// field), and resolved to absolute paths and flag lists. The JSON Schema for
// editors is setup.config.schema.json at the package root; keep them in step.
import * as fs from 'fs';
import * as path from 'path';

import { ConfigError, displayPath } from './errors';
import { OUTPUT_FORMATS, type OutputFormat } from './module-format';
import { findCuda } from './toolchain';

export type DefineValue = string | number | boolean;

/** What a user writes in setup.config.json. */
export interface SetupConfig {
  $schema?: string;
  /** The extension's name: an identifier; also the output file name (`<outDir>/<name>.node`). */
  name: string;
  /** Globs of .cu / .cpp / .cc / .cxx / .c files, relative to the config file. */
  sources: string[];
  /** Output directory, relative to the config file (default "build"). */
  outDir?: string;
  /** "native", "all", "sm_80,sm_90", or ["sm_80", "sm_90"]. */
  arch?: string | string[];
  nvccFlags?: string[];
  cxxFlags?: string[];
  /** Extra include directories, relative to the config file. */
  includeDirs?: string[];
  /** { NAME: value } or ["NAME=value", "FLAG"]. */
  defines?: Record<string, DefineValue> | string[];
  /** Libraries to link, by name ("cublas" -> -lcublas, from the CUDA toolkit's lib64). */
  libraries?: string[];
  /** Module the generated JS requires for the runtime (default "gpuext"). */
  runtimeImport?: string;
  /** The generated binding's module system: "auto" (default: the output directory's package), "esm", "cjs" or "both". */
  outputFormat?: OutputFormat;
}

/** A validated config with absolute paths and normalized flags. */
export interface ResolvedConfig {
  /** The config file (absolute), or a label like "gx.load()" for in-memory configs. */
  file: string;
  /** How the file is named in messages. */
  displayFile: string;
  /** Directory relative paths are resolved against. */
  baseDir: string;
  name: string;
  sources: string[];
  outDir: string;
  /** "native" or a comma list like "sm_80,sm_90" (what find-cuda.js's gencode() takes). */
  arch: string;
  nvccFlags: string[];
  cxxFlags: string[];
  includeDirs: string[];
  /** -D arguments without the -D: "NAME" or "NAME=value". */
  defines: string[];
  libraries: string[];
  runtimeImport: string;
  outputFormat: OutputFormat;
  /**
   * Extra arguments of the link step; no setup.config.json field sets them
   * (scripts/build-ops.js does, for a prebuilt binary: scripts/glibc-floor.js).
   */
  linkFlags?: string[];
}

/** Every setup.config.json field (setup.config.schema.json lists the same; a test checks). */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  '$schema', 'name', 'sources', 'outDir', 'arch', 'nvccFlags', 'cxxFlags', 'includeDirs', 'defines', 'libraries', 'runtimeImport',
  'outputFormat',
]);
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ARCH = /^(?:sm_|compute_)?(\d{2,3}[a-z]?)$/;
const LIBRARY = /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;
export const SOURCE_EXTENSIONS = ['.cu', '.cpp', '.cc', '.cxx', '.c'];

export const DEFAULT_CONFIG_FILE = 'setup.config.json';

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isOutputFormat(x: unknown): x is OutputFormat {
  return OUTPUT_FORMATS.some((f) => f === x);
}

function isStringArray(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((e) => typeof e === 'string');
}

/**
 * Normalizes an arch spec ("native", "all", "sm_80,sm_90", ["sm_80", "90"])
 * to what gencode() takes: "native" or "sm_80,sm_90". Returns an error
 * string when it is not one.
 */
export function normalizeArch(spec: unknown): string | { error: string } {
  let parts: string[];
  if (typeof spec === 'string') parts = spec.split(',');
  else if (isStringArray(spec)) parts = spec.flatMap((s) => s.split(','));
  else return { error: 'must be "native", "all", a comma list like "sm_80,sm_90", or an array of archs' };
  parts = parts.map((s) => s.trim()).filter(Boolean);
  if (parts.length === 0) return { error: 'must name at least one arch' };
  if (parts.length === 1 && parts[0] === 'native') return 'native';
  if (parts.length === 1 && parts[0] === 'all') return findCuda().DEFAULT_ARCHS.join(',');
  const out: string[] = [];
  for (const p of parts) {
    const m = ARCH.exec(p);
    if (!m) {
      return { error: `has '${p}', which is not an arch like sm_90 ("native" and "all" stand alone)` };
    }
    const a = `sm_${m[1]}`;
    if (!out.includes(a)) out.push(a);
  }
  return out.join(',');
}

export interface ResolveOptions {
  /** Overrides the config's arch (the CLI's --arch). */
  arch?: string | string[];
}

/** Validates parsed JSON (or a config object from gx.load) and resolves it. Throws ConfigError. */
export function resolveConfig(raw: unknown, file: string, baseDir: string, opts: ResolveOptions = {}): ResolvedConfig {
  const shown = path.isAbsolute(file) ? displayPath(file, process.cwd()) : file;
  const fail = (field: string | undefined, msg: string): never => {
    throw new ConfigError(`${shown}: ${field ? `"${field}" ` : ''}${msg}`, file, field);
  };
  if (!isRecord(raw)) return fail(undefined, 'must hold a JSON object');
  for (const k of Object.keys(raw)) {
    if (!KNOWN_FIELDS.has(k)) {
      fail(k, `is not a setup.config.json field (known: ${[...KNOWN_FIELDS].filter((f) => f !== '$schema').join(', ')})`);
    }
  }
  const { name, sources } = raw;
  if (typeof name !== 'string' || !IDENT.test(name)) {
    fail('name', 'must be an identifier (letters, digits, _; not starting with a digit), e.g. "my_ops"');
  }
  if (!isStringArray(sources) || sources.length === 0 || sources.some((s) => s.trim() === '')) {
    fail('sources', 'must be a non-empty array of glob strings');
  }
  const strings = (field: string): string[] => {
    const v = raw[field];
    if (v === undefined) return [];
    if (!isStringArray(v)) return fail(field, 'must be an array of strings');
    return v;
  };
  const outDir = raw.outDir ?? 'build';
  if (typeof outDir !== 'string' || outDir.trim() === '') fail('outDir', 'must be a non-empty string (a directory)');
  const runtimeImport = raw.runtimeImport ?? 'gpuext';
  if (typeof runtimeImport !== 'string' || runtimeImport === '') fail('runtimeImport', 'must be a module name or path');
  const outputFormat = raw.outputFormat ?? 'auto';
  if (!isOutputFormat(outputFormat)) {
    fail('outputFormat', `must be one of ${OUTPUT_FORMATS.map((f) => JSON.stringify(f)).join(', ')}, got ${JSON.stringify(outputFormat)}`);
  }

  const archSpec = opts.arch ?? raw.arch ?? process.env.GPUEXT_CUDA_ARCH ?? 'native';
  const arch = normalizeArch(archSpec);
  if (typeof arch !== 'string') {
    const field = opts.arch !== undefined ? '--arch' : raw.arch !== undefined ? 'arch' : 'GPUEXT_CUDA_ARCH';
    return fail(field, arch.error);
  }

  const defines = parseDefines(raw.defines, fail);

  const libraries = strings('libraries');
  for (const l of libraries) {
    if (!LIBRARY.test(l)) fail('libraries', `entries are library names like "cublas" (linked as -lcublas), got ${JSON.stringify(l)}`);
  }
  const sourceList = isStringArray(sources) ? sources : [];
  return {
    file,
    displayFile: shown,
    baseDir,
    name: String(name),
    sources: sourceList,
    outDir: path.resolve(baseDir, String(outDir)),
    arch,
    nvccFlags: strings('nvccFlags'),
    cxxFlags: strings('cxxFlags'),
    includeDirs: strings('includeDirs').map((p) => path.resolve(baseDir, p)),
    defines,
    libraries,
    runtimeImport: String(runtimeImport),
    outputFormat: isOutputFormat(outputFormat) ? outputFormat : 'auto',
  };
}

/** The `defines` field, as an array of "NAME" / "NAME=value" or an object { NAME: value }, into NAME[=value] strings. */
function parseDefines(d: unknown, fail: (field: string, msg: string) => never): string[] {
  const defines: string[] = [];
  if (Array.isArray(d)) {
    for (const e of d) {
      if (typeof e !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*(=.*)?$/.test(e)) {
        fail('defines', `entries must be "NAME" or "NAME=value", got ${JSON.stringify(e)}`);
      }
      defines.push(String(e));
    }
  } else if (isRecord(d)) {
    for (const [k, v] of Object.entries(d)) {
      if (!IDENT.test(k)) fail('defines', `key ${JSON.stringify(k)} is not a macro name`);
      if (v === true) defines.push(k);
      else if (v === false) continue;
      else if (typeof v === 'string' || typeof v === 'number') defines.push(`${k}=${v}`);
      else fail('defines', `value of ${k} must be a string, number or boolean`);
    }
  } else if (d !== undefined) {
    fail('defines', 'must be an object { "NAME": value } or an array of "NAME=value" strings');
  }
  return defines;
}

/** Reads and validates a setup.config.json. Throws ConfigError naming the file and field. */
export function loadConfig(file: string = DEFAULT_CONFIG_FILE, opts: ResolveOptions = {}): ResolvedConfig {
  const abs = path.resolve(file);
  const shown = displayPath(abs, process.cwd());
  let text: string;
  try {
    text = fs.readFileSync(abs, 'utf8');
  } catch (e) {
    const code = e instanceof Error && 'code' in e ? e.code : undefined;
    throw new ConfigError(code === 'ENOENT'
      ? `${shown}: not found (run \`gpuext init <dir>\` to create a project, or pass --config <file>)`
      : `${shown}: cannot be read: ${e instanceof Error ? e.message : String(e)}`, abs);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${shown}:${jsonErrorPlace(text, e)} is not valid JSON: ${jsonErrorReason(e)}`, abs);
  }
  return resolveConfig(raw, abs, path.dirname(abs), opts);
}

/** V8's JSON.parse message without its "at position N" (jsonErrorPlace gives the line and column instead). */
function jsonErrorReason(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/\s*(?:in JSON\s*)?at position \d+(?:\s*\(line \d+ column \d+\))?/, '').replace(/ in JSON$/, '');
}

/**
 * "LINE:COLUMN:" (1-based, as editors and compilers print them) of a
 * JSON.parse failure: V8 reports a character offset ("at position 185"), or
 * nothing when the text ended early (then the end of the text is the place).
 */
export function jsonErrorPlace(text: string, e: unknown): string {
  const m = /at position (\d+)/.exec(e instanceof Error ? e.message : String(e));
  const offset = m ? Math.min(Number(m[1]), text.length) : text.length;
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}:`;
}
