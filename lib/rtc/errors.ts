// Compile errors of run-time kernels: the compiler's log parsed into
// (file, line, message), and a message that shows each error's source lines,
// numbered, with a '>' on the line the compiler points at (CuPy points at
// hashed temporary files, cupy#5294).
import * as fs from 'fs';
import * as path from 'path';

export interface CompileDiagnostic {
  /** 1-based line. */
  line: number;
  /** 1-based column, when the compiler gives one (or its caret shows it). */
  column?: number;
  /** The compiler's words ("identifier \"y\" is undefined"). */
  message: string;
  /** The file as the log names it: the program name, or a header's path. */
  file: string;
  /** The compiler's whole line for this error. */
  text: string;
  /** The source line as the compiler echoed it (EDG), which the column counts in. */
  echo?: string;
}

export interface CompileErrorInit {
  /** The compiler's full log, with temporary paths already mapped back to the program name. */
  log: string;
  /** The source that was compiled (as the user gave it). */
  source: string;
  /** The program name the log uses for the source (`kernel.cu`). */
  programName: string;
  /** How the message starts; default 'gx.RawKernel'. */
  what?: string;
  /** Which backend compiled ('nvrtc' or 'nvcc'), for the record. */
  backend?: string;
  /** Lines past the user's source that the compiler appended code on, and what each was (`name expression 'f<float>'`). */
  appended?: Map<number, string>;
}

/** How many errors the message shows (all are in `errors` and `log`). */
const MAX_SHOWN = 5;
const CONTEXT = 2;

// EDG (NVRTC, nvcc's front end): `kernel.cu(3): error: msg`, `x.cu(1): catastrophic error: ...`, `error #20-D: ...`.
const EDG = /^(.+?)\((\d+)\): (?:catastrophic error|fatal error|error)(?: #[\w-]+)?: (.*)$/;
// GCC's preprocessor (nvcc runs it first): `kernel.cu:1:10: fatal error: x.h: No such file or directory`.
const GCC = /^(.+?):(\d+):(?:(\d+):)? (?:fatal error|error): (.*)$/;

/** The errors (not warnings) in a compiler log, in order. */
export function parseCompilerLog(log: string): CompileDiagnostic[] {
  const lines = log.split(/\r?\n/);
  const out: CompileDiagnostic[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i];
    let m = EDG.exec(text);
    if (m) {
      const d: CompileDiagnostic = { file: m[1], line: Number(m[2]), message: m[3].trim(), text };
      // EDG echoes the line (indented by 2) and a caret under the column.
      const echo = lines[i + 1];
      const caret = lines[i + 2];
      if (echo !== undefined && caret !== undefined && /^\s*\^\s*$/.test(caret)) {
        d.column = caret.indexOf('^') - 1;
        d.echo = echo.slice(2);
      }
      out.push(d);
      continue;
    }
    m = GCC.exec(text);
    if (m && !/^\s/.test(text)) {
      const d: CompileDiagnostic = { file: m[1], line: Number(m[2]), message: m[4].trim(), text };
      if (m[3] !== undefined) d.column = Number(m[3]);
      out.push(d);
    }
  }
  return out;
}

/** A kernel's source failed to compile. `message` shows the errors with the source lines around each. */
export class CompileError extends Error {
  override name = 'CompileError';
  /** The compiler's full log. */
  readonly log: string;
  readonly source: string;
  /** The program name (`kernel.cu`); `name` is 'CompileError' like every Error's. */
  readonly programName: string;
  readonly backend?: string;
  readonly errors: { line: number; column?: number; message: string; file: string }[];

  constructor(init: CompileErrorInit) {
    const diags = parseCompilerLog(init.log);
    super(formatCompileError(init, diags));
    this.log = init.log;
    this.source = init.source;
    this.programName = init.programName;
    this.backend = init.backend;
    const sourceLines = init.source.split(/\r?\n/);
    this.errors = diags.map((d) => {
      const e: { line: number; column?: number; message: string; file: string } = { line: d.line, message: d.message, file: d.file };
      // An echoed line that is not the source's (nvcc echoes it preprocessed) has columns of its own.
      const columnHolds = d.echo === undefined || d.file !== init.programName ||
        sourceLines[d.line - 1]?.replace(/\s+$/, '') === d.echo.replace(/\s+$/, '');
      if (d.column !== undefined && columnHolds) e.column = d.column;
      return e;
    });
  }
}

function readLines(file: string): string[] | undefined {
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > 4 << 20) return undefined;
    return fs.readFileSync(file, 'utf8').split(/\r?\n/);
  } catch {
    return undefined;
  }
}

/** The numbered lines around `line` (1-based), '>' on it. */
export function sourceContext(lines: string[], line: number, context = CONTEXT): string[] {
  if (line < 1 || line > lines.length) return [];
  const first = Math.max(1, line - context);
  const last = Math.min(lines.length, line + context);
  const width = String(last).length;
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    out.push(`  ${n === line ? '>' : ' '} ${String(n).padStart(width)} | ${lines[n - 1].replace(/\s+$/, '')}`);
  }
  return out;
}

function formatCompileError(init: CompileErrorInit, diags: CompileDiagnostic[]): string {
  const what = init.what ?? 'gx.RawKernel';
  const head = `${what}: compiling '${init.programName}' failed:`;
  if (diags.length === 0) {
    const logLines = init.log.trim().split(/\r?\n/);
    const shown = logLines.slice(0, 30);
    if (logLines.length > shown.length) shown.push(`... (${logLines.length - shown.length} more lines in err.log)`);
    return [head, ...(init.log.trim() ? shown : ['(the compiler printed no message)'])].join('\n');
  }
  const sourceLines = init.source.split(/\r?\n/);
  // A source ending in a newline has no empty last line.
  if (sourceLines.length > 1 && sourceLines[sourceLines.length - 1] === '') sourceLines.pop();
  const blocks: string[] = [];
  for (const d of diags.slice(0, MAX_SHOWN)) {
    const block = [d.text];
    let appended = d.file === init.programName ? init.appended?.get(d.line) : undefined;
    // NVRTC compiles name expressions in a unit of its own, '__nv_name_map', as `#pragma nv_mangled_name <expr>`.
    const pragma = d.file === '__nv_name_map' ? /nv_mangled_name\s+(.*?)\s*$/.exec(d.echo ?? '') : null;
    if (pragma) appended = `name expression '${pragma[1]}'`;
    else if (d.file === '__nv_name_map') appended = 'a name expression';
    if (appended !== undefined) {
      block.push(`    (in ${appended})`);
    } else {
      const lines = d.file === init.programName ? sourceLines : readLines(path.resolve(d.file));
      if (lines) block.push(...sourceContext(lines, d.line));
    }
    blocks.push(block.join('\n'));
  }
  const more = diags.length - MAX_SHOWN;
  if (more > 0) blocks.push(`(${more} more error${more === 1 ? '' : 's'}; the full compiler output is in err.log)`);
  return `${head}\n${blocks.join('\n\n')}`;
}
