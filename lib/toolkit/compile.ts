// Compiling one translation unit: the command (nvcc for .cu, the host
// compiler otherwise), its dependency file, and the cache key of its object:
// sha256 of the source, every included file (headers under system and CUDA
// directories by path only, with the compiler version standing for their
// content), the flags and the compiler version.
import { type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import { spawnTool, stopTool } from './children';
import { compileError, type BuildError } from './errors';
import { hashFile, rmQuiet, sha256 } from '../platform/fs';
import { includeDir } from './toolchain';

/** Bump to invalidate every object cache (a change in how keys or objects are made). */
const KEY_VERSION = 'gpuext-obj-1';

export interface CompileUnit {
  /** Absolute source path. */
  source: string;
  /** How the source is shown (relative to the project). */
  display: string;
  /** 'nvcc', or the host compiler's name ('g++'). */
  toolName: string;
  /** Compiler argv prefix (['/usr/local/cuda/bin/nvcc'] or ['/usr/bin/g++']). */
  exe: string[];
  /** Every flag except the source, -c, -o and the dependency-file flags. */
  flags: string[];
  /** The compiler's --version text. */
  version: string;
  /** Extra strings in the key (e.g. the GPU models for -arch=native). */
  keyExtra: string[];
}

/** What the manifest remembers of a unit between builds. */
export interface UnitRecord {
  key: string;
  /** Absolute paths of included files whose bytes are hashed (not the source itself). */
  deps: string[];
  /** sha256 of the list of system / toolkit headers (hashed by path only; the compiler version stands for their bytes). */
  sys: string;
}

/** The dependency list of a make-style depfile (first rule only). */
export function parseDepfile(text: string): string[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const firstRule = joined.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  // The target ends at the first ':' followed by whitespace (paths may hold ':' on Windows).
  const m = /:(\s|$)/.exec(firstRule);
  if (!m) return [];
  const rest = firstRule.slice(m.index + 1);
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i];
    if (ch === '\\' && (rest[i + 1] === ' ' || rest[i + 1] === '#' || rest[i + 1] === '\\')) {
      cur += rest[i + 1];
      i++;
    } else if (ch === '$' && rest[i + 1] === '$') {
      cur += '$';
      i++;
    } else if (/\s/.test(ch)) {
      if (cur) out.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  if (cur) out.push(cur);
  return out;
}

/** Splits a depfile's list into hashed dependencies and system headers (path only). */
export function classifyDeps(list: string[], source: string, cwd: string, systemPrefixes: string[]): { deps: string[]; sys: string } {
  const src = path.resolve(cwd, source);
  const deps = new Set<string>();
  const sys = new Set<string>();
  for (const d of list) {
    const abs = path.resolve(cwd, d);
    if (abs === src) continue;
    if (systemPrefixes.some((p) => abs.startsWith(p))) sys.add(abs);
    else deps.add(abs);
  }
  return { deps: [...deps].sort(), sys: sha256([...sys].sort().join('\n')) };
}

/**
 * The object key of `unit` given its dependencies, or undefined when the
 * source or a dependency cannot be read (then it must be compiled).
 */
export function unitKey(unit: CompileUnit, deps: string[], sys: string): string | undefined {
  const src = hashFile(unit.source);
  if (src === undefined) return undefined;
  const parts: string[] = [KEY_VERSION, unit.version, JSON.stringify(unit.exe.slice(1)), JSON.stringify(unit.flags),
    unit.source, src, JSON.stringify(unit.keyExtra)];
  for (const d of deps) {
    const h = hashFile(d);
    if (h === undefined) return undefined;
    parts.push(d, h);
  }
  parts.push(sys);
  return sha256(...parts);
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
}

/** Compilers one build started and still waits for (so a failure can stop its siblings, and only those). */
export type ChildSet = Set<ChildProcess>;

export function killAll(children: ChildSet): void {
  for (const c of children) stopTool(c);
}

/** Runs a command (an argument array; no shell) and collects its output. */
export function runTool(argv: string[], cwd: string, running: ChildSet = new Set()): Promise<RunResult> {
  return new Promise((resolve) => {
    // The C locale keeps compiler messages in plain ASCII quotes, which the error parser expects.
    const child = spawnTool(argv, { cwd, env: { ...process.env, LC_ALL: 'C' } });
    running.add(child);
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', (e) => {
      running.delete(child);
      resolve({ code: 127, signal: null, output: `${argv[0]}: ${e.message}` });
    });
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

export interface CompileContext {
  /** `<outDir>/.gpuext/obj`. */
  objDir: string;
  /** The directory compilers run in and paths are shown relative to (the project). */
  cwd: string;
  systemPrefixes: string[];
  verbose: boolean;
  /** This build's running compilers. */
  children: ChildSet;
  onCommand?: (argv: string[]) => void;
  onLog?: (unit: CompileUnit, log: string) => void;
}

export interface CompileResult {
  record: UnitRecord;
  /** False when a dependency changed while compiling: use the object now, but do not remember it. */
  reusable: boolean;
  object: string;
  seconds: number;
  log: string;
}

let tmpCounter = 0;

/** The full compiler command for a unit. */
export function compileCommand(unit: CompileUnit, obj: string, dep: string): string[] {
  return [...unit.exe, ...unit.flags, '-c', unit.source, '-o', obj, '-MD', '-MF', dep];
}

/** Compiles one unit into the object cache. Throws BuildError with the compiler's first error. */
export async function compileUnit(unit: CompileUnit, ctx: CompileContext): Promise<CompileResult> {
  fs.mkdirSync(ctx.objDir, { recursive: true });
  const stem = path.join(ctx.objDir, `tmp-${process.pid}-${++tmpCounter}`);
  const obj = `${stem}.o`;
  const dep = `${stem}.d`;
  const argv = compileCommand(unit, obj, dep);
  ctx.onCommand?.(argv);
  const start = Date.now();
  const sourceBefore = hashFile(unit.source);
  const r = await runTool(argv, ctx.cwd, ctx.children);
  const seconds = (Date.now() - start) / 1000;
  if (r.output.trim()) ctx.onLog?.(unit, r.output);
  try {
    if (r.code !== 0) {
      const err: BuildError = compileError({
        source: unit.source, log: r.output, command: argv, cwd: ctx.cwd, base: ctx.cwd, exitCode: r.code,
        signal: r.signal, verbose: ctx.verbose, headers: path.join(includeDir(), 'gpuext'),
      });
      throw err;
    }
    const list = parseDepfile(fs.readFileSync(dep, 'utf8'));
    const { deps, sys } = classifyDeps(list, unit.source, ctx.cwd, ctx.systemPrefixes);
    // A file edited while the compiler ran: the object may hold the old text while the key names the new.
    const reusable = hashFile(unit.source) === sourceBefore && deps.every((f) => {
      try {
        return fs.statSync(f).mtimeMs <= start;
      } catch {
        return false;
      }
    });
    const key = (reusable ? unitKey(unit, deps, sys) : undefined) ?? `unstable-${process.pid}-${tmpCounter}`;
    const object = path.join(ctx.objDir, `${key}.o`);
    fs.renameSync(obj, object);
    return { record: { key, deps, sys }, reusable: reusable && !key.startsWith('unstable-'), object, seconds, log: r.output };
  } finally {
    rmQuiet(obj);
    rmQuiet(dep);
  }
}

/** Runs `tasks` with at most `limit` at a time; the first failure stops new starts and is rethrown after the running ones end. */
export async function pool<T>(tasks: (() => Promise<T>)[], limit: number, onFail?: () => void): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < tasks.length) {
      const i = next++;
      try {
        results[i] = await tasks[i]();
      } catch (e) {
        if (failure === undefined) {
          failure = { error: e };
          onFail?.();
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
}
