// Kernel signatures read from CUDA source: which C type each parameter of a
// `__global__` function has, so a JavaScript value can be converted to
// exactly that type (CuPy passes a plain Python int as `long long` whatever
// the kernel declares; here a mismatch is an error). Also the range checks
// for scalars.
import { ARG_KINDS, type ArgKind } from '../generated/arg-kinds';

/** What a kernel parameter is, for argument conversion. */
export type KernelParamKind =
  | 'pointer'
  | 'int8' | 'int16' | 'int32' | 'int64'
  | 'uint8' | 'uint16' | 'uint32' | 'uint64'
  | 'float32' | 'float64'
  | 'bool'
  | 'unknown';

/** Alias of KernelParamKind. */
export type ParamKind = KernelParamKind;

export type IntegerKind = 'int8' | 'int16' | 'int32' | 'int64' | 'uint8' | 'uint16' | 'uint32' | 'uint64';

export interface KernelParam {
  /** The parameter's name ('' when the declaration leaves it out). */
  name: string;
  /** The C type as written, whitespace normalized, without the name (`const float*`, `unsigned int`). */
  type: string;
  kind: KernelParamKind;
  /** Pointers: the pointee is const (`const float*`). Values: the parameter is const. */
  const: boolean;
}

/**
 * Replaces comments with spaces (newlines kept, so line numbers and offsets
 * stay), leaving string and character literals alone.
 */
export function stripComments(source: string): string {
  // Comments (a // comment goes on past a backslash-newline), or string and character literals (kept).
  return source.replace(/\/\/(?:[^\n\\]|\\[\s\S])*|\/\*[\s\S]*?(?:\*\/|$)|"(?:[^"\\\n]|\\[\s\S])*"|'(?:[^'\\\n]|\\[\s\S])*'/g, (m) =>
    m[0] === '/' ? m.replace(/[^\n]/g, ' ') : m);
}

/** Blanks preprocessor lines (with their continuations), keeping newlines. */
function stripPreprocessor(source: string): string {
  const lines = source.split('\n');
  let continuing = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (continuing || /^\s*#/.test(line)) {
      continuing = /\\\s*$/.test(line);
      lines[i] = ' '.repeat(line.length);
    }
  }
  return lines.join('\n');
}

/** Index of the bracket closing the one at `open`, counting (), [], {} and <> only inside parameter lists. */
function matchParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** Splits on commas outside (), [], {} and <>. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let angle = 0;
  let cur = '';
  for (const c of text) {
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === '<') angle++;
    else if (c === '>' && angle > 0) angle--;
    if (c === ',' && depth === 0 && angle === 0) {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts;
}

interface Candidate {
  params: string;
  definition: boolean;
}

/**
 * The parameters of `__global__ void <name>(...)` in `source`, or undefined
 * when no such kernel is found, it is a template, or its declarations
 * disagree. Handles `extern "C"`, `__launch_bounds__(...)`, comments,
 * newlines, `const`, `__restrict__` and default arguments.
 */
export function parseKernelSignature(source: string, name: string): KernelParam[] | undefined {
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) return undefined;
  const text = stripPreprocessor(stripComments(source));
  const candidates: Candidate[] = [];
  const re = new RegExp(`(^|[^A-Za-z0-9_$])${name.replace(/\$/g, '\\$')}\\s*\\(`, 'g');
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const nameStart = m.index + m[1].length;
    const open = m.index + m[0].length - 1;
    re.lastIndex = open + 1;
    // The declaration's prefix: back to the previous ';', '{' or '}' (skipping
    // the parentheses of attributes like __launch_bounds__(256, 2)).
    let start = nameStart;
    let depth = 0;
    while (start > 0) {
      const c = text[start - 1];
      if (c === ')') depth++;
      else if (c === '(') {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && (c === ';' || c === '{' || c === '}')) break;
      start--;
    }
    const prefix = text.slice(start, nameStart);
    if (!/(^|[^A-Za-z0-9_])__global__([^A-Za-z0-9_]|$)/.test(prefix)) continue;
    if (!/(^|[^A-Za-z0-9_])void([^A-Za-z0-9_]|$)/.test(prefix)) continue;
    // A '::' or '.' right before the name is a qualified name or a member, not this kernel.
    if (/(::|\.)\s*$/.test(prefix)) continue;
    if (/(^|[^A-Za-z0-9_])template([^A-Za-z0-9_]|$)/.test(prefix)) return undefined;
    const close = matchParen(text, open);
    if (close < 0) continue;
    const after = text.slice(close + 1).trimStart();
    candidates.push({ params: text.slice(open + 1, close), definition: after.startsWith('{') });
  }
  if (candidates.length === 0) return undefined;
  const defs = candidates.filter((c) => c.definition);
  const chosen = defs.length > 0 ? defs : candidates;
  const parsed = chosen.map((c) => parseParams(c.params));
  // Overloads (C++ linkage) with different parameter lists: which one is meant is unknowable here.
  const shape = (ps: KernelParam[]): string => ps.map((p) => p.type).join(',');
  if (parsed.some((p) => shape(p) !== shape(parsed[0]))) return undefined;
  return parsed[0];
}

const QUALIFIERS = new Set(['const', 'volatile', '__restrict__', '__restrict', 'restrict', 'register', '__grid_constant__']);
const TYPE_WORDS = new Set(['int', 'unsigned', 'signed', 'long', 'short', 'char', 'float', 'double', 'bool', 'void', 'struct', 'class', 'enum', 'union', 'typename']);

function parseParams(list: string): KernelParam[] {
  const trimmed = list.trim();
  if (trimmed === '' || trimmed === 'void') return [];
  return splitTopLevel(list).map(parseParam);
}

function parseParam(raw: string): KernelParam {
  // Drop a default argument (`int n = 4`): the first '=' outside brackets.
  let text = raw;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '<' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '>' || c === '}') depth--;
    else if (c === '=' && depth === 0) {
      text = text.slice(0, i);
      break;
    }
  }
  text = text.replace(/\s+/g, ' ').trim();
  // Function pointers, references, arrays of arrays: not something we convert.
  if (/\(/.test(text) || /&/.test(text)) {
    const ref = /^(.*&)\s*([A-Za-z_$][A-Za-z0-9_$]*)?$/.exec(text);
    if (ref && !text.includes('(')) return { name: ref[2] ?? '', type: ref[1].replace(/\s+&/g, '&'), kind: 'unknown', const: /\bconst\b/.test(text) };
    return { name: lastIdentifier(text) ?? '', type: text, kind: 'unknown', const: /\bconst\b/.test(text) };
  }
  // Tokens: identifiers (with ::), '*', and array suffixes.
  let arrays = 0;
  text = text.replace(/\[[^\]]*\]/g, () => {
    arrays++;
    return ' ';
  });
  const tokens = text.match(/[A-Za-z_$][A-Za-z0-9_$]*(?:\s*::\s*[A-Za-z_$][A-Za-z0-9_$]*)*|\*|<[^>]*>/g) ?? [];
  // Glue template arguments onto the identifier before them (Foo<int>).
  const merged: string[] = [];
  for (const t of tokens) {
    if (t.startsWith('<') && merged.length > 0) merged[merged.length - 1] += t.replace(/\s+/g, '');
    else merged.push(t.replace(/\s+/g, ''));
  }
  // The name: a trailing identifier that is not a qualifier or type keyword,
  // with some type before it.
  let name = '';
  const last = merged[merged.length - 1];
  if (last !== undefined && /^[A-Za-z_$]/.test(last) && !QUALIFIERS.has(last) && !TYPE_WORDS.has(last) && !last.includes('::')) {
    const before = merged.slice(0, -1).filter((t) => !QUALIFIERS.has(t));
    if (before.length > 0) {
      name = last;
      merged.pop();
    }
  }
  const stars = merged.filter((t) => t === '*').length + arrays;
  const firstStar = merged.indexOf('*');
  const baseTokens = firstStar >= 0 ? merged.slice(0, firstStar) : merged;
  const isConstBase = baseTokens.includes('const');
  const typeWords = baseTokens.filter((t) => !QUALIFIERS.has(t) && t !== '*');
  const typeStr = typeString(merged, arrays);
  if (stars > 0) {
    return { name, type: typeStr, kind: 'pointer', const: isConstBase };
  }
  return { name, type: typeStr, kind: scalarKind(typeWords), const: merged.includes('const') };
}

/** The number kinds, whose names a parameter may also be given by: the launcher's argument kinds (lib/generated/arg-kinds.ts) less tensor, pointer and bool. */
const KIND_NAMES: readonly KernelParamKind[] = ARG_KINDS.filter((k): k is Exclude<ArgKind, 'tensor' | 'pointer' | 'bool'> => k !== 'tensor' && k !== 'pointer' && k !== 'bool');

/**
 * One parameter declaration given by the user (`'const float* x'`, `'int'`,
 * `'unsigned long long n'`), parsed like one in a kernel's parameter list; a
 * gpuext dtype name ('float32', 'int64') is also accepted for a scalar. A
 * declaration without a name gets `fallbackName`.
 */
export function parseParamType(decl: string, fallbackName: string): KernelParam {
  const text = decl.trim();
  const named = KIND_NAMES.find((k) => k === text);
  if (named !== undefined) return { name: fallbackName, type: text, kind: named, const: false };
  // A builtin scalar or a pointer to one (what the jit and the elementwise kernels declare) by the table: parseParam's first
  // use compiles a dozen regular expressions, most of a kernel's first RawKernel; it gives the same (test/rtc-signature.test.ts).
  const p = tableParam(text) ?? parseParam(stripComments(text));
  if (p.name === '') p.name = fallbackName;
  return p;
}

const isScalar = (t: string): boolean => Object.prototype.hasOwnProperty.call(SCALARS, t);

/** Whether `t` is a C identifier (a parameter's name), tested without a regular expression. */
function isIdentifier(t: string): boolean {
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36;
    if (!letter && !(i > 0 && c >= 48 && c <= 57)) return false;
  }
  return t.length > 0 && !QUALIFIERS.has(t) && !TYPE_WORDS.has(t);
}

/**
 * `[const ]T[ name]`, `[const ]T*[ name]` or `[const ]T* __restrict__[ name]`
 * with T a builtin scalar of the table, spelled with single spaces, read as
 * parseParam reads it; undefined for any other text (parseParam's).
 */
function tableParam(text: string): KernelParam | undefined {
  const isConst = text.startsWith('const ');
  const rest = isConst ? text.slice('const '.length) : text;
  const star = rest.indexOf('*');
  if (star < 0) {
    // A scalar, its name after the last space (`unsigned long long n`) unless the whole is the type (`unsigned long long`).
    const cut = isScalar(rest) ? rest.length : rest.lastIndexOf(' ');
    const base = rest.slice(0, cut);
    const name = rest.slice(cut + 1);
    if (!isScalar(base) || (cut < rest.length && !isIdentifier(name))) return undefined;
    return builtinParam(base, name, { const: isConst });
  }
  const base = rest.slice(0, star);
  if (!isScalar(base)) return undefined;
  let after = rest.slice(star + 1);
  const restrict = after === ' __restrict__' || after.startsWith(' __restrict__ ');
  if (restrict) after = after.slice(' __restrict__'.length);
  if (after !== '' && !(after[0] === ' ' && isIdentifier(after.slice(1)))) return undefined;
  return builtinParam(base, after.slice(1), { const: isConst, pointer: true, restrict });
}

/**
 * A parameter of a C type built from `base` (a builtin scalar, or for a
 * pointer any element type), as the parser reads its declaration
 * `[const ]base[* [__restrict__]] name`: for code that generates the
 * declaration and hands the launcher its reading (elementwise-codegen.ts).
 */
export function builtinParam(base: string, name: string, opts: { const?: boolean; pointer?: boolean; restrict?: boolean } = {}): KernelParam {
  const isConst = opts.const === true;
  const qualified = isConst ? `const ${base}` : base;
  if (opts.pointer !== true) return { name, type: qualified, kind: isScalar(base) ? SCALARS[base] : 'unknown', const: isConst };
  return { name, type: `${qualified}*${opts.restrict === true ? ' __restrict__' : ''}`, kind: 'pointer', const: isConst };
}

function lastIdentifier(text: string): string | undefined {
  const ids = text.match(/[A-Za-z_$][A-Za-z0-9_$]*/g);
  return ids ? ids[ids.length - 1] : undefined;
}

/** `const float* __restrict__`, `unsigned int`: the tokens joined with '*' attached to the type. */
function typeString(tokens: string[], arrays: number): string {
  let s = '';
  for (const t of tokens) {
    if (t === '*') s += '*';
    else s += (s === '' ? '' : ' ') + t;
  }
  return s + '*'.repeat(arrays);
}

const SCALARS: Record<string, KernelParamKind> = {
  'float': 'float32',
  'double': 'float64',
  'bool': 'bool',
  'char': 'int8',
  'signed char': 'int8',
  'unsigned char': 'uint8',
  'short': 'int16',
  'short int': 'int16',
  'signed short': 'int16',
  'signed short int': 'int16',
  'unsigned short': 'uint16',
  'unsigned short int': 'uint16',
  'int': 'int32',
  'signed': 'int32',
  'signed int': 'int32',
  'unsigned': 'uint32',
  'unsigned int': 'uint32',
  // long is 64-bit on Linux (LP64), the only host gpuext builds on.
  'long': 'int64',
  'long int': 'int64',
  'signed long': 'int64',
  'signed long int': 'int64',
  'unsigned long': 'uint64',
  'unsigned long int': 'uint64',
  'long long': 'int64',
  'long long int': 'int64',
  'signed long long': 'int64',
  'signed long long int': 'int64',
  'unsigned long long': 'uint64',
  'unsigned long long int': 'uint64',
  'int8_t': 'int8',
  'int16_t': 'int16',
  'int32_t': 'int32',
  'int64_t': 'int64',
  'uint8_t': 'uint8',
  'uint16_t': 'uint16',
  'uint32_t': 'uint32',
  'uint64_t': 'uint64',
  'size_t': 'uint64',
  'ssize_t': 'int64',
  'ptrdiff_t': 'int64',
  'intptr_t': 'int64',
  'uintptr_t': 'uint64',
};

function scalarKind(words: string[]): KernelParamKind {
  // Canonical order for the multi-word builtins: "long unsigned int" == "unsigned long int".
  const w = words.map((x) => x.replace(/^(::)?std::/, '').replace(/^::/, ''));
  const sign = w.filter((x) => x === 'signed' || x === 'unsigned');
  const rest = w.filter((x) => x !== 'signed' && x !== 'unsigned');
  const order = ['short', 'long', 'char', 'int'];
  rest.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const key = [...sign, ...rest].join(' ');
  // Own keys only: a type named like an Object.prototype member (`constructor`) is no scalar.
  return Object.prototype.hasOwnProperty.call(SCALARS, key) ? SCALARS[key] : 'unknown';
}

const RANGES: Record<IntegerKind, { min: bigint; max: bigint }> = {
  int8: { min: -128n, max: 127n },
  int16: { min: -32768n, max: 32767n },
  int32: { min: -2147483648n, max: 2147483647n },
  int64: { min: -9223372036854775808n, max: 9223372036854775807n },
  uint8: { min: 0n, max: 255n },
  uint16: { min: 0n, max: 65535n },
  uint32: { min: 0n, max: 4294967295n },
  uint64: { min: 0n, max: 18446744073709551615n },
};

export function isIntegerKind(kind: KernelParamKind): kind is IntegerKind {
  return Object.prototype.hasOwnProperty.call(RANGES, kind);
}

/** [min, max] of an integer kind; undefined for the others. */
export function kindRange(kind: KernelParamKind): { min: bigint; max: bigint } | undefined {
  return isIntegerKind(kind) ? RANGES[kind] : undefined;
}

const FLOAT32_MAX = 3.4028234663852886e38;

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  switch (typeof value) {
    case 'number': return 'a number';
    case 'bigint': return 'a bigint';
    case 'boolean': return 'a boolean';
    case 'string': return 'a string';
    case 'function': return 'a function';
    case 'symbol': return 'a symbol';
    default: {
      const ctor = (value as object).constructor;
      return ctor && ctor.name && ctor.name !== 'Object' ? `a ${ctor.name}` : 'an object';
    }
  }
}

function show(value: number | bigint): string {
  return String(value);
}

export interface CheckScalarOptions {
  /** 1-based position of the argument, for the message. */
  index?: number;
  /** The C type as declared (`int`), shown beside the kind. */
  type?: string;
  /** What the message starts with; default `gx.RawKernel '<fnName>'`. */
  prefix?: string;
}

/**
 * Checks that `value` fits the declared kind and returns it converted:
 * a number for 8- to 32-bit integers and floats, a bigint for 64-bit
 * integers, a boolean for bool. Throws TypeError for a value of the wrong
 * kind (a number for a pointer, a fraction for an integer) and RangeError for
 * one outside the type's range.
 */
export function checkScalar(
  param: KernelParamKind | KernelParam, value: unknown, fnName: string, argName: string, opts: CheckScalarOptions = {},
): number | bigint | boolean {
  const kind = typeof param === 'string' ? param : param.kind;
  const type = opts.type ?? (typeof param === 'string' ? undefined : param.type);
  // fnName 'f' reads `gx.RawKernel 'f'`; a label already formatted (with a space or quote) is kept.
  const who = opts.prefix ?? (/[\s']/.test(fnName) ? fnName : `gx.RawKernel '${fnName}'`);
  const arg = /'/.test(argName) ? `argument ${argName}` : `argument ${opts.index !== undefined ? `${opts.index} ` : ''}'${argName}'`;
  const declared = type !== undefined && type !== kind ? `${type} (${kind})` : kind;
  const head = `${who}: ${arg} is declared ${declared}`;
  if (kind === 'pointer') {
    throw new TypeError(`${who}: ${arg} is declared ${type ?? 'a pointer'} but got ${describeValue(value)}; pass a Tensor`);
  }
  if (kind === 'unknown') {
    throw new TypeError(`${head}, a type gpuext cannot convert ${describeValue(value)} to; declare the kernel's argument types explicitly`);
  }
  if (kind === 'bool') {
    if (typeof value === 'boolean') return value;
    if (value === 0 || value === 1) return value === 1;
    throw new TypeError(`${head} but got ${typeof value === 'number' ? value : describeValue(value)}; pass true or false`);
  }
  if (kind === 'float32' || kind === 'float64') {
    let v: number;
    if (typeof value === 'number') v = value;
    else if (typeof value === 'bigint') v = Number(value);
    else throw new TypeError(`${head} but got ${describeValue(value)}; pass a number`);
    if (kind === 'float32' && Number.isFinite(v) && Math.abs(v) > FLOAT32_MAX) {
      // Values that round to FLT_MAX are fine; beyond it float32 would be infinite.
      if (Math.fround(v) === Infinity || Math.fround(v) === -Infinity) {
        throw new RangeError(`${head} but ${show(typeof value === 'bigint' ? value : v)} is out of its range [-${FLOAT32_MAX}, ${FLOAT32_MAX}]`);
      }
    }
    return v;
  }
  // Integers.
  const range = RANGES[kind];
  let big: bigint;
  if (typeof value === 'bigint') big = value;
  else if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new TypeError(`${head} but ${value} is not an integer`);
    big = BigInt(value);
  } else {
    throw new TypeError(`${head} but got ${describeValue(value)}; pass ${kind === 'int64' || kind === 'uint64' ? 'a number or a bigint' : 'an integer number'}`);
  }
  if (big < range.min || big > range.max) {
    throw new RangeError(`${head} but ${show(typeof value === 'number' ? value : big)} is out of its range [${range.min}, ${range.max}]`);
  }
  return kind === 'int64' || kind === 'uint64' ? big : Number(big);
}
