// Turning what the linker, the dynamic loader, the core's registration and a
// compiler say about gpuext's own files into the user's terms: the source and
// line of the m.def a registration error is about, the first `undefined
// reference` / `multiple definition` of a link, a C++ name for a symbol the
// loader missed, and the user's line for an error inside a gpuext macro or
// header. Each function returns undefined when it has nothing better to say.
import * as fs from 'fs';
import * as path from 'path';

/** A compiler's error: where, its words, and what it printed under it. */
export interface ParsedDiagnostic {
  file: string;
  line?: number;
  column?: number;
  message: string;
  /** The source line and caret lines printed after it. */
  context: string[];
  /** The error's line in the compiler's log (0-based), when it came from one. */
  index?: number;
}

/** A place in a user's source: absolute path, 1-based line, and the line's text. */
export interface SourcePlace {
  file: string;
  line: number;
  text: string;
}

function readLines(file: string): string[] | undefined {
  try {
    return fs.readFileSync(file, 'utf8').split(/\r?\n/);
  } catch {
    return undefined;
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The `nth` (0-based) line of `sources` that `re` matches, in source order. */
function findLine(sources: readonly string[], re: RegExp, nth = 0): SourcePlace | undefined {
  let seen = 0;
  for (const file of sources) {
    const lines = readLines(file);
    if (lines === undefined) continue;
    for (let i = 0; i < lines.length; i++) {
      if (re.test(lines[i]) && seen++ === nth) return { file, line: i + 1, text: lines[i] };
    }
  }
  return undefined;
}

/**
 * Where the m.def a registration error (csrc/core/registry.cpp, schema.cpp)
 * is about: by the schema text it quotes, else by the op's name; for a
 * duplicate op, the second definition.
 */
export function locateDef(message: string, sources: readonly string[]): SourcePlace | undefined {
  const schema = /invalid schema "(.*?)": /.exec(message)?.[1] ?? /the schema '(.*?)' needs/.exec(message)?.[1];
  if (schema !== undefined) {
    const place = findLine(sources, new RegExp(`"${escapeRe(schema)}"`));
    if (place) return place;
  }
  const op = /duplicate op '(\w+)::(\w+)': defined twice/.exec(message) ?? /^(\w+)::(\w+): /.exec(message);
  const name = op?.[2] ?? (schema ? /^\s*(?:\w+::)?(\w+)\s*\(/.exec(schema)?.[1] : undefined);
  if (name === undefined) return undefined;
  const def = new RegExp(`"\\s*(?:\\w+::)?${escapeRe(name)}\\s*\\(`);
  return findLine(sources, def, op && /defined twice/.test(message) ? 1 : 0);
}

/** The first `GX_LIBRARY(ns, ...)` line of `sources`. */
export function locateLibrary(ns: string, sources: readonly string[]): SourcePlace | undefined {
  return findLine(sources, new RegExp(`\\bGX_LIBRARY\\s*\\(\\s*${escapeRe(ns)}\\s*,`));
}

/** A C++ symbol's readable name (c++filt), or the symbol itself when it cannot be demangled. */
export function demangle(symbol: string): string {
  if (!symbol.startsWith('_Z')) return symbol;
  // child_process loads here, not with gpuext (NOTE [ Lazy entry ] in lib/README.md).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const r = (require('child_process') as typeof import('child_process')).spawnSync('c++filt', [symbol], { encoding: 'utf8' });
  const out = r.status === 0 ? r.stdout.trim() : '';
  return out && out !== symbol ? out : symbol;
}

/** Where a symbol the loader missed is named in `sources` (its declaration or a use), by its unqualified name. */
export function locateSymbol(message: string, sources: readonly string[]): SourcePlace | undefined {
  const m = /undefined symbol: (\S+)/.exec(message);
  const name = m ? /(?:^|::)(\w+)(?:\(|$)/.exec(demangle(m[1]))?.[1] : undefined;
  return name === undefined ? undefined : findLine(sources, new RegExp(`\\b${escapeRe(name)}\\s*\\(`));
}

/**
 * A dynamic loader's `undefined symbol: _Z...` (a shared library may link
 * with undefined references; they surface only when it is opened), said in
 * C++ and with what usually causes it.
 */
export function undefinedSymbol(message: string): string | undefined {
  const m = /undefined symbol: (\S+)/.exec(message);
  if (!m) return undefined;
  return `undefined symbol \`${demangle(m[1])}': the extension uses it but none of its sources defines it ` +
    '(a source missing from "sources", a name spelt differently where it is defined, or a library missing from "libraries")';
}

// GNU ld: "two.cpp:(.text+0x0): multiple definition of `f()'; other.o:op.cpp:(.text+0x0): first defined here",
// "op.cpp:(.text+0x5): undefined reference to `g()'", with -g "/abs/op.cpp:12: undefined reference to `g()'".
const LINK_PROBLEM = /^(?:(.*?):(?:\((?:\.[\w.$]+)\+0x[0-9a-f]+\)|(\d+)):\s*)?((?:undefined reference to|multiple definition of) `.*)$/;

/**
 * The first `undefined reference` / `multiple definition` of a link log,
 * located at its source when the linker names one. `names` maps object files
 * (absolute) to how their sources are shown; `sources` are the sources'
 * absolute paths (the linker names them by base name).
 */
export function linkProblem(log: string, names: ReadonlyMap<string, string>, sources: readonly string[],
  base: string): ParsedDiagnostic | undefined {
  const lines = log.split(/\r?\n/);
  // "<object>:op.cpp:(.text+0x0)" -> "ops/op.cpp": the object by its source's name, without the section offset.
  const rename = (text: string): string => {
    let out = text;
    for (const [obj, shown] of names) out = out.split(obj).join(shown);
    return out.replace(/:[^\s:;]+:\(\.[\w.$]+\+0x[0-9a-f]+\)/g, '');
  };
  for (let i = 0; i < lines.length; i++) {
    const m = LINK_PROBLEM.exec(lines[i]);
    if (!m) continue;
    const where = m[1] ? sourceNamed(m[1], sources) : undefined;
    const file = where ? path.relative(base, where) || where : '';
    const fn = i > 0 ? /in function (`.*')/.exec(lines[i - 1]) : null;
    const inFunction = fn ? [`  (in function ${fn[1]})`] : [];
    return { file, line: m[2] === undefined ? undefined : Number(m[2]), message: rename(m[3]), context: inFunction };
  }
  return undefined;
}

function sourceNamed(name: string, sources: readonly string[]): string | undefined {
  if (path.isAbsolute(name)) return name;
  return sources.find((s) => s.endsWith(`${path.sep}${name}`) || path.basename(s) === name);
}

function inside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

// gcc: "ops/op.cpp:4:3:   required from here", "ops/op.cpp:12:3: note: in expansion of macro 'GX_CHECK'";
// nvcc (EDG): "            instantiation of "..." at line 4 of ops/op.cu".
const GCC_FROM_HERE = /^(.+?):(\d+):(\d+):\s+required from here/;
const GCC_MACRO = /^(.+?):(\d+):(\d+):\s+note:\s+in expansion of macro ['‘](\w+)['’]/;
const EDG_AT = / at line (\d+) of (.+?)\s*$/;
const ANY_ERROR = /(?:^(.+?):(\d+):(?:\d+:)?\s+(?:fatal\s+)?error:|^(.+?)\((\d+)\):\s+(?:catastrophic\s+)?error)/;

/** The caret-free context a compiler would print for `line` of `file`: "   12 | text". */
function sourceContext(file: string, line: number): string[] {
  const text = readLines(file)?.[line - 1];
  return text === undefined ? [] : [`${String(line).padStart(5)} | ${text}`];
}

/** The gpuext macro called on a source line, if any (GX_CHECK_LAUNCH, GX_DISPATCH_...). */
function macroOn(text: string): string | undefined {
  return /\b(GX_[A-Z0-9_]+)\s*\(/.exec(text)?.[1];
}

/**
 * An error the compiler places inside gpuext's headers (a macro's or a
 * template's body), moved to the user's line that led there; an error on a
 * user's line whose context the compiler printed as a macro's expansion
 * (nvcc does) gets the line as written. `index` is the error's line in the
 * log; `cwd` what relative paths in it are relative to; `headers` gpuext's
 * include directory.
 */
export function userPlace(d: ParsedDiagnostic, log: string, index: number, cwd: string, headers: string): ParsedDiagnostic | undefined {
  if (!d.file || d.line === undefined) return undefined;
  const abs = path.resolve(cwd, d.file);
  const lines = log.split(/\r?\n/);
  if (!inside(abs, headers)) {
    // A user's line: nvcc shows the macro's expansion under it; show the line itself.
    const text = readLines(abs)?.[d.line - 1];
    const macro = text === undefined ? undefined : macroOn(text);
    if (macro === undefined || text === undefined || d.context.some((c) => c.replace(/^\s*\d*\s*\|/, '').trim() === text.trim())) return undefined;
    return { ...d, message: `${d.message} (in ${macro})`, context: sourceContext(abs, d.line) };
  }
  const header = path.relative(path.dirname(headers), abs);
  const user = (file: string): boolean => !inside(path.resolve(cwd, file), headers) && !file.startsWith('/usr/');
  let place: { file: string; line: number; column?: number; macro?: string } | undefined;
  // After the error, up to the next one: gcc's macro notes, nvcc's "detected during ... at line N of FILE".
  for (let j = index + 1; j < lines.length && place === undefined && !ANY_ERROR.test(lines[j]); j++) {
    const m = GCC_MACRO.exec(lines[j]);
    if (m && user(m[1])) place = { file: m[1], line: Number(m[2]), column: Number(m[3]), macro: m[4] };
    const e = EDG_AT.exec(lines[j]);
    if (e && user(e[2])) place = { file: e[2], line: Number(e[1]) };
  }
  // Before it, back to the previous error: gcc's "required from here" of a template instantiation.
  for (let j = index - 1; j >= 0 && place === undefined && !ANY_ERROR.test(lines[j]); j--) {
    const m = GCC_FROM_HERE.exec(lines[j]);
    if (m && user(m[1])) place = { file: m[1], line: Number(m[2]), column: Number(m[3]) };
  }
  if (place === undefined) return undefined;
  const file = path.resolve(cwd, place.file);
  const macro = place.macro ?? macroOn(readLines(file)?.[place.line - 1] ?? '');
  return {
    file: place.file, line: place.line, column: place.column,
    message: `${d.message} (${macro ? `inside ${macro}, ` : ''}at ${header}:${d.line})`,
    context: sourceContext(file, place.line),
  };
}
