// The Python literals of a .npy header: `{'descr': '<f4', 'fortran_order':
// False, 'shape': (2, 3), }` is the repr() of a dict, which NumPy reads with
// ast.literal_eval. This reads the literals that function accepts and the
// header could hold, keeping what NumPy's checks look at: tuples apart from
// lists (a list shape is refused), integers apart from floats and booleans
// (exact, as bigints), str apart from bytes. Integers in any base, with
// underscores and one sign; strings with prefixes, escapes and implicit
// concatenation; comments; dicts, sets, None, True, False. Python 2's `3L`
// only when asked (NumPy filters it out of version 1.0 and 2.0 headers).
// Nesting is bounded as Python's parser bounds it (200 brackets), so a
// header of a million '(' is an error, not a stack overflow.

/** A tuple, list or set: what NumPy tells apart (a shape must be a tuple). */
export interface PySequence {
  kind: 'tuple' | 'list' | 'set';
  items: PyValue[];
}

/** bytes (b'...'), kept apart from str (a bytes descr is refused by NumPy). */
export interface PyBytes {
  kind: 'bytes';
  text: string;
}

/** A Python value: int as bigint, float as number, dict as a Map (keys of any literal). */
export type PyValue = string | bigint | number | boolean | null | PySequence | PyBytes | Map<PyValue, PyValue>;

/** Python's tokenizer refuses more brackets open at once ("too many nested parentheses"). */
export const MAX_NESTING = 200;

const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '\n': '',
};

/** Python's integer literals (PEP 515 underscores), with an optional L of Python 2. */
const INT = /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|[1-9](?:_?\d)*|0(?:_?0)*)(L?)(?![\w.])/;
/** Python's float and imaginary literals ('1.', '.5', '1e3', '01.5', '2j'); an int's digits alone are not one. */
const FLOAT = /^(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*(?:[eE][+-]?\d(?:_?\d)*)?|\d(?:_?\d)*\.(?:[eE][+-]?\d(?:_?\d)*)?|\d(?:_?\d)*[eE][+-]?\d(?:_?\d)*)[jJ]?|^\d(?:_?\d)*[jJ]/;

/** Options of parsePythonLiteral. */
export interface LiteralOptions {
  /** Accept Python 2's long suffix (`3L`), as NumPy does in .npy headers of version 1.0 and 2.0. */
  allowLong?: boolean;
}

/** Parses `text` as one Python literal, as ast.literal_eval would; a SyntaxError says where it fails. */
export function parsePythonLiteral(text: string, opts: LiteralOptions = {}): PyValue {
  let i = 0, depth = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at character ${i} of ${JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}...` : text)}`);
  };
  const skip = (): void => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i])) i++;
      if (text[i] === '\\' && text[i + 1] === '\n') i += 2;
      else if (text[i] === '#') while (i < text.length && text[i] !== '\n') i++;
      else return;
    }
  };
  const escape = (raw: boolean): string => {
    const c = text[++i];
    if (c === undefined) return '\\';
    if (raw) {
      // A raw string keeps the backslash and the character after it (an escaped quote does not end it).
      i++;
      return `\\${c}`;
    }
    if (c in SIMPLE_ESCAPES) {
      i++;
      return SIMPLE_ESCAPES[c];
    }
    const hexLength = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0;
    if (hexLength > 0) {
      const hex = text.slice(i + 1, i + 1 + hexLength);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== hexLength) fail('a truncated \\x, \\u or \\U escape');
      i += hexLength + 1;
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) fail('an escape beyond Unicode');
      return String.fromCodePoint(code);
    }
    const octal = /^[0-7]{1,3}/.exec(text.slice(i, i + 3));
    if (octal !== null) {
      i += octal[0].length;
      return String.fromCharCode(parseInt(octal[0], 8));
    }
    return '\\';  // an unknown escape keeps its backslash (the character follows as itself)
  };
  /** One quoted string (after its prefix); triple quotes are not read (repr() never writes them). */
  const quoted = (raw: boolean): string => {
    const quote = text[i++];
    if (text.startsWith(quote.repeat(2), i)) fail('a triple-quoted string');
    let out = '';
    while (i < text.length && text[i] !== quote) {
      if (text[i] === '\n') fail('a line break in a string');
      if (text[i] === '\\') out += escape(raw);
      else out += text[i++];
    }
    if (i >= text.length) fail('an unterminated string');
    i++;
    return out;
  };
  /** Adjacent string literals, concatenated as Python does; bytes and str cannot mix. */
  const strings = (): string | PyBytes => {
    let out = '', bytes: boolean | undefined;
    for (;;) {
      const m = /^([rRbBuU]{0,2})['"]/.exec(text.slice(i, i + 3));
      if (m === null || !/^(?:[rR]?[bB]?|[bB][rR]|[uU])$/.test(m[1])) break;
      const isBytes = /[bB]/.test(m[1]);
      if (bytes !== undefined && bytes !== isBytes) fail('bytes and str literals concatenated');
      bytes = isBytes;
      i += m[1].length;
      out += quoted(/[rR]/.test(m[1]));
      skip();
    }
    if (bytes === undefined) fail('an unexpected character');
    return bytes ? { kind: 'bytes', text: out } : out;
  };
  /** Items up to `close`, separated by commas (a trailing comma allowed); whether a comma was seen. */
  const items = <T>(close: string, item: () => T): { out: T[]; comma: boolean } => {
    const out: T[] = [];
    let comma = false;
    for (;;) {
      skip();
      if (text[i] === close) {
        i++;
        depth--;
        return { out, comma };
      }
      out.push(item());
      skip();
      if (text[i] === ',') {
        i++;
        comma = true;
      } else if (text[i] !== close) {
        fail(`expected ',' or '${close}'`);
      }
    }
  };
  const open = (): void => {
    if (++depth > MAX_NESTING) fail(`brackets nested more than ${MAX_NESTING} deep (Python's parser limit)`);
    i++;
  };
  const number = (): bigint | number => {
    const sign = text[i] === '-' || text[i] === '+' ? text[i++] : '';
    if (sign !== '') skip();
    const rest = text.slice(i, i + 64);
    const int = INT.exec(rest);
    if (int !== null && int[1] !== '' && !opts.allowLong) fail(`a Python 2 long integer ('${int[0]}'), which NumPy reads in .npy headers of version 1.0 and 2.0 only`);
    if (int !== null) {
      i += int[0].length;
      const v = BigInt(int[0].replace(/_/g, '').replace(/L$/, '').replace(/^0+(?=\d)/, ''));
      return sign === '-' ? -v : v;
    }
    const float = FLOAT.exec(rest);
    if (float === null || float[0] === '') return fail('an unexpected character');
    i += float[0].length;
    return Number(`${sign}${float[0].replace(/_/g, '').replace(/[jJ]$/, '')}`);
  };
  const value = (): PyValue => {
    skip();
    const c = text[i];
    if (c === '{') {
      open();
      skip();
      if (text[i] === '}') return items('}', value).out.length === 0 ? new Map() : fail('a bad dict');
      const first = value();
      skip();
      if (text[i] !== ':') {
        // A set: its first item is read; the rest follow as a sequence.
        if (text[i] === ',') i++;
        else if (text[i] !== '}') fail("expected ',', ':' or '}'");
        return { kind: 'set', items: [first, ...items('}', value).out] };
      }
      i++;
      const pairs: [PyValue, PyValue][] = [[first, value()]];
      skip();
      if (text[i] === ',') i++;
      else if (text[i] !== '}') fail("expected ',' or '}'");
      for (const pair of items('}', (): [PyValue, PyValue] => {
        const key = value();
        skip();
        if (text[i++] !== ':') fail("expected ':'");
        return [key, value()];
      }).out) pairs.push(pair);
      return new Map(pairs);
    }
    if (c === '(') {
      open();
      const { out, comma } = items(')', value);
      // (x) is x itself; (x,) and () are tuples.
      return out.length === 1 && !comma ? out[0] : { kind: 'tuple', items: out };
    }
    if (c === '[') {
      open();
      return { kind: 'list', items: items(']', value).out };
    }
    const word = /^(True|False|None)(?!\w)/.exec(text.slice(i, i + 6));
    if (word !== null) {
      i += word[0].length;
      return word[0] === 'None' ? null : word[0] === 'True';
    }
    if (c !== undefined && /[-+\d.]/.test(c)) return number();
    return strings();
  };
  const result = value();
  skip();
  if (i < text.length) fail('text after the value');
  return result;
}
