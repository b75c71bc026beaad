// Errors of the build toolkit, and the parser that turns a compiler's output
// into "file:line:col: error: message" (not "exited with status 1").
import * as path from 'path';

import { userPlace, type ParsedDiagnostic } from './diagnostics';

export type { ParsedDiagnostic } from './diagnostics';

const VERBOSE_HINT = '(run with --verbose for the full compiler log)';

/**
 * A setup.config.json (or gx.load / gx.loadInline options) that is not
 * valid; the message names the file and the field (`file`, `field`).
 * Thrown by `gpuext build`, gx.load and gx.loadInline; exported as gx.ConfigError.
 * @example
 * try { await gx.load({ name: 'my ops', sources: ['ops/add.cu'] }); }
 * catch (e) { if (e instanceof gx.ConfigError) console.error(e.field, e.message); }  // "name"
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(message: string, readonly file: string, readonly field?: string) {
    super(message);
  }
}

/**
 * A compiler the build needs is missing (`tool`: 'nvcc' for .cu sources,
 * 'cxx' for the host compiler); the message says how to get it. Exported as
 * gx.ToolchainError.
 */
export class ToolchainError extends Error {
  override name = 'ToolchainError';
  constructor(message: string, readonly tool: 'nvcc' | 'cxx') {
    super(message);
  }
}

export interface BuildErrorInit {
  /** The file the first error is in, relative to the project when inside it. */
  file: string;
  line?: number;
  column?: number;
  /** The compiler's own words for the first error ("'foo' was not declared in this scope"). */
  compilerMessage: string;
  /** The compiler's (or linker's) whole output. */
  log: string;
  /** The command that failed, as an argument array. */
  command?: string[];
  /** Source lines the compiler printed under the error (the code and the caret). */
  context?: string[];
  /** 'compile' (default), 'link', or 'load' (the extension's registration failed). */
  stage?: 'compile' | 'link' | 'load';
  /** Leave out the --verbose hint (the log was already shown). */
  verbose?: boolean;
}

/**
 * A compile, link or registration failure of an extension's build. `message`
 * starts with the first error as `file:line:col: error: message`, in the
 * user's source (an error inside a gpuext header or macro is moved to the
 * line that used it; a registration error to its m.def); `stage` says which
 * step failed, `log` holds the tool's whole output. Exported as gx.BuildError.
 */
export class BuildError extends Error {
  override name = 'BuildError';
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  readonly compilerMessage: string;
  readonly log: string;
  readonly command?: string[];
  readonly stage: 'compile' | 'link' | 'load';

  constructor(init: BuildErrorInit) {
    const where = [init.file, init.line, init.column].filter((x) => x !== undefined).join(':');
    const lines = [`${where}: error: ${init.compilerMessage}`, ...(init.context ?? [])];
    if (!init.verbose && init.stage !== 'load') lines.push(VERBOSE_HINT);
    super(lines.join('\n'));
    this.file = init.file;
    this.line = init.line;
    this.column = init.column;
    this.compilerMessage = init.compilerMessage;
    this.log = init.log;
    this.command = init.command;
    this.stage = init.stage ?? 'compile';
  }
}

// gcc / clang: "file:12:5: error: msg", "file:1:10: fatal error: msg".
const GCC_ERROR = /^(.+?):(\d+):(?:(\d+):)?\s+(?:fatal\s+)?error:\s*(.*)$/;
// nvcc front end (cudafe++/EDG): "file(12): error: msg", "file(12): error #20-D: msg".
const NVCC_ERROR = /^(.+?)\((\d+)\):\s+(?:catastrophic\s+)?error(?:\s+#[\w-]+)?:\s*(.*)$/;
// Tools without a location: "ptxas fatal   : ...", "nvcc fatal   : ...", "/usr/bin/ld: ...: undefined reference".
const TOOL_ERROR = /^(ptxas|nvlink|nvcc|fatbinary|cicc|ld|\/\S*\/ld|collect2)(?:\s+(?:fatal|error))?\s*:\s*(.*)$/i;
const CONTEXT_LINE = /^(\s+\d+\s+\||\s+\||\s{2,}\S|\s*\^)/;

function contextAfter(lines: string[], i: number): string[] {
  const out: string[] = [];
  for (let j = i + 1; j < lines.length && out.length < 3; j++) {
    const l = lines[j];
    if (!CONTEXT_LINE.test(l) || GCC_ERROR.test(l) || NVCC_ERROR.test(l)) break;
    out.push(l.replace(/\s+$/, ''));
  }
  return out;
}

/**
 * Finds the first error in a compiler's output (gcc/clang, nvcc/cudafe,
 * ptxas and linker styles). Returns undefined when there is none.
 */
export function parseFirstError(log: string): ParsedDiagnostic | undefined {
  const lines = log.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    let m = GCC_ERROR.exec(l);
    if (m) {
      return {
        file: m[1], line: Number(m[2]), column: m[3] === undefined ? undefined : Number(m[3]),
        message: m[4].trim(), context: contextAfter(lines, i), index: i,
      };
    }
    m = NVCC_ERROR.exec(l);
    if (m) return { file: m[1], line: Number(m[2]), message: m[3].trim(), context: contextAfter(lines, i), index: i };
  }
  for (const l of lines) {
    const m = TOOL_ERROR.exec(l);
    if (m) return { file: m[1], message: m[2].trim(), context: [] };
  }
  const loose = lines.find((l) => /\berror\b/i.test(l));
  return loose === undefined ? undefined : { file: '', message: loose.trim(), context: [] };
}

/** Shows `file` relative to `base` when it lies inside it (as users wrote it). */
export function displayPath(file: string, base: string): string {
  const abs = path.resolve(base, file);
  const rel = path.relative(base, abs);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs;
}

export interface CompileFailure {
  /** The source being compiled (the fallback location). */
  source: string;
  log: string;
  command: string[];
  /** Directory the compiler ran in (relative paths in its output are relative to it). */
  cwd: string;
  /** Directory paths are shown relative to (the project). */
  base: string;
  exitCode: number | null;
  signal?: string | null;  // NodeJS.Signals, kept to a string: gpuext's public declarations need no @types/node
  stage?: 'compile' | 'link';
  verbose?: boolean;
  /** gpuext's header directory (<include>/gpuext): an error inside it is moved to the user's line that led there. */
  headers?: string;
}

/** Builds the BuildError for a failed compiler run. */
export function compileError(f: CompileFailure): BuildError {
  const first = parseFirstError(f.log);
  const stage = f.stage ?? 'compile';
  const moved = first && f.headers !== undefined && first.index !== undefined
    ? userPlace(first, f.log, first.index, f.cwd, f.headers) : undefined;
  const d = moved ?? first;
  if (d && d.file && d.line !== undefined) {
    return new BuildError({
      file: displayPath(path.resolve(f.cwd, d.file), f.base), line: d.line, column: d.column,
      compilerMessage: d.message, context: d.context, log: f.log, command: f.command, stage, verbose: f.verbose,
    });
  }
  const status = f.signal ? `killed by ${f.signal}` : `exited with status ${f.exitCode}`;
  const message = d ? (d.file ? `${d.file}: ${d.message}` : d.message) : `${path.basename(f.command[0])} ${status}`;
  return new BuildError({
    file: displayPath(f.source, f.base), compilerMessage: message, log: f.log, command: f.command, stage,
    verbose: f.verbose,
  });
}
